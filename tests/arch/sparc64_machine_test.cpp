// The sparc64 machine descriptor on hand-written bytes (big-endian): its
// key, the kernel's gregset and glibc's ucontext layouts, calls before
// return addresses (the call and its delay slot), the register-window rows
// applied by the executor (CFI's DW_CFA_GNU_window_save and the fallback
// without CFI), and the rt_sigreturn stub with the kernel's
// rt_signal_frame over a fake stack.
#include <gtest/gtest.h>

#include <vector>

#include "arch/machine.hpp"
#include "arch/sparc/frames.hpp"
#include "arch/sparc/machine.hpp"
#include "support/numbered_words.hpp"
#include "support/sparc_code.hpp"
#include "support/sparse_memory.hpp"
#include "unwind/unwinder.hpp"

namespace framewalk::arch {
namespace {

namespace sp = sparc;

constexpr uint64_t kCodeBase = 0x100000;
constexpr uint64_t kBias = 2047;

const Machine& m() { return sp::sparc64_machine(); }
const MachineKey kKey{kEmSparcv9, true, Endian::kBig, 0};

using test::sparc::code;
using test::sparc::kCall;
using test::sparc::kNop;
using test::sparc::kRet;
using test::sparc::kSave;

std::vector<uint8_t> words(size_t count, uint64_t base) { return test::numbered_big_words(count, base); }

TEST(MachineFor, Sparc64) {
  const Machine* machine = machine_for(usual_machine_key(kEmSparcv9));
  ASSERT_NE(machine, nullptr);
  EXPECT_EQ(machine, &m());
  EXPECT_EQ(machine->stack_pointer(), sp::kO6);
  EXPECT_EQ(machine->frame_pointer(), sp::kI6);
  EXPECT_EQ(machine->return_address_column(), sp::kO7);
  EXPECT_EQ(machine->program_counter(), sp::kPc);
  EXPECT_TRUE(machine->link_register());
  EXPECT_EQ(machine->address_size(), 8);
  EXPECT_EQ(machine->endian(), Endian::kBig);
  EXPECT_EQ(machine->caller_stack_pointer(0x7ff0007ff), 0x7ff000000u);  // the stack bias
  EXPECT_NE(supported_machine_names().find("sparc64"), std::string::npos) << supported_machine_names();
  EXPECT_NE(machine_for(usual_machine_key(kEmSparc)), &m());  // 32-bit SPARC: sparc32_machine_test.cpp
}

TEST(Sparc64Machine, ReturnAddressesFollowTheDelaySlot) {
  // %o7 holds the call's own address: the caller resumes 8 bytes on, and
  // its frame is looked up at the call.
  EXPECT_EQ(m().clean_return_address(0x100620, 0), 0x100628u);
  EXPECT_EQ(m().lookup_pc(0x100628, false), 0x100620u);
  EXPECT_EQ(m().lookup_pc(0x100628, true), 0x100628u);
}

bool follows(std::initializer_list<uint32_t> insns) {
  const std::vector<uint8_t> bytes = code(insns);
  BufferMemory memory(Bytes(bytes.data(), bytes.size()), kCodeBase);
  return m().follows_call(memory, kCodeBase + bytes.size());  // after the call and its delay slot
}

TEST(Sparc64Machine, FollowsCalls) {
  EXPECT_TRUE(follows({kNop, kCall, kNop}));
  EXPECT_TRUE(follows({kNop, 0x7ffffffd, kNop}));  // call .-12
  EXPECT_TRUE(follows({kNop, 0x9fc04000, kNop}));  // jmpl %g1, %o7 (call %g1)
  EXPECT_FALSE(follows({kNop, 0x81c04000, kNop}));  // jmpl %g1, %g0: a jump
  EXPECT_FALSE(follows({kNop, kRet, kNop}));
  EXPECT_FALSE(follows({kCall, kNop, kNop}));  // the call 12 bytes back, not 8
  const std::vector<uint8_t> call = code({kCall, kNop});
  BufferMemory memory(Bytes(call.data(), call.size()), kCodeBase);
  EXPECT_FALSE(m().follows_call(memory, kCodeBase + 6));  // misaligned
  EXPECT_FALSE(m().follows_call(memory, kCodeBase + 4));  // before the code
}

TEST(Sparc64Machine, RegistersFromTheKernelsGregset) {
  // %g0-%i7, then tstate, tpc, tnpc, y.
  const std::vector<uint8_t> gregset = words(sp::kGregsCount, 0x1000);
  ASSERT_EQ(m().gregset_size(), 288u);
  const RegisterFile r = m().registers_from_gregset(Bytes(gregset.data(), gregset.size()));
  EXPECT_EQ(r.get(sp::kO6), 0x100eu);
  EXPECT_EQ(r.get(sp::kL0), 0x1010u);
  EXPECT_EQ(r.get(sp::kI7), 0x101fu);
  EXPECT_EQ(r.get(sp::kPc), 0x1021u);  // tpc
  const RegisterFile cut = m().registers_from_gregset(Bytes(gregset.data(), 8 * 20));
  EXPECT_EQ(cut.get(sp::kL0 + 3), 0x1013u);
  EXPECT_FALSE(cut.known(sp::kI6));
  EXPECT_FALSE(cut.known(sp::kPc));
}

TEST(Sparc64Machine, RegistersFromAUcontext) {
  // uc_link, uc_flags, a sigmask word; mc_gregs: tstate, pc, npc, y,
  // %g1-%g7, %o0-%o7; mc_fp, mc_i7.
  std::vector<uint8_t> uc = words(3, 0xee);
  const std::vector<uint8_t> mcontext = words(21, 0x2000);
  uc.insert(uc.end(), mcontext.begin(), mcontext.end());
  const RegisterFile r = m().registers_from_ucontext(Bytes(uc.data(), uc.size()));
  EXPECT_EQ(r.get(sp::kPc), 0x2001u);
  EXPECT_EQ(r.get(sp::kG1), 0x2004u);
  EXPECT_EQ(r.get(sp::kO0), 0x200bu);
  EXPECT_EQ(r.get(sp::kO6), 0x2011u);
  EXPECT_EQ(r.get(sp::kO7), 0x2012u);
  EXPECT_EQ(r.get(sp::kI6), 0x2013u);
  EXPECT_EQ(r.get(sp::kI7), 0x2014u);
  EXPECT_FALSE(r.known(sp::kL0));  // in the window save area, not the ucontext
  EXPECT_FALSE(m().registers_from_ucontext(Bytes(uc.data(), 24 + 8 * 19)).known(sp::kI6));
}

// support/sparc_code.hpp's frame: 8-byte words, 2047 below their frames.
constexpr uint64_t kSp = 0x7ff000000 - kBias, kFp = 0x7ff000200 - kBias;
test::sparc::WindowFrame window_frame() { return {kKey, kSp, kFp, kBias, 8}; }

TEST(Sparc64Machine, AWindowSavedRowRestoresTheCallersWindow) {
  auto f = window_frame();
  auto caller = f.caller(sp::window_row(kBias));
  ASSERT_TRUE(caller.ok());
  EXPECT_EQ(caller->get(sp::kO6), kFp);  // the caller's %sp: CFA - 2047
  EXPECT_EQ(caller->get(sp::kPc), kCodeBase + 0x48);  // %i7 + 8
  EXPECT_EQ(caller->get(sp::kO7), kCodeBase + 0x40);
  EXPECT_EQ(caller->get(sp::kO0), 0x100u + sp::kI0);  // `save` renamed %o to %i
  EXPECT_EQ(caller->get(sp::kL0), 0x3010u);
  EXPECT_EQ(caller->get(sp::kI6), 0x301eu);
  EXPECT_EQ(caller->get(sp::kI7), 0x301fu);
  // A rule of the row's own wins over the window's.
  UnwindRow row = sp::window_row(kBias);
  ASSERT_TRUE(row.set(RegisterRule{sp::kL0 + 2, RuleKind::kSameValue, 0}).ok());
  auto ruled = f.caller(row);
  ASSERT_TRUE(ruled.ok());
  EXPECT_EQ(ruled->get(sp::kL0 + 2), 0x100u + sp::kL0 + 2);
  EXPECT_EQ(ruled->get(sp::kL0 + 3), 0x3013u);
}

TEST(Sparc64Machine, AnUnreadableWindowIsAnError) {
  auto f = window_frame();
  f.regs.set(sp::kI6, 0x6ff000200 - kBias);  // nothing there
  EXPECT_FALSE(f.caller(sp::window_row(kBias)).ok());
}

TEST(Sparc64Machine, WithoutCfiEveryFrameButALeafIsAWindow) {
  auto f = window_frame();
  const std::vector<uint8_t> body = code({kSave, 0x02c60006, kCall, kNop, kRet, kNop});
  FallbackInput in;
  in.registers = &f.regs;
  in.function_known = true;
  in.function_code = Bytes(body.data(), body.size());
  UnwindRow row;
  // An activation at `save` has not run it: its return address is in %o7.
  in.activation = true;
  in.pc_offset = 0;
  ASSERT_EQ(m().fallback_row(in, &row), FallbackKind::kPrologue);
  EXPECT_FALSE(row.window_saved);
  EXPECT_EQ(row.cfa.reg, sp::kO6);
  EXPECT_EQ(row.cfa.offset, 2047);
  // Past it, and at every return address: a window.
  in.pc_offset = 8;
  ASSERT_EQ(m().fallback_row(in, &row), FallbackKind::kFramePointer);
  EXPECT_TRUE(row.window_saved);
  in.activation = false;
  ASSERT_EQ(m().fallback_row(in, &row), FallbackKind::kFramePointer);
  auto caller = f.caller(row);
  ASSERT_TRUE(caller.ok());
  EXPECT_EQ(caller->get(sp::kPc), kCodeBase + 0x48);
  // A %fp of 0 (_start's) ends the chain; one below %sp is no frame.
  RegisterFile end = f.regs;
  end.set(sp::kI6, 0);
  in.registers = &end;
  ASSERT_EQ(m().fallback_row(in, &row), FallbackKind::kFramePointer);
  ASSERT_NE(row.find(sp::kO7), nullptr);
  EXPECT_EQ(row.find(sp::kO7)->kind, RuleKind::kUndefined);
  RegisterFile below = f.regs;
  below.set(sp::kI6, kSp - 0x100);
  in.registers = &below;
  EXPECT_EQ(m().fallback_row(in, &row), std::nullopt);
  // A large frame's size set up before `save` (sethi, or) is stepped over.
  EXPECT_TRUE(sp::saved_before(Bytes(code({0x03000010, 0x82106100, 0x9de38001}).data(), 12), 12));
  EXPECT_FALSE(sp::saved_before(Bytes(code({kCall, kSave}).data(), 8), 8));
}

TEST(Sparc64Machine, SignalFrameFromTheRtSigreturnStub) {
  // __rt_sigreturn_stub: mov 101, %g1; ta 0x6d. At it, %sp + 2047 is
  // struct rt_signal_frame: ss (the interrupted window: 0x5010 + i), info
  // (128 bytes), pt_regs: u_regs %g0-%o7 (0x4000 + i), tstate, tpc, tnpc.
  test::SparseMemory mem;
  const std::vector<uint8_t> stub = code({0x82102065, 0x91d0206d});
  mem.code(kCodeBase, stub.data(), stub.size());
  constexpr uint64_t kFrame = 0x7ff000640;
  for (unsigned i = 0; i < 16; ++i) mem.put_big(kFrame + 8 * i, 0x5010 + i, 8);
  for (unsigned i = 0; i < 16; ++i) mem.put_big(kFrame + 320 + 8 * i, 0x4000 + i, 8);
  mem.put_big(kFrame + 448, 0x44f0001201, 8);  // tstate
  mem.put_big(kFrame + 456, 0x102230, 8);      // tpc
  mem.put_big(kFrame + 464, 0x102234, 8);      // tnpc
  UnwindRow row;
  ASSERT_TRUE(m().signal_frame_row(mem, kCodeBase, &row));
  EXPECT_TRUE(row.signal_frame);
  EXPECT_FALSE(m().is_signal_trampoline(mem, kCodeBase + 4));
  static const ModuleMap no_modules;
  Unwinder unwinder(no_modules, mem, kKey);
  RegisterFile regs;
  regs.set(sp::kPc, kCodeBase);
  regs.set(sp::kO6, kFrame - kBias);
  auto interrupted = unwinder.apply_row(row, regs);
  ASSERT_TRUE(interrupted.ok());
  EXPECT_EQ(interrupted->get(sp::kPc), 0x102230u);  // exact, not a return address
  EXPECT_EQ(interrupted->get(sp::kO6), 0x400eu);
  EXPECT_EQ(interrupted->get(sp::kO7), 0x400fu);
  EXPECT_EQ(interrupted->get(sp::kG1), 0x4001u);
  EXPECT_EQ(interrupted->get(sp::kL0), 0x5010u);
  EXPECT_EQ(interrupted->get(sp::kI7), 0x501fu);
}

}  // namespace
}  // namespace framewalk::arch

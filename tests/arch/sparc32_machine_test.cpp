// The 32-bit SPARC machine descriptors (EM_SPARC, EM_SPARC32PLUS) on
// hand-written bytes: their keys, the 32-bit kernel's gregset and glibc's
// ucontext layouts, register windows of 4-byte words without a stack bias
// (CFI's DW_CFA_GNU_window_save and the fallback without CFI), and both
// signal frames of signal_32.c at their trampolines, a lying one among them.
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
using test::sparc::code;
using test::sparc::kCall;
using test::sparc::kNop;
using test::sparc::kRet;
using test::sparc::kSave;

constexpr uint64_t kCodeBase = 0x10000;

const Machine& m() { return sp::sparc32_machine(); }
const MachineKey kKey{kEmSparc, false, Endian::kBig, 0};

std::vector<uint8_t> words(size_t count, uint64_t base) { return test::numbered_big_words(count, base, 4); }

TEST(MachineFor, Sparc32AndSparc32plus) {
  const Machine* v8 = machine_for(usual_machine_key(kEmSparc));
  const Machine* v8plus = machine_for(usual_machine_key(kEmSparc32plus));
  ASSERT_NE(v8, nullptr);
  ASSERT_NE(v8plus, nullptr);
  EXPECT_EQ(v8, &m());
  EXPECT_EQ(v8plus, &sp::sparc32plus_machine());
  EXPECT_EQ(v8plus->elf_machine(), kEmSparc32plus);
  for (const Machine* machine : {v8, v8plus}) {
    EXPECT_EQ(machine->stack_pointer(), sp::kO6);
    EXPECT_EQ(machine->return_address_column(), sp::kO7);
    EXPECT_TRUE(machine->link_register());
    EXPECT_EQ(machine->address_size(), 4);
    EXPECT_EQ(machine->endian(), Endian::kBig);
    EXPECT_EQ(machine->caller_stack_pointer(0xffe001a0), 0xffe001a0u);  // no stack bias
    EXPECT_EQ(machine->gregset_size(), 152u);
  }
  EXPECT_NE(supported_machine_names().find("sparc32plus"), std::string::npos) << supported_machine_names();
  EXPECT_EQ(machine_for(MachineKey{kEmSparc32plus, true, Endian::kBig, 0}), nullptr);  // no such class
}

TEST(Sparc32Machine, ReturnAddressesFollowTheDelaySlotAndWrap) {
  EXPECT_EQ(m().clean_return_address(0x10620, 0), 0x10628u);
  EXPECT_EQ(m().clean_return_address(0xfffffffc, 0), 4u);  // a 32-bit address
  EXPECT_EQ(m().lookup_pc(0x10628, false), 0x10620u);
  const std::vector<uint8_t> call = code({kNop, kCall, kNop});
  BufferMemory memory(Bytes(call.data(), call.size()), kCodeBase);
  EXPECT_TRUE(m().follows_call(memory, kCodeBase + 12));
  EXPECT_FALSE(m().follows_call(memory, kCodeBase + 8));
}

TEST(Sparc32Machine, RegistersFromTheKernelsGregset) {
  // %g0-%i7, then psr, pc, npc, y, wim, tbr: 4-byte words.
  const std::vector<uint8_t> gregset = words(sp::kGregs32Count, 0x1000);
  const RegisterFile r = m().registers_from_gregset(Bytes(gregset.data(), gregset.size()));
  EXPECT_EQ(r.get(sp::kG0), 0x1000u);
  EXPECT_EQ(r.get(sp::kO6), 0x100eu);
  EXPECT_EQ(r.get(sp::kL0), 0x1010u);
  EXPECT_EQ(r.get(sp::kI7), 0x101fu);
  EXPECT_EQ(r.get(sp::kPc), 0x1021u);  // word 33, after psr
  // A truncated prstatus: what it holds, nothing past it.
  const RegisterFile cut = m().registers_from_gregset(Bytes(gregset.data(), 4 * 20 + 2));
  EXPECT_EQ(cut.get(sp::kL0 + 3), 0x1013u);
  EXPECT_FALSE(cut.known(sp::kL0 + 4));
  EXPECT_FALSE(cut.known(sp::kPc));
}

TEST(Sparc32Machine, RegistersFromAUcontext) {
  // uc_flags, uc_link, uc_sigmask (32 words), uc_stack (3); gregs: psr,
  // pc, npc, y, %g1-%g7, %o0-%o7.
  std::vector<uint8_t> uc = words(37, 0xee0);
  const std::vector<uint8_t> gregs = words(19, 0x2000);
  uc.insert(uc.end(), gregs.begin(), gregs.end());
  const RegisterFile r = m().registers_from_ucontext(Bytes(uc.data(), uc.size()));
  EXPECT_EQ(r.get(sp::kPc), 0x2001u);
  EXPECT_EQ(r.get(sp::kG0), 0u);
  EXPECT_EQ(r.get(sp::kG1), 0x2004u);
  EXPECT_EQ(r.get(sp::kO6), 0x2011u);
  EXPECT_EQ(r.get(sp::kO7), 0x2012u);
  EXPECT_FALSE(r.known(sp::kI6));  // in the window save area at %sp
  EXPECT_FALSE(m().registers_from_ucontext(Bytes(uc.data(), 148 + 4 * 18)).known(sp::kO7));
}

// support/sparc_code.hpp's frame: 4-byte words, the save area at %fp itself.
constexpr uint64_t kSp = 0xffe00100, kFp = 0xffe00200;
test::sparc::WindowFrame window_frame() { return {kKey, kSp, kFp, 0, 4}; }
constexpr uint64_t kCallerPc = test::sparc::WindowFrame::kReturn + 8;

TEST(Sparc32Machine, AWindowRowReadsFourByteWordsAtTheFramePointer) {
  auto f = window_frame();
  auto caller = f.caller(sp::window_row(0));
  ASSERT_TRUE(caller.ok());
  EXPECT_EQ(caller->get(sp::kO6), kFp);
  EXPECT_EQ(caller->get(sp::kPc), kCallerPc);
  EXPECT_EQ(caller->get(sp::kO0), 0x100u + sp::kI0);
  EXPECT_EQ(caller->get(sp::kL0), 0x3010u);
  EXPECT_EQ(caller->get(sp::kL0 + 1), 0x3011u);  // the next 4 bytes, not 8
  EXPECT_EQ(caller->get(sp::kI6), 0x301eu);
  EXPECT_EQ(caller->get(sp::kI7), 0x301fu);
  f.regs.set(sp::kI6, 0xefe00200);  // nothing there
  EXPECT_FALSE(f.caller(sp::window_row(0)).ok());
}

TEST(Sparc32Machine, WithoutCfiEveryFrameButALeafIsAWindow) {
  auto f = window_frame();
  const std::vector<uint8_t> body = code({kSave, kCall, kNop, kRet, kNop});
  FallbackInput in;
  in.registers = &f.regs;
  in.function_known = true;
  in.function_code = Bytes(body.data(), body.size());
  in.activation = true;
  UnwindRow row;
  ASSERT_EQ(m().fallback_row(in, &row), FallbackKind::kPrologue);  // at `save`
  EXPECT_EQ(row.cfa.reg, sp::kO6);
  EXPECT_EQ(row.cfa.offset, 0);
  in.pc_offset = 4;
  ASSERT_EQ(m().fallback_row(in, &row), FallbackKind::kFramePointer);
  EXPECT_TRUE(row.window_saved);
  EXPECT_EQ(row.cfa.reg, sp::kI6);
  EXPECT_EQ(row.cfa.offset, 0);
  auto caller = f.caller(row);
  ASSERT_TRUE(caller.ok());
  EXPECT_EQ(caller->get(sp::kPc), kCallerPc);
  // A %fp of 0 ends the chain; a misaligned one, or one below %sp, is no frame.
  RegisterFile other = f.regs;
  other.set(sp::kI6, 0);
  in.registers = &other;
  ASSERT_EQ(m().fallback_row(in, &row), FallbackKind::kFramePointer);
  EXPECT_EQ(row.find(sp::kO7)->kind, RuleKind::kUndefined);
  other.set(sp::kI6, kFp + 4);
  EXPECT_EQ(m().fallback_row(in, &row), std::nullopt);
  other.set(sp::kI6, kSp - 0x100);
  EXPECT_EQ(m().fallback_row(in, &row), std::nullopt);
}

// The handler has returned to the trampoline at kCodeBase (its `restore`
// gave back the handler's %sp): the frame is at %sp, the interrupted
// window's copy (0x5010 + i) first, pt_regs at `regs` (psr, pc, npc, y,
// u_regs %g0-%o7: 0x4000 + i).
struct SignalStack {
  static constexpr uint64_t kFrame = 0xffe00640;
  test::SparseMemory mem;
  RegisterFile regs;
  SignalStack(uint32_t mov, uint64_t pt_regs) {
    const std::vector<uint8_t> stub = code({mov, sp::kTa10});
    mem.code(kCodeBase, stub.data(), stub.size());
    for (unsigned i = 0; i < 16; ++i) mem.put_big(kFrame + 4 * i, 0x5010 + i, 4);
    mem.put_big(kFrame + pt_regs, 0xff000080, 4);  // psr
    mem.put_big(kFrame + pt_regs + 4, 0x10230, 4);  // pc
    mem.put_big(kFrame + pt_regs + 8, 0x10234, 4);  // npc
    for (unsigned i = 0; i < 16; ++i) mem.put_big(kFrame + pt_regs + 16 + 4 * i, 0x4000 + i, 4);
    regs.set(sp::kPc, kCodeBase);
    regs.set(sp::kO6, kFrame);
  }
  Result<RegisterFile> interrupted() {
    UnwindRow row;
    EXPECT_TRUE(m().signal_frame_row(mem, kCodeBase, &row));
    EXPECT_TRUE(row.signal_frame);
    static const ModuleMap no_modules;
    Unwinder unwinder(no_modules, mem, kKey);
    return unwinder.apply_row(row, regs);
  }
};

void expect_interrupted(const Result<RegisterFile>& r) {
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->get(sp::kPc), 0x10230u);  // exact, not a return address
  EXPECT_EQ(r->get(sp::kG1), 0x4001u);
  EXPECT_EQ(r->get(sp::kO6), 0x400eu);
  EXPECT_EQ(r->get(sp::kO7), 0x400fu);
  EXPECT_EQ(r->get(sp::kL0), 0x5010u);
  EXPECT_EQ(r->get(sp::kI7), 0x501fu);
}

TEST(Sparc32Machine, SignalFrameFromTheSigreturnTrampoline) {
  // mov 216, %g1; ta 0x10: struct signal_frame, si_regs after ss (96).
  SignalStack s(sp::kMovSigreturn32G1, 96);
  expect_interrupted(s.interrupted());
}

TEST(Sparc32Machine, RtSignalFrameFromTheRtSigreturnTrampoline) {
  // mov 101, %g1; ta 0x10: struct rt_signal_frame, pt_regs after ss and siginfo_t.
  SignalStack s(sp::kMovRtSigreturnG1, 96 + 128);
  expect_interrupted(s.interrupted());
}

TEST(Sparc32Machine, OnlyThe32BitTrampolinesAreSignalFrames) {
  SignalStack s(sp::kMovRtSigreturnG1, 224);
  EXPECT_FALSE(m().is_signal_trampoline(s.mem, kCodeBase + 4));
  EXPECT_FALSE(m().is_signal_trampoline(s.mem, kCodeBase + 2));  // misaligned
  const std::vector<uint8_t> sparc64_stub = code({sp::kMovRtSigreturnG1, sp::kTa6d});
  s.mem.code(kCodeBase + 0x100, sparc64_stub.data(), sparc64_stub.size());
  EXPECT_FALSE(m().is_signal_trampoline(s.mem, kCodeBase + 0x100));
  EXPECT_FALSE(sp::sparc64_machine().is_signal_trampoline(s.mem, kCodeBase));
  const std::vector<uint8_t> other = code({0x821020d9, sp::kTa10});  // mov 217, %g1
  s.mem.code(kCodeBase + 0x200, other.data(), other.size());
  EXPECT_FALSE(m().is_signal_trampoline(s.mem, kCodeBase + 0x200));
}

TEST(Sparc32Machine, ALyingSignalFrameIsAnError) {
  // The handler's %sp points where no frame is: an error, not a guess.
  SignalStack s(sp::kMovSigreturn32G1, 96);
  s.regs.set(sp::kO6, 0xefe00000);
  EXPECT_FALSE(s.interrupted().ok());
}

}  // namespace
}  // namespace framewalk::arch

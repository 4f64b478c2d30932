// The i386 machine descriptor on hand-written bytes: the kernel's gregset
// and ucontext layouts, both signal trampolines and the frames they restore
// from (struct sigframe and struct rt_sigframe over a fake stack), calls
// before return addresses and the fallback rows.
#include <gtest/gtest.h>

#include <vector>

#include "arch/i386/frames.hpp"
#include "arch/i386/machine.hpp"
#include "arch/machine.hpp"
#include "support/sparse_memory.hpp"
#include "unwind/unwinder.hpp"

namespace framewalk::arch {
namespace {

namespace x = i386;

constexpr uint64_t kCodeBase = 0x8048000;

// Little-endian 4-byte words: word i holds 0x1000 + i.
std::vector<uint8_t> numbered_words(size_t count) {
  std::vector<uint8_t> bytes(4 * count);
  for (size_t i = 0; i < count; ++i)
    for (unsigned b = 0; b < 4; ++b) bytes[4 * i + b] = static_cast<uint8_t>((0x1000 + i) >> (8 * b));
  return bytes;
}

TEST(MachineFor, I386) {
  const Machine* m = machine_for(usual_machine_key(3));
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(m, &x::machine());
  EXPECT_EQ(m->stack_pointer(), x::kEsp);
  EXPECT_EQ(m->frame_pointer(), x::kEbp);
  EXPECT_EQ(m->program_counter(), x::kEip);
  EXPECT_EQ(m->return_address_column(), x::kEip);
  EXPECT_FALSE(m->link_register());
  EXPECT_EQ(m->address_size(), 4);
  EXPECT_EQ(m->endian(), Endian::kLittle);
  EXPECT_EQ(m->address(0x1'0000'1234), 0x1234u);
  EXPECT_NE(supported_machine_names().find("i386"), std::string::npos);
}

TEST(I386Machine, LookupPcAndReturnAddresses) {
  EXPECT_EQ(x::machine().lookup_pc(0x8049000, true), 0x8049000u);
  EXPECT_EQ(x::machine().lookup_pc(0x8049000, false), 0x8048fffu);
  EXPECT_EQ(x::machine().clean_return_address(0xf7f0a600, 0), 0xf7f0a600u);
}

bool follows_call(std::vector<uint8_t> tail) {
  std::vector<uint8_t> bytes(16, 0x90);
  bytes.insert(bytes.end(), tail.begin(), tail.end());
  BufferMemory memory(Bytes(bytes.data(), bytes.size()), kCodeBase);
  return x::machine().follows_call(memory, kCodeBase + bytes.size());
}

TEST(I386Machine, FollowsCalls) {
  EXPECT_TRUE(follows_call({0xe8, 0x10, 0x20, 0x30, 0x40}));              // call rel32
  EXPECT_TRUE(follows_call({0xff, 0xd0}));                                // call *%eax
  EXPECT_TRUE(follows_call({0xff, 0x93, 0x0c, 0x00, 0x00, 0x00}));        // call *0xc(%ebx) (PLT through the GOT)
  EXPECT_TRUE(follows_call({0x65, 0xff, 0x15, 0x10, 0x00, 0x00, 0x00}));  // call *%gs:0x10
  EXPECT_FALSE(follows_call({0x90, 0x90, 0x90, 0x90, 0x90}));
  EXPECT_FALSE(follows_call({0xff, 0xe0}));                               // jmp *%eax
}

TEST(I386Machine, RegistersFromTheKernelsGregset) {
  const std::vector<uint8_t> gregset = numbered_words(x::kUserRegsCount);
  ASSERT_EQ(x::machine().gregset_size(), 68u);
  const RegisterFile r = x::machine().registers_from_gregset(Bytes(gregset.data(), gregset.size()));
  // ebx ecx edx esi edi ebp eax xds xes xfs xgs orig_eax eip xcs eflags esp xss.
  EXPECT_EQ(r.get(x::kEbx), 0x1000u);
  EXPECT_EQ(r.get(x::kEcx), 0x1001u);
  EXPECT_EQ(r.get(x::kEdx), 0x1002u);
  EXPECT_EQ(r.get(x::kEsi), 0x1003u);
  EXPECT_EQ(r.get(x::kEdi), 0x1004u);
  EXPECT_EQ(r.get(x::kEbp), 0x1005u);
  EXPECT_EQ(r.get(x::kEax), 0x1006u);
  EXPECT_EQ(r.get(x::kEip), 0x100cu);
  EXPECT_EQ(r.get(x::kEflags), 0x100eu);
  EXPECT_EQ(r.get(x::kEsp), 0x100fu);
  EXPECT_EQ(r.get(x::kGs), 0x100au);
  // Cut off after eip: esp is not there, so not known.
  const RegisterFile cut = x::machine().registers_from_gregset(Bytes(gregset.data(), 4 * 13));
  EXPECT_EQ(cut.get(x::kEip), 0x100cu);
  EXPECT_FALSE(cut.known(x::kEsp));
  EXPECT_FALSE(x::machine().registers_from_gregset(Bytes()).known(x::kEip));
}

TEST(I386Machine, RegistersFromAUcontext) {
  // uc_flags, uc_link, uc_stack (3 words), then gregs: gs fs es ds edi esi ebp esp ebx edx ecx eax trapno err eip ...
  std::vector<uint8_t> ucontext(x::kUcontextMcontextOffset, 0xee);
  const std::vector<uint8_t> gregs = numbered_words(x::kSigcontextSlots);
  ucontext.insert(ucontext.end(), gregs.begin(), gregs.end());
  const RegisterFile r = x::machine().registers_from_ucontext(Bytes(ucontext.data(), ucontext.size()));
  EXPECT_EQ(r.get(x::kEdi), 0x1004u);
  EXPECT_EQ(r.get(x::kEbp), 0x1006u);
  EXPECT_EQ(r.get(x::kEsp), 0x1007u);
  EXPECT_EQ(r.get(x::kEax), 0x100bu);
  EXPECT_EQ(r.get(x::kEip), 0x100eu);
  const RegisterFile cut = x::machine().registers_from_ucontext(Bytes(ucontext.data(), 20 + 4 * 14 + 3));
  EXPECT_FALSE(cut.known(x::kEip));
  EXPECT_TRUE(cut.known(x::kEax));
}

TEST(I386Machine, BothTrampolinesByTheirCode) {
  // The 32-bit vDSO's __kernel_sigreturn (padded with a nop) and __kernel_rt_sigreturn.
  const uint8_t vdso[] = {0x58, 0xb8, 0x77, 0x00, 0x00, 0x00, 0xcd, 0x80, 0x90,
                          0xb8, 0xad, 0x00, 0x00, 0x00, 0xcd, 0x80, 0x90};
  BufferMemory memory(Bytes(vdso, sizeof vdso), kCodeBase);
  EXPECT_TRUE(x::machine().is_signal_trampoline(memory, kCodeBase));
  EXPECT_TRUE(x::machine().is_signal_trampoline(memory, kCodeBase + 9));
  EXPECT_FALSE(x::machine().is_signal_trampoline(memory, kCodeBase + 1));
  BufferMemory truncated(Bytes(vdso, 7), kCodeBase);
  EXPECT_FALSE(x::machine().is_signal_trampoline(truncated, kCodeBase));
  BufferMemory truncated_rt(Bytes(vdso + 9, 6), kCodeBase);
  EXPECT_FALSE(x::machine().is_signal_trampoline(truncated_rt, kCodeBase));
  // mov $174,%eax (rt_sigaction) is not a trampoline.
  const uint8_t other[] = {0xb8, 0xae, 0x00, 0x00, 0x00, 0xcd, 0x80, 0x90};
  BufferMemory other_memory(Bytes(other, sizeof other), kCodeBase);
  EXPECT_FALSE(x::machine().is_signal_trampoline(other_memory, kCodeBase));
}

// A fake stack at a trampoline: the sigcontext at `context` holds, in each
// slot i, 0x2000 + i; the rows must restore the interrupted registers from it.
void expect_restored(uint64_t pc, uint64_t sp, uint64_t context, const uint8_t* code, size_t code_size) {
  test::SparseMemory mem;
  mem.code(pc, code, code_size);
  for (unsigned i = 0; i < x::kSigcontextSlots; ++i) mem.put(context + 4 * i, 0x2000 + i, 4);
  UnwindRow row;
  ASSERT_TRUE(x::machine().signal_frame_row(mem, pc, &row));
  EXPECT_TRUE(row.signal_frame);
  static const ModuleMap no_modules;
  Unwinder unwinder(no_modules, mem, usual_machine_key(3));
  RegisterFile regs;
  regs.set(x::kEip, pc);
  regs.set(x::kEsp, sp);
  auto interrupted = unwinder.apply_row(row, regs);
  ASSERT_TRUE(interrupted.ok());
  EXPECT_EQ(interrupted->get(x::kEdi), 0x2004u);
  EXPECT_EQ(interrupted->get(x::kEsi), 0x2005u);
  EXPECT_EQ(interrupted->get(x::kEbp), 0x2006u);
  EXPECT_EQ(interrupted->get(x::kEsp), 0x2007u);
  EXPECT_EQ(interrupted->get(x::kEbx), 0x2008u);
  EXPECT_EQ(interrupted->get(x::kEdx), 0x2009u);
  EXPECT_EQ(interrupted->get(x::kEcx), 0x200au);
  EXPECT_EQ(interrupted->get(x::kEax), 0x200bu);
  EXPECT_EQ(interrupted->get(x::kEip), 0x200eu);
}

TEST(I386Machine, SigframeRestoresFromTheSigcontextAfterSigno) {
  // struct sigframe, after the handler's ret took pretcode: sig at esp, sc at esp+4.
  expect_restored(kCodeBase, 0xffff0000, 0xffff0004, x::kSigreturnCode, sizeof x::kSigreturnCode);
}

TEST(I386Machine, RtSigframeRestoresFromTheUcontext) {
  // struct rt_sigframe: sig, pinfo, puc, siginfo (128 bytes), then the ucontext
  // whose uc_mcontext is 20 bytes in: esp+160.
  expect_restored(kCodeBase, 0xffff0000, 0xffff0000 + 160, x::kRtSigreturnCode, sizeof x::kRtSigreturnCode);
}

// push %ebp; mov %esp,%ebp; push %ebx; sub $0x14,%esp; (body) mov $1,%eax; leave; ret
const uint8_t kFramed[] = {0x55, 0x89, 0xe5, 0x53, 0x83, 0xec, 0x14, 0xb8, 0x01, 0x00, 0x00, 0x00, 0xc9, 0xc3};

RegisterFile registers(uint64_t sp, uint64_t ebp) {
  RegisterFile r;
  r.set(x::kEsp, sp);
  r.set(x::kEbp, ebp);
  return r;
}

TEST(I386Machine, FallbackRowFromThePrologue) {
  const RegisterFile regs = registers(0x7000, 0x7100);
  FallbackInput in;
  in.registers = &regs;
  in.function_known = true;
  in.function_code = Bytes(kFramed, sizeof kFramed);
  UnwindRow row;
  EXPECT_EQ(x::machine().fallback_row(in, &row), FallbackKind::kFramePointer);
  EXPECT_EQ(row.cfa.reg, x::kEbp);
  EXPECT_EQ(row.cfa.offset, 8);
  ASSERT_NE(row.find(x::kEbx), nullptr);
  EXPECT_EQ(row.find(x::kEbx)->value, -12);
  // An activation after `push %ebp`: CFA=esp+8, ebp at CFA-8.
  in.activation = true;
  in.pc_offset = 1;
  in.function_code = Bytes(kFramed, 1);
  in.code_at_pc = Bytes(kFramed + 1, sizeof kFramed - 1);
  EXPECT_EQ(x::machine().fallback_row(in, &row), FallbackKind::kPrologue);
  EXPECT_EQ(row.cfa.reg, x::kEsp);
  EXPECT_EQ(row.cfa.offset, 8);
  ASSERT_NE(row.find(x::kEbp), nullptr);
  EXPECT_EQ(row.find(x::kEbp)->value, -8);
  // At the `ret`: CFA=esp+4.
  in.pc_offset = sizeof kFramed - 1;
  in.function_code = Bytes(kFramed, sizeof kFramed - 1);
  in.code_at_pc = Bytes(kFramed + sizeof kFramed - 1, 1);
  EXPECT_EQ(x::machine().fallback_row(in, &row), FallbackKind::kPrologue);
  EXPECT_EQ(row.cfa.reg, x::kEsp);
  EXPECT_EQ(row.cfa.offset, 4);
}

TEST(I386Machine, PrologueStepsOverScheduledInstructionsButNotIncDec) {
  // push %ebp; mov 0x8(%esp),%eax; mov %esp,%ebp: the load is stepped over.
  const uint8_t scheduled[] = {0x55, 0x8b, 0x44, 0x24, 0x08, 0x89, 0xe5, 0xc3};
  UnwindRow row;
  ASSERT_TRUE(x::prologue_row(Bytes(scheduled, sizeof scheduled), x::kReturnAddressFrame, &row));
  EXPECT_EQ(row.cfa.reg, x::kEbp);
  EXPECT_EQ(row.cfa.offset, 8);
  // push %ebp; dec %ebp (0x4d: REX.WRB in 64-bit code): writes ebp, so the
  // prologue ends there without a frame pointer.
  const uint8_t dec_ebp[] = {0x55, 0x4d, 0x89, 0xe5, 0xc3};
  ASSERT_TRUE(x::prologue_row(Bytes(dec_ebp, sizeof dec_ebp), x::kReturnAddressFrame, &row));
  EXPECT_EQ(row.cfa.reg, x::kEsp);
  EXPECT_EQ(row.cfa.offset, 8);
  // push %ebp; inc %eax; mov %esp,%ebp: inc %eax is stepped over.
  const uint8_t inc_eax[] = {0x55, 0x40, 0x89, 0xe5, 0xc3};
  ASSERT_TRUE(x::prologue_row(Bytes(inc_eax, sizeof inc_eax), x::kReturnAddressFrame, &row));
  EXPECT_EQ(row.cfa.reg, x::kEbp);
}

TEST(I386Machine, RealignedMainReadsTheSavedCfa) {
  // gcc's main: lea 0x4(%esp),%ecx; and $-16,%esp; push -0x4(%ecx); push %ebp;
  // mov %esp,%ebp; push %edi; push %esi; push %ebx; call thunk; add $imm,%ebx;
  // push %ecx; sub $0xb8,%esp
  const uint8_t code[] = {0x8d, 0x4c, 0x24, 0x04, 0x83, 0xe4, 0xf0, 0xff, 0x71, 0xfc, 0x55, 0x89, 0xe5,
                          0x57, 0x56, 0x53, 0xe8, 0xeb, 0x01, 0x00, 0x00, 0x81, 0xc3, 0x8f, 0x2e, 0x00, 0x00,
                          0x51, 0x81, 0xec, 0xb8, 0x00, 0x00, 0x00};
  UnwindRow row;
  ASSERT_TRUE(x::prologue_row(Bytes(code, sizeof code), x::kReturnAddressFrame, &row));
  EXPECT_EQ(row.cfa.kind, CfaKind::kExpression);
  // Over a fake stack: ebp 0x7100; saved edi, esi, ebx, ecx below it.
  test::SparseMemory mem;
  mem.put(0x7100, 0x7300, 4);       // the caller's ebp
  mem.put(0x7104, 0x8049999, 4);    // the copy of the return address
  mem.put(0x70fc, 0x11, 4);         // edi
  mem.put(0x70f8, 0x22, 4);         // esi
  mem.put(0x70f4, 0x33, 4);         // ebx
  mem.put(0x70f0, 0x7204, 4);       // ecx: the entry esp + 4
  mem.put(0x7200, 0x8049123, 4);    // the return address, at the entry esp
  static const ModuleMap no_modules;
  Unwinder unwinder(no_modules, mem, usual_machine_key(3));
  RegisterFile regs = registers(0x7000, 0x7100);
  regs.set(x::kEip, 0x8048500);
  auto caller = unwinder.apply_row(row, regs);
  ASSERT_TRUE(caller.ok());
  EXPECT_EQ(caller->get(x::kEsp), 0x7204u);
  EXPECT_EQ(caller->get(x::kEip), 0x8049123u);
  EXPECT_EQ(caller->get(x::kEbp), 0x7300u);
  EXPECT_EQ(caller->get(x::kEdi), 0x11u);
  EXPECT_EQ(caller->get(x::kEbx), 0x33u);
  // An activation before `push %ecx` is not guessed at.
  EXPECT_FALSE(x::prologue_row(Bytes(code, sizeof code), 20, &row));
}

TEST(I386Machine, FramePointerChain) {
  UnwindRow row;
  FallbackInput in;
  const RegisterFile good = registers(0x7000, 0x7104);  // 4-byte aligned is enough here
  in.registers = &good;
  ASSERT_EQ(x::machine().fallback_row(in, &row), FallbackKind::kFramePointer);
  EXPECT_EQ(row.cfa.reg, x::kEbp);
  EXPECT_EQ(row.cfa.offset, 8);
  // Over a fake stack: saved ebp at ebp, the return address above it.
  test::SparseMemory mem;
  mem.put(0x7104, 0x7200, 4);
  mem.put(0x7108, 0x8049123, 4);
  static const ModuleMap no_modules;
  Unwinder unwinder(no_modules, mem, usual_machine_key(3));
  auto caller = unwinder.apply_row(row, good);
  ASSERT_TRUE(caller.ok());
  EXPECT_EQ(caller->get(x::kEip), 0x8049123u);
  EXPECT_EQ(caller->get(x::kEbp), 0x7200u);
  EXPECT_EQ(caller->get(x::kEsp), 0x710cu);
  in.activation = true;
  EXPECT_EQ(x::machine().fallback_row(in, &row), std::nullopt);
  in.activation = false;
  const RegisterFile end = registers(0x7000, 0);
  in.registers = &end;
  ASSERT_EQ(x::machine().fallback_row(in, &row), FallbackKind::kFramePointer);
  ASSERT_NE(row.find(x::kEip), nullptr);
  EXPECT_EQ(row.find(x::kEip)->kind, RuleKind::kUndefined);
  for (const RegisterFile& bad : {registers(0x7000, 0x6ff8), registers(0x7000, 0x7102), RegisterFile{}}) {
    in.registers = &bad;
    EXPECT_EQ(x::machine().fallback_row(in, &row), std::nullopt);
  }
}

TEST(I386Machine, PerfRegisters) {
  EXPECT_EQ(x::machine().perf_sample_register_mask(), 0x0fffu);
  // AX BX CX DX SI DI BP SP IP: a sample of the first nine.
  const uint64_t values[] = {1, 2, 3, 4, 5, 6, 7, 8, 9};
  const RegisterFile r = x::machine().registers_from_perf_sample(0x1ff, values);
  EXPECT_EQ(r.get(x::kEax), 1u);
  EXPECT_EQ(r.get(x::kEbx), 2u);
  EXPECT_EQ(r.get(x::kEcx), 3u);
  EXPECT_EQ(r.get(x::kEbp), 7u);
  EXPECT_EQ(r.get(x::kEsp), 8u);
  EXPECT_EQ(r.get(x::kEip), 9u);
}

}  // namespace
}  // namespace framewalk::arch

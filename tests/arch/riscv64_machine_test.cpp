// The riscv64 machine descriptor on hand-written bytes: its key, the
// kernel's gregset and ucontext layouts, the rt_sigreturn trampoline and the
// frame it restores from (a struct rt_sigframe over a fake stack), calls
// before return addresses (compressed ones too), and the rows without CFI:
// prologues (gcc's, compressed or not, and shrink-wrapped) and gcc's frame
// pointer.
#include <gtest/gtest.h>

#include <vector>

#include "arch/machine.hpp"
#include "arch/riscv64/frames.hpp"
#include "arch/riscv64/machine.hpp"
#include "support/numbered_words.hpp"
#include "support/sparse_memory.hpp"
#include "unwind/unwinder.hpp"

namespace framewalk::arch {
namespace {

namespace rv = riscv64;

constexpr uint64_t kCodeBase = 0x10000000;

using test::numbered_words;

// Instructions as little-endian bytes: those below 0x10000 whose low bits
// are not 11 are compressed (2 bytes), the others 4.
std::vector<uint8_t> code(std::initializer_list<uint32_t> insns) {
  std::vector<uint8_t> bytes;
  for (uint32_t i : insns) {
    const unsigned size = (i & 3) == 3 ? 4 : 2;
    for (unsigned b = 0; b < size; ++b) bytes.push_back(static_cast<uint8_t>(i >> (8 * b)));
  }
  return bytes;
}

const Machine& m() { return rv::machine(); }

TEST(MachineFor, Riscv64) {
  const Machine* machine = machine_for(usual_machine_key(kEmRiscv));
  ASSERT_NE(machine, nullptr);
  EXPECT_EQ(machine, &m());
  EXPECT_EQ(machine->stack_pointer(), 2);
  EXPECT_EQ(machine->frame_pointer(), 8);
  EXPECT_EQ(machine->return_address_column(), 1);
  EXPECT_EQ(machine->program_counter(), 64);
  EXPECT_TRUE(machine->link_register());
  EXPECT_EQ(machine->address_size(), 8);
  EXPECT_EQ(machine->endian(), Endian::kLittle);
  EXPECT_NE(supported_machine_names().find("riscv64"), std::string::npos) << supported_machine_names();
  EXPECT_EQ(machine_for({kEmRiscv, false, Endian::kLittle, 0}), nullptr);  // riscv32
  EXPECT_STREQ(dwarf_register_name(dwarf_arch_for(usual_machine_key(kEmRiscv)), 8), "s0");
}

TEST(Riscv64Machine, LookupPcIsInsideTheCall) {
  EXPECT_EQ(m().lookup_pc(0x10000800, true), 0x10000800u);
  // The last halfword of a 4-byte jal or of a 2-byte c.jalr.
  EXPECT_EQ(m().lookup_pc(0x10000800, false), 0x100007feu);
}

bool follows(const std::vector<uint8_t>& bytes) {
  BufferMemory memory(Bytes(bytes.data(), bytes.size()), kCodeBase);
  return m().follows_call(memory, kCodeBase + bytes.size());
}

TEST(Riscv64Machine, FollowsCalls) {
  constexpr uint32_t kNop = 0x00000013;
  EXPECT_TRUE(follows(code({kNop, 0x040000ef})));   // jal ra,.+0x40
  EXPECT_TRUE(follows(code({kNop, 0xfedff0ef})));   // jal ra,.-0x14
  EXPECT_TRUE(follows(code({kNop, 0x000780e7})));   // jalr ra,0(a5)
  EXPECT_TRUE(follows(code({kNop, 0x9782})));       // c.jalr a5
  EXPECT_FALSE(follows(code({kNop, 0x0400006f})));  // j .+0x40 (jal x0)
  EXPECT_FALSE(follows(code({kNop, 0x00008067})));  // ret
  EXPECT_FALSE(follows(code({kNop, 0x000782e7})));  // jalr t0,0(a5): millicode, not a frame's return
  EXPECT_FALSE(follows(code({kNop, 0x8782})));      // c.jr a5
  EXPECT_FALSE(follows(code({kNop, 0x9002})));      // c.ebreak
  EXPECT_FALSE(follows(code({kNop, 0x952e})));      // c.add a0,a1
  EXPECT_FALSE(follows(code({kNop, kNop})));
  const std::vector<uint8_t> call = code({0x040000ef});
  BufferMemory memory(Bytes(call.data(), call.size()), kCodeBase);
  EXPECT_FALSE(m().follows_call(memory, kCodeBase + 3));  // odd: no return address
  BufferMemory nothing(Bytes(), kCodeBase);
  EXPECT_FALSE(m().follows_call(nothing, kCodeBase + 8));
}

TEST(Riscv64Machine, RegistersFromTheKernelsGregset) {
  const std::vector<uint8_t> gregset = numbered_words(rv::kGregsCount, 0x1000);
  ASSERT_EQ(m().gregset_size(), 256u);
  const RegisterFile r = m().registers_from_gregset(Bytes(gregset.data(), gregset.size()));
  EXPECT_EQ(r.get(rv::kPc), 0x1000u);  // pc, then x1..x31
  EXPECT_EQ(r.get(rv::kRa), 0x1001u);
  EXPECT_EQ(r.get(rv::kSp), 0x1002u);
  EXPECT_EQ(r.get(rv::kFp), 0x1008u);
  EXPECT_EQ(r.get(31), 0x101fu);
  EXPECT_EQ(r.get(0), 0u);
  const RegisterFile cut = m().registers_from_gregset(Bytes(gregset.data(), 8 * 3));
  EXPECT_EQ(cut.get(rv::kSp), 0x1002u);
  EXPECT_FALSE(cut.known(rv::kFp));
  // NT_PRFPREG: f0..f31 (DWARF 32-63), fcsr.
  const std::vector<uint8_t> fpregs = numbered_words(33, 0x3000);
  RegisterFile with_fp = r;
  m().add_fpregset(Bytes(fpregs.data(), fpregs.size()), &with_fp);
  EXPECT_EQ(with_fp.get(rv::kF0 + 8), 0x3008u);
  EXPECT_EQ(with_fp.get(rv::kF0 + 31), 0x301fu);
}

TEST(Riscv64Machine, RegistersFromAUcontext) {
  std::vector<uint8_t> ucontext(rv::kUcontextMcontextOffset, 0xee);
  const std::vector<uint8_t> gregs = numbered_words(rv::kGregsCount, 0x1000);
  const std::vector<uint8_t> fpregs = numbered_words(33, 0x3000);
  ucontext.insert(ucontext.end(), gregs.begin(), gregs.end());
  ucontext.insert(ucontext.end(), fpregs.begin(), fpregs.end());
  // glibc's offsetof(ucontext_t, uc_mcontext) and uc_mcontext.__fpregs.
  ASSERT_EQ(rv::kUcontextMcontextOffset, 176u);
  ASSERT_EQ(rv::kUcontextFpregsOffset, 432u);
  const RegisterFile r = m().registers_from_ucontext(Bytes(ucontext.data(), ucontext.size()));
  EXPECT_EQ(r.get(rv::kPc), 0x1000u);
  EXPECT_EQ(r.get(rv::kSp), 0x1002u);
  EXPECT_EQ(r.get(rv::kF0 + 9), 0x3009u);
  EXPECT_FALSE(m().registers_from_ucontext(Bytes(ucontext.data(), 100)).known(rv::kPc));
}

TEST(Riscv64Machine, TrampolineByItsCode) {
  // li a7,139; ecall; then li a7,93 (exit); ecall.
  const std::vector<uint8_t> bytes = code({0x08b00893, 0x00000073, 0x05d00893, 0x00000073});
  BufferMemory memory(Bytes(bytes.data(), bytes.size()), kCodeBase);
  EXPECT_TRUE(m().is_signal_trampoline(memory, kCodeBase));
  EXPECT_FALSE(m().is_signal_trampoline(memory, kCodeBase + 4));
  EXPECT_FALSE(m().is_signal_trampoline(memory, kCodeBase + 8));
  EXPECT_FALSE(m().is_signal_trampoline(memory, kCodeBase + 1));
  BufferMemory truncated(Bytes(bytes.data(), 6), kCodeBase);
  EXPECT_FALSE(m().is_signal_trampoline(truncated, kCodeBase));
}

TEST(Riscv64Machine, SignalFrameRestoresFromTheUcontext) {
  // struct rt_sigframe at sp: siginfo (128 bytes), then the ucontext, its
  // mcontext at 176: pc and x1..x31 (0x2000 + i), f0..f31 at 432 (0x4000 + i).
  test::SparseMemory mem;
  const std::vector<uint8_t> tramp = code({0x08b00893, 0x00000073});
  mem.code(kCodeBase, tramp.data(), tramp.size());
  constexpr uint64_t kSp = 0x7fff0000;
  const uint64_t uc = kSp + 128;
  for (uint64_t a = kSp; a < uc + 720; a += 8) mem.put(a, 0x5a5a5a5a, 8);
  for (unsigned i = 0; i < rv::kGregsCount; ++i) mem.put(uc + 176 + 8 * i, 0x2000 + i, 8);
  for (unsigned i = 0; i < 32; ++i) mem.put(uc + 432 + 8 * i, 0x4000 + i, 8);
  UnwindRow row;
  ASSERT_TRUE(m().signal_frame_row(mem, kCodeBase, &row));
  EXPECT_TRUE(row.signal_frame);
  static const ModuleMap no_modules;
  Unwinder unwinder(no_modules, mem, usual_machine_key(kEmRiscv));
  RegisterFile regs;
  regs.set(rv::kPc, kCodeBase);
  regs.set(rv::kSp, kSp);
  auto interrupted = unwinder.apply_row(row, regs);
  ASSERT_TRUE(interrupted.ok());
  EXPECT_EQ(interrupted->get(rv::kPc), 0x2000u);
  EXPECT_EQ(interrupted->get(rv::kRa), 0x2001u);
  EXPECT_EQ(interrupted->get(rv::kSp), 0x2002u);
  EXPECT_EQ(interrupted->get(rv::kFp), 0x2008u);
  EXPECT_EQ(interrupted->get(31), 0x201fu);
  EXPECT_EQ(interrupted->get(rv::kF0 + 31), 0x401fu);
}

RegisterFile at(uint64_t sp, uint64_t s0) {
  RegisterFile r;
  r.set(rv::kSp, sp);
  r.set(rv::kFp, s0);
  r.set(rv::kPc, kCodeBase + 0x100);
  return r;
}

TEST(Riscv64Machine, FramePointerAtAReturnAddress) {
  const RegisterFile regs = at(0x7000, 0x7100);
  FallbackInput in;
  in.registers = &regs;
  UnwindRow row;
  ASSERT_EQ(m().fallback_row(in, &row), FallbackKind::kFramePointer);
  // s0 is the CFA: ra at s0 - 8, the caller's s0 at s0 - 16.
  test::SparseMemory mem;
  mem.put(0x70f8, 0x10000444, 8);
  mem.put(0x70f0, 0x7200, 8);
  static const ModuleMap no_modules;
  Unwinder unwinder(no_modules, mem, usual_machine_key(kEmRiscv));
  auto caller = unwinder.apply_row(row, regs);
  ASSERT_TRUE(caller.ok());
  EXPECT_EQ(caller->get(rv::kSp), 0x7100u);
  EXPECT_EQ(caller->get(rv::kPc), 0x10000444u);
  EXPECT_EQ(caller->get(rv::kFp), 0x7200u);
  // s0 of 0 (_start's) ends the chain; one below sp or misaligned is no frame.
  const RegisterFile end = at(0x7000, 0);
  in.registers = &end;
  ASSERT_EQ(m().fallback_row(in, &row), FallbackKind::kFramePointer);
  ASSERT_NE(row.find(rv::kRa), nullptr);
  EXPECT_EQ(row.find(rv::kRa)->kind, RuleKind::kUndefined);
  for (uint64_t s0 : {uint64_t{0x6f00}, uint64_t{0x7104}}) {
    const RegisterFile bad = at(0x7000, s0);
    in.registers = &bad;
    EXPECT_EQ(m().fallback_row(in, &row), std::nullopt) << std::hex << s0;
  }
  // An activation without unwind information is no frame-pointer guess.
  in.registers = &regs;
  in.activation = true;
  EXPECT_EQ(m().fallback_row(in, &row), std::nullopt);
}

// fallback_row for an activation `offset` bytes into `f`, a known function.
std::optional<FallbackKind> activation_at(const std::vector<uint8_t>& f, uint64_t offset, UnwindRow* row) {
  static const RegisterFile regs = at(0x7000, 0x7100);
  FallbackInput in;
  in.registers = &regs;
  in.activation = true;
  in.function_known = true;
  in.pc_offset = offset;
  in.function_code = Bytes(f.data(), offset);
  in.code_at_pc = Bytes(f.data() + offset, f.size() - offset);
  return m().fallback_row(in, row);
}

void expect_rule(const UnwindRow& row, uint16_t reg, int64_t offset) {
  const RegisterRule* rule = row.find(reg);
  ASSERT_NE(rule, nullptr) << reg;
  EXPECT_EQ(rule->kind, RuleKind::kOffset);
  EXPECT_EQ(rule->value, offset);
}

void expect_prologue_rows(const std::vector<uint8_t>& f, std::initializer_list<uint64_t> after) {
  // addi sp,sp,-32; sd ra,24(sp); sd s0,16(sp); addi s0,sp,32; nop; ret
  const std::vector<uint64_t> at_insn(after);
  UnwindRow row;
  ASSERT_EQ(activation_at(f, 0, &row), FallbackKind::kPrologue);
  EXPECT_EQ(row.cfa.reg, rv::kSp);
  EXPECT_EQ(row.cfa.offset, 0);
  EXPECT_EQ(row.find(rv::kRa), nullptr);  // still in ra
  ASSERT_EQ(activation_at(f, at_insn[0], &row), FallbackKind::kPrologue);
  EXPECT_EQ(row.cfa.offset, 32);
  EXPECT_EQ(row.find(rv::kRa), nullptr);
  ASSERT_EQ(activation_at(f, at_insn[1], &row), FallbackKind::kPrologue);
  expect_rule(row, rv::kRa, -8);
  EXPECT_EQ(row.find(rv::kFp), nullptr);
  ASSERT_EQ(activation_at(f, at_insn[3], &row), FallbackKind::kPrologue);  // after addi s0 and the nop
  EXPECT_EQ(row.cfa.offset, 32);
  expect_rule(row, rv::kRa, -8);
  expect_rule(row, rv::kFp, -16);
  // At the ret: the frame is down.
  ASSERT_EQ(activation_at(f, at_insn[4], &row), FallbackKind::kPrologue);
  EXPECT_EQ(row.cfa.offset, 0);
  EXPECT_EQ(row.find(rv::kRa), nullptr);
}

TEST(Riscv64Machine, PrologueRowsOfAnActivation) {
  expect_prologue_rows(code({0xfe010113, 0x00113c23, 0x00813823, 0x02010413, 0x00000013, 0x00008067}),
                       {4, 8, 12, 16, 20});
  // The same, compressed: c.addi16sp; c.sdsp ra; c.sdsp s0; c.addi4spn s0; c.nop; c.ret.
  expect_prologue_rows(code({0x1101, 0xec06, 0xe822, 0x1000, 0x0001, 0x8082}), {2, 4, 6, 8, 10});
}

TEST(Riscv64Machine, PrologueRowAtAReturnAddress) {
  const RegisterFile regs = at(0x7000, 0x6000);  // s0 not a frame pointer
  FallbackInput in;
  in.registers = &regs;
  in.function_known = true;
  UnwindRow row;
  // Shrink-wrapped (glibc's, gcc's -O2): beqz a0,1f; ret; 1: addi sp,sp,-16; sd ra,8(sp); jal ...
  const std::vector<uint8_t> wrapped = code({0xc111, 0x8082, 0x1141, 0xe406, 0xfedff0ef});
  in.function_code = Bytes(wrapped.data(), wrapped.size());
  ASSERT_EQ(m().fallback_row(in, &row), FallbackKind::kPrologue);
  EXPECT_EQ(row.cfa.offset, 16);
  expect_rule(row, rv::kRa, -8);
  // glibc's abort: other instructions among the saves (auipc s0 after s0's save).
  const std::vector<uint8_t> abort_start = code({0x7131, 0xf922, 0x00100417, 0x48c40413, 0x641c, 0xf526, 0xfd06,
                                                 0x03278063});
  in.function_code = Bytes(abort_start.data(), abort_start.size());
  ASSERT_EQ(m().fallback_row(in, &row), FallbackKind::kPrologue);
  EXPECT_EQ(row.cfa.offset, 192);
  expect_rule(row, rv::kRa, -8);
  expect_rule(row, rv::kFp, -16);
  // No save of ra before the first call or branch: no row (a return
  // address's frame has saved it), nor a frame-pointer guess here.
  const std::vector<uint8_t> unsaved = code({0x1141, 0xfedff0ef, 0xe406});
  in.function_code = Bytes(unsaved.data(), unsaved.size());
  EXPECT_EQ(m().fallback_row(in, &row), std::nullopt);
  // An instruction writing sp otherwise (mv sp,a0) ends the prologue.
  const std::vector<uint8_t> moved = code({0x812a, 0xe406});
  in.function_code = Bytes(moved.data(), moved.size());
  EXPECT_EQ(m().fallback_row(in, &row), std::nullopt);
}

TEST(Riscv64Machine, PerfRegisters) {
  uint64_t values[32] = {};
  for (unsigned i = 0; i < 32; ++i) values[i] = 0x100 + i;
  const RegisterFile r = m().registers_from_perf_sample(m().perf_sample_register_mask(), values);
  EXPECT_EQ(r.get(rv::kPc), 0x100u);
  EXPECT_EQ(r.get(rv::kRa), 0x101u);
  EXPECT_EQ(r.get(rv::kSp), 0x102u);
  EXPECT_EQ(r.get(31), 0x11fu);
}

}  // namespace
}  // namespace framewalk::arch

// The 32-bit PowerPC machine descriptor on hand-written bytes: its key
// (ELFCLASS32, big-endian), the kernel's gregset of 4-byte words and the
// fpregset of doubles, the ucontext, both trampolines and the frames they
// restore from (struct sigframe through sigcontext.regs, struct rt_sigframe
// through uc_regs, over a fake stack), calls before return addresses, the
// back chain with its LR save word 4 bytes up, and gcc's ppc32 prologues.
#include <gtest/gtest.h>

#include <vector>

#include "arch/machine.hpp"
#include "arch/ppc/frames.hpp"
#include "arch/ppc/machine.hpp"
#include "support/power_signal_frame.hpp"
#include "support/sparse_memory.hpp"
#include "unwind/unwinder.hpp"

namespace framewalk::arch {
namespace {

namespace p = ppc;

constexpr uint64_t kCodeBase = 0x10000000;
const Machine& m() { return p::machine(); }

// Big-endian values of `size` bytes: value i is base + i.
std::vector<uint8_t> numbered(size_t count, uint64_t base, unsigned size) {
  std::vector<uint8_t> bytes(size * count);
  for (size_t i = 0; i < count; ++i)
    for (unsigned b = 0; b < size; ++b) bytes[size * i + b] = static_cast<uint8_t>((base + i) >> (8 * (size - 1 - b)));
  return bytes;
}
std::vector<uint8_t> code(std::initializer_list<uint32_t> insns) {
  std::vector<uint8_t> bytes;
  for (uint32_t i : insns) {
    const std::vector<uint8_t> one = numbered(1, i, 4);
    bytes.insert(bytes.end(), one.begin(), one.end());
  }
  return bytes;
}
Unwinder unwinder_over(Memory& memory) {
  static const ModuleMap no_modules;
  return Unwinder(no_modules, memory, usual_machine_key(kEmPpc));
}

TEST(MachineFor, Ppc) {
  const Machine* found = machine_for(usual_machine_key(kEmPpc));
  ASSERT_NE(found, nullptr);
  EXPECT_EQ(found, &m());
  EXPECT_EQ(m().stack_pointer(), p::kR1);
  EXPECT_EQ(m().program_counter(), p::kNip);
  EXPECT_EQ(m().return_address_column(), p::kLr);
  EXPECT_TRUE(m().link_register());
  EXPECT_EQ(m().address_size(), 4);
  EXPECT_EQ(m().endian(), Endian::kBig);
  EXPECT_NE(supported_machine_names().find("ppc"), std::string::npos);
  EXPECT_EQ(machine_for({kEmPpc, false, Endian::kLittle, 0}), nullptr);  // little-endian ppc32
  EXPECT_EQ(machine_for({kEmPpc64, true, Endian::kBig, 1}), nullptr);    // big-endian ELFv1 ppc64
  EXPECT_EQ(dwarf_register_name(dwarf_arch_for(usual_machine_key(kEmPpc)), 65), nullptr);  // readelf: "r65"
  EXPECT_EQ(m().lookup_pc(0x10000800, false), 0x100007fcu);
  EXPECT_EQ(m().register_size(p::kLr), 4);
  EXPECT_EQ(m().register_size(p::kF0 + 14), 8);
  EXPECT_EQ(m().register_size(70), 4);
}

TEST(PpcMachine, FollowsCalls) {
  for (auto [insn, call] : {std::pair{0x4bfffe81u, true}, {0x4e800421u, true}, {0x4e800021u, true},
                            {0x4bfffe80u, false}, {0x4e800420u, false}, {0x60000000u, false}}) {
    const std::vector<uint8_t> bytes = code({0x60000000, insn});
    BufferMemory memory(Bytes(bytes.data(), bytes.size()), kCodeBase);
    EXPECT_EQ(m().follows_call(memory, kCodeBase + 8), call) << std::hex << insn;
    EXPECT_FALSE(m().follows_call(memory, kCodeBase + 6));
  }
}

TEST(PpcMachine, RegistersFromTheGregsetAndFpregset) {
  const std::vector<uint8_t> gregset = numbered(p::kGregsCount, 0x1000, 4);
  ASSERT_EQ(m().gregset_size(), 192u);
  const RegisterFile r = m().registers_from_gregset(Bytes(gregset.data(), gregset.size()));
  EXPECT_EQ(r.get(p::kR0), 0x1000u);
  EXPECT_EQ(r.get(p::kR1), 0x1001u);
  EXPECT_EQ(r.get(p::kR31), 0x101fu);
  EXPECT_EQ(r.get(p::kNip), 0x1020u);  // then msr, orig_gpr3
  EXPECT_EQ(r.get(p::kCtr), 0x1023u);
  EXPECT_EQ(r.get(p::kLr), 0x1024u);
  EXPECT_EQ(r.get(p::kXer), 0x1025u);
  EXPECT_FALSE(m().registers_from_gregset(Bytes(gregset.data(), 4 * 33)).known(p::kLr));
  // NT_PRFPREG: f0-f31 as doubles, fpscr.
  const std::vector<uint8_t> fpregs = numbered(33, 0x3000'0000'0000, 8);
  RegisterFile with_fp = r;
  m().add_fpregset(Bytes(fpregs.data(), fpregs.size()), &with_fp);
  EXPECT_EQ(with_fp.get(p::kF0), 0x3000'0000'0000u);
  EXPECT_EQ(with_fp.get(p::kF0 + 31), 0x3000'0000'001fu);
  // A ucontext: its uc_mcontext 192 bytes in.
  std::vector<uint8_t> uc(p::kUcontextMcontextOffset, 0xee);
  uc.insert(uc.end(), gregset.begin(), gregset.end());
  uc.insert(uc.end(), fpregs.begin(), fpregs.end());
  const RegisterFile from_uc = m().registers_from_ucontext(Bytes(uc.data(), uc.size()));
  EXPECT_EQ(from_uc.get(p::kNip), 0x1020u);
  EXPECT_EQ(from_uc.get(p::kF0 + 14), 0x3000'0000'000eu);
  EXPECT_FALSE(m().registers_from_ucontext(Bytes(uc.data(), 100)).known(p::kNip));
}

TEST(PpcMachine, TrampolinesByTheirCode) {
  // qemu's trampoline page: li r0,119; sc, then li r0,172; sc.
  const std::vector<uint8_t> bytes = code({0x38000077, 0x44000002, 0x380000ac, 0x44000002, 0x38000076, 0x44000002});
  BufferMemory memory(Bytes(bytes.data(), bytes.size()), kCodeBase);
  EXPECT_TRUE(m().is_signal_trampoline(memory, kCodeBase));
  EXPECT_TRUE(m().is_signal_trampoline(memory, kCodeBase + 8));
  EXPECT_FALSE(m().is_signal_trampoline(memory, kCodeBase + 4));
  EXPECT_FALSE(m().is_signal_trampoline(memory, kCodeBase + 16));  // li r0,118
  EXPECT_FALSE(m().is_signal_trampoline(memory, kCodeBase + 2));
}

// A fake signal frame: the mcontext `mcontext` bytes above r1, its gregs
// slot i holding 0x2000 + i and fregs slot i 0x4000 + i, and the pointer to
// it at `pointer` above r1; the rest of the frame other words.
void expect_restored(uint32_t trampoline_nr, uint64_t pointer, uint64_t mcontext) {
  test::SparseMemory mem;
  const std::vector<uint8_t> tramp = code({0x38000000 | trampoline_nr, 0x44000002});
  mem.code(kCodeBase, tramp.data(), tramp.size());
  constexpr uint64_t kSp = 0x7fff0000;
  for (uint64_t a = kSp; a < kSp + mcontext + 500; a += 4) mem.put_big(a, 0x5a5a5a5a, 4);
  mem.put_big(kSp + pointer, kSp + mcontext, 4);
  for (unsigned i = 0; i < p::kGregsCount; ++i) mem.put_big(kSp + mcontext + 4 * i, 0x2000 + i, 4);
  for (unsigned i = 0; i < 33; ++i) mem.put_big(kSp + mcontext + 192 + 8 * i, 0x4000 + i, 8);
  test::expect_numbered_registers_restored(m(), mem, kCodeBase, kSp);
}

TEST(PpcMachine, SigreturnFrameThroughSigcontextRegs) {
  // struct sigframe 64 bytes above r1: its sigcontext's `regs` (28 bytes
  // in) points at the mcontext after the 32-byte sigcontext.
  expect_restored(119, 64 + 28, 64 + 32);
}

TEST(PpcMachine, RtSigreturnFrameThroughUcRegs) {
  // struct rt_sigframe 80 bytes above r1: siginfo (128 bytes), then the
  // ucontext, whose uc_regs (48 bytes in) points at uc_mcontext (192 in).
  expect_restored(172, 80 + 128 + 48, 80 + 128 + 192);
}

RegisterFile at(uint64_t sp) { return test::power_registers_at(sp, kCodeBase + 0x100); }

TEST(PpcMachine, BackChainAtAReturnAddress) {
  const RegisterFile regs = at(0x7000);
  FallbackInput in;
  in.registers = &regs;
  UnwindRow row;
  ASSERT_EQ(m().fallback_row(in, &row), FallbackKind::kFramePointer);
  // 0(r1): the caller's r1; 4 bytes into the caller's frame: its LR save word.
  test::SparseMemory mem;
  mem.put_big(0x7000, 0x7040, 4);
  mem.put_big(0x7044, 0x10000444, 4);
  auto caller = unwinder_over(mem).apply_row(row, regs);
  ASSERT_TRUE(caller.ok());
  EXPECT_EQ(caller->get(p::kR1), 0x7040u);
  EXPECT_EQ(caller->get(p::kNip), 0x10000444u);
  // A null back chain word: the return address 0, the end of the stack.
  const RegisterFile first = at(0x7100);
  in.registers = &first;
  ASSERT_EQ(m().fallback_row(in, &row), FallbackKind::kFramePointer);
  mem.put_big(0x7100, 0, 4);
  auto none = unwinder_over(mem).apply_row(row, first);
  ASSERT_TRUE(none.ok());
  EXPECT_EQ(none->get(p::kNip), 0u);
  // A null r1 ends the chain; a misaligned one is no frame.
  const RegisterFile end = at(0);
  in.registers = &end;
  ASSERT_EQ(m().fallback_row(in, &row), FallbackKind::kFramePointer);
  ASSERT_NE(row.find(p::kLr), nullptr);
  EXPECT_EQ(row.find(p::kLr)->kind, RuleKind::kUndefined);
  const RegisterFile odd = at(0x7002);
  in.registers = &odd;
  EXPECT_EQ(m().fallback_row(in, &row), std::nullopt);
}

// The fallback row of a frame in `f`: an activation at `offset`, or a
// frame at a return address (`offset` past the start).
std::optional<FallbackKind> row_in(const std::vector<uint8_t>& f, uint64_t offset, bool activation, UnwindRow* row) {
  static const RegisterFile regs = at(0x7000);
  FallbackInput in;
  in.registers = &regs;
  in.activation = activation;
  in.function_known = true;
  in.pc_offset = offset;
  in.function_code = Bytes(f.data(), activation ? offset : f.size());
  in.code_at_pc = Bytes(f.data() + offset, f.size() - offset);
  return m().fallback_row(in, row);
}

// The row prologue analysis gives `f` at `offset`: CFA = r1 + `cfa`, and
// the return address in LR (lr_kind nullopt), in r0 or saved at CFA + 4.
void expect_prologue_row(const std::vector<uint8_t>& f, uint64_t offset, int64_t cfa,
                         std::optional<RuleKind> lr_kind) {
  UnwindRow row;
  ASSERT_EQ(row_in(f, offset, true, &row), FallbackKind::kPrologue) << offset;
  EXPECT_EQ(row.cfa.reg, p::kR1);
  EXPECT_EQ(row.cfa.offset, cfa) << offset;
  const RegisterRule* lr = row.find(p::kLr);
  ASSERT_EQ(lr != nullptr, lr_kind.has_value()) << offset;
  if (!lr) return;
  EXPECT_EQ(lr->kind, *lr_kind) << offset;
  EXPECT_EQ(lr->value, *lr_kind == RuleKind::kRegister ? int64_t{p::kR0} : 4) << offset;
}

TEST(PpcMachine, PrologueRowsOfAnActivation) {
  // gcc's ppc32 order: stwu r1,-32(r1); mflr r0; stw r31,28(r1); stw r0,36(r1); (body) nop; blr
  const std::vector<uint8_t> f = code({0x9421ffe0, 0x7c0802a6, 0x93e1001c, 0x90010024, 0x60000000, 0x4e800020});
  expect_prologue_row(f, 0, 0, std::nullopt);
  expect_prologue_row(f, 4, 32, std::nullopt);
  expect_prologue_row(f, 8, 32, RuleKind::kRegister);
  expect_prologue_row(f, 16, 32, RuleKind::kOffset);
  expect_prologue_row(f, 20, 0, std::nullopt);  // at the blr: the frame is down
  // The other order: mflr r0; stw r0,4(r1); stwu r1,-16(r1).
  const std::vector<uint8_t> g = code({0x7c0802a6, 0x90010004, 0x9421fff0, 0x60000000});
  expect_prologue_row(g, 8, 0, RuleKind::kOffset);
  expect_prologue_row(g, 12, 16, RuleKind::kOffset);
  // gcc's -msecure-plt code reaching its GOT: stwu r1,-16(r1); mflr r0; bcl 20,31,.+4; stw r30,8(r1);
  // mflr r30; addis r30,r30,2; stw r0,20(r1); (PC) lwz r9,0(r30).
  const std::vector<uint8_t> pic = code({0x9421fff0, 0x7c0802a6, 0x429f0005, 0x93c10008, 0x7fc802a6, 0x3fde0002,
                                         0x90010014, 0x813e0000});
  expect_prologue_row(pic, 12, 16, RuleKind::kRegister);
  expect_prologue_row(pic, 24, 16, RuleKind::kRegister);
  expect_prologue_row(pic, 28, 16, RuleKind::kOffset);
  // bcl before the return address is in r0, or r0 written before its store: no guess.
  UnwindRow row;
  EXPECT_EQ(row_in(code({0x429f0005, 0x60000000}), 4, true, &row), std::nullopt);
  EXPECT_EQ(row_in(code({0x7c0802a6, 0x38000001, 0x60000000}), 8, true, &row), std::nullopt);  // li r0,1
  // A frameless leaf: lis r9,4098; (PC) lwz r3,0(r9): the entry row.
  expect_prologue_row(code({0x3d201002, 0x80690000}), 4, 0, std::nullopt);
  // r1 moved otherwise (addi r1,r1,-16; lwz r1,0(r1)), a branch or mtlr before the PC: no guess.
  for (uint32_t insn : {0x3821fff0u, 0x80210000u, 0x48000010u, 0x7c0803a6u})
    EXPECT_EQ(row_in(code({insn, 0x60000000}), 4, true, &row), std::nullopt) << std::hex << insn;
}

TEST(PpcMachine, BackChainRowsRestoreTheProloguesSaves) {
  // stwu r1,-32(r1); mflr r0; stmw r29,20(r1); stw r0,36(r1); mr r31,r1; bl f; stw r14,8(r1)
  const std::vector<uint8_t> f = code({0x9421ffe0, 0x7c0802a6, 0xbfa10014, 0x90010024, 0x7c3f0b78, 0x48000101,
                                       0x91c10008});
  UnwindRow row;
  ASSERT_EQ(row_in(f, 24, false, &row), FallbackKind::kFramePointer);
  for (auto [reg, offset] : {std::pair{29, -12}, {30, -8}, {31, -4}}) {
    const RegisterRule* rule = row.find(static_cast<uint16_t>(reg));
    ASSERT_NE(rule, nullptr) << reg;
    EXPECT_EQ(rule->kind, RuleKind::kOffset);
    EXPECT_EQ(rule->value, offset) << reg;
  }
  EXPECT_EQ(row.find(14), nullptr);  // after the call: not the prologue's
  EXPECT_EQ(row.find(p::kLr)->kind, RuleKind::kValExpression);  // the back chain's LR save word
  // r1 4 bytes above the caller's r1's slot: the registers come back through the back chain.
  test::SparseMemory mem;
  mem.put_big(0x7000, 0x7020, 4);
  mem.put_big(0x7024, 0x10000444, 4);
  for (uint64_t a = 0x7014; a < 0x7020; a += 4) mem.put_big(a, a, 4);
  auto caller = unwinder_over(mem).apply_row(row, at(0x7000));
  ASSERT_TRUE(caller.ok());
  EXPECT_EQ(caller->get(p::kNip), 0x10000444u);
  EXPECT_EQ(caller->get(p::kR31), 0x701cu);
}

}  // namespace
}  // namespace framewalk::arch

// The s390x machine descriptor on hand-written bytes: the kernel's gregset,
// fpregset and ucontext layouts (big-endian), both signal trampolines and
// the frames they restore from (struct sigframe and struct rt_sigframe over
// a fake stack), calls before return addresses, the caller's stack pointer
// 160 bytes below the CFA, and the prologue rows.
#include <gtest/gtest.h>

#include <vector>

#include "arch/machine.hpp"
#include "arch/s390x/frames.hpp"
#include "arch/s390x/machine.hpp"
#include "support/sparse_memory.hpp"
#include "unwind/unwinder.hpp"

namespace framewalk::arch {
namespace {

namespace x = s390x;

constexpr uint64_t kCodeBase = 0x1000400;

void put_be(std::vector<uint8_t>* bytes, size_t offset, uint64_t value, unsigned size) {
  for (unsigned i = 0; i < size; ++i) (*bytes)[offset + i] = static_cast<uint8_t>(value >> (8 * (size - 1 - i)));
}

void put_be(test::SparseMemory* mem, uint64_t address, uint64_t value, unsigned size) {
  uint8_t b[8];
  for (unsigned i = 0; i < size; ++i) b[i] = static_cast<uint8_t>(value >> (8 * (size - 1 - i)));
  mem->code(address, b, size);
}

TEST(MachineFor, S390x) {
  const Machine* m = machine_for(usual_machine_key(kEmS390));
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(m, &x::machine());
  EXPECT_EQ(m->stack_pointer(), x::kR15);
  EXPECT_EQ(m->frame_pointer(), x::kR11);
  EXPECT_EQ(m->program_counter(), x::kPswAddress);
  EXPECT_EQ(m->return_address_column(), x::kR14);
  EXPECT_TRUE(m->link_register());
  EXPECT_EQ(m->address_size(), 8);
  EXPECT_EQ(m->endian(), Endian::kBig);
  EXPECT_EQ(m->caller_stack_pointer(0x7fff0100), 0x7fff0060u);
  EXPECT_NE(supported_machine_names().find("s390x"), std::string::npos);
  // 31-bit s390 is another machine.
  MachineKey s390 = usual_machine_key(kEmS390);
  s390.is_64 = false;
  EXPECT_EQ(machine_for(s390), &x::s390_machine());
  // Elsewhere the caller's SP is the CFA.
  EXPECT_EQ(machine_for(usual_machine_key(kEmX86_64))->caller_stack_pointer(0x7000), 0x7000u);
}

TEST(S390xMachine, LookupPcInsideTheCall) {
  EXPECT_EQ(x::machine().lookup_pc(0x1000600, true), 0x1000600u);
  EXPECT_EQ(x::machine().lookup_pc(0x1000600, false), 0x10005feu);
}

bool follows_call(std::vector<uint8_t> tail) {
  std::vector<uint8_t> bytes(8, 0x07);  // nopr-like filler (bcr 0,...)
  bytes.insert(bytes.end(), tail.begin(), tail.end());
  BufferMemory memory(Bytes(bytes.data(), bytes.size()), kCodeBase);
  return x::machine().follows_call(memory, kCodeBase + bytes.size());
}

TEST(S390xMachine, FollowsCalls) {
  EXPECT_TRUE(follows_call({0xc0, 0xe5, 0x00, 0x00, 0x01, 0x23}));  // brasl %r14,...
  EXPECT_TRUE(follows_call({0x0d, 0xe1}));                          // basr %r14,%r1
  EXPECT_TRUE(follows_call({0x07, 0x00, 0xa7, 0xe5, 0x00, 0x10}));  // bras %r14,...
  EXPECT_TRUE(follows_call({0x07, 0x00, 0x4d, 0xe0, 0x10, 0x00}));  // bas %r14,0(%r1)
  EXPECT_FALSE(follows_call({0x0d, 0xd0}));                         // basr %r13,0: no branch
  EXPECT_FALSE(follows_call({0xc0, 0xf4, 0x00, 0x00, 0x01, 0x23}));  // brcl 15,...: a jump
  EXPECT_FALSE(follows_call({0x07, 0xfe}));                         // br %r14
  // An odd return address is none.
  const uint8_t brasl[] = {0xc0, 0xe5, 0x00, 0x00, 0x01, 0x23, 0x00};
  BufferMemory memory(Bytes(brasl, sizeof brasl), kCodeBase);
  EXPECT_FALSE(x::machine().follows_call(memory, kCodeBase + 7));
}

TEST(S390xMachine, RegistersFromTheKernelsGregset) {
  std::vector<uint8_t> gregset(x::kUserRegsSize);
  ASSERT_EQ(x::machine().gregset_size(), 216u);
  put_be(&gregset, 0, 0x0705200180000000, 8);  // psw mask
  put_be(&gregset, 8, 0x10005f2, 8);           // psw address
  for (unsigned i = 0; i < 16; ++i) put_be(&gregset, 16 + 8 * i, 0x1000 + i, 8);
  for (unsigned i = 0; i < 16; ++i) put_be(&gregset, 144 + 4 * i, 0x2000 + i, 4);
  const RegisterFile r = x::machine().registers_from_gregset(Bytes(gregset.data(), gregset.size()));
  EXPECT_EQ(r.get(x::kPswMask), 0x0705200180000000u);
  EXPECT_EQ(r.get(x::kPswAddress), 0x10005f2u);
  EXPECT_EQ(r.get(0), 0x1000u);
  EXPECT_EQ(r.get(x::kR14), 0x100eu);
  EXPECT_EQ(r.get(x::kR15), 0x100fu);
  EXPECT_EQ(r.get(x::kA0 + 1), 0x2001u);
  // Cut off in r15: not known.
  const RegisterFile cut = x::machine().registers_from_gregset(Bytes(gregset.data(), 16 + 8 * 15 + 4));
  EXPECT_EQ(cut.get(x::kR14), 0x100eu);
  EXPECT_FALSE(cut.known(x::kR15));
}

TEST(S390xMachine, FloatingPointRegistersFromNtPrfpreg) {
  std::vector<uint8_t> fpregs(8 + 16 * 8);
  for (unsigned i = 0; i < 16; ++i) put_be(&fpregs, 8 + 8 * i, 0x3000 + i, 8);
  RegisterFile r;
  x::machine().add_fpregset(Bytes(fpregs.data(), fpregs.size()), &r);
  EXPECT_EQ(r.get(16), 0x3000u);  // f0
  EXPECT_EQ(r.get(17), 0x3002u);  // f2
  EXPECT_EQ(r.get(20), 0x3001u);  // f1
  EXPECT_EQ(r.get(24), 0x3008u);  // f8
  EXPECT_EQ(r.get(31), 0x300fu);  // f15
  EXPECT_EQ(x::fpr_dwarf(9), 28u);
}

TEST(S390xMachine, RegistersFromAUcontext) {
  std::vector<uint8_t> uc(x::kUcontextMcontextOffset + x::kSigregsSize);
  put_be(&uc, x::kUcontextMcontextOffset + 8, 0x1000abc, 8);
  for (unsigned i = 0; i < 16; ++i) put_be(&uc, x::kUcontextMcontextOffset + 16 + 8 * i, 0x1000 + i, 8);
  put_be(&uc, x::kUcontextMcontextOffset + x::kSigregsFprsOffset + 8 * 8, 0x3008, 8);
  const RegisterFile r = x::machine().registers_from_ucontext(Bytes(uc.data(), uc.size()));
  EXPECT_EQ(r.get(x::kPswAddress), 0x1000abcu);
  EXPECT_EQ(r.get(x::kR15), 0x100fu);
  EXPECT_EQ(r.get(24), 0x3008u);
}

TEST(S390xMachine, BothTrampolinesByTheirCode) {
  const uint8_t code[] = {0x0a, 0x77, 0x0a, 0xad, 0x0a, 0xae, 0x0a};
  BufferMemory memory(Bytes(code, sizeof code), kCodeBase);
  EXPECT_TRUE(x::machine().is_signal_trampoline(memory, kCodeBase));
  EXPECT_TRUE(x::machine().is_signal_trampoline(memory, kCodeBase + 2));
  EXPECT_FALSE(x::machine().is_signal_trampoline(memory, kCodeBase + 4));  // svc 174 (rt_sigaction)
  EXPECT_FALSE(x::machine().is_signal_trampoline(memory, kCodeBase + 6));  // truncated
  EXPECT_FALSE(x::machine().is_signal_trampoline(memory, kCodeBase + 1));  // odd
}

// A fake signal frame at `sp` of `abi`'s layout, its _sigregs at `sigregs`:
// gprs[i] = 0x2000 + i, psw address 0x1000abc (31-bit: with the
// addressing-mode bit, as the kernel stores it), f8 0x3008; the row must
// restore them.
void expect_restored(const Machine& m, const x::Abi& abi, const uint8_t* code, uint64_t sp, uint64_t sigregs,
                     bool sregs_pointer) {
  const unsigned w = abi.word;
  test::SparseMemory mem;
  const uint64_t pc = sp + 0x1000;
  mem.code(pc, code, 2);
  if (sregs_pointer) put_be(&mem, sp + abi.sigcontext_sregs, sigregs, w);
  put_be(&mem, sigregs + w, 0x1000abc | (w == 4 ? 0x80000000 : 0), w);
  for (unsigned i = 0; i < 16; ++i) put_be(&mem, sigregs + abi.sigregs_gprs() + w * i, 0x2000 + i, w);
  for (unsigned i = 0; i < 16; ++i) put_be(&mem, sigregs + abi.sigregs_fprs() + 8 * i, 0x3000 + i, 8);
  UnwindRow row;
  ASSERT_TRUE(m.signal_frame_row(mem, pc, &row));
  EXPECT_TRUE(row.signal_frame);
  static const ModuleMap no_modules;
  Unwinder unwinder(no_modules, mem, m.key());
  RegisterFile regs;
  regs.set(x::kPswAddress, pc);
  regs.set(x::kR15, sp);
  auto interrupted = unwinder.apply_row(row, regs);
  ASSERT_TRUE(interrupted.ok());
  EXPECT_EQ(interrupted->get(x::kPswAddress), 0x1000abcu);
  EXPECT_EQ(interrupted->get(0), 0x2000u);
  EXPECT_EQ(interrupted->get(x::kR11), 0x200bu);
  EXPECT_EQ(interrupted->get(x::kR14), 0x200eu);
  EXPECT_EQ(interrupted->get(x::kR15), 0x200fu);
  EXPECT_EQ(interrupted->get(24), 0x3008u);
  EXPECT_EQ(interrupted->get(20), 0x3001u);
}

TEST(S390xMachine, RtSigframeRestoresFromTheUcontext) {
  expect_restored(x::machine(), x::kS390xAbi, x::kRtSigreturnCode, 0x7fff0000, 0x7fff0000 + 336, false);
}

TEST(S390xMachine, SigframeRestoresWhereSregsPoints) {
  expect_restored(x::machine(), x::kS390xAbi, x::kSigreturnCode, 0x7fff0000, 0x7fff0000 + 176, true);
}

// stmg %r6,%r15,48(%r15); aghi %r15,-160; lgr %r11,%r15; (body) lmg ...; br %r14
const uint8_t kFramed[] = {0xeb, 0x6f, 0xf0, 0x30, 0x00, 0x24, 0xa7, 0xfb, 0xff, 0x60, 0xb9, 0x04,
                           0x00, 0xbf, 0xe3, 0x10, 0xb0, 0xa8, 0x00, 0x04, 0x07, 0xfe};

TEST(S390xMachine, PrologueRows) {
  UnwindRow row;
  // A return-address frame: CFA = r11 + 320, r14 saved at 112(entry r15) = CFA - 48.
  ASSERT_TRUE(x::prologue_row(Bytes(kFramed, sizeof kFramed), x::kReturnAddressFrame, &row, x::kS390xAbi));
  EXPECT_EQ(row.cfa.reg, x::kR11);
  EXPECT_EQ(row.cfa.offset, 320);
  ASSERT_NE(row.find(x::kR14), nullptr);
  EXPECT_EQ(row.find(x::kR14)->value, -48);
  ASSERT_NE(row.find(6), nullptr);
  EXPECT_EQ(row.find(6)->value, -112);
  EXPECT_EQ(row.find(x::kR15), nullptr);  // the CFA gives it
  // An activation after the stmg: CFA = r15 + 160, r14 saved.
  ASSERT_TRUE(x::prologue_row(Bytes(kFramed, 6), 6, &row, x::kS390xAbi));
  EXPECT_EQ(row.cfa.reg, x::kR15);
  EXPECT_EQ(row.cfa.offset, 160);
  ASSERT_NE(row.find(x::kR14), nullptr);
  // After the aghi: CFA = r15 + 320.
  ASSERT_TRUE(x::prologue_row(Bytes(kFramed, 10), 10, &row, x::kS390xAbi));
  EXPECT_EQ(row.cfa.offset, 320);
  // lay %r15,-200(%r15) (e3 f0 ff 38 ff 71) and agfi %r15,-4096 (c2 f8 ff ff f0 00).
  const uint8_t lay[] = {0xeb, 0xef, 0xf0, 0x70, 0x00, 0x24, 0xe3, 0xf0, 0xff, 0x38, 0xff, 0x71};
  ASSERT_TRUE(x::prologue_row(Bytes(lay, sizeof lay), sizeof lay, &row, x::kS390xAbi));
  EXPECT_EQ(row.cfa.offset, 360);
  EXPECT_EQ(row.find(x::kR14)->value, -48);
  const uint8_t agfi[] = {0xeb, 0xef, 0xf0, 0x70, 0x00, 0x24, 0xc2, 0xf8, 0xff, 0xff, 0xf0, 0x00};
  ASSERT_TRUE(x::prologue_row(Bytes(agfi, sizeof agfi), sizeof agfi, &row, x::kS390xAbi));
  EXPECT_EQ(row.cfa.offset, 160 + 4096);
  // A return-address frame whose prologue did not save r14: unknown.
  const uint8_t no_save[] = {0xa7, 0xfb, 0xff, 0x60, 0x07, 0xfe};
  EXPECT_FALSE(x::prologue_row(Bytes(no_save, sizeof no_save), x::kReturnAddressFrame, &row, x::kS390xAbi));
  // Code that ends inside the prologue: unknown.
  EXPECT_FALSE(x::prologue_row(Bytes(kFramed, 8), x::kReturnAddressFrame, &row, x::kS390xAbi));
}

TEST(S390xMachine, PrologueStepsOverScheduledInstructions) {
  UnwindRow row;
  // A shrink-wrapped leaf: ltgr %r2,%r2; bner %r14; stmg %r14,%r15,112(%r15); lay %r15,-160(%r15); brasl.
  const uint8_t leaf[] = {0xb9, 0x02, 0x00, 0x22, 0x07, 0x7e, 0xeb, 0xef, 0xf0, 0x70, 0x00, 0x24,
                          0xe3, 0xf0, 0xff, 0x60, 0xff, 0x71, 0xc0, 0xe5, 0xff, 0xff, 0xff, 0x5f};
  ASSERT_TRUE(x::prologue_row(Bytes(leaf, sizeof leaf), x::kReturnAddressFrame, &row, x::kS390xAbi));
  EXPECT_EQ(row.cfa.offset, 320);
  EXPECT_EQ(row.find(x::kR14)->value, -48);
  // chi %r2,1000; je +0x56 (an early exit); stmg %r10,%r15,80(%r15); lay; lgr %r10,%r2; lgr %r11,%r15.
  const uint8_t early_exit[] = {0xa7, 0x2e, 0x03, 0xe8, 0xa7, 0x84, 0x00, 0x2b, 0xeb, 0xaf, 0xf0, 0x50,
                                0x00, 0x24, 0xe3, 0xf0, 0xff, 0x60, 0xff, 0x71, 0xb9, 0x04, 0x00, 0xa2,
                                0xb9, 0x04, 0x00, 0xbf, 0xc0, 0xe5, 0x00, 0x00, 0x00, 0x30};
  ASSERT_TRUE(x::prologue_row(Bytes(early_exit, sizeof early_exit), x::kReturnAddressFrame, &row, x::kS390xAbi));
  EXPECT_EQ(row.cfa.reg, x::kR11);
  EXPECT_EQ(row.cfa.offset, 320);
  EXPECT_EQ(row.find(x::kR14)->value, -48);
  // An activation at the branch's target (past it: the branch may have been taken) knows nothing more.
  ASSERT_TRUE(x::prologue_row(Bytes(early_exit, sizeof early_exit), 0x5a, &row, x::kS390xAbi));
  EXPECT_EQ(row.cfa.reg, x::kR15);
  EXPECT_EQ(row.cfa.offset, 160);
  EXPECT_EQ(row.find(x::kR14), nullptr);
  // sllk %r1,%r2,3; srk %r2,%r1,%r2; stmg %r11,%r15,88(%r15); lay %r15,-160(%r15); lgr %r11,%r15; brasl.
  const uint8_t shifted[] = {0xeb, 0x12, 0x00, 0x03, 0x00, 0xdf, 0xb9, 0xf9, 0x20, 0x21, 0xeb, 0xbf, 0xf0, 0x58,
                             0x00, 0x24, 0xe3, 0xf0, 0xff, 0x60, 0xff, 0x71, 0xb9, 0x04, 0x00, 0xbf,
                             0xc0, 0xe5, 0xff, 0xff, 0xff, 0xdd};
  ASSERT_TRUE(x::prologue_row(Bytes(shifted, sizeof shifted), x::kReturnAddressFrame, &row, x::kS390xAbi));
  EXPECT_EQ(row.cfa.reg, x::kR11);
  EXPECT_EQ(row.find(x::kR11)->value, -72);
  // dsgr %r10,%r2 writes r10 and r11: the prologue ends before it.
  const uint8_t pair[] = {0xeb, 0xef, 0xf0, 0x70, 0x00, 0x24, 0xb9, 0x0d, 0x00, 0xa2, 0xe3, 0xf0, 0xff, 0x60, 0xff, 0x71};
  ASSERT_TRUE(x::prologue_row(Bytes(pair, sizeof pair), x::kReturnAddressFrame, &row, x::kS390xAbi));
  EXPECT_EQ(row.cfa.offset, 160);
}

TEST(S390xMachine, FallbackRowsStepThroughTheSaveArea) {
  // A leaf at its entry: CFA = r15 + 160; the caller's r15 is the callee's, the return address r14.
  test::SparseMemory mem;
  static const ModuleMap no_modules;
  Unwinder unwinder(no_modules, mem, usual_machine_key(kEmS390));
  RegisterFile regs;
  regs.set(x::kR15, 0x7fff0000);
  regs.set(x::kR14, 0x1000abc);
  regs.set(x::kPswAddress, kCodeBase);
  FallbackInput in;
  in.registers = &regs;
  in.activation = true;
  UnwindRow row;
  ASSERT_EQ(x::machine().fallback_row(in, &row), FallbackKind::kPrologue);
  auto caller = unwinder.apply_row(row, regs);
  ASSERT_TRUE(caller.ok());
  EXPECT_EQ(caller->get(x::kR15), 0x7fff0000u);
  EXPECT_EQ(caller->get(x::kPswAddress), 0x1000abcu);
  // A framed function at a return address: r14 and r15 from the save area.
  in.activation = false;
  in.function_known = true;
  in.function_code = Bytes(kFramed, sizeof kFramed);
  regs.set(x::kR11, 0x7fff0000);
  ASSERT_EQ(x::machine().fallback_row(in, &row), FallbackKind::kFramePointer);
  for (unsigned reg = 6; reg <= 15; ++reg) put_be(&mem, 0x7fff0000 + 160 + 8 * reg, 0x4000 + reg, 8);
  put_be(&mem, 0x7fff0000 + 160 + 112, 0x1000def, 8);
  caller = unwinder.apply_row(row, regs);
  ASSERT_TRUE(caller.ok());
  EXPECT_EQ(caller->get(x::kR15), 0x7fff0000u + 160);
  EXPECT_EQ(caller->get(x::kPswAddress), 0x1000defu);
  // At a `br %r14`: the frame is taken down.
  in.activation = true;
  in.code_at_pc = Bytes(kFramed + sizeof kFramed - 2, 2);
  ASSERT_EQ(x::machine().fallback_row(in, &row), FallbackKind::kPrologue);
  EXPECT_EQ(row.cfa.offset, 160);
  EXPECT_EQ(row.find(x::kR14), nullptr);
  // An unknown function at a return address: nothing.
  in.activation = false;
  in.function_known = false;
  EXPECT_EQ(x::machine().fallback_row(in, &row), std::nullopt);
}

TEST(S390xMachine, PerfRegisters) {
  EXPECT_EQ(x::machine().perf_sample_register_mask(), (uint64_t{1} << 34) - 1);
  std::vector<uint64_t> values(34);
  for (unsigned i = 0; i < 34; ++i) values[i] = 0x100 + i;
  const RegisterFile r = x::machine().registers_from_perf_sample((uint64_t{1} << 34) - 1, values);
  EXPECT_EQ(r.get(x::kR15), 0x10fu);
  EXPECT_EQ(r.get(17), 0x112u);  // f2: FP2 is perf register 18
  EXPECT_EQ(r.get(x::kPswMask), 0x120u);
  EXPECT_EQ(r.get(x::kPswAddress), 0x121u);
}

// 31-bit s390: s390x's instructions with 4-byte words, a 96-byte register
// save area, the compat kernel's layouts and the addressing-mode bit.
const Machine& s390() { return x::s390_machine(); }

TEST(S390Machine, AnotherAbiOfTheMachine) {
  const Machine& m = s390();
  EXPECT_EQ(m.address_size(), 4);
  EXPECT_EQ(m.stack_pointer(), x::kR15);
  EXPECT_EQ(m.program_counter(), x::kPswAddress);
  EXPECT_TRUE(m.link_register());
  EXPECT_EQ(m.caller_stack_pointer(0x7f000100), 0x7f0000a0u);
  EXPECT_EQ(m.register_size(x::kR14), 4);
  EXPECT_EQ(m.register_size(24), 8);  // f8
  EXPECT_NE((supported_machine_names() + ",").find(" s390,"), std::string::npos);
  // bras/brasl/basr in 31-bit mode leave the addressing-mode bit in r14.
  EXPECT_EQ(m.clean_return_address(0x80400122, 0), 0x400122u);
  EXPECT_EQ(x::machine().clean_return_address(0x80400122, 0), 0x80400122u);
}

TEST(S390Machine, RegistersFromTheCompatGregset) {
  // s390_compat_regs: psw mask and address, gprs, acrs (4 bytes each),
  // orig_gpr2, padded to 8.
  std::vector<uint8_t> gregset(144);
  ASSERT_EQ(s390().gregset_size(), 144u);
  put_be(&gregset, 0, 0x070d0000, 4);
  put_be(&gregset, 4, 0x804000ba, 4);  // the PSW address with the addressing-mode bit
  for (unsigned i = 0; i < 16; ++i) put_be(&gregset, 8 + 4 * i, 0x7f000000 + i, 4);
  for (unsigned i = 0; i < 16; ++i) put_be(&gregset, 72 + 4 * i, 0x2000 + i, 4);
  const RegisterFile r = s390().registers_from_gregset(Bytes(gregset.data(), gregset.size()));
  EXPECT_EQ(r.get(x::kPswMask), 0x070d0000u);
  EXPECT_EQ(r.get(x::kPswAddress), 0x4000bau);
  EXPECT_EQ(r.get(x::kR14), 0x7f00000eu);
  EXPECT_EQ(r.get(x::kR15), 0x7f00000fu);
  EXPECT_EQ(r.get(x::kA0 + 15), 0x200fu);
  // Cut off inside r15: r14 known, r15 not.
  const RegisterFile cut = s390().registers_from_gregset(Bytes(gregset.data(), 8 + 4 * 15 + 2));
  EXPECT_EQ(cut.get(x::kR14), 0x7f00000eu);
  EXPECT_FALSE(cut.known(x::kR15));
  EXPECT_FALSE(cut.known(x::kA0));
  // A ucontext32: uc_mcontext at 24, its fprs 144 bytes in.
  std::vector<uint8_t> uc(24 + 272);
  put_be(&uc, 24 + 4, 0x80400abc, 4);
  put_be(&uc, 24 + 8 + 4 * 15, 0x7f001000, 4);
  put_be(&uc, 24 + 144 + 8 * 8, 0x3008, 8);
  const RegisterFile u = s390().registers_from_ucontext(Bytes(uc.data(), uc.size()));
  EXPECT_EQ(u.get(x::kPswAddress), 0x400abcu);
  EXPECT_EQ(u.get(x::kR15), 0x7f001000u);
  EXPECT_EQ(u.get(24), 0x3008u);
}

TEST(S390Machine, RtSigframe32RestoresFromTheUcontext) {
  expect_restored(s390(), x::kS390Abi, x::kRtSigreturnCode, 0x7f000000, 0x7f000000 + 256, false);
}

TEST(S390Machine, Sigframe32RestoresWhereSregsPoints) {
  expect_restored(s390(), x::kS390Abi, x::kSigreturnCode, 0x7f000000, 0x7f000000 + 112, true);
}

TEST(S390Machine, ALyingSigframeIsAnError) {
  // sc.sregs points at nothing readable: the step fails, it does not crash.
  test::SparseMemory mem;
  const uint64_t sp = 0x7f000000, pc = 0x400200;
  mem.code(pc, x::kSigreturnCode, 2);
  put_be(&mem, sp + 104, 0x10, 4);
  UnwindRow row;
  ASSERT_TRUE(s390().signal_frame_row(mem, pc, &row));
  static const ModuleMap no_modules;
  Unwinder unwinder(no_modules, mem, s390().key());
  RegisterFile regs;
  regs.set(x::kPswAddress, pc);
  regs.set(x::kR15, sp);
  EXPECT_FALSE(unwinder.apply_row(row, regs).ok());
  // Nor with sc.sregs itself out of reach.
  regs.set(x::kR15, 0x10000000);
  EXPECT_FALSE(unwinder.apply_row(row, regs).ok());
}

// gcc -m31 -O2: lhi %r3,-4096; lhi %r1,3; nr %r1,%r2; stm %r14,%r15,56(%r15);
// sll %r1,2; ahi %r15,-120; la %r4,120(%r15); ar %r1,%r4; st %r2,4076(%r1,%r3);
// brasl %r14,trap.
const uint8_t kFramed31[] = {0xa7, 0x38, 0xf0, 0x00, 0xa7, 0x18, 0x00, 0x03, 0x14, 0x12, 0x90, 0xef,
                             0xf0, 0x38, 0x89, 0x10, 0x00, 0x02, 0xa7, 0xfa, 0xff, 0x88, 0x41, 0x40,
                             0xf0, 0x78, 0x1a, 0x14, 0x50, 0x21, 0x3f, 0xec, 0xc0, 0xe5, 0xff, 0xff,
                             0xff, 0xec};

TEST(S390Machine, PrologueRows) {
  UnwindRow row;
  // CFA = r15 + 96 + 120; r14 at 56(entry r15) = CFA - 40.
  ASSERT_TRUE(x::prologue_row(Bytes(kFramed31, sizeof kFramed31), x::kReturnAddressFrame, &row, x::kS390Abi));
  EXPECT_EQ(row.cfa.reg, x::kR15);
  EXPECT_EQ(row.cfa.offset, 216);
  ASSERT_NE(row.find(x::kR14), nullptr);
  EXPECT_EQ(row.find(x::kR14)->value, -40);
  // An activation before the ahi: CFA = r15 + 96, r14 saved.
  ASSERT_TRUE(x::prologue_row(Bytes(kFramed31, 18), 18, &row, x::kS390Abi));
  EXPECT_EQ(row.cfa.offset, 96);
  ASSERT_NE(row.find(x::kR14), nullptr);
  // In s390x code the same bytes are no prologue: stm saves low halves.
  EXPECT_FALSE(x::prologue_row(Bytes(kFramed31, sizeof kFramed31), x::kReturnAddressFrame, &row, x::kS390xAbi));
  // -fno-omit-frame-pointer: stm %r11,%r15,44(%r15); ahi %r15,-96; lr %r11,%r15.
  const uint8_t fp[] = {0x90, 0xbf, 0xf0, 0x2c, 0xa7, 0xfa, 0xff, 0xa0, 0x18, 0xbf, 0xc0, 0xe5, 0, 0, 0, 0};
  ASSERT_TRUE(x::prologue_row(Bytes(fp, sizeof fp), x::kReturnAddressFrame, &row, x::kS390Abi));
  EXPECT_EQ(row.cfa.reg, x::kR11);
  EXPECT_EQ(row.cfa.offset, 192);
  EXPECT_EQ(row.find(x::kR11)->value, -52);
  EXPECT_EQ(row.find(x::kR14)->value, -40);
  // -mbackchain: stm %r14,%r15,56(%r15); lr %r14,%r15 (r14 saved: a scratch
  // register now); ahi %r15,-96; st %r14,0(%r15), the back chain.
  const uint8_t chain[] = {0x90, 0xef, 0xf0, 0x38, 0x18, 0xef, 0xa7, 0xfa, 0xff, 0xa0,
                           0x50, 0xe0, 0xf0, 0x00, 0xc0, 0xe5, 0, 0, 0, 0};
  ASSERT_TRUE(x::prologue_row(Bytes(chain, sizeof chain), x::kReturnAddressFrame, &row, x::kS390Abi));
  EXPECT_EQ(row.cfa.offset, 192);
  // Before the stm, r14 is the return address: `lr %r14,%r15` ends the prologue.
  const uint8_t unsaved[] = {0x18, 0xef, 0x90, 0xef, 0xf0, 0x38, 0xa7, 0xfa, 0xff, 0xa0};
  EXPECT_FALSE(x::prologue_row(Bytes(unsaved, sizeof unsaved), x::kReturnAddressFrame, &row, x::kS390Abi));
  // gcc -m31 -mbackchain with a local array: stm %r11,%r15,44(%r15); lr
  // %r11,%r2 (r11 saved, no frame pointer: a scratch register); ahi
  // %r15,-128; and once r11 is the frame pointer, a write to it ends the
  // prologue.
  const uint8_t scratch[] = {0x90, 0xbf, 0xf0, 0x2c, 0x18, 0xb2, 0xa7, 0xfa, 0xff, 0x80, 0xc0, 0xe5, 0, 0, 0, 0};
  ASSERT_TRUE(x::prologue_row(Bytes(scratch, sizeof scratch), x::kReturnAddressFrame, &row, x::kS390Abi));
  EXPECT_EQ(row.cfa.reg, x::kR15);
  EXPECT_EQ(row.cfa.offset, 224);
  EXPECT_EQ(row.find(x::kR11)->value, -52);
  const uint8_t fp_then_write[] = {0x90, 0xbf, 0xf0, 0x2c, 0x18, 0xbf, 0x18, 0xb2, 0xa7, 0xfa, 0xff, 0x80};
  ASSERT_TRUE(x::prologue_row(Bytes(fp_then_write, sizeof fp_then_write), 12, &row, x::kS390Abi));
  EXPECT_EQ(row.cfa.reg, x::kR11);  // the walk stopped at `lr %r11,%r2`: no ahi seen
  EXPECT_EQ(row.cfa.offset, 96);
}

TEST(S390Machine, FallbackRowsStripTheAddressingModeBit) {
  // A leaf at its entry: CFA = r15 + 96, the return address r14 without its amode bit.
  test::SparseMemory mem;
  static const ModuleMap no_modules;
  Unwinder unwinder(no_modules, mem, s390().key());
  RegisterFile regs;
  regs.set(x::kR15, 0x7f000000);
  regs.set(x::kR14, 0x80400122);
  regs.set(x::kPswAddress, 0x4000b8);
  FallbackInput in;
  in.registers = &regs;
  in.activation = true;
  UnwindRow row;
  ASSERT_EQ(s390().fallback_row(in, &row), FallbackKind::kPrologue);
  EXPECT_EQ(row.cfa.offset, 96);
  auto caller = unwinder.apply_row(row, regs);
  ASSERT_TRUE(caller.ok());
  EXPECT_EQ(caller->get(x::kR15), 0x7f000000u);
  EXPECT_EQ(caller->get(x::kPswAddress), 0x400122u);
  // A framed function at a return address: r14 from the caller's save area.
  in.activation = false;
  in.function_known = true;
  in.function_code = Bytes(kFramed31, sizeof kFramed31);
  ASSERT_EQ(s390().fallback_row(in, &row), FallbackKind::kPrologue);
  put_be(&mem, 0x7f000000 + 120 + 56, 0x80400200, 4);
  caller = unwinder.apply_row(row, regs);
  ASSERT_TRUE(caller.ok());
  EXPECT_EQ(caller->get(x::kR15), 0x7f000000u + 120);
  EXPECT_EQ(caller->get(x::kPswAddress), 0x400200u);
}

}  // namespace
}  // namespace framewalk::arch

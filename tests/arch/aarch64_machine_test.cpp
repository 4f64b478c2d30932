// The AArch64 machine descriptor: PAC stripping, call recognition, the
// kernel's signal frame, prologue analysis and frame records, on
// hand-assembled instructions (encodings from the Arm ARM, checked with
// aarch64-linux-gnu-objdump).
#include <gtest/gtest.h>

#include <cstring>
#include <initializer_list>
#include <vector>

#include "arch/aarch64/frames.hpp"
#include "arch/aarch64/machine.hpp"
#include "arch/machine.hpp"
#include "base/memory.hpp"
#include "support/sparse_memory.hpp"
#include "unwind/unwinder.hpp"

namespace framewalk {
namespace {

namespace a = arch::aarch64;

constexpr uint64_t kCodeBase = 0x400000;

// Instructions as little-endian bytes.
std::vector<uint8_t> code(std::initializer_list<uint32_t> insns) {
  std::vector<uint8_t> out;
  for (uint32_t i : insns)
    for (int b = 0; b < 4; ++b) out.push_back(static_cast<uint8_t>(i >> (8 * b)));
  return out;
}

constexpr uint32_t kPaciasp = 0xd503233f, kBtiC = 0xd503245f, kNop = 0xd503201f;
constexpr uint32_t kStpFpLrPre16 = 0xa9bf7bfd;   // stp x29, x30, [sp, #-16]!
constexpr uint32_t kStpFpLrPre48 = 0xa9bd7bfd;   // stp x29, x30, [sp, #-48]!
constexpr uint32_t kMovFpSp = 0x910003fd;        // mov x29, sp
constexpr uint32_t kStpX19X20At16 = 0xa90153f3;  // stp x19, x20, [sp, #16]
constexpr uint32_t kSubSp64 = 0xd10103ff;        // sub sp, sp, #64
constexpr uint32_t kStpFpLrAt48 = 0xa9037bfd;    // stp x29, x30, [sp, #48]
constexpr uint32_t kAddFpSp48 = 0x9100c3fd;      // add x29, sp, #48
constexpr uint32_t kMovX19X0 = 0xaa0003f3;       // mov x19, x0
constexpr uint32_t kBl = 0x94000010, kBlr = 0xd63f0020, kBlraaz = 0xd63f083f, kBlraa = 0xd73f0841;
constexpr uint32_t kB = 0x14000010, kBr = 0xd61f0020, kRet = 0xd65f03c0, kAutiasp = 0xd50323bf;

const RegisterRule* rule(const UnwindRow& row, uint16_t reg) { return row.find(reg); }

TEST(Aarch64Machine, IsTheDescriptorForEm183) {
  const arch::Machine* m = arch::machine_for(usual_machine_key(183));
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(m, &a::machine());
  EXPECT_EQ(m->address_size(), 8);
  EXPECT_EQ(m->program_counter(), a::kPc);
  EXPECT_EQ(m->return_address_column(), a::kX30);
  EXPECT_EQ(m->stack_pointer(), a::kSp);
  EXPECT_TRUE(m->link_register());
  EXPECT_NE(arch::supported_machine_names().find("AArch64"), std::string::npos);
}

TEST(Aarch64Machine, StripsPointerAuthenticationCodes) {
  const arch::Machine& m = a::machine();
  const uint64_t mask = m.default_pointer_auth_mask();
  EXPECT_EQ(mask, 0xffff000000000000u);
  // A PAC-signed return address from a qemu core.
  EXPECT_EQ(m.clean_return_address(0x0035000000400788, mask), 0x400788u);
  EXPECT_EQ(m.clean_return_address(0x0000005500887780, mask), 0x5500887780u);
  // With 52-bit addresses (NT_ARM_PAC_MASK says so) bits 48-51 are address.
  EXPECT_EQ(m.clean_return_address(0x00a1000f00400788, 0xfff0000000000000), 0x0001000f00400788u);
  EXPECT_EQ(m.lookup_pc(0x400788, false), 0x400784u);
  EXPECT_EQ(m.lookup_pc(0x400788, true), 0x400788u);
}

TEST(Aarch64Machine, FollowsEveryCallForm) {
  for (uint32_t call : {kBl, kBlr, kBlraaz, kBlraa}) {
    auto bytes = code({call, kNop});
    BufferMemory memory(Bytes(bytes.data(), bytes.size()), kCodeBase);
    EXPECT_TRUE(a::machine().follows_call(memory, kCodeBase + 4)) << std::hex << call;
    EXPECT_FALSE(a::machine().follows_call(memory, kCodeBase + 6)) << "misaligned";
  }
  for (uint32_t other : {kB, kBr, kRet, kNop}) {
    auto bytes = code({other, kNop});
    BufferMemory memory(Bytes(bytes.data(), bytes.size()), kCodeBase);
    EXPECT_FALSE(a::machine().follows_call(memory, kCodeBase + 4)) << std::hex << other;
  }
  auto bytes = code({kBl});
  BufferMemory memory(Bytes(bytes.data(), bytes.size()), kCodeBase);
  EXPECT_FALSE(a::machine().follows_call(memory, kCodeBase)) << "unreadable";
}

TEST(Aarch64Machine, SignalTrampolineAndTheKernelsFrame) {
  auto bytes = code({a::kMovX8Sigreturn, a::kSvc0, 0});
  BufferMemory memory(Bytes(bytes.data(), bytes.size()), kCodeBase);
  EXPECT_TRUE(a::machine().is_signal_trampoline(memory, kCodeBase));
  EXPECT_FALSE(a::machine().is_signal_trampoline(memory, kCodeBase + 4));
  UnwindRow row;
  ASSERT_TRUE(a::machine().signal_frame_row(memory, kCodeBase, &row));
  EXPECT_TRUE(row.signal_frame);
  EXPECT_EQ(row.cfa.reg, a::kSp);
  EXPECT_EQ(row.cfa.offset, 0);
  EXPECT_EQ(row.return_address_register, a::kPc);
  EXPECT_EQ(row.rule_count, 33);
  // rt_sigframe: siginfo (128), ucontext's uc_mcontext at 176, regs at +8.
  EXPECT_EQ(rule(row, 0)->value, 312);
  EXPECT_EQ(rule(row, a::kX29)->value, 312 + 29 * 8);
  EXPECT_EQ(rule(row, a::kSp)->value, 560);
  EXPECT_EQ(rule(row, a::kPc)->value, 568);
  // `mov x8, #139` followed by something else is not it.
  auto other = code({a::kMovX8Sigreturn, kNop});
  BufferMemory other_memory(Bytes(other.data(), other.size()), kCodeBase);
  EXPECT_FALSE(a::machine().signal_frame_row(other_memory, kCodeBase, &row));
}

TEST(Aarch64Machine, RegistersFromTheGregsetAndTheUcontext) {
  std::vector<uint8_t> gregs(a::kUserRegsSize);
  for (unsigned i = 0; i < 34; ++i) {
    const uint64_t v = 0x1000 + i;
    std::memcpy(&gregs[i * 8], &v, 8);
  }
  const arch::RegisterFile regs = a::machine().registers_from_gregset(Bytes(gregs.data(), gregs.size()));
  EXPECT_EQ(regs.get(0), 0x1000u);
  EXPECT_EQ(regs.get(a::kX30), 0x1000u + 30);
  EXPECT_EQ(regs.get(a::kSp), 0x1000u + 31);
  EXPECT_EQ(regs.get(a::kPc), 0x1000u + 32);
  EXPECT_FALSE(regs.known(33)) << "pstate is not a DWARF register here";
  // A short gregset: the rest unknown.
  const arch::RegisterFile part = a::machine().registers_from_gregset(Bytes(gregs.data(), 8 * 31 + 4));
  EXPECT_TRUE(part.known(a::kX30));
  EXPECT_FALSE(part.known(a::kSp));

  std::vector<uint8_t> uc(a::kUcontextMcontextOffset + a::kSigcontextPcOffset + 8);
  const uint64_t pc = 0x400abc, sp = 0x7fff0000;
  std::memcpy(&uc[a::kUcontextMcontextOffset + a::kSigcontextPcOffset], &pc, 8);
  std::memcpy(&uc[a::kUcontextMcontextOffset + a::kSigcontextSpOffset], &sp, 8);
  const arch::RegisterFile from_uc = a::machine().registers_from_ucontext(Bytes(uc.data(), uc.size()));
  EXPECT_EQ(from_uc.get(a::kPc), pc);
  EXPECT_EQ(from_uc.get(a::kSp), sp);
}

// The row a prologue gives at each instruction boundary of
// `paciasp; stp x29, x30, [sp, #-48]!; mov x29, sp; stp x19, x20, [sp, #16]; mov x19, x0`.
TEST(Aarch64Prologue, PreIndexedFrameRecordStepByStep) {
  auto bytes = code({kPaciasp, kStpFpLrPre48, kMovFpSp, kStpX19X20At16, kMovX19X0, kBl});
  const Bytes c(bytes.data(), bytes.size());
  UnwindRow row;
  for (uint64_t pc : {0u, 4u}) {
    ASSERT_TRUE(a::prologue_row(c.first(pc), pc, &row)) << pc;
    EXPECT_EQ(row.cfa.reg, a::kSp);
    EXPECT_EQ(row.cfa.offset, 0);
    EXPECT_EQ(row.find(a::kX30), nullptr) << "the return address is still in x30";
  }
  ASSERT_TRUE(a::prologue_row(c.first(8), 8, &row));
  EXPECT_EQ(row.cfa.reg, a::kSp);
  EXPECT_EQ(row.cfa.offset, 48);
  EXPECT_EQ(rule(row, a::kX29)->value, -48);
  EXPECT_EQ(rule(row, a::kX30)->value, -40);
  ASSERT_TRUE(a::prologue_row(c.first(12), 12, &row));
  EXPECT_EQ(row.cfa.reg, a::kX29);
  EXPECT_EQ(row.cfa.offset, 48);
  ASSERT_TRUE(a::prologue_row(c, a::kReturnAddressFrame, &row));
  EXPECT_EQ(row.cfa.reg, a::kX29);
  EXPECT_EQ(row.cfa.offset, 48);
  EXPECT_EQ(rule(row, 19)->value, -32);
  EXPECT_EQ(rule(row, 20)->value, -24);
  EXPECT_EQ(rule(row, a::kX30)->value, -40);
}

// `sub sp, sp, #64; stp x29, x30, [sp, #48]; add x29, sp, #48` (the record at the frame's top).
TEST(Aarch64Prologue, RecordAtTheTopOfAFrame) {
  auto bytes = code({kBtiC, kSubSp64, kStpFpLrAt48, kAddFpSp48, kMovX19X0});
  const Bytes c(bytes.data(), bytes.size());
  UnwindRow row;
  ASSERT_TRUE(a::prologue_row(c.first(8), 8, &row));
  EXPECT_EQ(row.cfa.reg, a::kSp);
  EXPECT_EQ(row.cfa.offset, 64);
  EXPECT_EQ(row.find(a::kX30), nullptr);
  ASSERT_TRUE(a::prologue_row(c, a::kReturnAddressFrame, &row));
  EXPECT_EQ(row.cfa.reg, a::kX29);
  EXPECT_EQ(row.cfa.offset, 16);
  EXPECT_EQ(rule(row, a::kX29)->value, -16);
  EXPECT_EQ(rule(row, a::kX30)->value, -8);
}

// gcc schedules other instructions into its prologues, and shrink-wraps
// them behind a test (elfutils' backtrace.aarch64.fp.exec, fp_over_cfi.c):
//   fp_inner: cmp w0, #0x3e8; b.eq 1f; stp x29, x30, [sp, #-32]!; mov x29, sp;
//             str x19, [sp, #16]; mov w19, w0; adrp x0, ...; bl ...
//   fp_outer: stp x29, x30, [sp, #-32]!; adrp x1, ...; mov x29, sp; str x19, [sp, #16]; ...
//   stdarg:   stp x29, x30, [sp, #-224]!; mov w0, #0xc; mov x29, sp; stp x19, x20, [sp, #16];
//             str q0, [x29, #32]; ...
TEST(Aarch64Prologue, ScheduledAndShrinkWrapped) {
  UnwindRow row;
  auto inner = code({0x710fa01f, 0x54000260, 0xa9be7bfd, 0x910003fd, 0xf9000bf3, 0x2a0003f3, 0x90000100, kBl});
  ASSERT_TRUE(a::prologue_row(Bytes(inner.data(), inner.size()), a::kReturnAddressFrame, &row));
  EXPECT_EQ(row.cfa.reg, a::kX29);
  EXPECT_EQ(row.cfa.offset, 32) << "the record at the frame's bottom";
  EXPECT_EQ(rule(row, a::kX29)->value, -32);
  EXPECT_EQ(rule(row, a::kX30)->value, -24);
  EXPECT_EQ(rule(row, 19)->value, -16);
  // An activation after the stp, the branch's target (0x50) beyond it: the stp has run.
  ASSERT_TRUE(a::prologue_row(Bytes(inner.data(), 12), 12, &row));
  EXPECT_EQ(row.cfa.reg, a::kSp);
  EXPECT_EQ(row.cfa.offset, 32);
  // Past the branch's target, the branch may have been taken: only the compare is known to have run.
  auto short_exit = code({0x710fa01f, 0x54000060, 0xa9be7bfd, 0x910003fd, kRet});  // b.eq +12
  ASSERT_TRUE(a::prologue_row(Bytes(short_exit.data(), 16), 16, &row));
  EXPECT_EQ(row.cfa.reg, a::kSp);
  EXPECT_EQ(row.cfa.offset, 0);
  EXPECT_EQ(row.find(a::kX30), nullptr);

  auto outer = code({0xa9be7bfd, 0x90000101, 0x910003fd, 0xf9000bf3, 0x2a0003f3, 0xb9405020, kBl});
  ASSERT_TRUE(a::prologue_row(Bytes(outer.data(), outer.size()), a::kReturnAddressFrame, &row));
  EXPECT_EQ(row.cfa.reg, a::kX29);
  EXPECT_EQ(row.cfa.offset, 32);
  EXPECT_EQ(rule(row, 19)->value, -16);

  auto stdarg = code({0xa9b27bfd, 0x52800180, 0x910003fd, 0xa90153f3, 0x3d800ba0, 0xf90057a1, kBl});
  ASSERT_TRUE(a::prologue_row(Bytes(stdarg.data(), stdarg.size()), a::kReturnAddressFrame, &row));
  EXPECT_EQ(row.cfa.reg, a::kX29);
  EXPECT_EQ(row.cfa.offset, 224);
  EXPECT_EQ(rule(row, 19)->value, -208);
  EXPECT_EQ(rule(row, 20)->value, -200);
}

// A frame larger than an immediate: `mov x12, #5040; sub sp, sp, x12;
// mov x2, #5000; mov w1, w0; stp x29, x30, [sp]; mov x29, sp` (gcc).
TEST(Aarch64Prologue, FrameSizeFromARegister) {
  UnwindRow row;
  auto big = code({0xd282760c, 0xcb2c63ff, 0xd2827102, 0x2a0003e1, 0xa9007bfd, 0x910003fd, kBl});
  ASSERT_TRUE(a::prologue_row(Bytes(big.data(), big.size()), a::kReturnAddressFrame, &row));
  EXPECT_EQ(row.cfa.reg, a::kX29);
  EXPECT_EQ(row.cfa.offset, 5040);
  EXPECT_EQ(rule(row, a::kX29)->value, -5040);
  EXPECT_EQ(rule(row, a::kX30)->value, -5032);
  // The register overwritten before the sub: its value is not known.
  auto clobbered = code({0xd282760c, 0xaa0003ec, 0xcb2c63ff, 0xa9007bfd, 0x910003fd, kBl});  // mov x12, x0
  EXPECT_FALSE(a::prologue_row(Bytes(clobbered.data(), clobbered.size()), a::kReturnAddressFrame, &row));
}

// What a scheduled instruction may not do: write sp, x29 or x30, branch, call.
TEST(Aarch64Prologue, InstructionsThatEndIt) {
  UnwindRow row;
  // mov x29, x0; ldr x30, [sp]; add sp, sp, #16; str x0, [sp], #16; b and b.eq backwards; bl; blr; ret.
  const std::vector<uint32_t> ends = {0xaa0003fd, 0xf94003fe, 0x910043ff, 0xf80107e0, 0x17ffffff, 0x54ffffe0,
                                      kBl, kBlr, kRet};
  for (uint32_t insn : ends) {
    SCOPED_TRACE(insn);
    auto c = code({kStpFpLrPre16, insn, kMovFpSp, kBl});
    ASSERT_TRUE(a::prologue_row(Bytes(c.data(), c.size()), a::kReturnAddressFrame, &row));
    EXPECT_EQ(row.cfa.reg, a::kSp) << "mov x29, sp not reached";
    EXPECT_EQ(row.cfa.offset, 16);
  }
  // Loads, stores, arithmetic elsewhere are stepped over.
  // ldr x0, [x0]; str w0, [sp, #8]; add x0, x0, x1; fmov x0, d0; mrs x0, tpidr_el0; tbz w0, #0, +8.
  const std::vector<uint32_t> neutral = {0xf9400000, 0xb9000be0, 0x8b010000, 0x9e660000, 0xd53bd040, 0x36000040};
  for (uint32_t insn : neutral) {
    SCOPED_TRACE(insn);
    auto c = code({kStpFpLrPre16, insn, kMovFpSp, kBl});
    ASSERT_TRUE(a::prologue_row(Bytes(c.data(), c.size()), a::kReturnAddressFrame, &row));
    EXPECT_EQ(row.cfa.reg, a::kX29);
    EXPECT_EQ(row.cfa.offset, 16);
  }
}

TEST(Aarch64Prologue, WhatItCannotTell) {
  UnwindRow row;
  // A frameless function at a return address saved no x30 that this can see.
  auto leaf = code({kMovX19X0, kRet});
  EXPECT_FALSE(a::prologue_row(Bytes(leaf.data(), leaf.size()), a::kReturnAddressFrame, &row));
  // The bytes end inside the prologue.
  auto cut = code({kPaciasp, kStpFpLrPre16});
  EXPECT_FALSE(a::prologue_row(Bytes(cut.data(), cut.size()), a::kReturnAddressFrame, &row));
  // A frameless activation: the entry row, RA in x30.
  ASSERT_TRUE(a::prologue_row(Bytes(leaf.data(), leaf.size()), 4, &row));
  EXPECT_EQ(row.cfa.reg, a::kSp);
  EXPECT_EQ(row.cfa.offset, 0);
  EXPECT_EQ(row.rule_count, 0);
}

TEST(Aarch64Machine, FallbackAtRetAndFrameRecordGuess) {
  arch::RegisterFile regs;
  regs.set(a::kSp, 0x7000);
  regs.set(a::kX29, 0x7040);
  auto fn = code({kStpFpLrPre16, kMovFpSp, kMovX19X0, kAutiasp, kRet});
  arch::FallbackInput in;
  in.registers = &regs;
  in.activation = true;
  in.function_known = true;
  in.pc_offset = 12;
  in.function_code = Bytes(fn.data(), 12);
  in.code_at_pc = Bytes(fn.data() + 12, 8);
  UnwindRow row;
  ASSERT_EQ(a::machine().fallback_row(in, &row), arch::FallbackKind::kPrologue);
  EXPECT_EQ(row.cfa.reg, a::kSp) << "at autiasp; ret the frame is gone";
  EXPECT_EQ(row.rule_count, 0);
  // A return-address frame of an unknown function: the record at x29.
  in.activation = false;
  in.function_known = false;
  ASSERT_EQ(a::machine().fallback_row(in, &row), arch::FallbackKind::kFramePointer);
  EXPECT_EQ(row.cfa.reg, a::kX29);
  EXPECT_EQ(row.cfa.offset, 16);
  // x29 below sp is no frame record.
  regs.set(a::kX29, 0x6000);
  EXPECT_FALSE(a::machine().fallback_row(in, &row).has_value());
  // An activation of an unknown function gets no guess.
  in.activation = true;
  regs.set(a::kX29, 0x7040);
  EXPECT_FALSE(a::machine().fallback_row(in, &row).has_value());
  // A caller without unwind information whose x29 is 0 is the end of the
  // chain of frame records (a static program's _start): the return address
  // undefined, so the walk ends as outermost.
  in.activation = false;
  regs.set(a::kX29, 0);
  ASSERT_EQ(a::machine().fallback_row(in, &row), arch::FallbackKind::kFramePointer);
  const RegisterRule* ra = row.find(a::kX30);
  ASSERT_NE(ra, nullptr);
  EXPECT_EQ(ra->kind, RuleKind::kUndefined);
  // Not for an activation: its x29 may not be set up yet.
  in.activation = true;
  EXPECT_FALSE(a::machine().fallback_row(in, &row).has_value());
  // Nor when x29 is not known.
  in.activation = false;
  regs.forget(a::kX29);
  EXPECT_FALSE(a::machine().fallback_row(in, &row).has_value());
}

// The step loop on a link-register machine: a leaf activation without a
// rule for x30 returns to x30; a caller frame without one is an error.
class SparseMemory final : public test::SparseMemory {
 public:
  void word(uint64_t address, uint64_t value) { put(address, value, 8); }
};

TEST(Aarch64Unwind, LeafActivationReturnsThroughTheLinkRegister) {
  SparseMemory mem;
  static const ModuleMap no_modules;
  Unwinder unwinder(no_modules, mem, usual_machine_key(183));
  arch::RegisterFile regs;
  regs.set(a::kPc, 0x400100);
  regs.set(a::kSp, 0x7000);
  regs.set(a::kX30, 0x0012000000400200);  // signed
  UnwindRow leaf = a::entry_row();
  auto caller = unwinder.apply_row(leaf, regs);
  ASSERT_TRUE(caller.ok());
  EXPECT_EQ(caller->get(a::kPc), 0x400200u);
  EXPECT_EQ(caller->get(a::kSp), 0x7000u);

  // A frame record row: x29 and x30 from memory; 32-byte frame.
  mem.word(0x7020, 0x7100);
  mem.word(0x7028, 0x0034000000400300);
  regs.set(a::kX29, 0x7020);
  auto from_record = unwinder.apply_row(a::frame_record_row(16), regs);
  ASSERT_TRUE(from_record.ok());
  EXPECT_EQ(from_record->get(a::kPc), 0x400300u);
  EXPECT_EQ(from_record->get(a::kX29), 0x7100u);
  EXPECT_EQ(from_record->get(a::kSp), 0x7030u);
  // The core's NT_ARM_PAC_MASK replaces the default.
  unwinder.set_pointer_auth_mask(0);
  from_record = unwinder.apply_row(a::frame_record_row(16), regs);
  ASSERT_TRUE(from_record.ok());
  EXPECT_EQ(from_record->get(a::kPc), 0x0034000000400300u);
}

}  // namespace
}  // namespace framewalk

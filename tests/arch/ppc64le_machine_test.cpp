// The ppc64le machine descriptor on hand-written bytes: its key (ELFv2, and
// qemu's cores whose e_flags say no ABI), the kernel's gregset and ucontext
// layouts, the rt_sigreturn trampoline and the frame it restores from (a
// struct rt_sigframe over a fake stack), calls before return addresses, the
// back chain and the prologue rows.
#include <gtest/gtest.h>

#include <vector>

#include "arch/machine.hpp"
#include "arch/ppc64le/frames.hpp"
#include "arch/ppc64le/machine.hpp"
#include "support/numbered_words.hpp"
#include "support/power_signal_frame.hpp"
#include "support/sparse_memory.hpp"
#include "unwind/unwinder.hpp"

namespace framewalk::arch {
namespace {

namespace p = ppc64le;

constexpr uint64_t kCodeBase = 0x10000000;

using test::numbered_words;

// Instructions as little-endian bytes.
std::vector<uint8_t> code(std::initializer_list<uint32_t> insns) {
  std::vector<uint8_t> bytes;
  for (uint32_t i : insns)
    for (unsigned b = 0; b < 4; ++b) bytes.push_back(static_cast<uint8_t>(i >> (8 * b)));
  return bytes;
}

TEST(MachineFor, Ppc64le) {
  const Machine* m = machine_for(usual_machine_key(kEmPpc64));
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(m, &p::machine());
  EXPECT_EQ(m->stack_pointer(), p::kR1);
  EXPECT_EQ(m->program_counter(), p::kNip);
  EXPECT_EQ(m->return_address_column(), p::kLr);
  EXPECT_TRUE(m->link_register());
  EXPECT_EQ(m->address_size(), 8);
  EXPECT_EQ(m->endian(), Endian::kLittle);
  EXPECT_NE(supported_machine_names().find("ppc64le"), std::string::npos);
  // qemu-user's cores say no ABI version (e_flags 0): ELFv2 on little-endian.
  EXPECT_EQ(machine_for({kEmPpc64, true, Endian::kLittle, 0}), m);
  EXPECT_EQ(machine_for({kEmPpc64, true, Endian::kLittle, 1}), nullptr);  // ELFv1
  EXPECT_EQ(machine_for({kEmPpc64, true, Endian::kBig, 1}), nullptr);     // big-endian ELFv1 ppc64
  EXPECT_EQ(machine_for({kEmPpc64, true, Endian::kBig, 0}), nullptr);
  EXPECT_EQ(dwarf_register_name(dwarf_arch_for(usual_machine_key(kEmPpc64)), 65), nullptr);  // readelf: "r65"
}

TEST(Ppc64leMachine, LookupPcAndRegisterSizes) {
  EXPECT_EQ(p::machine().lookup_pc(0x10000800, true), 0x10000800u);
  EXPECT_EQ(p::machine().lookup_pc(0x10000800, false), 0x100007fcu);
  EXPECT_EQ(p::machine().register_size(p::kLr), 8);
  EXPECT_EQ(p::machine().register_size(70), 4);  // cr2, saved as the 4-byte CR
}

bool follows_call(uint32_t insn) {
  const std::vector<uint8_t> bytes = code({0x60000000, insn});
  BufferMemory memory(Bytes(bytes.data(), bytes.size()), kCodeBase);
  return p::machine().follows_call(memory, kCodeBase + bytes.size());
}

TEST(Ppc64leMachine, FollowsCalls) {
  EXPECT_TRUE(follows_call(0x4bfffe81));   // bl .-0x180
  EXPECT_TRUE(follows_call(0x48000041));   // bl .+0x40
  EXPECT_TRUE(follows_call(0x4e800421));   // bctrl
  EXPECT_TRUE(follows_call(0x4e800021));   // blrl
  EXPECT_FALSE(follows_call(0x4bfffe80));  // b
  EXPECT_FALSE(follows_call(0x4e800420));  // bctr
  EXPECT_FALSE(follows_call(0x4e800020));  // blr
  EXPECT_FALSE(follows_call(0x60000000));  // nop
  BufferMemory memory(Bytes(), kCodeBase);
  EXPECT_FALSE(p::machine().follows_call(memory, kCodeBase + 8));
}

TEST(Ppc64leMachine, RegistersFromTheKernelsGregset) {
  const std::vector<uint8_t> gregset = numbered_words(p::kGregsCount, 0x1000);
  ASSERT_EQ(p::machine().gregset_size(), 384u);
  const RegisterFile r = p::machine().registers_from_gregset(Bytes(gregset.data(), gregset.size()));
  EXPECT_EQ(r.get(p::kR0), 0x1000u);
  EXPECT_EQ(r.get(p::kR1), 0x1001u);
  EXPECT_EQ(r.get(p::kR31), 0x101fu);
  EXPECT_EQ(r.get(p::kNip), 0x1020u);  // then msr, orig_gpr3
  EXPECT_EQ(r.get(p::kCtr), 0x1023u);
  EXPECT_EQ(r.get(p::kLr), 0x1024u);
  EXPECT_EQ(r.get(p::kXer), 0x1025u);
  const RegisterFile cut = p::machine().registers_from_gregset(Bytes(gregset.data(), 8 * 33));
  EXPECT_EQ(cut.get(p::kNip), 0x1020u);
  EXPECT_FALSE(cut.known(p::kLr));
  // NT_PRFPREG: f0-f31 (DWARF 32-63), fpscr.
  const std::vector<uint8_t> fpregs = numbered_words(33, 0x3000);
  RegisterFile with_fp = r;
  p::machine().add_fpregset(Bytes(fpregs.data(), fpregs.size()), &with_fp);
  EXPECT_EQ(with_fp.get(p::kF0), 0x3000u);
  EXPECT_EQ(with_fp.get(p::kF0 + 31), 0x301fu);
  EXPECT_EQ(with_fp.get(p::kLr), 0x1024u);
}

TEST(Ppc64leMachine, RegistersFromAUcontext) {
  std::vector<uint8_t> ucontext(p::kUcontextGregsOffset, 0xee);
  const std::vector<uint8_t> gregs = numbered_words(p::kGregsCount, 0x1000);
  const std::vector<uint8_t> fpregs = numbered_words(33, 0x3000);
  ucontext.insert(ucontext.end(), gregs.begin(), gregs.end());
  ucontext.insert(ucontext.end(), fpregs.begin(), fpregs.end());
  ASSERT_EQ(p::kUcontextFpregsOffset, 616u);  // glibc's offsetof(ucontext_t, uc_mcontext.fp_regs)
  const RegisterFile r = p::machine().registers_from_ucontext(Bytes(ucontext.data(), ucontext.size()));
  EXPECT_EQ(r.get(p::kR1), 0x1001u);
  EXPECT_EQ(r.get(p::kNip), 0x1020u);
  EXPECT_EQ(r.get(p::kLr), 0x1024u);
  EXPECT_EQ(r.get(p::kF0 + 14), 0x300eu);
  EXPECT_FALSE(p::machine().registers_from_ucontext(Bytes(ucontext.data(), 100)).known(p::kNip));
}

TEST(Ppc64leMachine, TrampolinesByTheirCode) {
  // qemu's trampoline page and the older vDSO: li r0,172; sc. Newer vDSOs
  // return from the handler to addi r1,r1,128 before it.
  const std::vector<uint8_t> bytes = code({0x38210080, 0x380000ac, 0x44000002, 0x38000077, 0x44000002});
  BufferMemory memory(Bytes(bytes.data(), bytes.size()), kCodeBase);
  EXPECT_TRUE(p::machine().is_signal_trampoline(memory, kCodeBase));
  EXPECT_TRUE(p::machine().is_signal_trampoline(memory, kCodeBase + 4));
  EXPECT_FALSE(p::machine().is_signal_trampoline(memory, kCodeBase + 8));
  EXPECT_FALSE(p::machine().is_signal_trampoline(memory, kCodeBase + 12));  // li r0,119 (sigreturn)
  EXPECT_FALSE(p::machine().is_signal_trampoline(memory, kCodeBase + 6));
  BufferMemory truncated(Bytes(bytes.data() + 4, 6), kCodeBase);
  EXPECT_FALSE(p::machine().is_signal_trampoline(truncated, kCodeBase));
}

// A fake rt_sigframe whose ucontext is `uc_offset` bytes above r1 at the
// trampoline: gp_regs slot i holds 0x2000 + i, fp_regs slot i 0x4000 + i,
// and the sigcontext's `regs` points at gp_regs.
void expect_restored(uint64_t uc_offset) {
  test::SparseMemory mem;
  const std::vector<uint8_t> tramp = code({0x380000ac, 0x44000002});
  mem.code(kCodeBase, tramp.data(), tramp.size());
  constexpr uint64_t kSp = 0x7fff0000;
  const uint64_t uc = kSp + uc_offset;
  for (uint64_t a = kSp; a < uc + 1440; a += 8) mem.put(a, 0x5a5a5a5a, 8);  // the rest of the frame
  mem.put(uc + 224, uc + 232, 8);
  for (unsigned i = 0; i < p::kGregsCount; ++i) mem.put(uc + 232 + 8 * i, 0x2000 + i, 8);
  for (unsigned i = 0; i < 33; ++i) mem.put(uc + 616 + 8 * i, 0x4000 + i, 8);
  test::expect_numbered_registers_restored(p::machine(), mem, kCodeBase, kSp);
}

TEST(Ppc64leMachine, SignalFrameRestoresFromTheKernelsUcontext) {
  // The handler returns with r1 = the rt_sigframe - 128; its ucontext's
  // gp_regs at 232, fp_regs at 616.
  expect_restored(128);
}

TEST(Ppc64leMachine, SignalFrameRestoresFromQemusUcontext) {
  // qemu-user 7.2: the rt_sigframe 144 bytes above r1.
  expect_restored(144);
}

RegisterFile at(uint64_t sp) { return test::power_registers_at(sp, kCodeBase + 0x100); }

TEST(Ppc64leMachine, BackChainAtAReturnAddress) {
  const RegisterFile regs = at(0x7000);
  FallbackInput in;
  in.registers = &regs;
  UnwindRow row;
  ASSERT_EQ(p::machine().fallback_row(in, &row), FallbackKind::kFramePointer);
  // 0(r1): the caller's r1; 16 bytes into the caller's frame: its LR save slot.
  test::SparseMemory mem;
  mem.put(0x7000, 0x7080, 8);
  mem.put(0x7090, 0x10000444, 8);
  static const ModuleMap no_modules;
  Unwinder unwinder(no_modules, mem, usual_machine_key(kEmPpc64));
  auto caller = unwinder.apply_row(row, regs);
  ASSERT_TRUE(caller.ok());
  EXPECT_EQ(caller->get(p::kR1), 0x7080u);
  EXPECT_EQ(caller->get(p::kNip), 0x10000444u);
  // A null r1 ends the chain; a misaligned one is no frame.
  const RegisterFile end = at(0);
  in.registers = &end;
  ASSERT_EQ(p::machine().fallback_row(in, &row), FallbackKind::kFramePointer);
  ASSERT_NE(row.find(p::kLr), nullptr);
  EXPECT_EQ(row.find(p::kLr)->kind, RuleKind::kUndefined);
  // A null back chain word: the return address 0, the end of the stack.
  const RegisterFile first = at(0x7100);
  in.registers = &first;
  ASSERT_EQ(p::machine().fallback_row(in, &row), FallbackKind::kFramePointer);
  mem.put(0x7100, 0, 8);
  auto none = unwinder.apply_row(row, first);
  ASSERT_TRUE(none.ok());
  EXPECT_EQ(none->get(p::kNip), 0u);
  const RegisterFile odd = at(0x7004);
  in.registers = &odd;
  EXPECT_EQ(p::machine().fallback_row(in, &row), std::nullopt);
}

TEST(Ppc64leMachine, PrologueRowsOfAnActivation) {
  // addis r2,r12,2; addi r2,r2,-0x7f00; mflr r0; std r0,16(r1); stdu r1,-48(r1); (body) nop; blr
  const std::vector<uint8_t> f = code({0x3c4c0002, 0x38428100, 0x7c0802a6, 0xf8010010, 0xf821ffd1, 0x60000000,
                                       0x4e800020});
  const RegisterFile regs = at(0x7000);
  FallbackInput in;
  in.registers = &regs;
  in.activation = true;
  in.function_known = true;
  UnwindRow row;
  auto activation_at = [&](uint64_t offset) {
    in.pc_offset = offset;
    in.function_code = Bytes(f.data(), offset);
    in.code_at_pc = Bytes(f.data() + offset, f.size() - offset);
    return p::machine().fallback_row(in, &row);
  };
  // At the entry and after the TOC setup: nothing moved, LR holds the return address.
  ASSERT_EQ(activation_at(8), FallbackKind::kPrologue);
  EXPECT_EQ(row.cfa.reg, p::kR1);
  EXPECT_EQ(row.cfa.offset, 0);
  EXPECT_EQ(row.find(p::kLr), nullptr);
  // After mflr r0: the return address in r0.
  ASSERT_EQ(activation_at(12), FallbackKind::kPrologue);
  ASSERT_NE(row.find(p::kLr), nullptr);
  EXPECT_EQ(row.find(p::kLr)->kind, RuleKind::kRegister);
  EXPECT_EQ(row.find(p::kLr)->value, p::kR0);
  // After stdu: CFA = r1+48, LR at CFA+16.
  ASSERT_EQ(activation_at(20), FallbackKind::kPrologue);
  EXPECT_EQ(row.cfa.offset, 48);
  ASSERT_NE(row.find(p::kLr), nullptr);
  EXPECT_EQ(row.find(p::kLr)->kind, RuleKind::kOffset);
  EXPECT_EQ(row.find(p::kLr)->value, 16);
  // At the blr: the frame is down.
  ASSERT_EQ(activation_at(24), FallbackKind::kPrologue);
  EXPECT_EQ(row.cfa.offset, 0);
  EXPECT_EQ(row.find(p::kLr), nullptr);
  // A frameless leaf (gcc's, without unwind tables): lis r2,4098; addi
  // r2,r2,32512; nop; ld r9,-32384(r2); (PC) lwz r3,0(r9): the entry row.
  const std::vector<uint8_t> leaf = code({0x3c401002, 0x38427f00, 0x60000000, 0xe9228180, 0x80690000});
  in.pc_offset = 16;
  in.function_code = Bytes(leaf.data(), 16);
  in.code_at_pc = Bytes(leaf.data() + 16, 4);
  ASSERT_EQ(p::machine().fallback_row(in, &row), FallbackKind::kPrologue);
  EXPECT_EQ(row.cfa.offset, 0);
  EXPECT_EQ(row.find(p::kLr), nullptr);
  // A PLT call stub at its bctr: std r2,24(r1); ld r12,-32464(r2); mtctr r12: the entry row.
  const std::vector<uint8_t> stub = code({0xf8410018, 0xe9828130, 0x7d8903a6, 0x4e800420});
  in.pc_offset = 12;
  in.function_code = Bytes(stub.data(), 12);
  in.code_at_pc = Bytes(stub.data() + 12, 4);
  ASSERT_EQ(p::machine().fallback_row(in, &row), FallbackKind::kPrologue);
  EXPECT_EQ(row.cfa.offset, 0);
  EXPECT_EQ(row.find(p::kLr), nullptr);
  // An instruction that moves r1 otherwise (addi r1,r1,-16), a branch or mtlr before the PC: no guess.
  for (uint32_t insn : {0x3821fff0u, 0x48000010u, 0x7c0803a6u}) {
    const std::vector<uint8_t> other = code({insn, 0x60000000});
    in.pc_offset = 4;
    in.function_code = Bytes(other.data(), 4);
    in.code_at_pc = Bytes(other.data() + 4, 4);
    EXPECT_EQ(p::machine().fallback_row(in, &row), std::nullopt) << std::hex << insn;
  }
}

TEST(Ppc64leMachine, PerfRegisters) {
  uint64_t values[37] = {};
  for (unsigned i = 0; i < 37; ++i) values[i] = 0x100 + i;
  const RegisterFile r = p::machine().registers_from_perf_sample(p::machine().perf_sample_register_mask(), values);
  EXPECT_EQ(r.get(p::kR1), 0x101u);
  EXPECT_EQ(r.get(p::kNip), 0x120u);
  EXPECT_EQ(r.get(p::kCtr), 0x123u);
  EXPECT_EQ(r.get(p::kLr), 0x124u);
}

}  // namespace
}  // namespace framewalk::arch

// The x86-64 machine descriptor on hand-written code: which bytes before a
// return address are a call, the signal trampoline, lookup addresses and the
// fallback rows; and machine_for on machines without a descriptor.
#include <gtest/gtest.h>

#include <vector>

#include "arch/machine.hpp"
#include "arch/x86_64/frames.hpp"
#include "arch/x86_64/machine.hpp"

namespace framewalk::arch {
namespace {

namespace x = x86_64;

constexpr uint64_t kCodeBase = 0x400000;

// Nops, then `tail` ending right at the return address it returns.
struct CodeBefore {
  std::vector<uint8_t> bytes;
  uint64_t return_address;
};
CodeBefore code_ending_with(std::vector<uint8_t> tail) {
  CodeBefore c;
  c.bytes.assign(16, 0x90);
  c.bytes.insert(c.bytes.end(), tail.begin(), tail.end());
  c.return_address = kCodeBase + c.bytes.size();
  return c;
}

bool follows_call(const std::vector<uint8_t>& tail) {
  const CodeBefore c = code_ending_with(tail);
  BufferMemory memory(Bytes(c.bytes.data(), c.bytes.size()), kCodeBase);
  return x::machine().follows_call(memory, c.return_address);
}

TEST(MachineFor, X86_64) {
  const Machine* m = machine_for(usual_machine_key(62));
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(m, &x::machine());
  EXPECT_EQ(m->elf_machine(), 62);
  EXPECT_EQ(m->stack_pointer(), x::kRsp);
  EXPECT_EQ(m->frame_pointer(), x::kRbp);
  EXPECT_EQ(m->program_counter(), x::kRip);
  EXPECT_EQ(m->address_size(), 8);
  EXPECT_EQ(m->endian(), Endian::kLittle);
  EXPECT_STREQ(m->info().name, "x86_64");
}

TEST(MachineFor, MachinesWithoutADescriptorAreNull) {
  EXPECT_EQ(machine_for(usual_machine_key(0)), nullptr);    // EM_NONE
  EXPECT_EQ(machine_for(MachineKey{kEmMips, false, Endian::kBig, 0}), nullptr);  // MIPS: register names only
  EXPECT_EQ(machine_for(usual_machine_key(0xffff)), nullptr);
}

TEST(X86_64Machine, LookupPcIsInsideTheCallForReturnAddresses) {
  EXPECT_EQ(x::machine().lookup_pc(0x401000, true), 0x401000u);
  EXPECT_EQ(x::machine().lookup_pc(0x401000, false), 0x400fffu);
}

TEST(X86_64Machine, ReturnAddressesNeedNoCleaning) {
  EXPECT_EQ(x::machine().clean_return_address(0xffff800000401234, 0), 0xffff800000401234u);
}

TEST(X86_64Machine, FollowsEveryCallForm) {
  EXPECT_TRUE(follows_call({0xe8, 0x10, 0x20, 0x30, 0x40}));                   // call rel32
  EXPECT_TRUE(follows_call({0xff, 0xd0}));                                     // call *%rax
  EXPECT_TRUE(follows_call({0x41, 0xff, 0xd3}));                               // call *%r11
  EXPECT_TRUE(follows_call({0xff, 0x10}));                                     // call *(%rax)
  EXPECT_TRUE(follows_call({0xff, 0x14, 0x24}));                               // call *(%rsp) (SIB)
  EXPECT_TRUE(follows_call({0xff, 0x50, 0x08}));                               // call *0x8(%rax)
  EXPECT_TRUE(follows_call({0xff, 0x54, 0x24, 0x10}));                         // call *0x10(%rsp)
  EXPECT_TRUE(follows_call({0xff, 0x90, 0x78, 0x56, 0x34, 0x12}));             // call *0x12345678(%rax)
  EXPECT_TRUE(follows_call({0xff, 0x15, 0x78, 0x56, 0x34, 0x12}));             // call *0x12345678(%rip)
  EXPECT_TRUE(follows_call({0xff, 0x94, 0xd8, 0x78, 0x56, 0x34, 0x12}));       // call *0x12345678(%rax,%rbx,8)
  EXPECT_TRUE(follows_call({0x41, 0xff, 0x94, 0xd8, 0x78, 0x56, 0x34, 0x12})); // the same with REX.B
}

TEST(X86_64Machine, RejectsWhatIsNotACall) {
  EXPECT_FALSE(follows_call({}));                                    // nops
  EXPECT_FALSE(follows_call({0xe9, 0x10, 0x20, 0x30, 0x40}));        // jmp rel32
  EXPECT_FALSE(follows_call({0xff, 0xe0}));                          // jmp *%rax (ff /4)
  EXPECT_FALSE(follows_call({0xff, 0x30}));                          // push (%rax) (ff /6)
  EXPECT_FALSE(follows_call({0xff, 0xc0}));                          // inc %eax (ff /0)
  EXPECT_FALSE(follows_call({0xc3}));                                // ret
  EXPECT_FALSE(follows_call({0xe8, 0x10, 0x20, 0x30}));              // e8 one byte too late for a rel32
  EXPECT_FALSE(follows_call({0xff, 0x94, 0xd8, 0x78, 0x56, 0x34, 0x12, 0x90}));  // 8 bytes back: too far
}

TEST(X86_64Machine, CallCheckNearTheStartOfMemory) {
  // Only the 5 bytes of a `call rel32` are readable before the return address.
  const uint8_t call[5] = {0xe8, 0x01, 0x02, 0x03, 0x04};
  BufferMemory memory(Bytes(call, sizeof call), kCodeBase);
  EXPECT_TRUE(x::machine().follows_call(memory, kCodeBase + 5));
  const uint8_t jump[5] = {0xe9, 0x01, 0x02, 0x03, 0x04};
  BufferMemory jump_memory(Bytes(jump, sizeof jump), kCodeBase);
  EXPECT_FALSE(x::machine().follows_call(jump_memory, kCodeBase + 5));
  // Unreadable, and below the lowest address a call can end at.
  EXPECT_FALSE(x::machine().follows_call(memory, 0x1000));
  BufferMemory at_zero(Bytes(call, sizeof call), 0);
  EXPECT_FALSE(x::machine().follows_call(at_zero, 5));
}

TEST(X86_64Machine, SignalTrampolineByItsCode) {
  std::vector<uint8_t> code(x::kSigreturnCode, x::kSigreturnCode + sizeof x::kSigreturnCode);
  code.push_back(0xcc);
  BufferMemory memory(Bytes(code.data(), code.size()), kCodeBase);
  EXPECT_TRUE(x::machine().is_signal_trampoline(memory, kCodeBase));
  EXPECT_FALSE(x::machine().is_signal_trampoline(memory, kCodeBase + 1));
  // Cut off before its last byte.
  BufferMemory truncated(Bytes(code.data(), sizeof x::kSigreturnCode - 1), kCodeBase);
  EXPECT_FALSE(x::machine().is_signal_trampoline(truncated, kCodeBase));
  // One byte different: `mov $14,%rax` (rt_sigprocmask).
  code[3] = 0x0e;
  BufferMemory other(Bytes(code.data(), code.size()), kCodeBase);
  EXPECT_FALSE(x::machine().is_signal_trampoline(other, kCodeBase));

  UnwindRow row;
  EXPECT_FALSE(x::machine().signal_frame_row(other, kCodeBase, &row));
  code[3] = 0x0f;
  ASSERT_TRUE(x::machine().signal_frame_row(memory, kCodeBase, &row));
  EXPECT_TRUE(row.signal_frame);
  EXPECT_EQ(row.cfa.reg, x::kRsp);
  EXPECT_EQ(row.cfa.offset, 0);
  ASSERT_NE(row.find(x::kRip), nullptr);
  EXPECT_EQ(row.find(x::kRip)->value, int64_t{x::kUcontextGregsOffset + 8 * 16});
}

// push %rbp; mov %rsp,%rbp; (body) mov $1,%eax; pop %rbp; ret
const uint8_t kFramed[] = {0x55, 0x48, 0x89, 0xe5, 0xb8, 0x01, 0x00, 0x00, 0x00, 0x5d, 0xc3};

RegisterFile registers(uint64_t sp, uint64_t rbp) {
  RegisterFile r;
  r.set(x::kRsp, sp);
  r.set(x::kRbp, rbp);
  return r;
}

TEST(X86_64Machine, FallbackRowFromThePrologue) {
  const RegisterFile regs = registers(0x7000, 0x7100);
  FallbackInput in;
  in.registers = &regs;
  in.function_known = true;
  in.function_code = Bytes(kFramed, sizeof kFramed);
  UnwindRow row;
  // A return-address frame: the frame pointer the prologue set up.
  EXPECT_EQ(x::machine().fallback_row(in, &row), FallbackKind::kFramePointer);
  EXPECT_EQ(row.cfa.reg, x::kRbp);
  EXPECT_EQ(row.cfa.offset, 16);
  // An activation after `push %rbp`: CFA=rsp+16.
  in.activation = true;
  in.pc_offset = 1;
  in.function_code = Bytes(kFramed, 1);
  in.code_at_pc = Bytes(kFramed + 1, sizeof kFramed - 1);
  EXPECT_EQ(x::machine().fallback_row(in, &row), FallbackKind::kPrologue);
  EXPECT_EQ(row.cfa.reg, x::kRsp);
  EXPECT_EQ(row.cfa.offset, 16);
  // An activation at the `ret`: the frame is down, CFA=rsp+8.
  in.pc_offset = sizeof kFramed - 1;
  in.function_code = Bytes(kFramed, sizeof kFramed - 1);
  in.code_at_pc = Bytes(kFramed + sizeof kFramed - 1, 1);
  EXPECT_EQ(x::machine().fallback_row(in, &row), FallbackKind::kPrologue);
  EXPECT_EQ(row.cfa.reg, x::kRsp);
  EXPECT_EQ(row.cfa.offset, 8);
}

TEST(X86_64Machine, FramePointerGuessOnlyWhereRbpLooksLikeOne) {
  UnwindRow row;
  FallbackInput in;
  const RegisterFile good = registers(0x7000, 0x7100);
  in.registers = &good;
  EXPECT_EQ(x::machine().fallback_row(in, &row), FallbackKind::kFramePointer);
  EXPECT_EQ(row.cfa.reg, x::kRbp);
  in.activation = true;  // an activation may not have set rbp up yet
  EXPECT_EQ(x::machine().fallback_row(in, &row), std::nullopt);
  in.activation = false;
  // A caller without unwind information whose rbp is 0 is the end of the
  // frame chain (the dynamic linker's _start): the return address
  // undefined, so the walk ends as outermost; not for an activation.
  const RegisterFile end = registers(0x7000, 0);
  in.registers = &end;
  ASSERT_EQ(x::machine().fallback_row(in, &row), FallbackKind::kFramePointer);
  const RegisterRule* ra = row.find(x::kRip);
  ASSERT_NE(ra, nullptr);
  EXPECT_EQ(ra->kind, RuleKind::kUndefined);
  in.activation = true;
  EXPECT_EQ(x::machine().fallback_row(in, &row), std::nullopt);
  in.activation = false;
  for (const RegisterFile& bad : {registers(0x7000, 0x6ff8),              // below sp
                                  registers(0x7000, 0x7104),              // misaligned
                                  registers(0x7000, 0x7000 + (1u << 27)),  // too far above sp
                                  RegisterFile{}}) {
    in.registers = &bad;
    EXPECT_EQ(x::machine().fallback_row(in, &row), std::nullopt);
  }
}

// Little-endian 8-byte words: word i holds 0x1000 + i.
std::vector<uint8_t> numbered_words(size_t count) {
  std::vector<uint8_t> bytes(8 * count);
  for (size_t i = 0; i < count; ++i)
    for (unsigned b = 0; b < 8; ++b) bytes[8 * i + b] = static_cast<uint8_t>((0x1000 + i) >> (8 * b));
  return bytes;
}

TEST(X86_64Machine, RegistersFromTheKernelsGregset) {
  const std::vector<uint8_t> gregset = numbered_words(x::kUserRegsCount);
  ASSERT_EQ(x::machine().gregset_size(), gregset.size());
  const RegisterFile r = x::machine().registers_from_gregset(Bytes(gregset.data(), gregset.size()));
  // user_regs_struct: r15 r14 r13 r12 rbp rbx r11 r10 r9 r8 rax rcx rdx rsi rdi orig_rax rip cs eflags rsp.
  EXPECT_EQ(r.get(x::kR15), 0x1000u);
  EXPECT_EQ(r.get(x::kRbp), 0x1004u);
  EXPECT_EQ(r.get(x::kRbx), 0x1005u);
  EXPECT_EQ(r.get(x::kR8), 0x1009u);
  EXPECT_EQ(r.get(x::kRax), 0x100au);
  EXPECT_EQ(r.get(x::kRdi), 0x100eu);
  EXPECT_EQ(r.get(x::kRip), 0x1010u);
  EXPECT_EQ(r.get(x::kRsp), 0x1013u);
  EXPECT_EQ(r.known_mask(), (uint64_t{1} << 17) - 1);  // rax..r15 and rip, nothing else
  // Cut off after rip: rsp (slot 19) is not there, so not known.
  const RegisterFile cut = x::machine().registers_from_gregset(Bytes(gregset.data(), 8 * 17));
  EXPECT_EQ(cut.get(x::kRip), 0x1010u);
  EXPECT_FALSE(cut.known(x::kRsp));
}

TEST(X86_64Machine, RegistersFromAUcontext) {
  // uc_mcontext.gregs at 40: r8..r15, rdi, rsi, rbp, rbx, rdx, rax, rcx, rsp, rip.
  std::vector<uint8_t> ucontext(x::kUcontextGregsOffset, 0xee);
  const std::vector<uint8_t> gregs = numbered_words(17);
  ucontext.insert(ucontext.end(), gregs.begin(), gregs.end());
  const RegisterFile r = x::machine().registers_from_ucontext(Bytes(ucontext.data(), ucontext.size()));
  EXPECT_EQ(r.get(x::kR8), 0x1000u);
  EXPECT_EQ(r.get(x::kRbp), 0x100au);
  EXPECT_EQ(r.get(x::kRsp), 0x100fu);
  EXPECT_EQ(r.get(x::kRip), 0x1010u);
  EXPECT_EQ(r.known_mask(), (uint64_t{1} << 17) - 1);
  const RegisterFile cut = x::machine().registers_from_ucontext(Bytes(ucontext.data(), ucontext.size() - 1));
  EXPECT_FALSE(cut.known(x::kRip));
  EXPECT_TRUE(cut.known(x::kRsp));
}

// x32: x86-64's instructions with 4-byte pointers. Its own trampolines (both
// encodings), its ucontext (gregs at 24), 8-byte slots and 32-bit frame
// setup; x86-64's trampoline is not one.
TEST(X32Machine, SignalTrampolinesAndUcontext) {
  const Machine& m = x::x32_machine();
  EXPECT_EQ(m.address_size(), 4);
  EXPECT_EQ(m.register_size(x::kRbp), 8);
  EXPECT_EQ(m.register_size(x::kRip), 8);
  const std::vector<std::vector<uint8_t>> trampolines = {
      {x::kX32SigreturnCode, x::kX32SigreturnCode + sizeof x::kX32SigreturnCode},
      {x::kX32SigreturnCodeShort, x::kX32SigreturnCodeShort + sizeof x::kX32SigreturnCodeShort}};
  for (const auto& code : trampolines) {
    BufferMemory memory(Bytes(code.data(), code.size()), kCodeBase);
    UnwindRow row;
    ASSERT_TRUE(m.signal_frame_row(memory, kCodeBase, &row));
    EXPECT_FALSE(x::machine().is_signal_trampoline(memory, kCodeBase));
    EXPECT_TRUE(row.signal_frame);
    ASSERT_NE(row.find(x::kRip), nullptr);
    EXPECT_EQ(row.find(x::kRip)->value, int64_t{24 + 8 * 16});
    ASSERT_NE(row.find(x::kRsp), nullptr);
    EXPECT_EQ(row.find(x::kRsp)->value, int64_t{24 + 8 * 15});
    BufferMemory truncated(Bytes(code.data(), code.size() - 1), kCodeBase);
    EXPECT_FALSE(m.is_signal_trampoline(truncated, kCodeBase));
  }
  BufferMemory lp64(Bytes(x::kSigreturnCode, sizeof x::kSigreturnCode), kCodeBase);
  EXPECT_FALSE(m.is_signal_trampoline(lp64, kCodeBase));

  // A ucontext whose gregs hold their own index + 0x1000.
  std::vector<uint8_t> uc(24 + 8 * 23, 0);
  for (unsigned i = 0; i < 23; ++i) uc[24 + 8 * i] = static_cast<uint8_t>(i), uc[24 + 8 * i + 1] = 0x10;
  const RegisterFile r = m.registers_from_ucontext(Bytes(uc.data(), uc.size()));
  EXPECT_EQ(r.get(x::kR8), 0x1000u);
  EXPECT_EQ(r.get(x::kRsp), 0x100fu);
  EXPECT_EQ(r.get(x::kRip), 0x1010u);
  // The gregset is x86-64's user_regs_struct: rip is its 17th long.
  std::vector<uint8_t> gregs(x::kUserRegsSize, 0);
  gregs[16 * 8] = 0x34, gregs[16 * 8 + 1] = 0x12;
  EXPECT_EQ(m.gregset_size(), x::kUserRegsSize);
  EXPECT_EQ(m.registers_from_gregset(Bytes(gregs.data(), gregs.size())).get(x::kRip), 0x1234u);
}

TEST(X32Machine, FramesBuiltWith32BitOperations) {
  // push %rbp; mov %esp,%ebp; sub $0x20,%esp; (body) call
  const uint8_t code[] = {0x55, 0x89, 0xe5, 0x83, 0xec, 0x20, 0xe8, 0x00, 0x00, 0x00, 0x00};
  UnwindRow row;
  ASSERT_TRUE(x::prologue_row(Bytes(code, sizeof code), x::kReturnAddressFrame, &row, x::kX32Abi));
  EXPECT_EQ(row.cfa.reg, x::kRbp);
  EXPECT_EQ(row.cfa.offset, 16);
  ASSERT_NE(row.find(x::kRbp), nullptr);
  EXPECT_EQ(row.find(x::kRbp)->value, -16);
  // An activation after the sub: CFA from rbp still.
  ASSERT_TRUE(x::prologue_row(Bytes(code, sizeof code), 6, &row, x::kX32Abi));
  EXPECT_EQ(row.cfa.reg, x::kRbp);
  // sub $0x118,%esp (imm32) without a frame pointer.
  const uint8_t frameless[] = {0x53, 0x81, 0xec, 0x18, 0x01, 0x00, 0x00, 0xe8, 0, 0, 0, 0};
  ASSERT_TRUE(x::prologue_row(Bytes(frameless, sizeof frameless), x::kReturnAddressFrame, &row, x::kX32Abi));
  EXPECT_EQ(row.cfa.reg, x::kRsp);
  EXPECT_EQ(row.cfa.offset, 8 + 8 + 0x118);
  // On x86-64 `mov %esp,%ebp` truncates: no frame pointer is set up.
  ASSERT_TRUE(x::prologue_row(Bytes(code, sizeof code), x::kReturnAddressFrame, &row, x::kLp64Abi));
  EXPECT_EQ(row.cfa.reg, x::kRsp);
}

}  // namespace
}  // namespace framewalk::arch

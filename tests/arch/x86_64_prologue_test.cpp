// Prologue analysis for x86-64 code without CFI, on hand-written bytes.
#include <gtest/gtest.h>

#include <vector>

#include "arch/x86_64/frames.hpp"
#include "arch/x86_64/instruction.hpp"
#include "arch/x86_64_instruction_cases.hpp"

namespace framewalk::arch::x86_64 {
namespace {

// endbr64; push %rbp; mov %rsp,%rbp; push %r12; push %rbx; sub $0x20,%rsp; (body: mov $1,%eax)
const uint8_t kFramed[] = {0xf3, 0x0f, 0x1e, 0xfa, 0x55, 0x48, 0x89, 0xe5, 0x41, 0x54,
                           0x53, 0x48, 0x83, 0xec, 0x20, 0xb8, 0x01, 0x00, 0x00, 0x00};
// push %r12; push %rbx; sub $0x118,%rsp; (body)
const uint8_t kFrameless[] = {0x41, 0x54, 0x53, 0x48, 0x81, 0xec, 0x18, 0x01, 0x00, 0x00, 0xb8, 0x01, 0x00, 0x00, 0x00};

UnwindRow at(const uint8_t* code, size_t size, uint64_t offset) {
  UnwindRow row;
  EXPECT_TRUE(prologue_row(Bytes(code, size), offset, &row));
  return row;
}
UnwindRow at(const std::vector<uint8_t>& code, uint64_t offset) { return at(code.data(), code.size(), offset); }

bool known(const std::vector<uint8_t>& code, uint64_t offset) {
  UnwindRow row;
  return prologue_row(Bytes(code.data(), code.size()), offset, &row);
}

std::vector<uint8_t> concat(std::initializer_list<std::vector<uint8_t>> parts) {
  std::vector<uint8_t> out;
  for (const auto& p : parts) out.insert(out.end(), p.begin(), p.end());
  return out;
}

const std::vector<uint8_t> kPushRbpBytes = {0x55};
const std::vector<uint8_t> kMovRspRbpBytes = {0x48, 0x89, 0xe5};
const std::vector<uint8_t> kCall = {0xe8, 0x00, 0x00, 0x00, 0x00};

void expect_cfa(const UnwindRow& row, uint16_t reg, int64_t offset) {
  EXPECT_EQ(row.cfa.kind, CfaKind::kRegisterOffset);
  EXPECT_EQ(row.cfa.reg, reg);
  EXPECT_EQ(row.cfa.offset, offset);
  ASSERT_NE(row.find(kRip), nullptr);
  EXPECT_EQ(row.find(kRip)->value, -8);
}

TEST(X86_64Prologue, FramePointerFunction) {
  expect_cfa(at(kFramed, sizeof kFramed, 0), kRsp, 8);   // at the entry
  expect_cfa(at(kFramed, sizeof kFramed, 4), kRsp, 8);   // after endbr64
  UnwindRow pushed = at(kFramed, sizeof kFramed, 5);     // after push %rbp
  expect_cfa(pushed, kRsp, 16);
  ASSERT_NE(pushed.find(kRbp), nullptr);
  EXPECT_EQ(pushed.find(kRbp)->value, -16);
  expect_cfa(at(kFramed, sizeof kFramed, 8), kRbp, 16);  // after mov %rsp,%rbp
  // In the body (and for return-address frames): still rbp-based; r12 and rbx saved.
  UnwindRow body = at(kFramed, sizeof kFramed, ~uint64_t{0});
  expect_cfa(body, kRbp, 16);
  ASSERT_NE(body.find(kR12), nullptr);
  EXPECT_EQ(body.find(kR12)->value, -24);
  ASSERT_NE(body.find(kRbx), nullptr);
  EXPECT_EQ(body.find(kRbx)->value, -32);
}

TEST(X86_64Prologue, FramelessFunction) {
  expect_cfa(at(kFrameless, sizeof kFrameless, 0), kRsp, 8);
  expect_cfa(at(kFrameless, sizeof kFrameless, 2), kRsp, 16);
  expect_cfa(at(kFrameless, sizeof kFrameless, 3), kRsp, 24);
  UnwindRow body = at(kFrameless, sizeof kFrameless, 12);
  expect_cfa(body, kRsp, 24 + 0x118);
  EXPECT_EQ(body.find(kR12)->value, -16);
  EXPECT_EQ(body.find(kRbx)->value, -24);
  EXPECT_EQ(body.find(kRbp), nullptr);
}

TEST(X86_64Prologue, NotAPrologueAtAll) {
  const std::vector<uint8_t> leaf = {0x8d, 0x04, 0x37, 0xc3};  // lea (%rdi,%rsi),%eax; ret
  expect_cfa(at(leaf, 0), kRsp, 8);  // at the entry
  expect_cfa(at(leaf, 3), kRsp, 8);  // an activation in a frameless leaf: CFA = rsp+8
  // A return address in it: a function that calls has moved the stack
  // pointer first, and this one did nothing the analysis knows.
  EXPECT_FALSE(known(leaf, kReturnAddressFrame));
  const std::vector<uint8_t> mov_rdi_rax = {0x48, 0x89, 0xf8, 0xe8, 0x00, 0x00, 0x00, 0x00};
  EXPECT_FALSE(known(mov_rdi_rax, kReturnAddressFrame));
  expect_cfa(at(mov_rdi_rax, 3), kRsp, 8);
  // Nothing read: an activation at its entry needs nothing, any other frame does.
  expect_cfa(at(nullptr, 0, 0), kRsp, 8);
  EXPECT_FALSE(known({}, 4));
  EXPECT_FALSE(known({}, kReturnAddressFrame));
  // The bytes end before the PC: what ran after them is unknown.
  EXPECT_FALSE(known({0x55, 0x53}, 5));
}

// gcc reserves 128 bytes with `add $-128,%rsp` (48 83 c4 80): imm8 fits
// -128 but not +128. Every immediate is sign-extended.
TEST(X86_64Prologue, StackAdjustmentsAreSignExtended) {
  const std::vector<uint8_t> add_minus_128 = {0x53, 0x48, 0x83, 0xc4, 0x80, 0xe8, 0x00, 0x00, 0x00, 0x00};
  expect_cfa(at(add_minus_128, kReturnAddressFrame), kRsp, 8 + 8 + 128);
  expect_cfa(at(add_minus_128, 5), kRsp, 8 + 8 + 128);
  const std::vector<uint8_t> sub_minus_8 = {0x53, 0x41, 0x54, 0x48, 0x83, 0xec, 0xf8, 0xe8, 0x00, 0x00, 0x00, 0x00};
  expect_cfa(at(sub_minus_8, kReturnAddressFrame), kRsp, 8 + 16 - 8);
  const std::vector<uint8_t> add_imm32 = {0x53, 0x48, 0x81, 0xc4, 0x00, 0xff, 0xff, 0xff, 0xe8, 0x00, 0x00, 0x00, 0x00};
  expect_cfa(at(add_imm32, kReturnAddressFrame), kRsp, 8 + 8 + 0x100);
  const std::vector<uint8_t> sub_imm32 = {0x53, 0x48, 0x81, 0xec, 0x00, 0x10, 0x00, 0x00, 0xe8, 0x00, 0x00, 0x00, 0x00};
  expect_cfa(at(sub_imm32, kReturnAddressFrame), kRsp, 8 + 8 + 0x1000);
  const std::vector<uint8_t> sub_imm8 = {0x53, 0x48, 0x83, 0xec, 0x10, 0xe8, 0x00, 0x00, 0x00, 0x00};
  expect_cfa(at(sub_imm8, kReturnAddressFrame), kRsp, 8 + 8 + 0x10);
}

// gcc's sigusr2 handler: push %rbp; cmp $0xc,%edi; mov %rsp,%rbp; push %rbx; sub $0x8,%rsp; call.
TEST(X86_64Prologue, ScheduledFramePointerPrologue) {
  const std::vector<uint8_t> code = {0x55, 0x83, 0xff, 0x0c, 0x48, 0x89, 0xe5, 0x53,
                                     0x48, 0x83, 0xec, 0x08, 0xe8, 0x00, 0x00, 0x00, 0x00};
  UnwindRow body = at(code, kReturnAddressFrame);
  expect_cfa(body, kRbp, 16);
  ASSERT_NE(body.find(kRbp), nullptr);
  EXPECT_EQ(body.find(kRbp)->value, -16);
  ASSERT_NE(body.find(kRbx), nullptr);
  EXPECT_EQ(body.find(kRbx)->value, -24);
  // Activations only have what ran before their PC.
  expect_cfa(at(code, 1), kRsp, 16);  // after push %rbp
  expect_cfa(at(code, 4), kRsp, 16);  // after the cmp: the frame pointer is not set yet
  EXPECT_EQ(at(code, 4).find(kRbp)->value, -16);
  expect_cfa(at(code, 7), kRbp, 16);  // after mov %rsp,%rbp
  expect_cfa(at(code, 12), kRbp, 16);
}

// Every form decode_instruction knows, between push %rbp and mov %rsp,%rbp:
// those that leave rsp, rbp and the flow alone are stepped over, the others
// end the prologue there. Pushes are prologue instructions of their own.
bool stepped_over(const test_cases::Case& c) {
  return !c.branch && !(c.writes & (1u << kHwRsp)) && !(c.writes & (1u << kHwRbp));
}
bool is_push_register(const test_cases::Case& c) { return c.bytes.size() == 1 && (c.bytes[0] & 0xf8) == 0x50; }

TEST(X86_64Prologue, StepsOverInstructionsBetweenPushAndMov) {
  int stepped = 0;
  for (const auto& c : test_cases::kDecoded) {
    if (!stepped_over(c)) continue;
    SCOPED_TRACE(c.text);
    ++stepped;
    const std::vector<uint8_t> code = concat({kPushRbpBytes, c.bytes, kMovRspRbpBytes, kCall});
    expect_cfa(at(code, kReturnAddressFrame), kRbp, 16);
    expect_cfa(at(code, 1 + c.bytes.size()), kRsp, 16);  // interrupted before the mov
    // Two of them with a push between: rbp then points 8 bytes lower.
    const std::vector<uint8_t> two = concat({kPushRbpBytes, c.bytes, {0x53}, c.bytes, kMovRspRbpBytes, kCall});
    UnwindRow row = at(two, kReturnAddressFrame);
    expect_cfa(row, kRbp, 24);
    ASSERT_NE(row.find(kRbx), nullptr);
    EXPECT_EQ(row.find(kRbx)->value, -24);
  }
  EXPECT_GT(stepped, 50);
}

// What ends the search for mov %rsp,%rbp: the frame pointer is then not
// taken as set up, or the row not known at all.
TEST(X86_64Prologue, WhatStopsTheSearchForTheFramePointer) {
  // Writes to rbp (an ordinary register here) or rsp, and branches: the
  // prologue has ended without a frame pointer; rbp was pushed.
  int stopped = 0;
  for (const auto& c : test_cases::kDecoded) {
    if (stepped_over(c) || is_push_register(c)) continue;
    SCOPED_TRACE(c.text);
    ++stopped;
    const std::vector<uint8_t> code = concat({kPushRbpBytes, c.bytes, kMovRspRbpBytes, kCall});
    UnwindRow row = at(code, kReturnAddressFrame);
    expect_cfa(row, kRsp, 16);
    ASSERT_NE(row.find(kRbp), nullptr);
    EXPECT_EQ(row.find(kRbp)->value, -16);
  }
  EXPECT_GT(stopped, 15);
  // An instruction it cannot decode: whether the mov follows is unknown.
  const std::vector<uint8_t> undecodable[] = {
      {0x0f, 0x0b},            // ud2
      {0xc5, 0xf8, 0x77},      // vzeroupper
      {0x0f, 0x05},            // syscall
  };
  for (const auto& insn : undecodable) {
    SCOPED_TRACE(testing::PrintToString(insn));
    const std::vector<uint8_t> code = concat({kPushRbpBytes, insn, kMovRspRbpBytes, kCall});
    EXPECT_FALSE(known(code, kReturnAddressFrame));
    EXPECT_FALSE(known(code, 1 + insn.size()));     // an activation past it
    expect_cfa(at(code, 1), kRsp, 16);              // an activation before it
  }
  // Cut off before the mov (the bytes read end): unknown as well.
  EXPECT_FALSE(known({0x55, 0x83, 0xff, 0x0c}, kReturnAddressFrame));
  EXPECT_FALSE(known({0x55, 0x83, 0xff}, kReturnAddressFrame));
  // Without push %rbp first, other instructions are the body, as before.
  const std::vector<uint8_t> no_push = concat({{0x83, 0xff, 0x0c}, kMovRspRbpBytes, kCall});
  EXPECT_FALSE(known(no_push, kReturnAddressFrame));
  expect_cfa(at(no_push, 3), kRsp, 8);
}

TEST(X86_64Prologue, SigreturnTrampoline) {
  EXPECT_TRUE(is_sigreturn_trampoline(Bytes(kSigreturnCode, sizeof kSigreturnCode)));
  EXPECT_FALSE(is_sigreturn_trampoline(Bytes(kSigreturnCode, sizeof kSigreturnCode - 1)));
  const uint8_t other_syscall[] = {0x48, 0xc7, 0xc0, 0x0e, 0x00, 0x00, 0x00, 0x0f, 0x05};  // mov $14,%rax
  EXPECT_FALSE(is_sigreturn_trampoline(Bytes(other_syscall, sizeof other_syscall)));
}

// The vDSO's clock_gettime after `pop %rbp`: register clearing, then ret.
TEST(X86_64Prologue, EpilogueTails) {
  const uint8_t vdso[] = {0x31, 0xd2, 0x31, 0xc9, 0x31, 0xf6, 0x31, 0xff, 0x45, 0x31, 0xc0,
                          0x45, 0x31, 0xc9, 0x45, 0x31, 0xd2, 0x45, 0x31, 0xdb, 0xc3};
  EXPECT_TRUE(at_epilogue_tail(Bytes(vdso, sizeof vdso)));
  EXPECT_TRUE(at_epilogue_tail(Bytes(vdso + 8, sizeof vdso - 8)));
  const uint8_t vzeroupper_ret[] = {0xc5, 0xf8, 0x77, 0xf3, 0xc3};
  EXPECT_TRUE(at_epilogue_tail(Bytes(vzeroupper_ret, sizeof vzeroupper_ret)));
  // Still in the frame: pop %rbp; ret, and xor with a memory operand.
  const uint8_t pop_ret[] = {0x5d, 0xc3};
  EXPECT_FALSE(at_epilogue_tail(Bytes(pop_ret, sizeof pop_ret)));
  const uint8_t xor_mem[] = {0x31, 0x45, 0xf8, 0xc3};
  EXPECT_FALSE(at_epilogue_tail(Bytes(xor_mem, sizeof xor_mem)));
  // No ret in sight: not a tail.
  EXPECT_FALSE(at_epilogue_tail(Bytes(vdso, 8)));
  EXPECT_FALSE(at_epilogue_tail(Bytes()));
}

}  // namespace
}  // namespace framewalk::arch::x86_64

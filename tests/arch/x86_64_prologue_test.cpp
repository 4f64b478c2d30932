// Prologue analysis for x86-64 code without CFI, on hand-written bytes.
#include <gtest/gtest.h>

#include <vector>

#include "arch/x86_64/frames.hpp"

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
  UnwindRow body = at(kFramed, sizeof kFramed, kReturnAddressFrame);
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

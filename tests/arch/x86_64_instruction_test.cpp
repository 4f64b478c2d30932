// The x86-64 instruction-length decoder of prologue analysis, on hand-written
// bytes (x86_64_instruction_cases.hpp).
#include <gtest/gtest.h>

#include <vector>

#include "arch/x86_64/instruction.hpp"
#include "arch/x86_64_instruction_cases.hpp"

namespace framewalk::arch::x86_64 {
namespace {

using test_cases::Case;
using test_cases::kDecoded;

TEST(X86_64Instruction, DecodesLengthsWritesAndBranches) {
  for (const Case& c : kDecoded) {
    SCOPED_TRACE(c.text);
    const auto insn = decode_instruction(Bytes(c.bytes.data(), c.bytes.size()));
    ASSERT_TRUE(insn.has_value());
    EXPECT_EQ(insn->length, c.bytes.size());
    EXPECT_EQ(insn->writes, c.writes);
    EXPECT_EQ(insn->branch, c.branch);
    // The length does not depend on what follows.
    std::vector<uint8_t> longer = c.bytes;
    longer.insert(longer.end(), {0xcc, 0xcc, 0xcc});
    const auto again = decode_instruction(Bytes(longer.data(), longer.size()));
    ASSERT_TRUE(again.has_value());
    EXPECT_EQ(again->length, c.bytes.size());
  }
}

TEST(X86_64Instruction, CutOffInstructionsAreNotDecoded) {
  for (const Case& c : kDecoded) {
    for (size_t n = 0; n < c.bytes.size(); ++n) {
      SCOPED_TRACE(std::string(c.text) + ", " + std::to_string(n) + " bytes");
      EXPECT_FALSE(decode_instruction(Bytes(c.bytes.data(), n)).has_value());
    }
  }
}

TEST(X86_64Instruction, UnknownFormsAreNotDecoded) {
  const std::vector<uint8_t> unknown[] = {
      {0x0f, 0x0b},                    // ud2
      {0x0f, 0x05},                    // syscall
      {0xc5, 0xf8, 0x77},              // vzeroupper (VEX)
      {0x0f, 0x38, 0x00, 0xc1},        // pshufb (three-byte map)
      {0xcc},                          // int3
      {0xc7, 0xf8, 0x00, 0x00, 0x00, 0x00},  // xbegin
      {0x8d, 0xc0},                    // lea with a register operand
      {0xff, 0xff},                    // ff /7
      {0x66, 0x66, 0x66, 0x66, 0x66, 0x66, 0x66, 0x66, 0x66, 0x66, 0x66, 0x66, 0x66, 0x66, 0x66, 0x90},  // > 15 bytes
  };
  for (const auto& bytes : unknown) {
    SCOPED_TRACE(testing::PrintToString(bytes));
    EXPECT_FALSE(decode_instruction(Bytes(bytes.data(), bytes.size())).has_value());
  }
}

}  // namespace
}  // namespace framewalk::arch::x86_64

#include "ehabi/unwind_instructions.hpp"

#include <gtest/gtest.h>

#include <vector>

#include "dump/arm_unwind.hpp"

namespace framewalk::ehabi {
namespace {

Instruction only(std::vector<uint8_t> bytes) {
  auto decoded = decode_instructions(bytes);
  EXPECT_EQ(decoded.size(), 1u);
  return decoded.empty() ? Instruction{} : decoded[0];
}

std::string text(std::vector<uint8_t> bytes) { return dump::instruction_text(only(bytes)); }

TEST(EhabiInstructions, VspAdjustments) {
  EXPECT_EQ(text({0x00}), "vsp = vsp + 4");
  EXPECT_EQ(text({0x3f}), "vsp = vsp + 256");
  EXPECT_EQ(text({0x41}), "vsp = vsp - 8");
  EXPECT_EQ(only({0x7f}).amount, 256u);
  const Instruction big = only({0xb2, 0x90, 0x01});
  EXPECT_EQ(big.op, Op::kVspAdd);
  EXPECT_EQ(big.amount, 0x204u + ((0x90u & 0x7f) | 1u << 7) * 4);
  EXPECT_EQ(big.size, 3);
  EXPECT_EQ(text({0xb2, 0x80, 0x80, 0x01}), "vsp = vsp + 66052");
}

TEST(EhabiInstructions, VspUlebLongerThanNineBytesIsBad) {
  std::vector<uint8_t> bytes{0xb2};
  bytes.insert(bytes.end(), 9, 0x80);
  bytes.push_back(0x01);
  auto decoded = decode_instructions(bytes);
  ASSERT_EQ(decoded.size(), 2u);
  EXPECT_EQ(decoded[0].op, Op::kBadVspChange);
  EXPECT_EQ(decoded[0].size, 10);
  EXPECT_EQ(check_instruction(decoded[0], 0x40).error().code, ErrorCode::kSpareUnwindOpcode);
}

TEST(EhabiInstructions, PopMasks) {
  EXPECT_EQ(only({0x80, 0x00}).op, Op::kRefuseToUnwind);
  EXPECT_EQ(text({0x84, 0x00}), "pop {r14}");
  EXPECT_EQ(text({0x8f, 0xff}), "pop {r4, r5, r6, r7, r8, r9, r10, r11, r12, r13, r14, r15}");
  EXPECT_EQ(only({0x88, 0x01}).mask, (1u << 4) | (1u << 15));
  EXPECT_EQ(text({0xa0}), "pop {r4}");
  EXPECT_EQ(text({0xa7}), "pop {r4, r5, r6, r7, r8, r9, r10, r11}");
  EXPECT_EQ(text({0xaa}), "pop {r4, r5, r6, r14}");
  EXPECT_EQ(text({0xb1, 0x0f}), "pop {r0, r1, r2, r3}");
  EXPECT_EQ(text({0xb1, 0x08}), "pop {r3}");
}

TEST(EhabiInstructions, SetVspFromRegister) {
  EXPECT_EQ(text({0x97}), "vsp = r7");
  EXPECT_EQ(only({0x9b}).reg, 11);
  EXPECT_EQ(only({0x9d}).op, Op::kReservedRegisterMove);
  EXPECT_EQ(only({0x9f}).op, Op::kReservedRegisterMove);
  EXPECT_EQ(check_instruction(only({0x9d}), 7).error().offset, 7u);
}

TEST(EhabiInstructions, FinishAndSpareForms) {
  EXPECT_EQ(only({0xb0}).op, Op::kFinish);
  for (std::vector<uint8_t> spare : {std::vector<uint8_t>{0xb1, 0x00}, {0xb1, 0x1f}, {0xc7, 0x00}, {0xc7, 0x10}}) {
    EXPECT_EQ(only(spare).op, Op::kSpare);
    EXPECT_FALSE(check_instruction(only(spare), 0).ok());
  }
  for (uint8_t op : {0xb6, 0xb7, 0xca, 0xcf, 0xd8, 0xe0, 0xff}) {
    EXPECT_EQ(only({op}).op, Op::kUnsupported) << int(op);
    EXPECT_EQ(check_instruction(only({op}), 0).error().code, ErrorCode::kSpareUnwindOpcode);
  }
  EXPECT_TRUE(check_instruction(only({0xb0}), 0).ok());
}

TEST(EhabiInstructions, VfpAndWmmxPops) {
  EXPECT_EQ(text({0xb3, 0x12}), "pop {D1-D3}");
  EXPECT_EQ(only({0xb3, 0x12}).op, Op::kPopVfpFstmx);
  EXPECT_EQ(text({0xb8}), "pop {D8}");
  EXPECT_EQ(text({0xbf}), "pop {D8-D15}");
  EXPECT_EQ(text({0xc8, 0x01}), "pop {D16-D17}");
  EXPECT_EQ(text({0xc9, 0x80}), "pop {D8}");
  EXPECT_EQ(only({0xd7}).op, Op::kPopVfpVpush);
  EXPECT_EQ(text({0xd7}), "pop {D8-D15}");
  EXPECT_EQ(text({0xc0}), "pop {wR10}");
  EXPECT_EQ(text({0xc5}), "pop {wR10-wR15}");
  EXPECT_EQ(text({0xc6, 0x23}), "pop {wR2-wR5}");
  EXPECT_EQ(text({0xc7, 0x0f}), "pop {wCGR0, wCGR1, wCGR2, wCGR3}");
  EXPECT_EQ(text({0xb4}), "pop {ra_auth_code}");
  EXPECT_EQ(text({0xb5}), "vsp as modifier for PAC validation");
}

TEST(EhabiInstructions, RegisterRangesThatDoNotExistAreRefused) {
  // readelf prints D31-D34; an unwinder must fail on it (EHABI remark f).
  const Instruction vpush = only({0xc8, 0xf3});
  EXPECT_EQ(dump::instruction_text(vpush), "pop {D31-D34}");
  EXPECT_EQ(check_instruction(vpush, 3).error().code, ErrorCode::kSpareUnwindOpcode);
  EXPECT_FALSE(check_instruction(only({0xb3, 0xf1}), 0).ok());  // FSTMFDX past D15
  EXPECT_TRUE(check_instruction(only({0xc9, 0xf0}), 0).ok());   // D15 is fine
  EXPECT_FALSE(check_instruction(only({0xc6, 0xf1}), 0).ok());  // wR16
}

TEST(EhabiInstructions, TruncatedInstructionIsTheLast) {
  for (std::vector<uint8_t> bytes : {std::vector<uint8_t>{0x84}, {0xb1}, {0xb2}, {0xb2, 0x80}, {0xb3}, {0xc6},
                                     {0xc7}, {0xc8}, {0xc9}}) {
    auto decoded = decode_instructions(bytes);
    ASSERT_EQ(decoded.size(), 1u);
    EXPECT_EQ(decoded[0].op, Op::kTruncated);
    EXPECT_EQ(decoded[0].size, bytes.size());
    EXPECT_EQ(check_instruction(decoded[0], 9).error().code, ErrorCode::kTruncatedUnwindOpcode);
  }
  auto decoded = decode_instructions(std::vector<uint8_t>{0x02, 0xb0, 0x80});
  ASSERT_EQ(decoded.size(), 3u);
  EXPECT_EQ(decoded[1].offset, 1);
  EXPECT_EQ(decoded[2].op, Op::kTruncated);
  EXPECT_EQ(decoded[2].offset, 2);
}

}  // namespace
}  // namespace framewalk::ehabi

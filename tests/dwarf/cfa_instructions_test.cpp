// Decoding of single call frame instructions: every opcode's operands, the
// high-bit forms, names, and malformed input.
#include "dwarf/cfa_instructions.hpp"

#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "support/section_builder.hpp"

namespace framewalk::dwarf {
namespace {

using test::SectionBuilder;

constexpr uint64_t kBase = 0x200;  // section offset of the first byte decoded

struct Decoded {
  Result<CfaInstruction> insn = Error{ErrorCode::kNotFound, 0};
  size_t consumed = 0;
};

Decoded decode(const std::vector<uint8_t>& bytes, const DecodeContext& ctx = {},
               Endian endian = Endian::kLittle) {
  ByteReader r(bytes, endian, kBase);
  Decoded d;
  d.insn = decode_cfa_instruction(r, ctx);
  d.consumed = r.offset();
  return d;
}

// Decodes `bytes`, expects them to be one whole instruction, and returns it.
CfaInstruction decode_ok(const std::vector<uint8_t>& bytes, const DecodeContext& ctx = {},
                         Endian endian = Endian::kLittle) {
  Decoded d = decode(bytes, ctx, endian);
  EXPECT_TRUE(d.insn.ok()) << (d.insn.ok() ? "" : to_string(d.insn.error().code));
  if (!d.insn.ok()) return {};
  EXPECT_EQ(d.consumed, bytes.size());
  EXPECT_EQ(d.insn->offset, kBase);
  return *d.insn;
}

void expect_error(const std::vector<uint8_t>& bytes, ErrorCode code, uint64_t offset,
                  const DecodeContext& ctx = {}) {
  Decoded d = decode(bytes, ctx);
  ASSERT_FALSE(d.insn.ok());
  EXPECT_EQ(d.insn.error().code, code) << to_string(d.insn.error().code);
  EXPECT_EQ(d.insn.error().offset, offset);
}

TEST(CfaInstructionsTest, Nop) {
  const CfaInstruction i = decode_ok({0x00});
  EXPECT_EQ(i.opcode, cfa::kNop);
  EXPECT_EQ(i.operand1, 0u);
  EXPECT_EQ(i.operand2, 0u);
}

TEST(CfaInstructionsTest, AdvanceLocHighBits) {
  for (uint8_t delta : {0, 1, 5, 63}) {
    const CfaInstruction i = decode_ok({static_cast<uint8_t>(0x40 | delta)});
    EXPECT_EQ(i.opcode, cfa::kAdvanceLoc);
    EXPECT_EQ(i.operand1, delta);
  }
}

TEST(CfaInstructionsTest, OffsetHighBits) {
  CfaInstruction i = decode_ok({0x86, 0x02});
  EXPECT_EQ(i.opcode, cfa::kOffset);
  EXPECT_EQ(i.operand1, 6u);
  EXPECT_EQ(i.operand2, 2u);
  i = decode_ok({0xbf, 0x80, 0x01});
  EXPECT_EQ(i.operand1, 63u);
  EXPECT_EQ(i.operand2, 128u);
}

TEST(CfaInstructionsTest, RestoreHighBits) {
  const CfaInstruction i = decode_ok({0xc3});
  EXPECT_EQ(i.opcode, cfa::kRestore);
  EXPECT_EQ(i.operand1, 3u);
  EXPECT_EQ(decode_ok({0xff}).operand1, 63u);
}

TEST(CfaInstructionsTest, SetLocAbsolute) {
  DecodeContext ctx;
  ctx.address_size = 8;
  ctx.pointer_encoding = pe::kAbsptr;
  CfaInstruction i = decode_ok({0x01, 0x88, 0x77, 0x66, 0x55, 0x44, 0x33, 0x22, 0x11}, ctx);
  EXPECT_EQ(i.opcode, cfa::kSetLoc);
  EXPECT_EQ(i.operand1, 0x1122334455667788ull);
  ctx.address_size = 4;
  i = decode_ok({0x01, 0x00, 0x10, 0x40, 0x00}, ctx);
  EXPECT_EQ(i.operand1, 0x401000u);
  i = decode_ok({0x01, 0x00, 0x40, 0x10, 0x00}, ctx, Endian::kBig);
  EXPECT_EQ(i.operand1, 0x401000u);
}

TEST(CfaInstructionsTest, SetLocUsesTheFdeEncoding) {
  DecodeContext ctx;
  ctx.pointer_encoding = pe::kPcrel | pe::kSdata4;
  ctx.bases.section_address = 0x10000;
  // The field is at section offset kBase + 1.
  const CfaInstruction i = decode_ok({0x01, 0xf0, 0xff, 0xff, 0xff}, ctx);
  EXPECT_EQ(i.operand1, 0x10000u + kBase + 1 - 0x10);
  ctx.pointer_encoding = pe::kUdata2;
  EXPECT_EQ(decode_ok({0x01, 0x34, 0x12}, ctx).operand1, 0x1234u);
  ctx.pointer_encoding = pe::kDatarel | pe::kUdata2;  // no data base known
  expect_error({0x01, 0x34, 0x12}, ErrorCode::kPointerEncodingNoBase, kBase + 1, ctx);
}

TEST(CfaInstructionsTest, AdvanceLoc1) {
  const CfaInstruction i = decode_ok({0x02, 0xfe});
  EXPECT_EQ(i.opcode, cfa::kAdvanceLoc1);
  EXPECT_EQ(i.operand1, 0xfeu);
}

TEST(CfaInstructionsTest, AdvanceLoc2BothEndians) {
  EXPECT_EQ(decode_ok({0x03, 0x34, 0x12}).operand1, 0x1234u);
  const CfaInstruction i = decode_ok({0x03, 0x34, 0x12}, {}, Endian::kBig);
  EXPECT_EQ(i.opcode, cfa::kAdvanceLoc2);
  EXPECT_EQ(i.operand1, 0x3412u);
}

TEST(CfaInstructionsTest, AdvanceLoc4) {
  const CfaInstruction i = decode_ok({0x04, 0x78, 0x56, 0x34, 0x12});
  EXPECT_EQ(i.opcode, cfa::kAdvanceLoc4);
  EXPECT_EQ(i.operand1, 0x12345678u);
}

TEST(CfaInstructionsTest, OffsetExtended) {
  const CfaInstruction i = decode_ok({0x05, 0x81, 0x01, 0x03});
  EXPECT_EQ(i.opcode, cfa::kOffsetExtended);
  EXPECT_EQ(i.operand1, 129u);
  EXPECT_EQ(i.operand2, 3u);
}

TEST(CfaInstructionsTest, RestoreExtended) {
  const CfaInstruction i = decode_ok({0x06, 0xc8, 0x01});
  EXPECT_EQ(i.opcode, cfa::kRestoreExtended);
  EXPECT_EQ(i.operand1, 200u);
}

TEST(CfaInstructionsTest, UndefinedAndSameValue) {
  CfaInstruction i = decode_ok({0x07, 0x10});
  EXPECT_EQ(i.opcode, cfa::kUndefined);
  EXPECT_EQ(i.operand1, 16u);
  i = decode_ok({0x08, 0x03});
  EXPECT_EQ(i.opcode, cfa::kSameValue);
  EXPECT_EQ(i.operand1, 3u);
}

TEST(CfaInstructionsTest, Register) {
  const CfaInstruction i = decode_ok({0x09, 0x10, 0x80, 0x01});
  EXPECT_EQ(i.opcode, cfa::kRegister);
  EXPECT_EQ(i.operand1, 16u);
  EXPECT_EQ(i.operand2, 128u);
}

TEST(CfaInstructionsTest, RememberAndRestoreState) {
  EXPECT_EQ(decode_ok({0x0a}).opcode, cfa::kRememberState);
  EXPECT_EQ(decode_ok({0x0b}).opcode, cfa::kRestoreState);
}

TEST(CfaInstructionsTest, DefCfaFamily) {
  CfaInstruction i = decode_ok({0x0c, 0x07, 0x08});
  EXPECT_EQ(i.opcode, cfa::kDefCfa);
  EXPECT_EQ(i.operand1, 7u);
  EXPECT_EQ(i.operand2, 8u);
  i = decode_ok({0x0d, 0x06});
  EXPECT_EQ(i.opcode, cfa::kDefCfaRegister);
  EXPECT_EQ(i.operand1, 6u);
  i = decode_ok({0x0e, 0x90, 0x01});
  EXPECT_EQ(i.opcode, cfa::kDefCfaOffset);
  EXPECT_EQ(i.operand1, 144u);
}

TEST(CfaInstructionsTest, DefCfaExpressionBlock) {
  // The block points into the decoded bytes: keep them alive.
  const std::vector<uint8_t> bytes = {0x0f, 0x03, 0x77, 0x08, 0x06};
  const CfaInstruction i = decode_ok(bytes);
  EXPECT_EQ(i.block.data(), bytes.data() + 2);
  EXPECT_EQ(i.opcode, cfa::kDefCfaExpression);
  EXPECT_EQ(i.operand1, 3u);  // the block length
  ASSERT_EQ(i.block.size(), 3u);
  EXPECT_EQ(i.block[0], 0x77);
  EXPECT_EQ(i.block[2], 0x06);
  EXPECT_EQ(i.block_offset, kBase + 2);
}

TEST(CfaInstructionsTest, ExpressionAndValExpression) {
  const std::vector<uint8_t> expr = {0x10, 0x10, 0x02, 0x70, 0x78};
  CfaInstruction i = decode_ok(expr);
  EXPECT_EQ(i.opcode, cfa::kExpression);
  EXPECT_EQ(i.operand1, 16u);
  EXPECT_EQ(i.operand2, 2u);
  ASSERT_EQ(i.block.size(), 2u);
  EXPECT_EQ(i.block[1], 0x78);
  EXPECT_EQ(i.block_offset, kBase + 3);
  const std::vector<uint8_t> val = {0x16, 0x81, 0x01, 0x00};
  i = decode_ok(val);
  EXPECT_EQ(i.opcode, cfa::kValExpression);
  EXPECT_EQ(i.operand1, 129u);
  EXPECT_EQ(i.block.size(), 0u);
  EXPECT_EQ(i.block_offset, kBase + 4);
}

TEST(CfaInstructionsTest, SignedForms) {
  CfaInstruction i = decode_ok({0x11, 0x03, 0x7e});
  EXPECT_EQ(i.opcode, cfa::kOffsetExtendedSf);
  EXPECT_EQ(i.operand1, 3u);
  EXPECT_EQ(static_cast<int64_t>(i.operand2), -2);
  i = decode_ok({0x12, 0x07, 0x02});
  EXPECT_EQ(i.opcode, cfa::kDefCfaSf);
  EXPECT_EQ(i.operand1, 7u);
  EXPECT_EQ(static_cast<int64_t>(i.operand2), 2);
  i = decode_ok({0x13, 0x7f});
  EXPECT_EQ(i.opcode, cfa::kDefCfaOffsetSf);
  EXPECT_EQ(static_cast<int64_t>(i.operand1), -1);
  i = decode_ok({0x15, 0x05, 0x40});
  EXPECT_EQ(i.opcode, cfa::kValOffsetSf);
  EXPECT_EQ(static_cast<int64_t>(i.operand2), -64);
}

TEST(CfaInstructionsTest, ValOffset) {
  const CfaInstruction i = decode_ok({0x14, 0x05, 0x7f});
  EXPECT_EQ(i.opcode, cfa::kValOffset);
  EXPECT_EQ(i.operand1, 5u);
  EXPECT_EQ(i.operand2, 127u);  // unsigned
}

TEST(CfaInstructionsTest, MipsAdvanceLoc8) {
  CfaInstruction i = decode_ok({0x1d, 1, 2, 3, 4, 5, 6, 7, 8});
  EXPECT_EQ(i.opcode, cfa::kMipsAdvanceLoc8);
  EXPECT_EQ(i.operand1, 0x0807060504030201ull);
  i = decode_ok({0x1d, 1, 2, 3, 4, 5, 6, 7, 8}, {}, Endian::kBig);
  EXPECT_EQ(i.operand1, 0x0102030405060708ull);
}

TEST(CfaInstructionsTest, GnuWindowSaveAndArgsSize) {
  EXPECT_EQ(decode_ok({0x2d}).opcode, cfa::kGnuWindowSave);
  const CfaInstruction i = decode_ok({0x2e, 0x90, 0x03});
  EXPECT_EQ(i.opcode, cfa::kGnuArgsSize);
  EXPECT_EQ(i.operand1, 400u);
}

TEST(CfaInstructionsTest, GnuNegativeOffsetExtended) {
  const CfaInstruction i = decode_ok({0x2f, 0x04, 0x02});
  EXPECT_EQ(i.opcode, cfa::kGnuNegativeOffsetExtended);
  EXPECT_EQ(i.operand1, 4u);
  EXPECT_EQ(i.operand2, 2u);
}

TEST(CfaInstructionsTest, DecodesASequenceWithOffsets) {
  SectionBuilder b;
  b.u8(0x0c).uleb(7).uleb(8)   // def_cfa
      .u8(0x90).uleb(1)        // offset r16
      .u8(0x41)                // advance_loc 1
      .u8(0x0e).uleb(16);      // def_cfa_offset
  const auto bytes = b.finish();
  ByteReader r(bytes, Endian::kLittle, 0x1000);
  std::vector<uint64_t> offsets;
  std::vector<uint8_t> opcodes;
  while (!r.at_end()) {
    auto i = decode_cfa_instruction(r, {});
    ASSERT_TRUE(i.ok());
    offsets.push_back(i->offset);
    opcodes.push_back(i->opcode);
  }
  EXPECT_EQ(offsets, (std::vector<uint64_t>{0x1000, 0x1003, 0x1005, 0x1006}));
  EXPECT_EQ(opcodes, (std::vector<uint8_t>{cfa::kDefCfa, cfa::kOffset, cfa::kAdvanceLoc, cfa::kDefCfaOffset}));
}

TEST(CfaInstructionsTest, UnknownOpcodes) {
  std::vector<uint8_t> unknown;
  for (int op = 0x17; op <= 0x1c; ++op) unknown.push_back(static_cast<uint8_t>(op));
  for (int op = 0x1e; op <= 0x2c; ++op) unknown.push_back(static_cast<uint8_t>(op));
  for (int op = 0x30; op <= 0x3f; ++op) unknown.push_back(static_cast<uint8_t>(op));
  for (uint8_t op : unknown) {
    SCOPED_TRACE(int{op});
    expect_error({op, 0x00, 0x00}, ErrorCode::kUnknownCfaOpcode, kBase);
    EXPECT_EQ(cfa_opcode_name(op), nullptr);
  }
  // The error names the opcode, not where the reader stopped.
  SectionBuilder b;
  b.u8(0x00).u8(0x00).u8(0x3f);
  const auto bytes = b.finish();
  ByteReader r(bytes, Endian::kLittle, 0x40);
  ASSERT_TRUE(decode_cfa_instruction(r, {}).ok());
  ASSERT_TRUE(decode_cfa_instruction(r, {}).ok());
  auto bad = decode_cfa_instruction(r, {});
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().code, ErrorCode::kUnknownCfaOpcode);
  EXPECT_EQ(bad.error().offset, 0x42u);
}

TEST(CfaInstructionsTest, TruncatedOperands) {
  expect_error({0x0c, 0x07}, ErrorCode::kTruncated, kBase + 2);        // def_cfa without offset
  expect_error({0x0c, 0x87}, ErrorCode::kTruncated, kBase + 1);        // unterminated ULEB
  expect_error({0x03, 0x01}, ErrorCode::kTruncated, kBase + 1);        // advance_loc2
  expect_error({0x04, 0x01, 0x02, 0x03}, ErrorCode::kTruncated, kBase + 1);
  expect_error({0x1d, 1, 2, 3, 4, 5, 6, 7}, ErrorCode::kTruncated, kBase + 1);
  expect_error({0x80}, ErrorCode::kTruncated, kBase + 1);              // DW_CFA_offset
  expect_error({0x0f, 0x05, 0x01}, ErrorCode::kTruncated, kBase + 2);  // block past the end
  expect_error({0x10, 0x01}, ErrorCode::kTruncated, kBase + 2);        // expression without block
  expect_error({0x11, 0x01, 0xff}, ErrorCode::kTruncated, kBase + 2);  // unterminated SLEB
  DecodeContext ctx;
  ctx.pointer_encoding = pe::kAbsptr;
  expect_error({0x01, 0x00, 0x00, 0x00}, ErrorCode::kTruncated, kBase + 1, ctx);
  expect_error({}, ErrorCode::kTruncated, kBase);
}

TEST(CfaInstructionsTest, OverlongLebOperand) {
  std::vector<uint8_t> bytes = {0x0e};
  for (int i = 0; i < 10; ++i) bytes.push_back(0x80);
  bytes.push_back(0x00);
  expect_error(bytes, ErrorCode::kLeb128TooLong, kBase + 1);
}

TEST(CfaInstructionsTest, Names) {
  EXPECT_STREQ(cfa_opcode_name(cfa::kNop), "DW_CFA_nop");
  EXPECT_STREQ(cfa_opcode_name(cfa::kSetLoc), "DW_CFA_set_loc");
  EXPECT_STREQ(cfa_opcode_name(cfa::kDefCfaExpression), "DW_CFA_def_cfa_expression");
  EXPECT_STREQ(cfa_opcode_name(cfa::kValExpression), "DW_CFA_val_expression");
  EXPECT_STREQ(cfa_opcode_name(cfa::kMipsAdvanceLoc8), "DW_CFA_MIPS_advance_loc8");
  EXPECT_STREQ(cfa_opcode_name(cfa::kGnuWindowSave), "DW_CFA_GNU_window_save");
  EXPECT_STREQ(cfa_opcode_name(cfa::kGnuWindowSave, true), "DW_CFA_AARCH64_negate_ra_state");
  EXPECT_STREQ(cfa_opcode_name(cfa::kGnuArgsSize, true), "DW_CFA_GNU_args_size");
  EXPECT_STREQ(cfa_opcode_name(cfa::kGnuNegativeOffsetExtended), "DW_CFA_GNU_negative_offset_extended");
  EXPECT_STREQ(cfa_opcode_name(cfa::kAdvanceLoc), "DW_CFA_advance_loc");
  EXPECT_STREQ(cfa_opcode_name(cfa::kOffset), "DW_CFA_offset");
  EXPECT_STREQ(cfa_opcode_name(cfa::kRestore), "DW_CFA_restore");
  // Every DWARF 5 opcode has a name.
  for (int op = 0x00; op <= 0x16; ++op) EXPECT_NE(cfa_opcode_name(static_cast<uint8_t>(op)), nullptr) << op;
}

TEST(CfaInstructionsTest, OperandTable) {
  const CfaOpcodeInfo& def_cfa = cfa_opcode_info(cfa::kDefCfa);
  EXPECT_EQ(def_cfa.operands[0], OperandKind::kUleb);
  EXPECT_EQ(def_cfa.operands[1], OperandKind::kUleb);
  EXPECT_EQ(cfa_opcode_info(cfa::kDefCfaSf).operands[1], OperandKind::kSleb);
  EXPECT_EQ(cfa_opcode_info(cfa::kSetLoc).operands[0], OperandKind::kAddress);
  EXPECT_EQ(cfa_opcode_info(cfa::kExpression).operands[1], OperandKind::kBlock);
  EXPECT_EQ(cfa_opcode_info(cfa::kAdvanceLoc2).operands[0], OperandKind::kU16);
  EXPECT_EQ(cfa_opcode_info(cfa::kMipsAdvanceLoc8).operands[0], OperandKind::kU64);
  EXPECT_EQ(cfa_opcode_info(cfa::kRememberState).operands[0], OperandKind::kNone);
  EXPECT_EQ(cfa_opcode_info(0x3f).name, nullptr);
}

}  // namespace
}  // namespace framewalk::dwarf

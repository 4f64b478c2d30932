#include "ehabi/exidx_rows.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

namespace framewalk::ehabi {
namespace {

constexpr uint16_t kSp = 13, kLr = 14, kPc = 15, kD0 = 256, kWr0 = 112;

// Instruction bytes as if they started a word at `first_word` (so an
// instruction's error offset is first_word + 4 * (its byte offset / 4)).
OpcodeBuffer opcodes(std::vector<uint8_t> bytes, uint64_t first_word = 0x40) {
  OpcodeBuffer b;
  b.first_word = first_word;
  for (uint8_t x : bytes) b.push_back(x);
  return b;
}

UnwindRow run(std::vector<uint8_t> bytes) {
  UnwindRow row;
  auto r = execute_instructions(opcodes(bytes), &row);
  EXPECT_TRUE(r.ok()) << to_string(r.error().code);
  if (r.ok()) {
    EXPECT_EQ(*r, EntryRow::kUnwinds);
  }
  return row;
}

Error fails(std::vector<uint8_t> bytes, uint64_t first_word = 0x40) {
  UnwindRow row;
  auto r = execute_instructions(opcodes(bytes, first_word), &row);
  EXPECT_FALSE(r.ok());
  return r.ok() ? Error{ErrorCode::kNotFound, ~uint64_t{0}} : r.error();
}

void expect_cfa(const UnwindRow& row, uint16_t reg, int64_t offset) {
  EXPECT_EQ(row.cfa.kind, CfaKind::kRegisterOffset);
  EXPECT_EQ(row.cfa.reg, reg);
  EXPECT_EQ(row.cfa.offset, offset);
}

void expect_saved(const UnwindRow& row, uint16_t reg, int64_t offset) {
  const RegisterRule* r = row.find(reg);
  ASSERT_NE(r, nullptr) << "no rule for " << reg;
  EXPECT_EQ(r->kind, RuleKind::kOffset) << reg;
  EXPECT_EQ(r->value, offset) << reg;
}

std::vector<uint8_t> words_le(std::vector<uint32_t> words) {
  std::vector<uint8_t> out;
  for (uint32_t w : words)
    for (int i = 0; i < 4; ++i) out.push_back(static_cast<uint8_t>(w >> (8 * i)));
  return out;
}

// A prel31 word at `from` that leads to `to`.
uint32_t prel31(uint64_t from, uint64_t to) { return static_cast<uint32_t>(to - from) & 0x7fffffffu; }

TEST(EhabiRows, NoInstructionsIsALeaf) {
  const UnwindRow row = run({});
  expect_cfa(row, kSp, 0);
  EXPECT_EQ(row.rule_count, 0);
  // No rule for r14: the link register still holds the return address.
  EXPECT_EQ(row.return_address_register, kLr);
}

TEST(EhabiRows, VspAdjustmentsMoveTheCfa) {
  expect_cfa(run({0x03}), kSp, 16);
  expect_cfa(run({0x3f, 0x00}), kSp, 256 + 4);
  expect_cfa(run({0x41}), kSp, -8);
  expect_cfa(run({0xb2, 0x01}), kSp, 0x204 + 4);
  expect_cfa(run({0xb2, 0x90, 0x01}), kSp, 1092);
}

TEST(EhabiRows, PopsAreCfaRelativeLowestRegisterLowest) {
  // sub sp, #8 undone, then pop {r4, r5, r6, r14}.
  const UnwindRow row = run({0x01, 0xaa});
  expect_cfa(row, kSp, 8 + 16);
  expect_saved(row, 4, -16);
  expect_saved(row, 5, -12);
  expect_saved(row, 6, -8);
  expect_saved(row, kLr, -4);
  EXPECT_EQ(row.return_address_register, kLr);
  EXPECT_EQ(row.find(kPc), nullptr);
}

TEST(EhabiRows, EveryCorePopForm) {
  // 1000iiii iiiiiiii: {r4, r11} and {r12}
  const UnwindRow mask = run({0x80, 0x81, 0x81, 0x00});
  expect_cfa(mask, kSp, 12);
  expect_saved(mask, 4, -12);
  expect_saved(mask, 11, -8);
  expect_saved(mask, 12, -4);
  // 10100nnn: r4-r7
  const UnwindRow range = run({0xa3});
  expect_cfa(range, kSp, 16);
  expect_saved(range, 7, -4);
  EXPECT_EQ(range.find(kLr), nullptr);
  // 10110001 0000iiii: {r0, r3}
  const UnwindRow low = run({0xb1, 0x09});
  expect_cfa(low, kSp, 8);
  expect_saved(low, 0, -8);
  expect_saved(low, 3, -4);
}

TEST(EhabiRows, PoppedPcIsTheReturnAddress) {
  // pop {r4, r15}
  const UnwindRow row = run({0x88, 0x01});
  EXPECT_EQ(row.return_address_register, kPc);
  expect_saved(row, 4, -8);
  expect_saved(row, kPc, -4);
  // pop {r4, r14, r15}: the PC comes from r15's slot, r14 keeps its own.
  const UnwindRow both = run({0x8c, 0x01});
  EXPECT_EQ(both.return_address_register, kPc);
  expect_saved(both, kLr, -8);
  expect_saved(both, kPc, -4);
}

TEST(EhabiRows, VspFromRegisterRebasesTheCfa) {
  // Thumb frame: vsp = r7; vsp += 8; pop {r7, r14}
  const UnwindRow row = run({0x97, 0x01, 0x84, 0x08});
  expect_cfa(row, 7, 8 + 8);
  expect_saved(row, 7, -8);
  expect_saved(row, kLr, -4);
  // ARM frame: vsp = r11, then a vsp change before it is forgotten.
  expect_cfa(run({0x05, 0x9b}), 11, 0);
}

TEST(EhabiRows, VspFromRegisterAfterAPopIsRefused) {
  const Error e = fails({0xa0, 0x00, 0x00, 0x00, 0x97}, 0x80);
  EXPECT_EQ(e.code, ErrorCode::kExidxVspAfterPop);
  EXPECT_EQ(e.offset, 0x84u);  // byte 4: the second word
}

TEST(EhabiRows, PoppingTheStackPointerIsRefused) {
  const Error e = fails({0x02, 0x8f, 0xff}, 0x20);
  EXPECT_EQ(e.code, ErrorCode::kExidxPopsStackPointer);
  EXPECT_EQ(e.offset, 0x20u);
  EXPECT_EQ(fails({0x82, 0x00}).code, ErrorCode::kExidxPopsStackPointer);  // {r13} alone
}

TEST(EhabiRows, VfpPopsAreDRegisters) {
  // VPUSH layout: D8-D9 (11010nnn), then FSTMFDX D8-D9 (10111nnn) with its pad word.
  const UnwindRow vpush = run({0xd1});
  expect_cfa(vpush, kSp, 16);
  expect_saved(vpush, kD0 + 8, -16);
  expect_saved(vpush, kD0 + 9, -8);
  const UnwindRow fstmx = run({0xb9});
  expect_cfa(fstmx, kSp, 20);
  expect_saved(fstmx, kD0 + 8, -20);
  expect_saved(fstmx, kD0 + 9, -12);
  // 10110011 sssscccc: D1-D2, FSTMFDX; 11001001: D0, VPUSH; 11001000: D16-D17, VPUSH.
  const UnwindRow b3 = run({0xb3, 0x11});
  expect_cfa(b3, kSp, 20);
  expect_saved(b3, kD0 + 1, -20);
  const UnwindRow c9 = run({0xc9, 0x00});
  expect_cfa(c9, kSp, 8);
  expect_saved(c9, kD0 + 0, -8);
  const UnwindRow c8 = run({0xc8, 0x01});
  expect_cfa(c8, kSp, 16);
  expect_saved(c8, kD0 + 16, -16);
  expect_saved(c8, kD0 + 17, -8);
}

TEST(EhabiRows, VfpRangesPastTheirLastRegisterAreRefused) {
  // FSTMFDX D15-D16 (only D0-D15 exist in that layout); VPUSH D31-D32.
  EXPECT_EQ(fails({0xb3, 0xf1}).code, ErrorCode::kSpareUnwindOpcode);
  const Error e = fails({0x00, 0x00, 0x00, 0x00, 0x00, 0xc8, 0xf1}, 0x10);
  EXPECT_EQ(e.code, ErrorCode::kSpareUnwindOpcode);
  EXPECT_EQ(e.offset, 0x14u);
}

TEST(EhabiRows, WmmxAndPacPops) {
  // wR10 (8 bytes), wCGR0 and wCGR1 (4 each), wR0-wR1.
  const UnwindRow wr = run({0xc0, 0xc7, 0x03, 0xc6, 0x01});
  expect_cfa(wr, kSp, 8 + 8 + 16);
  expect_saved(wr, 112 + 10, -32);
  expect_saved(wr, 104 + 0, -24);
  expect_saved(wr, 104 + 1, -20);
  expect_saved(wr, 112 + 0, -16);
  expect_saved(wr, 112 + 1, -8);
  // The PAC code is a saved word (RA_AUTH_CODE, 143); the modifier changes nothing.
  const UnwindRow pac = run({0xb5, 0xb4, 0x84, 0x00});
  expect_cfa(pac, kSp, 8);
  expect_saved(pac, 143, -8);
  expect_saved(pac, kLr, -4);
}

TEST(EhabiRows, FinishEndsTheInstructions) {
  const UnwindRow row = run({0x01, 0xb0, 0x03, 0x9d});
  expect_cfa(row, kSp, 8);
}

TEST(EhabiRows, ARegisterPoppedTwiceTakesTheLaterSlot) {
  const UnwindRow row = run({0xa0, 0xa0});
  expect_cfa(row, kSp, 8);
  expect_saved(row, 4, -4);
  EXPECT_EQ(row.rule_count, 1);
}

TEST(EhabiRows, RefuseToUnwindEndsTheStack) {
  UnwindRow row;
  auto r = execute_instructions(opcodes({0x02, 0x80, 0x00}), &row);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(*r, EntryRow::kCannotUnwind);
  const RegisterRule* ra = row.find(row.return_address_register);
  ASSERT_NE(ra, nullptr);
  EXPECT_EQ(ra->kind, RuleKind::kUndefined);
}

TEST(EhabiRows, SpareReservedAndTruncatedCodesAreRefused) {
  for (std::vector<uint8_t> bytes : std::vector<std::vector<uint8_t>>{
           {0xb1, 0x00}, {0xb1, 0x10}, {0xc7, 0x00}, {0xc7, 0x10}, {0x9d}, {0x9f},
           {0xb6}, {0xb7}, {0xca}, {0xd8}, {0xff}}) {
    EXPECT_EQ(fails(bytes).code, ErrorCode::kSpareUnwindOpcode) << int{bytes[0]};
  }
  std::vector<uint8_t> long_uleb{0xb2};
  long_uleb.insert(long_uleb.end(), 10, 0x80);
  EXPECT_EQ(fails(long_uleb).code, ErrorCode::kSpareUnwindOpcode);
  const Error t = fails({0x00, 0x00, 0x00, 0x00, 0x84}, 0x100);
  EXPECT_EQ(t.code, ErrorCode::kTruncatedUnwindOpcode);
  EXPECT_EQ(t.offset, 0x104u);
  EXPECT_EQ(fails({0xb2, 0x80}).code, ErrorCode::kTruncatedUnwindOpcode);
}

TEST(EhabiRows, AnEntryCutShortIsRefusedAtItsMissingWord) {
  OpcodeBuffer b = opcodes({0x84, 0x00});
  b.cut_short = true;
  b.missing_word = 0x48;
  UnwindRow row;
  auto r = execute_instructions(b, &row);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, ErrorCode::kTruncated);
  EXPECT_EQ(r.error().offset, 0x48u);
}

TEST(EhabiRows, EveryRegisterTheOpcodesNameFitsInOneRow) {
  // r0-r3, r4-r12 r14 r15, D0-D15, D16-D31, wCGR0-3, wR0-wR15: 67
  // registers, every one EHABI can pop (sp is the CFA), in one row.
  const UnwindRow row = run({0xb1, 0x0f, 0x8d, 0xff, 0xc9, 0x0f, 0xc8, 0x0f, 0xc7, 0x0f, 0xc6, 0x0f});
  EXPECT_EQ(row.rule_count, 67);
  static_assert(UnwindRow::kMaxRules >= 67);
  ASSERT_NE(row.find(kWr0 + 15), nullptr);
  ASSERT_NE(row.find(kD0 + 31), nullptr);
  EXPECT_NE(row.find(kPc), nullptr);
}

// An index at 0x20000 and its table section at 0x30000.
struct Tables {
  std::vector<uint8_t> index;
  std::vector<uint8_t> extab;
  ExidxTables tables() const {
    return {{index, 0x20000, Endian::kLittle}, {extab, 0x30000, Endian::kLittle}};
  }
};

TEST(EhabiLookup, LastEntryAtOrBelowThePcIgnoringTheThumbBit) {
  Tables t;
  t.index = words_le({prel31(0x20000, 0x1000), 1, prel31(0x20008, 0x1100), 0x80b0b0b0,
                      prel31(0x20010, 0x1201), 1});
  const IndexTable index(t.tables().index);
  uint64_t next = 0;
  EXPECT_EQ(find_entry(index, 0xfff).error().code, ErrorCode::kNotFound);
  EXPECT_EQ(find_entry(index, 0x1000, &next)->offset, 0u);
  EXPECT_EQ(next, 0x1100u);
  EXPECT_EQ(find_entry(index, 0x10ff)->offset, 0u);
  EXPECT_EQ(find_entry(index, 0x1100, &next)->offset, 8u);
  EXPECT_EQ(next, 0x1200u);
  EXPECT_EQ(find_entry(index, 0x11ff)->offset, 8u);
  // Thumb PCs and starts: bit 0 does not count.
  EXPECT_EQ(find_entry(index, 0x1200)->offset, 16u);
  EXPECT_EQ(find_entry(index, 0x1201, &next)->offset, 16u);
  EXPECT_EQ(next, UINT64_MAX);
  EXPECT_EQ(find_entry(index, 0x90000)->offset, 16u);
  EXPECT_EQ(find_entry(IndexTable({{}, 0x20000, Endian::kLittle}), 0x1000).error().code, ErrorCode::kNotFound);
}

TEST(EhabiLookup, AnEntryWithBit31SetIsBad) {
  Tables t;
  t.index = words_le({prel31(0x20000, 0x1000), 1, 0x80000000u | prel31(0x20008, 0x1100), 1});
  auto e = find_entry(IndexTable(t.tables().index), 0x1100);
  ASSERT_FALSE(e.ok());
  EXPECT_EQ(e.error().code, ErrorCode::kBadExidxEntry);
  EXPECT_EQ(e.error().offset, 8u);
}

TEST(EhabiLookup, EveryEntryKindGivesItsRow) {
  Tables t;
  t.index = words_le({
      prel31(0x20000, 0x1000), 1,                                  // cantunwind
      prel31(0x20008, 0x1100), 0x80a8b0b0,                         // inline: pop {r4, r14}
      prel31(0x20010, 0x1200), prel31(0x20014, 0x30000),           // pr1 in extab
      prel31(0x20018, 0x1300), prel31(0x2001c, 0x30008),           // generic (GNU layout)
      prel31(0x20020, 0x1400), prel31(0x20024, 0x40000),           // outside the extab
      prel31(0x20028, 0x1500), 0x83000000,                         // reserved index 3
  });
  t.extab = words_le({
      0x81019784, 0x08b0b0b0,  // pr1, one more word: vsp = r7; pop {r7, r14}; finish
      prel31(0x30008, 0x5000), 0x00a8b0b0,  // personality, then N = 0 and three bytes
  });
  const ExidxTables tables = t.tables();
  UnwindRow row;
  auto a = row_for_pc(tables, 0x1004, false, &row);
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(*a, EntryRow::kCannotUnwind);
  EXPECT_EQ(row.find(row.return_address_register)->kind, RuleKind::kUndefined);
  EXPECT_EQ(row.pc_begin, 0x1000u);
  EXPECT_EQ(row.pc_end, 0x1100u);

  auto b = row_for_pc(tables, 0x1100, false, &row);
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(*b, EntryRow::kUnwinds);
  expect_cfa(row, kSp, 8);
  expect_saved(row, 4, -8);
  expect_saved(row, kLr, -4);

  // The pop's second byte comes from the extra word.
  auto c = row_for_pc(tables, 0x1200, false, &row);
  ASSERT_TRUE(c.ok()) << to_string(c.error().code);
  expect_cfa(row, 7, 8);
  expect_saved(row, 7, -8);
  expect_saved(row, kLr, -4);

  auto d = row_for_pc(tables, 0x1300, false, &row);
  ASSERT_TRUE(d.ok()) << to_string(d.error().code);
  expect_cfa(row, kSp, 8);
  expect_saved(row, kLr, -4);

  auto e = row_for_pc(tables, 0x1400, false, &row);
  ASSERT_FALSE(e.ok());
  EXPECT_EQ(e.error().code, ErrorCode::kBadExtabPointer);
  EXPECT_EQ(e.error().offset, 0x24u);

  auto f = row_for_pc(tables, 0x1500, false, &row);
  ASSERT_FALSE(f.ok());
  EXPECT_EQ(f.error().code, ErrorCode::kBadPersonalityIndex);
  EXPECT_EQ(f.error().offset, 0x2cu);
}

TEST(EhabiLookup, AnExactPcAtTheFunctionStartHasRunNoneOfIt) {
  Tables t;
  t.index = words_le({prel31(0x20000, 0x1100), 0x80a8b0b0, prel31(0x20008, 0x1200), 1});
  UnwindRow row;
  // An activation at the first instruction: the entry state, nothing popped.
  ASSERT_TRUE(row_for_pc(t.tables(), 0x1100, true, &row).ok());
  expect_cfa(row, kSp, 0);
  EXPECT_EQ(row.rule_count, 0);
  EXPECT_EQ(row.return_address_register, kLr);
  EXPECT_EQ(row.pc_begin, 0x1100u);
  // A Thumb PC there too; past it, and at a return address, the entry's row.
  ASSERT_TRUE(row_for_pc(t.tables(), 0x1101, true, &row).ok());
  EXPECT_EQ(row.rule_count, 0);
  ASSERT_TRUE(row_for_pc(t.tables(), 0x1102, true, &row).ok());
  expect_cfa(row, kSp, 8);
  ASSERT_TRUE(row_for_pc(t.tables(), 0x1100, false, &row).ok());
  expect_cfa(row, kSp, 8);
  // CANTUNWIND stays what it is.
  auto c = row_for_pc(t.tables(), 0x1200, true, &row);
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(*c, EntryRow::kCannotUnwind);
}

TEST(EhabiLookup, TableEntryWithMissingWordsIsTruncated) {
  Tables t;
  t.index = words_le({prel31(0x20000, 0x1000), prel31(0x20004, 0x30000)});
  t.extab = words_le({0x8102a800});  // pr1 declaring two more words that are not there, no finish
  UnwindRow row;
  auto r = row_for_pc(t.tables(), 0x1000, false, &row);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, ErrorCode::kTruncated);
  EXPECT_EQ(r.error().offset, 4u);
}

}  // namespace
}  // namespace framewalk::ehabi

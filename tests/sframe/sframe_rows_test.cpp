// SFrame FREs as UnwindRows: DEFAULT rules of AMD64, AArch64 and s390x,
// every FLEX rule shape and its expression bytes, RA undefined, PC ranges
// of ordinary and PCMASK FDEs, and the lifetime of the expression bytes.
#include "sframe/sframe_rows.hpp"

#include <gtest/gtest.h>

#include <optional>
#include <vector>

#include "sframe/sframe_builder.hpp"

namespace framewalk::sframe {
namespace {

using test::build;
using test::ctrl;
using test::FdeSpec;
using test::fre;
using test::FreSpec;
using test::keep;
using test::SectionSpec;

constexpr uint64_t kAddress = 0x2000;
constexpr uint16_t kRsp = 7, kRbp = 6, kRip = 16, kRbx = 3, kR10 = 10;

Section parse_ok(std::vector<uint8_t> owned) {
  auto s = Section::parse(keep(std::move(owned)), kAddress);
  EXPECT_TRUE(s.ok()) << (s.ok() ? "" : to_string(s.error().code)) << " at " << (s.ok() ? 0 : s.error().offset);
  if (!s.ok()) std::abort();
  return *s;
}

std::vector<SframeRow> rows_of(const Section& s, size_t fde = 0) {
  auto rows = fde_rows(s, s.fdes()[fde]);
  EXPECT_TRUE(rows.ok()) << (rows.ok() ? "" : to_string(rows.error().code));
  return rows.ok() ? *rows : std::vector<SframeRow>{};
}

std::optional<RegisterRule> rule(const UnwindRow& row, uint16_t reg) {
  const RegisterRule* r = row.find(reg);
  return r ? std::optional<RegisterRule>(*r) : std::nullopt;
}

void expect_cfa(const UnwindRow& row, uint16_t reg, int64_t offset) {
  EXPECT_EQ(row.cfa.kind, CfaKind::kRegisterOffset);
  EXPECT_EQ(row.cfa.reg, reg);
  EXPECT_EQ(row.cfa.offset, offset);
}

void expect_rule(const UnwindRow& row, uint16_t reg, RuleKind kind, int64_t value) {
  auto r = rule(row, reg);
  ASSERT_TRUE(r.has_value()) << "no rule for r" << reg;
  EXPECT_EQ(r->kind, kind);
  EXPECT_EQ(r->value, value);
}

std::vector<uint8_t> bytes_of(Bytes b) { return std::vector<uint8_t>(b.begin(), b.end()); }

SectionSpec one_function(SectionSpec spec, std::vector<FreSpec> fres, unsigned fde_type = 0) {
  FdeSpec f;
  f.start = 0x1000;
  f.size = 0x40;
  f.fde_type = fde_type;
  f.fres = std::move(fres);
  spec.fdes = {f};
  return spec;
}

// ---- DEFAULT FDEs -------------------------------------------------------------

TEST(SframeRowsTest, Amd64Default) {
  for (uint8_t version : {1, 2, 3}) {
    SCOPED_TRACE(int(version));
    SectionSpec spec;
    spec.version = version;
    const Section s = parse_ok(build(one_function(spec, {fre(0, {8}), fre(1, {16, -16}), fre(4, {16, -16}, false)})));
    const std::vector<SframeRow> rows = rows_of(s);
    ASSERT_EQ(rows.size(), 3u);
    // push rbp: CFA = rsp + 8, RA at CFA - 8 (the header's fixed offset).
    expect_cfa(rows[0].row, kRsp, 8);
    expect_rule(rows[0].row, kRip, RuleKind::kOffset, -8);
    EXPECT_FALSE(rule(rows[0].row, kRbp).has_value());  // FP unchanged
    EXPECT_EQ(rows[0].row.rule_count, 1);
    expect_cfa(rows[1].row, kRsp, 16);
    expect_rule(rows[1].row, kRbp, RuleKind::kOffset, -16);
    expect_cfa(rows[2].row, kRbp, 16);
    for (const SframeRow& r : rows) {
      EXPECT_EQ(r.row.return_address_register, kRip);
      EXPECT_FALSE(r.topmost_only);
      EXPECT_FALSE(r.outermost);
      EXPECT_FALSE(r.row.signal_frame);
      EXPECT_EQ(r.rep_size, 0u);
    }
    // Ranges: each row reaches the next FRE, the last the function's end.
    EXPECT_EQ(rows[0].row.pc_begin, 0x1000u);
    EXPECT_EQ(rows[0].row.pc_end, 0x1001u);
    EXPECT_EQ(rows[1].row.pc_end, 0x1004u);
    EXPECT_EQ(rows[2].row.pc_begin, 0x1004u);
    EXPECT_EQ(rows[2].row.pc_end, 0x1040u);
  }
}

TEST(SframeRowsTest, Aarch64Default) {
  SectionSpec spec;
  spec.abi = 2;
  spec.fixed_ra = 0;
  FreSpec signed_ra = fre(8, {16, -8, -16});
  signed_ra.mangled_ra = true;
  SectionSpec one = one_function(spec, {fre(0, {0}), fre(4, {32, -24}), signed_ra});
  one.fdes[0].pauth_key_b = true;
  const Section s = parse_ok(build(one));
  const std::vector<SframeRow> rows = rows_of(s);
  ASSERT_EQ(rows.size(), 3u);
  // A leaf: CFA = sp, the RA is still in x30.
  expect_cfa(rows[0].row, 31, 0);
  EXPECT_EQ(rows[0].row.rule_count, 0);
  EXPECT_EQ(rows[0].row.return_address_register, 30);
  // N = 2: CFA and RA only (AArch64 code that saves LR without FP).
  expect_cfa(rows[1].row, 31, 32);
  expect_rule(rows[1].row, 30, RuleKind::kOffset, -24);
  EXPECT_FALSE(rule(rows[1].row, 29).has_value());
  // N = 3: CFA, RA, FP; the RA is signed with key B.
  expect_rule(rows[2].row, 30, RuleKind::kOffset, -8);
  expect_rule(rows[2].row, 29, RuleKind::kOffset, -16);
  EXPECT_TRUE(rows[2].row.negate_ra_state);
  EXPECT_TRUE(rows[2].ra_mangled);
  EXPECT_TRUE(rows[2].pauth_key_b);
  EXPECT_FALSE(rows[1].row.negate_ra_state);
}

// Every version and byte order: CFA on x29, the mangled bit on an FRE with
// the CFA word only (after paciasp), the key from the FDE's info bit 5, and
// an outermost FRE (v2 on).
TEST(SframeRowsTest, Aarch64FormsInEveryVersionAndByteOrder) {
  for (uint8_t version : {1, 2, 3})
    for (Endian endian : {Endian::kLittle, Endian::kBig}) {
      SCOPED_TRACE(std::to_string(version) + (endian == Endian::kBig ? " big" : " little"));
      SectionSpec spec;
      spec.version = version;
      spec.endian = endian;
      spec.abi = endian == Endian::kBig ? 1 : 2;
      spec.fixed_ra = 0;
      FreSpec after_paciasp = fre(4, {0});
      after_paciasp.mangled_ra = true;
      FreSpec on_fp = fre(12, {16, -8, -16}, false);
      on_fp.mangled_ra = true;
      std::vector<FreSpec> fres = {fre(0, {0}), after_paciasp, on_fp};
      if (version >= 2) fres.push_back(fre(0x20, {}, false));  // RA undefined (info 0, as gas writes it)
      SectionSpec one = one_function(spec, fres);
      one.fdes[0].pauth_key_b = endian == Endian::kBig;
      const Section s = parse_ok(build(one));
      EXPECT_EQ(s.endian(), endian);
      EXPECT_EQ(s.fdes()[0].pauth_key_b, endian == Endian::kBig);
      const std::vector<SframeRow> rows = rows_of(s);
      ASSERT_EQ(rows.size(), fres.size());
      EXPECT_FALSE(rows[0].ra_mangled);
      // After paciasp: CFA = sp, the RA signed and still in x30 (no rule).
      expect_cfa(rows[1].row, 31, 0);
      EXPECT_EQ(rows[1].row.rule_count, 0);
      EXPECT_TRUE(rows[1].ra_mangled);
      EXPECT_TRUE(rows[1].row.negate_ra_state);
      EXPECT_EQ(rows[1].pauth_key_b, endian == Endian::kBig);
      // CFA = x29 + 16, x30 at CFA-8, x29 at CFA-16.
      expect_cfa(rows[2].row, 29, 16);
      expect_rule(rows[2].row, 30, RuleKind::kOffset, -8);
      expect_rule(rows[2].row, 29, RuleKind::kOffset, -16);
      EXPECT_TRUE(rows[2].row.negate_ra_state);
      if (version >= 2) {
        EXPECT_TRUE(rows[3].outermost);
        expect_rule(rows[3].row, 30, RuleKind::kUndefined, 0);
      }
    }
}

TEST(SframeRowsTest, S390xV2) {
  SectionSpec spec;
  spec.version = 2;
  spec.endian = Endian::kBig;
  spec.abi = 4;
  spec.fixed_ra = 0;
  // CFA words are stored as (offset - 160) / 8: 0 is 160, 2 is 176.
  const Section s = parse_ok(build(one_function(spec, {
      fre(0, {0}),
      fre(6, {2, -48, -72}),            // RA and FP saved on the stack
      fre(10, {2, 0, -72}),             // RA padding: FP saved, RA not
      fre(14, {2, (16 << 1) | 1, (17 << 1) | 1}),  // RA in f0 (r16), FP in r17
  })));
  const std::vector<SframeRow> rows = rows_of(s);
  ASSERT_EQ(rows.size(), 4u);
  expect_cfa(rows[0].row, 15, 160);
  expect_rule(rows[0].row, 15, RuleKind::kValOffset, -160);  // caller's SP = CFA - 160
  EXPECT_EQ(rows[0].row.return_address_register, 14);
  expect_cfa(rows[1].row, 15, 176);
  expect_rule(rows[1].row, 14, RuleKind::kOffset, -48);
  expect_rule(rows[1].row, 11, RuleKind::kOffset, -72);
  EXPECT_FALSE(rule(rows[2].row, 14).has_value());
  expect_rule(rows[2].row, 11, RuleKind::kOffset, -72);
  expect_rule(rows[3].row, 14, RuleKind::kRegister, 16);
  expect_rule(rows[3].row, 11, RuleKind::kRegister, 17);
}

TEST(SframeRowsTest, S390xV3OddWordsAreOffsets) {
  SectionSpec spec;
  spec.endian = Endian::kBig;
  spec.abi = 4;
  spec.fixed_ra = 0;
  const Section s = parse_ok(build(one_function(spec, {fre(0, {-20, -33})})));
  const std::vector<SframeRow> rows = rows_of(s);
  expect_cfa(rows[0].row, 15, -20 * 8 + 160);
  expect_rule(rows[0].row, 14, RuleKind::kOffset, -33);
}

TEST(SframeRowsTest, FixedFpOffsetFromTheHeader) {
  SectionSpec spec;
  spec.fixed_fp = -16;
  const Section s = parse_ok(build(one_function(spec, {fre(0, {16})})));
  expect_rule(rows_of(s)[0].row, kRbp, RuleKind::kOffset, -16);
}

TEST(SframeRowsTest, RaUndefined) {
  SectionSpec spec;
  FreSpec outermost = fre(5, {});
  const Section s = parse_ok(build(one_function(spec, {fre(0, {8}), outermost})));
  const std::vector<SframeRow> rows = rows_of(s);
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_TRUE(rows[1].outermost);
  EXPECT_FALSE(rows[0].outermost);
  EXPECT_EQ(rows[1].row.cfa.kind, CfaKind::kUndefined);
  expect_rule(rows[1].row, kRip, RuleKind::kUndefined, 0);
  EXPECT_EQ(rows[1].row.rule_count, 1);
}

TEST(SframeRowsTest, SignalFrame) {
  SectionSpec spec = one_function(SectionSpec{}, {fre(0, {8})});
  spec.fdes[0].signal = true;
  const Section s = parse_ok(build(spec));
  EXPECT_TRUE(rows_of(s)[0].row.signal_frame);
}

// ---- FLEX FDEs -----------------------------------------------------------------

TEST(SframeRowsTest, FlexCfaFromAnyRegister) {
  const Section s = parse_ok(build(one_function(SectionSpec{}, {
      fre(0, {ctrl(kRsp, false), 8}),   // sp+8: an ordinary rule
      fre(9, {ctrl(kR10, false), 0}),   // r10+0 (DRAP)
      fre(0x10, {ctrl(kRbp, false), 16}),
  }, 1)));
  const std::vector<SframeRow> rows = rows_of(s);
  expect_cfa(rows[0].row, kRsp, 8);
  expect_rule(rows[0].row, kRip, RuleKind::kOffset, -8);  // no RA words: the fixed rule
  EXPECT_FALSE(rows[0].topmost_only);
  expect_cfa(rows[1].row, kR10, 0);
  EXPECT_TRUE(rows[1].topmost_only);
  expect_cfa(rows[2].row, kRbp, 16);
  EXPECT_FALSE(rows[2].topmost_only);
}

TEST(SframeRowsTest, FlexDereferencedCfaIsAnExpression) {
  // CFA = *(rbp - 8), FP = *(rbp + 0), RA padding: the esc-expr DRAP pattern.
  const Section s = parse_ok(build(one_function(SectionSpec{}, {
      fre(0, {ctrl(kRbp, true), -8, 0, ctrl(kRbp, true), 0}),
  }, 1)));
  const std::vector<SframeRow> rows = rows_of(s);
  const UnwindRow& row = rows[0].row;
  ASSERT_EQ(row.cfa.kind, CfaKind::kExpression);
  // DW_OP_breg6 -8; DW_OP_deref
  EXPECT_EQ(bytes_of(row.cfa.expression), (std::vector<uint8_t>{0x76, 0x78, 0x06}));
  EXPECT_EQ(row.cfa.expression_offset, s.fdes()[0].fres_offset + 2);
  // FP saved at the address rbp + 0: kExpression computes the address.
  auto fp = rule(row, kRbp);
  ASSERT_TRUE(fp.has_value());
  EXPECT_EQ(fp->kind, RuleKind::kExpression);
  EXPECT_EQ(bytes_of(fp->expression()), (std::vector<uint8_t>{0x76, 0x00}));
  expect_rule(row, kRip, RuleKind::kOffset, -8);  // padding: the fixed RA rule
  EXPECT_FALSE(rows[0].topmost_only);  // only rbp
}

TEST(SframeRowsTest, FlexRegisterRules) {
  const Section s = parse_ok(build(one_function(SectionSpec{}, {
      // RA = value of rbx, FP = *(CFA - 16)  (ra-undefined-flex: "fp+16 c-16 r3+0")
      fre(0, {ctrl(kRbp, false), 16, ctrl(kRbx, false), 0, ctrl(0, true, false), -16}),
      // RA = rbx + 8, FP unchanged (no FP words)
      fre(4, {ctrl(kRsp, false), 8, ctrl(kRbx, false), 8}),
      // RA = *(r40 - 300), FP = *(rsp + 4)
      fre(8, {ctrl(kRsp, false), 8, ctrl(40, true), -300, ctrl(kRsp, true), 4}, true, 2),
  }, 1)));
  const std::vector<SframeRow> rows = rows_of(s);
  ASSERT_EQ(rows.size(), 3u);
  expect_cfa(rows[0].row, kRbp, 16);
  expect_rule(rows[0].row, kRip, RuleKind::kRegister, kRbx);
  expect_rule(rows[0].row, kRbp, RuleKind::kOffset, -16);
  EXPECT_TRUE(rows[0].topmost_only);

  auto ra = rule(rows[1].row, kRip);
  ASSERT_TRUE(ra.has_value());
  EXPECT_EQ(ra->kind, RuleKind::kValExpression);
  EXPECT_EQ(bytes_of(ra->expression()), (std::vector<uint8_t>{0x73, 0x08}));  // DW_OP_breg3 8
  EXPECT_FALSE(rule(rows[1].row, kRbp).has_value());
  EXPECT_TRUE(rows[1].topmost_only);

  ra = rule(rows[2].row, kRip);
  ASSERT_TRUE(ra.has_value());
  EXPECT_EQ(ra->kind, RuleKind::kExpression);
  // DW_OP_bregx 40 -300 (registers above 31 need bregx)
  EXPECT_EQ(bytes_of(ra->expression()), (std::vector<uint8_t>{0x92, 40, 0xd4, 0x7d}));
  auto fp = rule(rows[2].row, kRbp);
  ASSERT_TRUE(fp.has_value());
  EXPECT_EQ(fp->kind, RuleKind::kExpression);
  EXPECT_EQ(bytes_of(fp->expression()), (std::vector<uint8_t>{0x77, 0x04}));
  EXPECT_TRUE(rows[2].topmost_only);  // r40
  // The section built exactly these expressions.
  EXPECT_EQ(s.breg_deref_expression(kRbx, 8).size(), 3u);
  EXPECT_EQ(s.breg_deref_expression(40, -300).size(), 5u);
  EXPECT_TRUE(s.breg_deref_expression(kRbx, 0).empty());  // a plain kRegister rule needs none
  EXPECT_TRUE(s.breg_deref_expression(1, 1).empty());
}

TEST(SframeRowsTest, FlexS390xCfaIsDecoded) {
  SectionSpec spec;
  spec.endian = Endian::kBig;
  spec.abi = 4;
  spec.fixed_ra = 0;
  const Section s = parse_ok(build(one_function(spec, {
      fre(0, {ctrl(15, false), 1, ctrl(16, false), 0, ctrl(17, false), 0}),  // RA in r16, FP in r17
  }, 1)));
  const std::vector<SframeRow> rows = rows_of(s);
  expect_cfa(rows[0].row, 15, 168);
  expect_rule(rows[0].row, 14, RuleKind::kRegister, 16);
  expect_rule(rows[0].row, 11, RuleKind::kRegister, 17);
  expect_rule(rows[0].row, 15, RuleKind::kValOffset, -160);
  EXPECT_TRUE(rows[0].topmost_only);
}

// The expression bytes belong to the section and its copies.
TEST(SframeRowsTest, ExpressionsOutliveTheFirstSectionObject) {
  std::optional<SframeRow> row;
  {
    std::optional<Section> copy;
    {
      const Section original =
          parse_ok(build(one_function(SectionSpec{}, {fre(0, {ctrl(kRbp, true), -8})}, 1)));
      copy = original;
    }
    auto r = row_for_pc(*copy, 0x1004);
    ASSERT_TRUE(r.ok());
    row = *r;
    EXPECT_EQ(bytes_of(row->row.cfa.expression), (std::vector<uint8_t>{0x76, 0x78, 0x06}));
  }
}

// ---- ranges and lookups -----------------------------------------------------------

TEST(SframeRowsTest, PcmaskRowsAndLookups) {
  SectionSpec spec;
  FdeSpec f;
  f.start = 0x1030;
  f.size = 0x50;
  f.pc_mask = true;
  f.rep_size = 16;
  f.fres = {fre(0, {8}), fre(0xb, {16})};
  spec.fdes = {f};
  const Section s = parse_ok(build(spec));
  const std::vector<SframeRow> rows = rows_of(s);
  ASSERT_EQ(rows.size(), 2u);
  // The first block's ranges, with the period.
  EXPECT_EQ(rows[0].row.pc_begin, 0x1030u);
  EXPECT_EQ(rows[0].row.pc_end, 0x103bu);
  EXPECT_EQ(rows[1].row.pc_begin, 0x103bu);
  EXPECT_EQ(rows[1].row.pc_end, 0x1040u);
  EXPECT_EQ(rows[0].rep_size, 16u);
  // A PC in the fourth entry: the row's range is inside that entry.
  auto hit = row_for_pc(s, 0x1030 + 3 * 16 + 0xc);
  ASSERT_TRUE(hit.ok());
  EXPECT_EQ(hit->fre_index, 1u);
  EXPECT_EQ(hit->row.pc_begin, 0x1030u + 3 * 16 + 0xb);
  EXPECT_EQ(hit->row.pc_end, 0x1030u + 4 * 16);
  expect_cfa(hit->row, kRsp, 16);
  hit = row_for_pc(s, 0x1030 + 4 * 16 + 2);
  ASSERT_TRUE(hit.ok());
  EXPECT_EQ(hit->row.pc_begin, 0x1030u + 4 * 16);
  EXPECT_EQ(hit->row.pc_end, 0x1030u + 4 * 16 + 0xb);
}

TEST(SframeRowsTest, RowForPcErrors) {
  SectionSpec spec = one_function(SectionSpec{}, {fre(4, {8})});
  FdeSpec empty;
  empty.start = 0x1100;
  spec.fdes.push_back(empty);
  const Section s = parse_ok(build(spec));
  EXPECT_EQ(row_for_pc(s, 0x1003).error().code, Errc::kNoFre);   // before the first FRE
  EXPECT_EQ(row_for_pc(s, 0x1104).error().code, Errc::kNoFre);   // an FDE without FREs
  EXPECT_EQ(row_for_pc(s, 0x1080).error().code, Errc::kNoFde);   // between functions
  EXPECT_EQ(row_for_pc(s, s.fdes()[0], 0x1100).error().code, Errc::kNoFde);
  auto hit = row_for_pc(s, 0x103f);
  ASSERT_TRUE(hit.ok());
  EXPECT_EQ(hit->row.pc_begin, 0x1004u);
  EXPECT_EQ(hit->row.pc_end, 0x1040u);
}

TEST(SframeRowsTest, FreAtTheFunctionEndHasAnEmptyRange) {
  const Section s = parse_ok(build(one_function(SectionSpec{}, {fre(0, {8}), fre(0x40, {16})})));
  const std::vector<SframeRow> rows = rows_of(s);
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].row.pc_end, 0x1040u);
  EXPECT_EQ(rows[1].row.pc_begin, 0x1040u);
  EXPECT_EQ(rows[1].row.pc_end, 0x1040u);
}

}  // namespace
}  // namespace framewalk::sframe

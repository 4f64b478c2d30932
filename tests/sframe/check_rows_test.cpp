// The CFI/SFrame checker on hand-written CFI and hand-written SFrame (not the
// generator's output): rules that agree however they are spelled, each kind
// of disagreement, coalescing, holes both ways, the PLT expression against
// PCMASK rows PC by PC, RA undefined, signal frames and row-less FDEs.
#include "sframe/sframe_check.hpp"

#include <gtest/gtest.h>

#include "sframe/check_cfi_builder.hpp"
#include "sframe/sframe_builder.hpp"

namespace framewalk::sframe {
namespace {

using namespace test;

constexpr uint64_t kAddress = 0x800000;

Section parse(const SectionSpec& spec) {
  auto s = Section::parse(keep(build(spec)), spec.address);
  EXPECT_TRUE(s.ok()) << (s.ok() ? "" : to_string(s.error().code));
  if (!s.ok()) std::abort();
  return *s;
}

SectionSpec v3(std::vector<test::FdeSpec> fdes) {
  SectionSpec s;
  s.version = 3;
  s.address = kAddress;
  s.fdes = std::move(fdes);
  return s;
}

test::FdeSpec sf_function(uint64_t start, uint32_t size, std::vector<FreSpec> fres, unsigned fde_type = 0) {
  test::FdeSpec f;
  f.start = start;
  f.size = size;
  f.fde_type = fde_type;
  f.fres = std::move(fres);
  return f;
}

// push %rbp; mov %rsp,%rbp; ... leave; ret (0x20 bytes at 0x401000).
Insns frame_pointer_cfi() {
  return cfa::advance(1) + cfa::def_cfa_offset(16) + cfa::offset(kRbp, -16) + cfa::advance(3) +
         cfa::def_cfa_register(kRbp) + cfa::advance(10) + cfa::def_cfa(kRsp, 8);
}

std::vector<FreSpec> frame_pointer_sframe(int64_t fp_slot = -16, int64_t rbp_cfa = 16) {
  return {fre(0, {8}), fre(1, {16, fp_slot}), fre(4, {rbp_cfa, fp_slot}, false), fre(14, {8, fp_slot})};
}

TEST(CheckRows, AgreeingSourcesHaveNoDisagreement) {
  CfiFixture cfi({{0x401000, 0x20, frame_pointer_cfi()}});
  const CheckReport r = check_rows(cfi.section(), parse(v3({sf_function(0x401000, 0x20, frame_pointer_sframe())})));
  EXPECT_EQ(r.disagreements, 0u);
  EXPECT_EQ(r.rows_compared, 4u);
  EXPECT_EQ(r.bytes_compared, 0x20u);
  EXPECT_EQ(r.cfi_fdes, 1u);
  EXPECT_EQ(r.sframe_fdes, 1u);
  EXPECT_EQ(r.cfi_only_bytes + r.sframe_only_bytes, 0u);
}

TEST(CheckRows, RulesAreComparedByWhatTheyComputeNotBySpelling) {
  // CFI: CFA = bregx(rsp) 8 as an expression, rbp saved by DW_CFA_expression.
  // SFrame: a FLEX FDE with CFA rsp+8 and FP = *(CFA-16) through a control word.
  const Insns insns = cfa::def_cfa_expression(op::bregx(kRsp, 8)) + cfa::advance(4) + cfa::expression(kRbp, op::breg(kRsp, -8));
  CfiFixture cfi({{0x401000, 0x10, insns}});
  const SectionSpec spec = v3({sf_function(0x401000, 0x10,
                                           {fre(0, {ctrl(kRsp, false), 8}), fre(4, {ctrl(kRsp, false), 8, 0, ctrl(0, true, false), -16})},
                                           1)});
  const CheckReport r = check_rows(cfi.section(), parse(spec));
  EXPECT_EQ(r.disagreements, 0u) << (r.differences.empty() ? "" : check_items_text(r.differences[0].items));
  EXPECT_EQ(r.rows_compared, 2u);
}

TEST(CheckRows, EachKindOfDisagreementIsReportedWithBothRows) {
  CfiFixture cfi({{0x401000, 0x20, frame_pointer_cfi()}});
  // The FP slot wrong everywhere it is saved, the CFA wrong in the rbp-based row.
  const CheckReport r = check_rows(cfi.section(), parse(v3({sf_function(0x401000, 0x20, frame_pointer_sframe(-24, 24))})));
  ASSERT_EQ(r.disagreements, 3u);
  ASSERT_EQ(r.differences.size(), 3u);
  EXPECT_EQ(r.differences[0].begin, 0x401001u);
  EXPECT_EQ(r.differences[0].end, 0x401004u);
  EXPECT_EQ(r.differences[0].items, kCheckFp);
  EXPECT_EQ(r.differences[1].begin, 0x401004u);
  EXPECT_EQ(r.differences[1].end, 0x40100eu);
  // The CFA is wrong, so the RA slot and the caller's SP are too; the FP slot
  // (rbp+24-24) happens to be the right address (rbp+16-16).
  EXPECT_EQ(r.differences[1].items, kCheckCfa | kCheckRa | kCheckSp);
  EXPECT_EQ(r.differences[1].cfi.cfa.offset, 16);
  EXPECT_EQ(r.differences[1].sframe.cfa.offset, 24);
  EXPECT_EQ(r.differences[2].items, kCheckFp);
  EXPECT_EQ(r.disagreement_bytes, 0x1fu);
  EXPECT_EQ(check_items_text(r.differences[1].items), "CFA, RA, SP");
  EXPECT_EQ(check_items_text(kCheckFp | kCheckSignal), "FP, signal");
}

TEST(CheckRows, AdjacentDifferencesOfOneKindCoalesce) {
  // Two CFI rows (rsp+16, rsp+24) both answered by one wrong SFrame row.
  CfiFixture cfi({{0x401000, 0x10, cfa::def_cfa_offset(16) + cfa::advance(6) + cfa::def_cfa_offset(24)}});
  const CheckReport r = check_rows(cfi.section(), parse(v3({sf_function(0x401000, 0x10, {fre(0, {8})})})));
  EXPECT_EQ(r.disagreements, 1u);
  EXPECT_EQ(r.differences[0].begin, 0x401000u);
  EXPECT_EQ(r.differences[0].end, 0x401010u);
  EXPECT_EQ(r.rows_compared, 2u);
}

TEST(CheckRows, CoverageHolesBothWays) {
  // CFI: f1 [0x401000, +0x20), f2 [0x401040, +0x10). SFrame: f1 only up to
  // +0x10 (from a second FDE at +0x18 on), and code at 0x402000 CFI lacks.
  CfiFixture cfi({{0x401000, 0x20, {}}, {0x401040, 0x10, {}}});
  const SectionSpec spec = v3({sf_function(0x401000, 0x10, {fre(0, {8})}), sf_function(0x401018, 0x8, {fre(0, {8})}),
                               sf_function(0x402000, 0x30, {fre(0, {8})})});
  const CheckReport r = check_rows(cfi.section(), parse(spec));
  EXPECT_EQ(r.disagreements, 0u);
  EXPECT_EQ(r.cfi_only_ranges, 2u);
  EXPECT_EQ(r.cfi_only_bytes, 0x8u + 0x10u);
  ASSERT_EQ(r.cfi_only.size(), 2u);
  EXPECT_EQ(r.cfi_only[0].begin, 0x401010u);
  EXPECT_EQ(r.cfi_only[0].end, 0x401018u);
  EXPECT_EQ(r.cfi_only[1].begin, 0x401040u);
  EXPECT_EQ(r.sframe_only_ranges, 1u);
  EXPECT_EQ(r.sframe_only_bytes, 0x30u);
  EXPECT_EQ(r.sframe_only[0].begin, 0x402000u);
}

TEST(CheckRows, PltExpressionAgainstPcmaskRowsAtEveryPc) {
  CfiFixture cfi({{0x401030, 0x40, cfa::def_cfa_expression(op::plt(11))}});
  auto plt = [](uint32_t k) {
    test::FdeSpec f = sf_function(0x401030, 0x40, {fre(0, {8}), fre(k, {16})});
    f.pc_mask = true;
    f.rep_size = 16;
    return f;
  };
  const CheckReport good = check_rows(cfi.section(), parse(v3({plt(11)})));
  EXPECT_EQ(good.disagreements, 0u);
  EXPECT_EQ(good.pcs_evaluated_singly, 0x40u);
  // The second FRE one byte early: the CFA is wrong at in-block offset 10 of each of the 4 entries.
  const CheckReport bad = check_rows(cfi.section(), parse(v3({plt(10)})));
  EXPECT_EQ(bad.disagreements, 4u);
  EXPECT_EQ(bad.disagreement_bytes, 4u);
  ASSERT_EQ(bad.differences.size(), 4u);
  EXPECT_EQ(bad.differences[1].begin, 0x401030u + 16 + 10);
  EXPECT_EQ(bad.differences[1].items & kCheckCfa, kCheckCfa);
}

TEST(CheckRows, OutermostFramesAgreeWhenBothSayRaUndefined) {
  CfiFixture cfi({{0x401000, 0x10, cfa::undefined(kRip)}});
  FreSpec undefined_ra = fre(0, {});
  undefined_ra.info = 0;
  EXPECT_EQ(check_rows(cfi.section(), parse(v3({sf_function(0x401000, 0x10, {undefined_ra})}))).disagreements, 0u);
  const CheckReport r = check_rows(cfi.section(), parse(v3({sf_function(0x401000, 0x10, {fre(0, {8})})})));
  ASSERT_EQ(r.disagreements, 1u);
  EXPECT_EQ(r.differences[0].items, kCheckRa);
}

TEST(CheckRows, TheCallersSpIsTheCfaInSframe) {
  CfiFixture cfi({{0x401000, 0x10, cfa::advance(2) + cfa::in_register(kRsp, kR8)}});
  const CheckReport r = check_rows(cfi.section(), parse(v3({sf_function(0x401000, 0x10, {fre(0, {8})})})));
  ASSERT_EQ(r.disagreements, 1u);
  EXPECT_EQ(r.differences[0].items, kCheckSp);
  EXPECT_EQ(r.differences[0].begin, 0x401002u);
}

TEST(CheckRows, SignalBitAgainstTheCie) {
  CfiFixture cfi({{0x401000, 0x10, {}, true}});
  test::FdeSpec f = sf_function(0x401000, 0x10, {fre(0, {8})});
  EXPECT_EQ(check_rows(cfi.section(), parse(v3({f}))).differences.at(0).items, kCheckSignal);
  f.signal = true;
  EXPECT_EQ(check_rows(cfi.section(), parse(v3({f}))).disagreements, 0u);
  // V2 has no signal bit: nothing to compare.
  SectionSpec v2 = v3({sf_function(0x401000, 0x10, {fre(0, {8})})});
  v2.version = 2;
  EXPECT_EQ(check_rows(cfi.section(), parse(v2)).disagreements, 0u);
}

TEST(CheckRows, FdesWithoutFresCoverWithoutRows) {
  CfiFixture cfi({{0x401000, 0x10, {}, true}});
  test::FdeSpec marker = sf_function(0x401000, 0x10, {});
  marker.signal = true;
  const CheckReport r = check_rows(cfi.section(), parse(v3({marker})));
  EXPECT_EQ(r.disagreements, 0u);
  EXPECT_EQ(r.rows_compared, 0u);
  EXPECT_EQ(r.no_row_ranges, 1u);
  EXPECT_EQ(r.no_row_bytes, 0x10u);
  EXPECT_EQ(r.cfi_only_bytes, 0u);
}

TEST(CheckRows, ListsAreCappedButCountsAreNot) {
  std::vector<FunctionCfi> fns;
  for (uint64_t i = 0; i < 10; ++i) fns.push_back({0x401000 + 0x20 * i, 0x10, {}});
  CfiFixture cfi(fns);
  CheckOptions o;
  o.list_limit = 3;
  const CheckReport r = check_rows(cfi.section(), parse(v3({})), o);
  EXPECT_EQ(r.cfi_only_ranges, 10u);
  EXPECT_EQ(r.cfi_only.size(), 3u);
  EXPECT_EQ(r.cfi_only_bytes, 0xa0u);
}

}  // namespace
}  // namespace framewalk::sframe

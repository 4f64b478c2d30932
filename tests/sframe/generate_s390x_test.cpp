// The CFI -> SFrame conversion and the checker on hand-written s390x CFI
// (big-endian .eh_frame as gcc writes it: CFA = r15 + 160, RA column r14):
// the RA in r14 until stmg saves it, RA/FP saved at CFA offsets, the CFA on
// r11, the RA and FP kept in floating-point registers (gcc's leaves), r15
// saved by stmg or in an FPR (SFrame's SP is CFA - 160), the CFA offset
// stored as (offset - 160) / 8 and its limits (reported, in v2 as in v3, as
// what FLEX could not store either), v2's register words against v3's FLEX,
// no v1. Every conversion is written, read back and checked.
#include <gtest/gtest.h>

#include <deque>

#include "sframe/check_cfi_builder.hpp"
#include "sframe/sframe_check.hpp"
#include "sframe/sframe_generate.hpp"
#include "sframe/sframe_rows.hpp"

namespace framewalk::sframe {
namespace {

using namespace test;

constexpr uint64_t kSframeAddress = 0x800000;

Conversion convert(const S390xCfiFixture& cfi, uint8_t version) {
  GenerateOptions o;
  o.version = version;
  o.abi = Abi::kS390xBig;
  o.section_address = kSframeAddress;
  return convert_cfi(cfi.section(), o);
}

Rule reg_plus(uint16_t reg, int64_t off) { return Rule{Rule::Kind::kRegister, false, reg, off, 0}; }
Rule at_cfa(int64_t off) { return Rule{Rule::Kind::kCfa, true, 0, off, 0}; }
Rule in_reg(uint16_t reg) { return Rule{Rule::Kind::kRegister, false, reg, 0, 0}; }

FrameRules rules(Rule cfa, Rule fp = {}, Rule ra = {}) {
  FrameRules r;
  r.cfa = cfa;
  r.fp = fp;
  r.ra = ra;
  return r;
}

std::optional<Section> write(const Conversion& conv, uint8_t version) {
  static std::deque<std::vector<uint8_t>> kept;
  WrittenSection w = write_section(writer_options_for(Abi::kS390xBig, version, kSframeAddress), conv.fdes);
  EXPECT_TRUE(w.problem.ok()) << to_string(w.problem.what);
  const std::vector<uint8_t>& bytes = kept.emplace_back(std::move(w.bytes));
  auto section = Section::parse(Bytes(bytes), kSframeAddress);
  EXPECT_TRUE(section.ok()) << (section.ok() ? "" : to_string(section.error().code));
  if (!section.ok()) return std::nullopt;
  EXPECT_EQ(section->abi(), Abi::kS390xBig);
  return *section;
}

CheckReport round_trip(const S390xCfiFixture& cfi, const Conversion& conv, uint8_t version) {
  auto section = write(conv, version);
  if (!section) return {};
  return check_rows(cfi.section(), *section);
}

// gcc -O2, a function that calls another:
//   0: stmg %r14,%r15,112(%r15)   6: aghi %r15,-160   ...   28: lmg   34: br %r14  (36 bytes)
Insns stmg_function() {
  return cfa::advance(6) + cfa::offset(kR14, -48) + cfa::offset(kR15, -40) + cfa::advance(4) +
         cfa::def_cfa_offset(320) + cfa::advance(18) + cfa::restore(kR15) + cfa::restore(kR14) +
         cfa::def_cfa_offset(160);
}

TEST(GenerateS390x, LeafKeepsTheReturnAddressInR14) {
  for (uint8_t version : {2, 3}) {
    SCOPED_TRACE(int(version));
    S390xCfiFixture cfi({{0x401000, 12, {}}});
    const Conversion c = convert(cfi, version);
    ASSERT_EQ(c.fdes.size(), 1u);
    ASSERT_EQ(c.fdes[0].fres.size(), 1u);
    EXPECT_EQ(c.fdes[0].fres[0].rules, rules(reg_plus(kR15, 160)));
    EXPECT_TRUE(c.stats.skipped.empty());
    expect_agreement(round_trip(cfi, c, version));
  }
}

TEST(GenerateS390x, StmgSavesTheReturnAddressAndTheStackPointer) {
  for (uint8_t version : {2, 3}) {
    SCOPED_TRACE(int(version));
    S390xCfiFixture cfi({{0x401000, 36, stmg_function()}});
    const Conversion c = convert(cfi, version);
    ASSERT_EQ(c.fdes.size(), 1u);
    const FdeDesc& f = c.fdes[0];
    EXPECT_EQ(f.fde_type, FdeType::kDefault);
    ASSERT_EQ(f.fres.size(), 4u);
    EXPECT_EQ(f.fres[0].rules, rules(reg_plus(kR15, 160)));
    EXPECT_EQ(f.fres[1].start, 6u);  // r15 at CFA-40 is the SP at entry: CFA - 160, as SFrame has it
    EXPECT_EQ(f.fres[1].rules, rules(reg_plus(kR15, 160), {}, at_cfa(-48)));
    EXPECT_EQ(f.fres[2].start, 10u);
    EXPECT_EQ(f.fres[2].rules, rules(reg_plus(kR15, 320), {}, at_cfa(-48)));
    EXPECT_EQ(f.fres[3].start, 28u);
    EXPECT_EQ(f.fres[3].rules, rules(reg_plus(kR15, 160)));
    EXPECT_EQ(c.stats.represented_fdes, 1u);
    auto section = write(c, version);
    ASSERT_TRUE(section);
    // Stored as (320 - 160) / 8 = 20; read back as 320.
    auto row = row_for_pc(*section, 0x401000 + 12);
    ASSERT_TRUE(row.ok());
    EXPECT_EQ(row->row.cfa.offset, 320);
    expect_agreement(check_rows(cfi.section(), *section));
  }
}

TEST(GenerateS390x, FramePointerBasedCfa) {
  // alloca: stmg %r11,%r15,88(%r15); lay; lgr %r11,%r15 and the CFA on r11.
  const Insns insns = cfa::advance(6) + cfa::offset(kR11, -72) + cfa::offset(kR14, -48) + cfa::offset(kR15, -40) +
                      cfa::advance(6) + cfa::def_cfa_offset(336) + cfa::advance(4) + cfa::def_cfa_register(kR11) +
                      cfa::advance(20) + cfa::restore(kR15) + cfa::restore(kR14) + cfa::restore(kR11) +
                      cfa::def_cfa(kR15, 160);
  for (uint8_t version : {2, 3}) {
    SCOPED_TRACE(int(version));
    S390xCfiFixture cfi({{0x401000, 40, insns}});
    const Conversion c = convert(cfi, version);
    ASSERT_EQ(c.fdes.size(), 1u);
    const FdeDesc& f = c.fdes[0];
    EXPECT_EQ(f.fde_type, FdeType::kDefault);
    ASSERT_EQ(f.fres.size(), 5u);
    EXPECT_EQ(f.fres[3].rules, rules(reg_plus(kR11, 336), at_cfa(-72), at_cfa(-48)));
    expect_agreement(round_trip(cfi, c, version));
  }
}

TEST(GenerateS390x, FramePointerSavedWithoutTheReturnAddress) {
  // s390x's DEFAULT FREs have an RA padding word: no FLEX needed.
  S390xCfiFixture cfi({{0x401000, 16, cfa::advance(6) + cfa::offset(kR11, -72)}});
  for (uint8_t version : {2, 3}) {
    SCOPED_TRACE(int(version));
    const Conversion c = convert(cfi, version);
    ASSERT_EQ(c.fdes.size(), 1u);
    EXPECT_EQ(c.fdes[0].fde_type, FdeType::kDefault);
    ASSERT_EQ(c.fdes[0].fres.size(), 2u);
    EXPECT_EQ(c.fdes[0].fres[1].rules, rules(reg_plus(kR15, 160), at_cfa(-72)));
    expect_agreement(round_trip(cfi, c, version));
  }
}

// gcc's leaf that needs r14 and r11 (and its r15) for other things keeps
// them in FPRs: ldgr %f0,%r14 ... DW_CFA_register r14 in f0.
Insns fpr_leaf() {
  return cfa::advance(4) + cfa::in_register(kR14, kF0) + cfa::in_register(kR11, kF2) +
         cfa::in_register(kR15, kF4) + cfa::advance(8) + cfa::def_cfa_offset(320) + cfa::advance(12) +
         cfa::restore(kR15) + cfa::restore(kR14) + cfa::restore(kR11) + cfa::def_cfa_offset(160);
}

TEST(GenerateS390x, RegistersInFprsAreV2WordsAndV3Flex) {
  S390xCfiFixture cfi({{0x401000, 32, fpr_leaf()}});
  const Conversion v2 = convert(cfi, 2);
  ASSERT_EQ(v2.fdes.size(), 1u);
  EXPECT_EQ(v2.fdes[0].fde_type, FdeType::kDefault);  // (regnum << 1) | 1 words
  ASSERT_EQ(v2.fdes[0].fres.size(), 4u);
  EXPECT_EQ(v2.fdes[0].fres[1].rules, rules(reg_plus(kR15, 160), in_reg(kF2), in_reg(kF0)));
  EXPECT_EQ(v2.fdes[0].fres[2].rules, rules(reg_plus(kR15, 320), in_reg(kF2), in_reg(kF0)));
  auto s2 = write(v2, 2);
  ASSERT_TRUE(s2);
  auto row = row_for_pc(*s2, 0x401000 + 4);
  ASSERT_TRUE(row.ok());
  const RegisterRule* ra = row->row.find(kR14);
  ASSERT_NE(ra, nullptr);
  EXPECT_EQ(ra->kind, RuleKind::kRegister);
  EXPECT_EQ(ra->value, kF0);
  expect_agreement(check_rows(cfi.section(), *s2));

  const Conversion v3 = convert(cfi, 3);  // v3 has no register words: FLEX
  ASSERT_EQ(v3.fdes.size(), 1u);
  EXPECT_EQ(v3.fdes[0].fde_type, FdeType::kFlex);
  EXPECT_EQ(v3.fdes[0].fres[1].rules, v2.fdes[0].fres[1].rules);
  expect_agreement(round_trip(cfi, v3, 3));
}

TEST(GenerateS390x, CfaOffsetEncodingLimits) {
  // 160 + 8k only: 164 cannot be stored; neither can 160 + 8 * 2^31.
  S390xCfiFixture odd({{0x401000, 16, cfa::advance(4) + cfa::def_cfa_offset(164)}});
  S390xCfiFixture huge({{0x401000, 16, cfa::advance(4) + cfa::def_cfa_offset(160 + (uint64_t{8} << 31))}});
  S390xCfiFixture low({{0x401000, 16, cfa::advance(4) + cfa::def_cfa_offset(0)}});  // (0 - 160) / 8 = -20
  for (uint8_t version : {2, 3}) {
    SCOPED_TRACE(int(version));
    for (const S390xCfiFixture* bad : {&odd, &huge}) {
      const Conversion c = convert(*bad, version);
      EXPECT_TRUE(c.fdes.empty());
      EXPECT_EQ(c.stats.represented_fdes, 0u);
      ASSERT_EQ(c.stats.skipped.size(), 1u);
      EXPECT_EQ(c.stats.skipped.begin()->first, to_string(Unencodable::kOffsetRange));
      EXPECT_EQ(c.stats.skipped.begin()->second.first_pc, 0x401000u);
    }
    const Conversion c = convert(low, version);
    ASSERT_EQ(c.fdes.size(), 1u);
    expect_agreement(round_trip(low, c, version));
  }
}

TEST(GenerateS390x, CfaOnAnotherRegisterNeedsFlex) {
  S390xCfiFixture cfi({{0x401000, 16, cfa::advance(4) + cfa::def_cfa(kR1, 160)}});
  const Conversion v2 = convert(cfi, 2);
  EXPECT_TRUE(v2.fdes.empty());
  ASSERT_EQ(v2.stats.skipped.size(), 1u);
  EXPECT_NE(v2.stats.skipped.begin()->first.find("needs FLEX (v3)"), std::string::npos);
  const Conversion v3 = convert(cfi, 3);
  ASSERT_EQ(v3.fdes.size(), 1u);
  EXPECT_EQ(v3.fdes[0].fde_type, FdeType::kFlex);
  expect_agreement(round_trip(cfi, v3, 3));
}

TEST(GenerateS390x, StackPointerRules) {
  // SP = CFA - 160 said outright is SFrame's rule; SP = CFA is not.
  S390xCfiFixture said({{0x401000, 8, cfa::advance(2) + cfa::val_offset(kR15, -160)}});
  const Conversion c = convert(said, 3);
  ASSERT_EQ(c.fdes.size(), 1u);
  expect_agreement(round_trip(said, c, 3));
  S390xCfiFixture other({{0x401000, 8, cfa::advance(2) + cfa::val_offset(kR15, 0)}});
  const Conversion o = convert(other, 3);
  EXPECT_TRUE(o.fdes.empty());
  EXPECT_EQ(o.stats.skipped.count("SP rule other than SP = CFA"), 1u);
}

TEST(GenerateS390x, NoVersion1) {
  S390xCfiFixture cfi({{0x401000, 12, {}}});
  const dwarf::CfiSection* one = &cfi.section();
  GenerateOptions o;
  o.version = 1;
  o.abi = Abi::kS390xBig;
  auto g = generate_sframe(std::span<const dwarf::CfiSection* const>(&one, 1), o);
  ASSERT_FALSE(g.ok());
  EXPECT_EQ(g.error().code, ErrorCode::kUnsupportedElf);
  o.version = 2;
  EXPECT_TRUE(generate_sframe(std::span<const dwarf::CfiSection* const>(&one, 1), o).ok());
}

TEST(CheckS390x, FindsAWrongRegisterAndAWrongSlot) {
  S390xCfiFixture cfi({{0x401000, 32, fpr_leaf()}, {0x402000, 36, stmg_function()}});
  Conversion c = convert(cfi, 2);
  ASSERT_EQ(c.fdes.size(), 2u);
  c.fdes[0].fres[1].rules.ra = in_reg(kF2);     // f2 instead of f0
  c.fdes[1].fres[1].rules.ra = at_cfa(-56);     // the r13 slot instead of r14's
  auto section = write(c, 2);
  ASSERT_TRUE(section);
  const CheckReport r = check_rows(cfi.section(), *section);
  EXPECT_EQ(r.disagreements, 2u);
  for (const RowDifference& d : r.differences) EXPECT_EQ(d.items, kCheckRa);
}

TEST(CheckS390x, FindsACfaOffByTheBias) {
  // An SFrame CFA of r15 + 0 (the stored value read without the 160 bias) is wrong.
  S390xCfiFixture cfi({{0x401000, 12, {}}});
  Conversion c = convert(cfi, 3);
  ASSERT_EQ(c.fdes.size(), 1u);
  c.fdes[0].fres[0].rules.cfa.offset = 0;
  auto section = write(c, 3);
  ASSERT_TRUE(section);
  const CheckReport r = check_rows(cfi.section(), *section);
  EXPECT_EQ(r.disagreements, 1u);
  ASSERT_EQ(r.differences.size(), 1u);
  EXPECT_EQ(r.differences[0].items, kCheckCfa | kCheckSp);
}

}  // namespace
}  // namespace framewalk::sframe

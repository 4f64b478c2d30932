// The CFI -> SFrame conversion and the checker on hand-written AArch64 CFI:
// RA tracked per FRE (in x30 until the prologue saves it), CFA on sp or x29,
// negate_ra_state as the FREs' mangled-RA bit, the CIE's 'B' as the FDEs'
// PAC key, what needs FLEX, the reasons naming x29, both byte orders, and the
// checker finding a wrong mangled bit or key. Every conversion is written,
// read back and checked against its CFI.
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

Conversion convert(const Aarch64CfiFixture& cfi, uint8_t version = 3, Abi abi = Abi::kAarch64Little) {
  GenerateOptions o;
  o.version = version;
  o.abi = abi;
  o.section_address = kSframeAddress;
  return convert_cfi(cfi.section(), o);
}

Rule sp_plus(int64_t off) { return Rule{Rule::Kind::kRegister, false, kSp, off, 0}; }
Rule fp_plus(int64_t off) { return Rule{Rule::Kind::kRegister, false, kX29, off, 0}; }
Rule at_cfa(int64_t off) { return Rule{Rule::Kind::kCfa, true, 0, off, 0}; }

FrameRules rules(Rule cfa, Rule fp = {}, Rule ra = {}, bool mangled = false) {
  FrameRules r;
  r.cfa = cfa;
  r.fp = fp;
  r.ra = ra;
  r.ra_mangled = mangled;
  return r;
}

struct Written {
  const std::vector<uint8_t>* bytes = nullptr;
  std::optional<Section> section;
};

Written write(const Conversion& conv, uint8_t version, Abi abi) {
  static std::deque<std::vector<uint8_t>> kept;
  WrittenSection w = write_section(writer_options_for(abi, version, kSframeAddress), conv.fdes);
  EXPECT_TRUE(w.problem.ok()) << to_string(w.problem.what);
  Written out;
  out.bytes = &kept.emplace_back(std::move(w.bytes));
  auto section = Section::parse(Bytes(*out.bytes), kSframeAddress);
  EXPECT_TRUE(section.ok()) << (section.ok() ? "" : to_string(section.error().code));
  if (section.ok()) out.section = *section;
  return out;
}

CheckReport round_trip(const Aarch64CfiFixture& cfi, const Conversion& conv, uint8_t version = 3,
                       Abi abi = Abi::kAarch64Little) {
  Written w = write(conv, version, abi);
  if (!w.section) return {};
  EXPECT_EQ(w.section->abi(), abi);
  return check_rows(cfi.section(), *w.section);
}

// gcc -O2 -mbranch-protection=standard, a function that calls another:
//   0: paciasp  4: stp x29, x30, [sp, #-16]!  8: mov x29, sp  ...
//   20: ldp x29, x30, [sp], #16  24: autiasp  28: ret      (32 bytes)
Insns pac_function() {
  return cfa::advance(1) + cfa::negate_ra_state() + cfa::advance(1) + cfa::def_cfa_offset(16) +
         cfa::offset(kX29, -16) + cfa::offset(kX30, -8) + cfa::advance(4) + cfa::restore(kX30) +
         cfa::restore(kX29) + cfa::def_cfa_offset(0) + cfa::advance(1) + cfa::negate_ra_state();
}

TEST(GenerateAarch64, LeafKeepsTheReturnAddressInX30) {
  Aarch64CfiFixture cfi({{0x401000, 12, {}}});
  const Conversion c = convert(cfi);
  ASSERT_EQ(c.fdes.size(), 1u);
  ASSERT_EQ(c.fdes[0].fres.size(), 1u);
  // CFA = sp, RA and FP untracked: the RA is still in x30 (as gas writes it: "sp+0 u u").
  EXPECT_EQ(c.fdes[0].fres[0].rules, rules(sp_plus(0)));
  EXPECT_FALSE(c.fdes[0].pauth_key_b);
  EXPECT_EQ(c.stats.represented_fdes, 1u);
  EXPECT_TRUE(c.stats.skipped.empty());
  expect_agreement(round_trip(cfi, c));
}

TEST(GenerateAarch64, SignedReturnAddressAndSavedFrameRecord) {
  for (uint8_t version : {1, 2, 3}) {
    SCOPED_TRACE(int(version));
    Aarch64CfiFixture cfi({{0x401000, 32, pac_function()}});
    const Conversion c = convert(cfi, version);
    ASSERT_EQ(c.fdes.size(), 1u);
    const FdeDesc& f = c.fdes[0];
    EXPECT_EQ(f.fde_type, FdeType::kDefault);
    EXPECT_FALSE(f.pauth_key_b);
    ASSERT_EQ(f.fres.size(), 5u);
    EXPECT_EQ(f.fres[0].start, 0u);
    EXPECT_EQ(f.fres[0].rules, rules(sp_plus(0)));
    EXPECT_EQ(f.fres[1].start, 4u);  // after paciasp: signed, still in x30
    EXPECT_EQ(f.fres[1].rules, rules(sp_plus(0), {}, {}, true));
    EXPECT_EQ(f.fres[2].start, 8u);  // after stp: x29 at CFA-16, x30 (signed) at CFA-8
    EXPECT_EQ(f.fres[2].rules, rules(sp_plus(16), at_cfa(-16), at_cfa(-8), true));
    EXPECT_EQ(f.fres[3].start, 24u);  // after ldp: back in x30, still signed
    EXPECT_EQ(f.fres[3].rules, rules(sp_plus(0), {}, {}, true));
    EXPECT_EQ(f.fres[4].start, 28u);  // after autiasp
    EXPECT_EQ(f.fres[4].rules, rules(sp_plus(0)));
    Written w = write(c, version, Abi::kAarch64Little);
    ASSERT_TRUE(w.section);
    // The bytes gas writes for these FREs: info 0x03 (sp, one word), 0x83 (mangled), 0x87 (three words).
    std::vector<uint8_t> infos;
    ASSERT_TRUE(w.section->for_each_fre(w.section->fdes()[0], [&](const Fre& fre) {
      infos.push_back(fre.info);
      return true;
    }).ok());
    EXPECT_EQ(infos, (std::vector<uint8_t>{0x03, 0x83, 0x87, 0x83, 0x03}));
    const auto rows = fde_rows(*w.section, w.section->fdes()[0]);
    ASSERT_TRUE(rows.ok());
    EXPECT_TRUE((*rows)[2].row.negate_ra_state);
    EXPECT_FALSE((*rows)[4].row.negate_ra_state);
    expect_agreement(check_rows(cfi.section(), *w.section));
  }
}

TEST(GenerateAarch64, KeyBFromTheCieAugmentation) {
  Aarch64CfiFixture cfi({{0x401000, 32, pac_function(), false, true}, {0x401040, 32, pac_function()}});
  const Conversion c = convert(cfi);
  ASSERT_EQ(c.fdes.size(), 2u);
  EXPECT_TRUE(c.fdes[0].pauth_key_b);
  EXPECT_FALSE(c.fdes[1].pauth_key_b);
  Written w = write(c, 3, Abi::kAarch64Little);
  ASSERT_TRUE(w.section);
  EXPECT_TRUE(w.section->fdes()[0].pauth_key_b);
  EXPECT_EQ(w.section->fdes()[0].info & 0x20, 0x20);  // FDE info bit 5
  EXPECT_FALSE(w.section->fdes()[1].pauth_key_b);
  expect_agreement(check_rows(cfi.section(), *w.section));
}

TEST(GenerateAarch64, FramePointerBasedCfa) {
  // -O0: stp x29, x30, [sp, #-32]!; mov x29, sp; ... CFA = x29 + 32.
  const Insns insns = cfa::advance(1) + cfa::def_cfa_offset(32) + cfa::offset(kX29, -32) + cfa::offset(kX30, -24) +
                      cfa::advance(1) + cfa::def_cfa_register(kX29) + cfa::advance(6) + cfa::restore(kX30) +
                      cfa::restore(kX29) + cfa::def_cfa(kSp, 0);
  for (Endian endian : {Endian::kLittle, Endian::kBig}) {
    SCOPED_TRACE(endian == Endian::kBig ? "big" : "little");
    const Abi abi = endian == Endian::kBig ? Abi::kAarch64Big : Abi::kAarch64Little;
    Aarch64CfiFixture cfi({{0x401000, 40, insns}}, endian);
    const Conversion c = convert(cfi, 3, abi);
    ASSERT_EQ(c.fdes.size(), 1u);
    ASSERT_EQ(c.fdes[0].fres.size(), 4u);
    EXPECT_EQ(c.fdes[0].fres[1].rules, rules(sp_plus(32), at_cfa(-32), at_cfa(-24)));
    EXPECT_EQ(c.fdes[0].fres[2].rules, rules(fp_plus(32), at_cfa(-32), at_cfa(-24)));
    Written w = write(c, 3, abi);
    ASSERT_TRUE(w.section);
    EXPECT_EQ(w.section->endian(), endian);
    expect_agreement(check_rows(cfi.section(), *w.section));
  }
}

TEST(GenerateAarch64, LinkRegisterSavedWithoutTheFramePointer) {
  // str x30, [sp, #-16]!: N = 2 FREs (CFA and RA words, no FP word).
  const Insns insns = cfa::advance(1) + cfa::def_cfa_offset(16) + cfa::offset(kX30, -16) + cfa::advance(2) +
                      cfa::restore(kX30) + cfa::def_cfa_offset(0);
  Aarch64CfiFixture cfi({{0x401000, 16, insns}});
  const Conversion c = convert(cfi, 2);
  ASSERT_EQ(c.fdes.size(), 1u);
  EXPECT_EQ(c.fdes[0].fres[1].rules, rules(sp_plus(16), {}, at_cfa(-16)));
  expect_agreement(round_trip(cfi, c, 2));
}

TEST(GenerateAarch64, FramePointerSavedWithoutTheLinkRegisterNeedsFlex) {
  // str x29, [sp, #-16]!: DEFAULT would need RA padding (an RA word of 0),
  // which binutils reads as "RA at CFA+0" on AArch64; FLEX says it.
  const Insns insns = cfa::advance(1) + cfa::def_cfa_offset(16) + cfa::offset(kX29, -16) + cfa::advance(1) +
                      cfa::restore(kX29) + cfa::def_cfa_offset(0);
  Aarch64CfiFixture cfi({{0x401000, 12, insns}});
  const Conversion v3 = convert(cfi, 3);
  ASSERT_EQ(v3.fdes.size(), 1u);
  EXPECT_EQ(v3.fdes[0].fde_type, FdeType::kFlex);
  EXPECT_EQ(v3.fdes[0].fres[1].rules, rules(sp_plus(16), at_cfa(-16)));
  expect_agreement(round_trip(cfi, v3));
  for (uint8_t version : {1, 2}) {
    const Conversion old = convert(cfi, version);
    EXPECT_TRUE(old.fdes.empty());
    ASSERT_EQ(old.stats.skipped.size(), 1u);
    EXPECT_EQ(old.stats.skipped.begin()->first,
              "FP saved without the RA needs FLEX (v3): no RA padding word on AArch64");
  }
}

TEST(GenerateAarch64, OutermostFrame) {
  // _start: .cfi_undefined x30.
  Aarch64CfiFixture cfi({{0x401000, 16, cfa::undefined(kX30)}});
  const Conversion c = convert(cfi);
  ASSERT_EQ(c.fdes.size(), 1u);
  EXPECT_TRUE(c.fdes[0].fres[0].rules.ra_undefined);
  expect_agreement(round_trip(cfi, c));
}

TEST(GenerateAarch64, ReturnAddressInAnotherRegisterNeedsFlex) {
  // .cfi_register x30, x9: topmost-frame-only FLEX in v3, left out before.
  const Insns insns = cfa::advance(1) + cfa::in_register(kX30, kX9);
  Aarch64CfiFixture cfi({{0x401000, 16, insns}});
  const Conversion v3 = convert(cfi, 3);
  ASSERT_EQ(v3.fdes.size(), 1u);
  EXPECT_EQ(v3.fdes[0].fde_type, FdeType::kFlex);
  expect_agreement(round_trip(cfi, v3));
  const Conversion v2 = convert(cfi, 2);
  EXPECT_TRUE(v2.fdes.empty());
  ASSERT_EQ(v2.stats.skipped.size(), 1u);
  EXPECT_EQ(v2.stats.skipped.begin()->first, "register rule needs FLEX (v3)");
}

TEST(GenerateAarch64, ReasonsNameTheMachinesRegisters) {
  Aarch64CfiFixture cfi({{0x401000, 16, cfa::advance(1) + cfa::undefined(kX29)},
                         {0x401010, 16, cfa::advance(1) + cfa::def_cfa(kX19, 16)},
                         {0x401020, 16, cfa::advance(1) + cfa::same_value(kX30)}});
  const Conversion c = convert(cfi, 2);
  // same-value x30 is the RA left in x30: representable.
  EXPECT_EQ(c.stats.represented_fdes, 1u);
  ASSERT_EQ(c.stats.skipped.size(), 2u);
  EXPECT_EQ(c.stats.skipped.count("FP (x29) rule undefined"), 1u);
  EXPECT_EQ(c.stats.skipped.count("CFA based on a register other than sp/x29 needs FLEX (v3)"), 1u);
}

// The checker on AArch64 SFrame written by hand from the converted FDEs,
// with one bit changed.
TEST(CheckAarch64, WrongMangledBitOrKeyIsADisagreement) {
  Aarch64CfiFixture cfi({{0x401000, 32, pac_function(), false, true}});
  Conversion c = convert(cfi);
  ASSERT_EQ(c.fdes.size(), 1u);
  {
    Conversion unsigned_ra = c;
    unsigned_ra.fdes[0].fres[2].rules.ra_mangled = false;
    Written w = write(unsigned_ra, 3, Abi::kAarch64Little);
    ASSERT_TRUE(w.section);
    const CheckReport r = check_rows(cfi.section(), *w.section);
    ASSERT_EQ(r.disagreements, 1u);
    EXPECT_EQ(r.differences[0].begin, 0x401008u);
    EXPECT_EQ(r.differences[0].end, 0x401018u);
    EXPECT_EQ(r.differences[0].items, kCheckRaSigning);
    EXPECT_EQ(check_items_text(r.differences[0].items), "RA signing");
  }
  {
    Conversion key_a = c;
    key_a.fdes[0].pauth_key_b = false;
    Written w = write(key_a, 3, Abi::kAarch64Little);
    ASSERT_TRUE(w.section);
    const CheckReport r = check_rows(cfi.section(), *w.section);
    // Every signed piece, [4, 8), [8, 24) and [24, 28), coalesced.
    ASSERT_EQ(r.disagreements, 1u);
    EXPECT_EQ(r.differences[0].begin, 0x401004u);
    EXPECT_EQ(r.differences[0].end, 0x40101cu);
    EXPECT_EQ(r.differences[0].items, kCheckRaSigning);
  }
}

TEST(CheckAarch64, ReturnAddressStillInTheLinkRegister) {
  // CFI saying x30 is same-value and SFrame not tracking it agree; an
  // SFrame that claims the RA was saved does not.
  Aarch64CfiFixture cfi({{0x401000, 16, cfa::same_value(kX30)}});
  Conversion c = convert(cfi);
  ASSERT_EQ(c.fdes.size(), 1u);
  expect_agreement(round_trip(cfi, c));
  c.fdes[0].fres[0].rules = rules(sp_plus(16), {}, at_cfa(-8));
  Written w = write(c, 3, Abi::kAarch64Little);
  ASSERT_TRUE(w.section);
  const CheckReport r = check_rows(cfi.section(), *w.section);
  ASSERT_EQ(r.disagreements, 1u);
  EXPECT_EQ(r.differences[0].items, kCheckCfa | kCheckRa | kCheckSp);
}

}  // namespace
}  // namespace framewalk::sframe

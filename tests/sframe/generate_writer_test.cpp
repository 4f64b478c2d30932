// The SFrame writer: every rule shape of every version and ABI reads back with
// the reader as written; layout choices (sorting, PC-relative starts, field
// sizes, V3 attribute records) and each refusal.
#include "sframe/sframe_writer.hpp"

#include <gtest/gtest.h>

#include <deque>

#include "sframe/sframe_rows.hpp"

namespace framewalk::sframe {
namespace {

constexpr uint64_t kAddress = 0x20000;
constexpr uint16_t kRsp = 7, kRbp = 6, kR10 = 10, kRbx = 3;

Rule reg(uint16_t r, int64_t off, bool deref = false) { return Rule{Rule::Kind::kRegister, deref, r, off, 0}; }
Rule at_cfa(int64_t off) { return Rule{Rule::Kind::kCfa, true, 0, off, 0}; }

FrameRules amd64(Rule cfa, Rule fp = {}, Rule ra = at_cfa(-8)) {
  FrameRules r;
  r.cfa = cfa;
  r.fp = fp;
  r.ra = ra;
  return r;
}

FrameRules ra_undefined() {
  FrameRules r;
  r.ra_undefined = true;
  return r;
}

FdeDesc function(uint64_t start, uint32_t size, std::vector<FrameRules> rows, FdeType type = FdeType::kDefault,
                 uint32_t step = 2) {
  FdeDesc f;
  f.start = start;
  f.size = size;
  f.fde_type = type;
  for (size_t i = 0; i < rows.size(); ++i) f.fres.push_back(FreDesc{static_cast<uint32_t>(i * step), rows[i]});
  return f;
}

// Rules as read back, without the source offsets the reader adds.
FrameRules strip(FrameRules r) {
  for (Rule* x : {&r.cfa, &r.ra, &r.fp}) x->source_offset = 0;
  r.topmost_only = false;
  return r;
}

struct ReadBack {
  std::vector<uint8_t> bytes;
  std::optional<Section> section;
};

ReadBack write_and_read(const WriterOptions& o, const std::vector<FdeDesc>& fdes) {
  static std::deque<std::vector<uint8_t>> kept;
  ReadBack out;
  WrittenSection w = write_section(o, fdes);
  EXPECT_TRUE(w.problem.ok()) << to_string(w.problem.what) << " fde " << w.problem.fde << " fre " << w.problem.fre;
  const auto& bytes = kept.emplace_back(std::move(w.bytes));
  out.bytes = bytes;
  auto s = Section::parse(Bytes(bytes), o.section_address);
  EXPECT_TRUE(s.ok()) << (s.ok() ? "" : to_string(s.error().code)) << " at " << (s.ok() ? 0 : s.error().offset);
  if (s.ok()) out.section = *s;
  return out;
}

// Every FRE of every FDE reads back as written (FDEs matched by start).
void expect_same_rules(const Section& s, const std::vector<FdeDesc>& fdes) {
  for (const FdeDesc& want : fdes) {
    auto found = s.find_fde(want.start);
    ASSERT_TRUE(found.ok()) << std::hex << want.start;
    const Fde& f = **found;
    EXPECT_EQ(f.start, want.start);
    EXPECT_EQ(f.size, want.size);
    EXPECT_EQ(f.fde_type, s.version() >= 3 ? want.fde_type : FdeType::kDefault);
    EXPECT_EQ(f.pc_type, want.pc_type);
    EXPECT_EQ(f.signal, want.signal);
    ASSERT_EQ(f.num_fres, want.fres.size());
    uint32_t i = 0;
    ASSERT_TRUE(s.for_each_fre(f, [&](const Fre& fre) {
      EXPECT_EQ(fre.start, want.fres[i].start);
      auto rules = s.rules(f, fre);
      EXPECT_TRUE(rules.ok());
      if (rules.ok()) {
        if (want.fres[i].rules.ra_undefined) EXPECT_TRUE(rules->ra_undefined);
        else EXPECT_EQ(strip(*rules), want.fres[i].rules) << "fde at 0x" << std::hex << want.start << " fre " << std::dec << i;
      }
      ++i;
      return true;
    }).ok());
  }
}

TEST(SframeWriter, DefaultAmd64RulesReadBackInEveryVersion) {
  const std::vector<FdeDesc> fdes = {
      function(0x1000, 0x20, {amd64(reg(kRsp, 8)), amd64(reg(kRsp, 16), at_cfa(-16)), amd64(reg(kRbp, 16), at_cfa(-16))}),
      function(0x1040, 0x10, {amd64(reg(kRsp, 8))}),
  };
  for (uint8_t v : {1, 2, 3}) {
    SCOPED_TRACE(int{v});
    ReadBack rb = write_and_read(writer_options_for(Abi::kAmd64Little, v, kAddress), fdes);
    ASSERT_TRUE(rb.section);
    EXPECT_EQ(rb.section->version(), v);
    EXPECT_TRUE(rb.section->sorted());
    EXPECT_EQ(rb.section->pcrel(), v >= 2);
    EXPECT_EQ(rb.section->header().cfa_fixed_ra_offset, -8);
    EXPECT_EQ(rb.section->header().num_fres, 4u);
    expect_same_rules(*rb.section, fdes);
  }
}

TEST(SframeWriter, FdesAreSortedByStartWithPcRelativeFields) {
  const std::vector<FdeDesc> fdes = {function(0x3000, 8, {amd64(reg(kRsp, 8))}), function(0x1000, 8, {amd64(reg(kRsp, 8))}),
                                     function(0x2000, 8, {amd64(reg(kRsp, 16))})};
  ReadBack rb = write_and_read(writer_options_for(Abi::kAmd64Little, 3, kAddress), fdes);
  ASSERT_TRUE(rb.section);
  const auto got = rb.section->fdes();
  ASSERT_EQ(got.size(), 3u);
  EXPECT_EQ(got[0].start, 0x1000u);
  EXPECT_EQ(got[1].start, 0x2000u);
  EXPECT_EQ(got[2].start, 0x3000u);
  // V3: int64 relative to the field: start - (address + 28 + 16 i).
  EXPECT_EQ(got[1].raw_start, static_cast<int64_t>(0x2000 - (kAddress + 28 + 16)));
  // V2: int32, same base with 20-byte FDEs; V1: relative to the section.
  ReadBack v2 = write_and_read(writer_options_for(Abi::kAmd64Little, 2, kAddress), fdes);
  EXPECT_EQ(v2.section->fdes()[2].raw_start, static_cast<int64_t>(0x3000 - (kAddress + 28 + 40)));
  ReadBack v1 = write_and_read(writer_options_for(Abi::kAmd64Little, 1, kAddress), fdes);
  EXPECT_EQ(v1.section->fdes()[2].raw_start, static_cast<int64_t>(0x3000 - kAddress));
  // V3 attribute records follow the FDE order, each right before its FREs.
  EXPECT_EQ(rb.section->fdes()[0].fre_off, 0u);
  EXPECT_EQ(rb.section->fdes()[1].fre_off, 5u + 3u);
}

TEST(SframeWriter, SmallestFreAndWordSizes) {
  const std::vector<FdeDesc> fdes = {
      function(0x1000, 0x100, {amd64(reg(kRsp, 8)), amd64(reg(kRsp, 127)), amd64(reg(kRsp, 128)), amd64(reg(kRsp, 40000))}, FdeType::kDefault, 0x40),
      function(0x2000, 0x20000, {amd64(reg(kRsp, 8)), amd64(reg(kRsp, 16))}, FdeType::kDefault, 0x10000),
      function(0x40000, 0x200, {amd64(reg(kRsp, 8)), amd64(reg(kRsp, 16))}, FdeType::kDefault, 0x100),
  };
  ReadBack rb = write_and_read(writer_options_for(Abi::kAmd64Little, 3, kAddress), fdes);
  ASSERT_TRUE(rb.section);
  const Section& s = *rb.section;
  EXPECT_EQ(s.fdes()[0].fre_type, FreType::kAddr1);  // max start 0xc0
  EXPECT_EQ(s.fdes()[1].fre_type, FreType::kAddr4);  // start 0x10000
  EXPECT_EQ(s.fdes()[2].fre_type, FreType::kAddr2);  // start 0x100
  std::vector<unsigned> sizes;
  ASSERT_TRUE(s.for_each_fre(s.fdes()[0], [&](const Fre& f) {
    sizes.push_back(f.word_size);
    return true;
  }).ok());
  EXPECT_EQ(sizes, (std::vector<unsigned>{1, 1, 2, 4}));
  expect_same_rules(s, fdes);
}

TEST(SframeWriter, FlexRulesReadBack) {
  const std::vector<FrameRules> shapes = {
      amd64(reg(kR10, 0)),                                   // CFA in r10 (DRAP prologue)
      amd64(reg(kRbp, -8, true), reg(kRbp, 0, true)),        // CFA = *(rbp-8), rbp = *(rbp)
      amd64(reg(kRsp, 8), {}, reg(1, 0)),                    // RA held in rdx
      amd64(reg(kRsp, 8), reg(kRbx, 0), at_cfa(-16)),        // RA at CFA-16, rbp in rbx
      amd64(reg(kRsp, 160, true), reg(kRsp, 120, true), reg(kRsp, 168, true)),  // signal frame
      amd64(reg(kRsp, 8), reg(kRsp, 16)),                    // rbp = rsp + 16 (a value)
      amd64(reg(40, 1000)),                                  // a 2-byte control word
      amd64(reg(kRsp, 8)),                                   // DEFAULT-able rows in a FLEX FDE
      ra_undefined(),
  };
  FdeDesc f = function(0x1000, 0x40, shapes, FdeType::kFlex);
  f.signal = true;
  ReadBack rb = write_and_read(writer_options_for(Abi::kAmd64Little, 3, kAddress), {f});
  ASSERT_TRUE(rb.section);
  expect_same_rules(*rb.section, {f});
  // Word layout: CFA only (2 words), RA pair (4), RA padding + FP pair (5), both (6).
  std::vector<unsigned> counts;
  ASSERT_TRUE(rb.section->for_each_fre(rb.section->fdes()[0], [&](const Fre& fre) {
    counts.push_back(fre.word_count);
    return true;
  }).ok());
  EXPECT_EQ(counts, (std::vector<unsigned>{2, 5, 4, 6, 6, 5, 2, 2, 0}));
}

TEST(SframeWriter, Aarch64TracksRaPerFre) {
  const uint16_t sp = 31, fp = 29;
  FrameRules leaf;
  leaf.cfa = reg(sp, 0);
  FrameRules saved;
  saved.cfa = reg(sp, 32);
  saved.ra = at_cfa(-24);
  saved.fp = at_cfa(-32);
  FrameRules ra_only;
  ra_only.cfa = reg(fp, 16);
  ra_only.ra = at_cfa(-8);
  FrameRules fp_only;  // RA unchanged, FP saved: RA padding
  fp_only.cfa = reg(sp, 16);
  fp_only.fp = at_cfa(-16);
  fp_only.ra_mangled = true;
  for (Abi abi : {Abi::kAarch64Little, Abi::kAarch64Big}) {
    const FdeDesc f = function(0x1000, 0x20, {leaf, saved, ra_only, fp_only});
    ReadBack rb = write_and_read(writer_options_for(abi, 3, kAddress), {f});
    ASSERT_TRUE(rb.section);
    EXPECT_EQ(rb.section->endian(), abi == Abi::kAarch64Big ? Endian::kBig : Endian::kLittle);
    EXPECT_EQ(rb.section->header().cfa_fixed_ra_offset, 0);
    expect_same_rules(*rb.section, {f});
  }
}

TEST(SframeWriter, S390xCfaOffsetsAreScaled) {
  FrameRules r;
  r.cfa = reg(15, 160 + 8 * 5);
  r.ra = at_cfa(-48);
  const FdeDesc f = function(0x1000, 0x20, {r});
  ReadBack rb = write_and_read(writer_options_for(Abi::kS390xBig, 3, kAddress), {f});
  ASSERT_TRUE(rb.section);
  auto fre = rb.section->fre(rb.section->fdes()[0], 0);
  ASSERT_TRUE(fre.ok());
  EXPECT_EQ(fre->words[0], 5);
  expect_same_rules(*rb.section, {f});
  r.cfa.offset = 161;
  EXPECT_EQ(check_fde(writer_options_for(Abi::kS390xBig, 3, kAddress), function(0x1000, 0x20, {r})).what,
            Unencodable::kOffsetRange);
}

// s390x V2 (and only V2) writes "held in register N" as the odd word
// (N << 1) | 1 of a DEFAULT FDE; an odd offset would read back as a register.
TEST(SframeWriter, S390xV2RegistersInWords) {
  FrameRules r;
  r.cfa = reg(15, 160);
  r.ra = reg(14, 0);
  r.fp = reg(11, 0);
  const FdeDesc f = function(0x1000, 0x20, {r});
  ReadBack rb = write_and_read(writer_options_for(Abi::kS390xBig, 2, kAddress), {f});
  ASSERT_TRUE(rb.section);
  auto fre = rb.section->fre(rb.section->fdes()[0], 0);
  ASSERT_TRUE(fre.ok());
  EXPECT_EQ(fre->words[1], (14 << 1) | 1);
  EXPECT_EQ(fre->words[2], (11 << 1) | 1);
  expect_same_rules(*rb.section, {f});
  // V3 has FLEX for it instead.
  EXPECT_EQ(check_fde(writer_options_for(Abi::kS390xBig, 3, kAddress), f).what, Unencodable::kRaNotDefault);
  FrameRules odd;
  odd.cfa = reg(15, 160);
  odd.ra = at_cfa(-47);
  EXPECT_EQ(check_fde(writer_options_for(Abi::kS390xBig, 2, kAddress), function(0x1000, 0x20, {odd})).what,
            Unencodable::kRaNotDefault);
  EXPECT_TRUE(check_fde(writer_options_for(Abi::kS390xBig, 3, kAddress), function(0x1000, 0x20, {odd})).ok());
}

TEST(SframeWriter, PcmaskFdes) {
  FdeDesc plt = function(0x1030, 0x40, {amd64(reg(kRsp, 8)), amd64(reg(kRsp, 16))});
  plt.pc_type = PcType::kMask;
  plt.rep_size = 16;
  plt.fres[1].start = 11;
  for (uint8_t v : {1, 2, 3}) {
    ReadBack rb = write_and_read(writer_options_for(Abi::kAmd64Little, v, kAddress), {plt});
    ASSERT_TRUE(rb.section);
    expect_same_rules(*rb.section, {plt});
    auto row = row_for_pc(*rb.section, 0x1030 + 0x20 + 12);
    ASSERT_TRUE(row.ok());
    EXPECT_EQ(row->row.cfa.offset, 16);
  }
  FdeDesc odd = plt;
  odd.rep_size = 8;
  odd.fres[1].start = 5;
  EXPECT_EQ(check_fde(writer_options_for(Abi::kAmd64Little, 1, kAddress), odd).what, Unencodable::kRepSize);
  EXPECT_TRUE(check_fde(writer_options_for(Abi::kAmd64Little, 2, kAddress), odd).ok());
  odd.fres[1].start = 8;
  EXPECT_EQ(check_fde(writer_options_for(Abi::kAmd64Little, 2, kAddress), odd).what, Unencodable::kFreBeyondFunction);
}

TEST(SframeWriter, EmptyFdesAndEmptySections) {
  FdeDesc marker;
  marker.start = 0x1000;
  marker.size = 9;
  marker.signal = true;
  ReadBack rb = write_and_read(writer_options_for(Abi::kAmd64Little, 3, kAddress), {marker});
  ASSERT_TRUE(rb.section);
  EXPECT_EQ(rb.section->fdes()[0].num_fres, 0u);
  EXPECT_TRUE(rb.section->fdes()[0].signal);
  EXPECT_EQ(rb.section->header().fre_len, 5u);
  ReadBack none = write_and_read(writer_options_for(Abi::kAmd64Little, 3, kAddress), {});
  ASSERT_TRUE(none.section);
  EXPECT_EQ(none.bytes.size(), kHeaderSize);
}

TEST(SframeWriter, RefusesWhatAVersionCannotSay) {
  const WriterOptions v1 = writer_options_for(Abi::kAmd64Little, 1, kAddress);
  const WriterOptions v2 = writer_options_for(Abi::kAmd64Little, 2, kAddress);
  const WriterOptions v3 = writer_options_for(Abi::kAmd64Little, 3, kAddress);
  EXPECT_EQ(check_fde(v2, function(0x1000, 8, {amd64(reg(kR10, 0))}, FdeType::kFlex)).what, Unencodable::kFlexNeedsV3);
  EXPECT_EQ(check_fde(v3, function(0x1000, 8, {amd64(reg(kR10, 0))})).what, Unencodable::kCfaNotDefault);
  EXPECT_EQ(check_fde(v3, function(0x1000, 8, {amd64(reg(kRsp, 8), {}, at_cfa(-16))})).what, Unencodable::kRaNotDefault);
  EXPECT_EQ(check_fde(v3, function(0x1000, 8, {amd64(reg(kRsp, 8), reg(kRbx, 0))})).what, Unencodable::kFpNotDefault);
  EXPECT_EQ(check_fde(v1, function(0x1000, 8, {ra_undefined()})).what, Unencodable::kRaUndefinedInV1);
  EXPECT_TRUE(check_fde(v2, function(0x1000, 8, {ra_undefined()})).ok());
  FdeDesc signal = function(0x1000, 8, {amd64(reg(kRsp, 8))});
  signal.signal = true;
  EXPECT_EQ(check_fde(v2, signal).what, Unencodable::kSignalNeedsV3);
  // FLEX cannot say "RA = CFA + 8" (its control word would be padding) nor
  // "RA unchanged" on AMD64 (padding means the fixed CFA-8).
  Rule value_of_cfa{Rule::Kind::kCfa, false, 0, 8, 0};
  EXPECT_EQ(check_fde(v3, function(0x1000, 8, {amd64(reg(kRsp, 8), {}, value_of_cfa)}, FdeType::kFlex)).what,
            Unencodable::kRaFlexRule);
  EXPECT_EQ(check_fde(v3, function(0x1000, 8, {amd64(reg(kRsp, 8), {}, Rule{})}, FdeType::kFlex)).what,
            Unencodable::kRaFlexRule);
  EXPECT_EQ(check_fde(v3, function(0x1000, 8, {amd64(reg(kRsp, int64_t{1} << 33))})).what, Unencodable::kOffsetRange);
  FdeDesc order = function(0x1000, 8, {amd64(reg(kRsp, 8)), amd64(reg(kRsp, 16))});
  order.fres[1].start = 0;
  EXPECT_EQ(check_fde(v3, order).what, Unencodable::kFreOrder);
  order.fres[1].start = 9;
  EXPECT_EQ(check_fde(v3, order).what, Unencodable::kFreBeyondFunction);
  FdeDesc many = function(0x1000, 0x20000, std::vector<FrameRules>(70000, amd64(reg(kRsp, 8))), FdeType::kDefault, 1);
  EXPECT_EQ(check_fde(v3, many).what, Unencodable::kTooManyFres);
  EXPECT_TRUE(check_fde(v2, many).ok());

  // Whole sections: two functions at one address; a V2 start out of reach.
  WrittenSection dup = write_section(v3, std::vector<FdeDesc>{function(0x1000, 8, {}), function(0x1000, 4, {})});
  EXPECT_EQ(dup.problem.what, Unencodable::kDuplicateStart);
  EXPECT_TRUE(dup.bytes.empty());
  const std::vector<FdeDesc> far = {function(0x1000, 8, {}), function(kAddress + (uint64_t{1} << 32), 8, {})};
  WrittenSection w2 = write_section(v2, far);
  EXPECT_EQ(w2.problem.what, Unencodable::kStartRange);
  EXPECT_EQ(w2.problem.fde, 1u);
  EXPECT_TRUE(write_section(v3, far).problem.ok());
}

}  // namespace
}  // namespace framewalk::sframe

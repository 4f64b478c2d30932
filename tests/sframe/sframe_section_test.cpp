// The SFrame reader on hand-written sections: every FRE type (ADDR1/2/4),
// data-word size (1/2/4), FDE kind of every version, both byte orders, PCMASK
// and ordinary lookups, and every validation error with its offset.
#include "sframe/sframe_section.hpp"

#include <gtest/gtest.h>

#include <vector>

#include "sframe/sframe_builder.hpp"

namespace framewalk::sframe {
namespace {

using test::build;
using test::ctrl;
using test::FdeSpec;
using test::fre;
using test::keep;
using test::FreSpec;
using test::Layout;
using test::SectionSpec;

constexpr uint64_t kAddress = 0x2000;

Section parse_ok(std::vector<uint8_t> owned, uint64_t address = kAddress) {
  const std::vector<uint8_t>& bytes = keep(std::move(owned));
  auto s = Section::parse(bytes, address);
  EXPECT_TRUE(s.ok()) << (s.ok() ? "" : to_string(s.error().code)) << " at " << (s.ok() ? 0 : s.error().offset);
  if (!s.ok()) std::abort();
  return *s;
}

// The offset expected depends on where build() put things.
template <typename OffsetOf>
void expect_built_error(const SectionSpec& spec, Errc code, OffsetOf offset_of) {
  Layout layout;
  const std::vector<uint8_t> bytes = build(spec, &layout);
  auto s = Section::parse(bytes, kAddress);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().code, code) << to_string(s.error().code);
  EXPECT_EQ(s.error().offset, offset_of(layout));
}

bool parses(const std::vector<uint8_t>& bytes) { return Section::parse(bytes, kAddress).ok(); }

void expect_error(const std::vector<uint8_t>& bytes, Errc code, uint64_t offset) {
  auto s = Section::parse(bytes, kAddress);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().code, code) << to_string(s.error().code);
  EXPECT_EQ(s.error().offset, offset);
}

std::vector<Fre> all_fres(const Section& s, const Fde& f) {
  std::vector<Fre> out;
  EXPECT_TRUE(s.for_each_fre(f, [&](const Fre& x) {
    out.push_back(x);
    return true;
  }).ok());
  return out;
}

// One DEFAULT AMD64 function: push rbp; mov rbp,rsp; ...; pop rbp; ret.
SectionSpec amd64(uint8_t version) {
  SectionSpec s;
  s.version = version;
  s.address = kAddress;
  FdeSpec f;
  f.start = 0x1000;
  f.size = 0x20;
  f.fres = {fre(0, {8}), fre(1, {16, -16}), fre(4, {16, -16}, false), fre(0x1f, {8, -16})};
  s.fdes = {f};
  return s;
}

// ---- header ---------------------------------------------------------------

TEST(SframeSectionTest, HeaderFields) {
  SectionSpec spec = amd64(3);
  const Section s = parse_ok(build(spec));
  EXPECT_EQ(s.version(), 3);
  EXPECT_EQ(s.flags(), kFlagFdeSorted | kFlagFuncStartPcrel);
  EXPECT_EQ(s.abi(), Abi::kAmd64Little);
  EXPECT_EQ(s.endian(), Endian::kLittle);
  EXPECT_TRUE(s.sorted());
  EXPECT_TRUE(s.pcrel());
  EXPECT_EQ(s.header().cfa_fixed_ra_offset, -8);
  EXPECT_EQ(s.header().num_fdes, 1u);
  EXPECT_EQ(s.header().num_fres, 4u);
  EXPECT_EQ(s.fdes_offset(), 28u);
  EXPECT_EQ(s.fres_offset(), 28u + 16u);
  EXPECT_EQ(s.registers().sp, 7);
  EXPECT_EQ(s.registers().fp, 6);
  EXPECT_EQ(s.registers().ra, 16);
  ASSERT_EQ(s.fdes().size(), 1u);
  EXPECT_EQ(s.fdes()[0].start, 0x1000u);
}

TEST(SframeSectionTest, AbiRegisters) {
  EXPECT_EQ(abi_registers(Abi::kAarch64Little).sp, 31);
  EXPECT_EQ(abi_registers(Abi::kAarch64Big).fp, 29);
  EXPECT_EQ(abi_registers(Abi::kAarch64Little).ra, 30);
  EXPECT_EQ(abi_registers(Abi::kS390xBig).sp, 15);
  EXPECT_EQ(abi_registers(Abi::kS390xBig).fp, 11);
  EXPECT_EQ(abi_registers(Abi::kS390xBig).ra, 14);
}

TEST(SframeSectionTest, EmptySectionHasNoFdes) {
  SectionSpec spec;
  const Section s = parse_ok(build(spec));
  EXPECT_TRUE(s.fdes().empty());
  EXPECT_EQ(s.find_fde(0x1000).error().code, Errc::kNoFde);
}

TEST(SframeSectionTest, TrailingBytesAreAllowed) {
  SectionSpec spec = amd64(2);
  spec.trailing = {0, 0, 0, 0};  // alignment padding after the FRE sub-section
  const Section s = parse_ok(build(spec));
  EXPECT_EQ(s.fdes()[0].num_fres, 4u);
}

// ---- FRE start-address types and data-word sizes ---------------------------

struct FreShape {
  unsigned fre_type;   // 0, 1, 2
  unsigned word_size;  // 1, 2, 4
};

class FreShapeTest : public ::testing::TestWithParam<FreShape> {};

TEST_P(FreShapeTest, DecodesStartsAndWords) {
  const FreShape p = GetParam();
  const uint32_t step = p.fre_type == 0 ? 0x10 : p.fre_type == 1 ? 0x1000 : 0x100000;
  const int64_t big = p.word_size == 1 ? 100 : p.word_size == 2 ? 30000 : 2000000;
  for (Endian endian : {Endian::kLittle, Endian::kBig}) {
    SCOPED_TRACE(endian == Endian::kLittle ? "little" : "big");
    SectionSpec spec;
    spec.endian = endian;
    spec.abi = endian == Endian::kLittle ? 2 : 1;  // AArch64 either way
    spec.fixed_ra = 0;
    FdeSpec f;
    f.start = 0x4000;
    f.size = 3 * step;
    f.fre_type = p.fre_type;
    f.fres = {fre(0, {big}, true, p.word_size), fre(step, {big, -big}, true, p.word_size),
              fre(2 * step, {-big, -big + 1, big - 1}, false, p.word_size)};
    spec.fdes = {f};
    Layout layout;
    const Section s = parse_ok(build(spec, &layout));
    EXPECT_EQ(s.endian(), endian);
    const Fde& fde = s.fdes()[0];
    EXPECT_EQ(fde.fre_type, static_cast<FreType>(p.fre_type));
    EXPECT_EQ(fde.start_address_size(), 1u << p.fre_type);
    const std::vector<Fre> fres = all_fres(s, fde);
    ASSERT_EQ(fres.size(), 3u);
    for (size_t i = 0; i < 3; ++i) {
      EXPECT_EQ(fres[i].offset, layout.fre_offsets[0][i]);
      EXPECT_EQ(fres[i].start, i * step);
      EXPECT_EQ(fres[i].word_count, i + 1);
      EXPECT_EQ(fres[i].word_size, p.word_size);
      EXPECT_EQ(fres[i].size, (1u << p.fre_type) + 1 + (i + 1) * p.word_size);
    }
    EXPECT_EQ(fres[2].words[0], -big);
    EXPECT_EQ(fres[2].words[1], -big + 1);
    EXPECT_EQ(fres[2].words[2], big - 1);
    EXPECT_EQ(fres[2].uwords[0], static_cast<uint32_t>(-big) & (p.word_size == 4 ? 0xffffffffu : (1u << (8 * p.word_size)) - 1));
    EXPECT_TRUE(fres[0].cfa_base_sp());
    EXPECT_FALSE(fres[2].cfa_base_sp());
    EXPECT_EQ(fde.fres_end, fres[2].offset + fres[2].size);
    // fre(i) agrees with iteration.
    auto second = s.fre(fde, 1);
    ASSERT_TRUE(second.ok());
    EXPECT_EQ(second->offset, fres[1].offset);
    EXPECT_EQ(s.fre(fde, 3).error().code, Errc::kNoFre);
    // Rules: AArch64 words are CFA, RA, FP.
    auto rules = s.rules(fde, fres[2]);
    ASSERT_TRUE(rules.ok());
    EXPECT_EQ(rules->cfa.reg, 29);
    EXPECT_EQ(rules->cfa.offset, -big);
    EXPECT_EQ(rules->ra.kind, Rule::Kind::kCfa);
    EXPECT_EQ(rules->ra.offset, -big + 1);
    EXPECT_EQ(rules->fp.offset, big - 1);
    // Lookup in the middle of each FRE's range.
    for (size_t i = 0; i < 3; ++i) {
      auto hit = s.find_fre(fde, 0x4000 + i * step + step / 2);
      ASSERT_TRUE(hit.ok());
      EXPECT_EQ(hit->index, i);
    }
  }
}

INSTANTIATE_TEST_SUITE_P(AllShapes, FreShapeTest,
                         ::testing::Values(FreShape{0, 1}, FreShape{0, 2}, FreShape{0, 4}, FreShape{1, 1},
                                           FreShape{1, 2}, FreShape{1, 4}, FreShape{2, 1}, FreShape{2, 2},
                                           FreShape{2, 4}));

// ---- FDEs of every version --------------------------------------------------

TEST(SframeSectionTest, V1FdeIsSectionRelative) {
  SectionSpec spec = amd64(1);
  Layout layout;
  const std::vector<uint8_t> bytes = build(spec, &layout);
  const Section s = parse_ok(bytes);
  const Fde& f = s.fdes()[0];
  EXPECT_EQ(Section::fde_size(1), 17u);
  EXPECT_EQ(s.fres_offset(), 28u + 17u);
  EXPECT_EQ(f.raw_start, 0x1000 - 0x2000);
  EXPECT_EQ(f.start, 0x1000u);
  EXPECT_EQ(f.num_fres, 4u);
  EXPECT_EQ(f.fres_offset, s.fres_offset());
  EXPECT_EQ(f.fde_type, FdeType::kDefault);
}

TEST(SframeSectionTest, V2StartWithAndWithoutPcrel) {
  for (bool pcrel : {false, true}) {
    SectionSpec spec = amd64(2);
    spec.flags = static_cast<uint8_t>(kFlagFdeSorted | (pcrel ? kFlagFuncStartPcrel : 0));
    FdeSpec second = spec.fdes[0];
    second.start = 0x1100;
    spec.fdes.push_back(second);
    Layout layout;
    const Section s = parse_ok(build(spec, &layout));
    ASSERT_EQ(s.fdes().size(), 2u);
    EXPECT_EQ(s.pcrel(), pcrel);
    EXPECT_EQ(s.fdes()[0].start, 0x1000u);
    EXPECT_EQ(s.fdes()[1].start, 0x1100u);
    // The stored value is relative to the field (PCREL) or to the section.
    const int64_t expect_raw = pcrel ? int64_t{0x1100} - int64_t(kAddress + layout.fde_offsets[1])
                                     : int64_t{0x1100} - int64_t{kAddress};
    EXPECT_EQ(s.fdes()[1].raw_start, expect_raw);
    EXPECT_EQ(s.fdes()[1].offset, 28u + 20u);
  }
}

TEST(SframeSectionTest, V3IndexAndAttributes) {
  SectionSpec spec = amd64(3);
  spec.fdes[0].signal = true;
  Layout layout;
  const Section s = parse_ok(build(spec, &layout));
  const Fde& f = s.fdes()[0];
  EXPECT_EQ(f.attr_offset(), layout.attr_offsets[0]);
  EXPECT_EQ(f.fres_offset, f.attr_offset() + 5);
  EXPECT_TRUE(f.signal);
  EXPECT_EQ(f.fde_type, FdeType::kDefault);
  EXPECT_EQ(f.pc_type, PcType::kInc);
}

TEST(SframeSectionTest, V3FreDataNeedNotFollowFdeOrder) {
  // FDE 0's FREs come after FDE 1's (ld puts the PLT's last): follow fre_off.
  SectionSpec spec = amd64(3);
  FdeSpec second = spec.fdes[0];
  second.start = 0x1100;
  second.fres = {fre(0, {24})};
  spec.fdes.push_back(second);
  std::vector<uint8_t> bytes = build(spec);
  const Section a = parse_ok(bytes);
  // Rebuild with the attribute blocks swapped.
  const uint32_t first_len = static_cast<uint32_t>(a.fdes()[0].fres_end - a.fdes()[0].attr_offset());
  const uint32_t second_len = static_cast<uint32_t>(a.fdes()[1].fres_end - a.fdes()[1].attr_offset());
  std::vector<uint8_t> swapped(bytes.begin(), bytes.begin() + static_cast<long>(a.fres_offset()));
  swapped.insert(swapped.end(), bytes.begin() + static_cast<long>(a.fdes()[1].attr_offset()),
                 bytes.begin() + static_cast<long>(a.fdes()[1].fres_end));
  swapped.insert(swapped.end(), bytes.begin() + static_cast<long>(a.fdes()[0].attr_offset()),
                 bytes.begin() + static_cast<long>(a.fdes()[0].fres_end));
  auto put32 = [&](size_t at, uint32_t v) {
    for (int i = 0; i < 4; ++i) swapped[at + i] = static_cast<uint8_t>(v >> (8 * i));
  };
  put32(28 + 12, second_len);  // FDE 0's FRE offset
  put32(28 + 16 + 12, 0);      // FDE 1's
  (void)first_len;
  // The PCREL start fields did not move: the functions keep their addresses.
  const Section b = parse_ok(swapped);
  EXPECT_EQ(b.fdes()[0].start, 0x1000u);
  EXPECT_EQ(b.fdes()[0].num_fres, 4u);
  EXPECT_EQ(b.fdes()[1].num_fres, 1u);
  EXPECT_EQ(b.fdes()[1].attr_offset(), b.fres_offset());
  EXPECT_EQ(all_fres(b, b.fdes()[0])[3].start, 0x1fu);
}

TEST(SframeSectionTest, V3FlexFde) {
  SectionSpec spec;
  FdeSpec f;
  f.fde_type = 1;
  f.fres = {fre(0, {ctrl(7, false), 8}), fre(9, {ctrl(10, false), 0}),
            fre(0x18, {ctrl(10, false), 0, 0, ctrl(6, true), 0}),
            fre(0x1a, {ctrl(6, true), -8, 0, ctrl(6, true), 0})};
  spec.fdes = {f};
  const Section s = parse_ok(build(spec));
  EXPECT_EQ(s.fdes()[0].fde_type, FdeType::kFlex);
  const std::vector<Fre> fres = all_fres(s, s.fdes()[0]);
  ASSERT_EQ(fres.size(), 4u);
  EXPECT_EQ(fres[2].word_count, 5);
  EXPECT_EQ(fres[2].uwords[3], 0x33u);
}

TEST(SframeSectionTest, FdeWithoutFres) {
  SectionSpec spec;
  FdeSpec f;
  f.signal = true;
  spec.fdes = {f};
  const Section s = parse_ok(build(spec));
  const Fde& fde = s.fdes()[0];
  EXPECT_EQ(fde.num_fres, 0u);
  EXPECT_TRUE(fde.signal);
  EXPECT_EQ(fde.fres_end, fde.fres_offset);
  auto hit = s.find_fre(fde, 0x1004);
  ASSERT_FALSE(hit.ok());
  EXPECT_EQ(hit.error().code, Errc::kNoFre);
  EXPECT_EQ(hit.error().offset, fde.offset);
}

TEST(SframeSectionTest, PauthKeyAndMangledRa) {
  SectionSpec spec;
  spec.abi = 2;
  spec.fixed_ra = 0;
  FdeSpec f;
  f.pauth_key_b = true;
  FreSpec r = fre(4, {16, -8, -16});
  r.mangled_ra = true;
  f.fres = {fre(0, {0}), r};
  spec.fdes = {f};
  const Section s = parse_ok(build(spec));
  EXPECT_TRUE(s.fdes()[0].pauth_key_b);
  const std::vector<Fre> fres = all_fres(s, s.fdes()[0]);
  EXPECT_FALSE(fres[0].mangled_ra());
  EXPECT_TRUE(fres[1].mangled_ra());
  EXPECT_TRUE(s.rules(s.fdes()[0], fres[1])->ra_mangled);
}

TEST(SframeSectionTest, RaUndefinedFre) {
  SectionSpec spec = amd64(3);
  spec.fdes[0].fres.back() = fre(0x1f, {});
  spec.fdes[0].fres.back().info = 0;
  const Section s = parse_ok(build(spec));
  const Fre last = all_fres(s, s.fdes()[0]).back();
  EXPECT_TRUE(last.ra_undefined());
  auto rules = s.rules(s.fdes()[0], last);
  ASSERT_TRUE(rules.ok());
  EXPECT_TRUE(rules->ra_undefined);
}

TEST(SframeSectionTest, BothByteOrdersGiveTheSameSection) {
  for (uint8_t version : {1, 2, 3}) {
    SCOPED_TRACE(int(version));
    SectionSpec le;
    le.version = version;
    le.abi = 2;  // AArch64 little
    le.fixed_ra = 0;
    FdeSpec f;
    f.start = 0x400100;
    f.size = 0x300;
    f.fre_type = 1;
    f.pauth_key_b = true;
    f.fres = {fre(0, {0}), fre(4, {16, -8}, true, 2), fre(0x208, {32, -24, -32}, false, 4)};
    le.fdes = {f, f};
    le.fdes[1].start = 0x400400;
    le.address = 0x400000;
    SectionSpec be = le;
    be.endian = Endian::kBig;
    be.abi = 1;
    const Section a = parse_ok(build(le), 0x400000);
    const Section b = parse_ok(build(be), 0x400000);
    EXPECT_EQ(a.endian(), Endian::kLittle);
    EXPECT_EQ(b.endian(), Endian::kBig);
    ASSERT_EQ(a.fdes().size(), b.fdes().size());
    for (size_t i = 0; i < a.fdes().size(); ++i) {
      EXPECT_EQ(a.fdes()[i].start, b.fdes()[i].start);
      EXPECT_EQ(a.fdes()[i].size, b.fdes()[i].size);
      const std::vector<Fre> fa = all_fres(a, a.fdes()[i]), fb = all_fres(b, b.fdes()[i]);
      ASSERT_EQ(fa.size(), fb.size());
      for (size_t j = 0; j < fa.size(); ++j) {
        EXPECT_EQ(fa[j].start, fb[j].start);
        EXPECT_EQ(fa[j].word_count, fb[j].word_count);
        for (int k = 0; k < fa[j].word_count; ++k) EXPECT_EQ(fa[j].words[k], fb[j].words[k]);
        EXPECT_TRUE(*a.rules(a.fdes()[i], fa[j]) == *b.rules(b.fdes()[i], fb[j]));
      }
    }
  }
}

// ---- lookups ----------------------------------------------------------------

SectionSpec three_functions() {
  SectionSpec spec = amd64(3);
  FdeSpec b = spec.fdes[0];
  b.start = 0x1040;  // a gap 0x1020..0x1040 before it
  b.size = 0x10;
  FdeSpec c = b;
  c.start = 0x1050;  // adjacent to b
  c.fres = {fre(2, {8})};
  spec.fdes.push_back(b);
  spec.fdes.push_back(c);
  for (FdeSpec& f : spec.fdes)
    for (FreSpec& r : f.fres) r.start = std::min<uint32_t>(r.start, f.size);
  return spec;
}

TEST(SframeSectionTest, FindFdeBinarySearch) {
  const Section s = parse_ok(build(three_functions()));
  struct Case {
    uint64_t pc;
    int fde;  // -1: none
  } cases[] = {{0xfff, -1}, {0x1000, 0}, {0x101f, 0}, {0x1020, -1}, {0x103f, -1},
               {0x1040, 1}, {0x104f, 1}, {0x1050, 2}, {0x105f, 2}, {0x1060, -1}, {~uint64_t{0}, -1}};
  for (const Case& c : cases) {
    SCOPED_TRACE(c.pc);
    auto f = s.find_fde(c.pc);
    if (c.fde < 0) {
      ASSERT_FALSE(f.ok());
      EXPECT_EQ(f.error().code, Errc::kNoFde);
    } else {
      ASSERT_TRUE(f.ok());
      EXPECT_EQ((*f)->index, static_cast<uint32_t>(c.fde));
    }
  }
}

TEST(SframeSectionTest, FindFreTakesTheLastStartAtOrBelow) {
  const Section s = parse_ok(build(three_functions()));
  const Fde& a = s.fdes()[0];
  for (auto [pc, index] : {std::pair{0x1000, 0}, {0x1001, 1}, {0x1003, 1}, {0x1004, 2}, {0x101e, 2}, {0x101f, 3}}) {
    auto hit = s.find_fre(a, pc);
    ASSERT_TRUE(hit.ok());
    EXPECT_EQ(hit->index, static_cast<uint32_t>(index)) << std::hex << pc;
  }
  // Before the first FRE of a function whose first FRE starts late.
  const Fde& c = s.fdes()[2];
  EXPECT_EQ(s.find_fre(c, 0x1051).error().code, Errc::kNoFre);
  EXPECT_EQ(s.find_fre(c, 0x1052)->index, 0u);
  // Outside the FDE.
  EXPECT_EQ(s.find_fre(c, 0x1060).error().code, Errc::kNoFde);
}

TEST(SframeSectionTest, LookupNeedsTheSortedFlag) {
  SectionSpec spec = three_functions();
  spec.flags = kFlagFuncStartPcrel;
  const Section s = parse_ok(build(spec));
  auto f = s.find_fde(0x1000);
  ASSERT_FALSE(f.ok());
  EXPECT_EQ(f.error().code, Errc::kUnsortedLookup);
  EXPECT_EQ(f.error().offset, 3u);
  // FRE lookups inside a known FDE still work.
  EXPECT_TRUE(s.find_fre(s.fdes()[0], 0x1002).ok());
}

// The FDE lookup narrows the search to a block of addresses: FDEs clustered
// and spread out (gaps of a few bytes to most of the address space, V3's
// 64-bit starts), checked against a linear search at every edge.
TEST(SframeSectionTest, FindFdeBlocksAgreeWithLinearSearch) {
  SectionSpec spec = amd64(3);
  spec.fdes.clear();
  std::vector<std::pair<uint64_t, uint32_t>> ranges;
  uint64_t at = 0x10;
  for (int i = 0; i < 300; ++i) {
    const uint32_t size = 1 + static_cast<uint32_t>((i * 37) % 90);
    ranges.emplace_back(at, size);
    // Mostly adjacent or close; now and then far away.
    at += size + (i % 7 == 0 ? 0 : (i * 13) % 50) + (i % 50 == 49 ? uint64_t{1} << (20 + i / 50) : 0);
  }
  ranges.emplace_back(uint64_t{1} << 62, 0x100);
  ranges.emplace_back(~uint64_t{0} - 0x40, 0x40);  // up to the last address
  for (const auto& [start, size] : ranges) {
    FdeSpec f;
    f.start = start;
    f.size = size;
    f.fres = {fre(0, {8})};
    spec.fdes.push_back(f);
  }
  const Section s = parse_ok(build(spec));
  ASSERT_EQ(s.fdes().size(), ranges.size());
  auto linear = [&](uint64_t pc) -> int {
    for (size_t i = 0; i < ranges.size(); ++i)
      if (pc >= ranges[i].first && pc - ranges[i].first < ranges[i].second) return static_cast<int>(i);
    return -1;
  };
  std::vector<uint64_t> pcs = {0, 1, 0xf, ~uint64_t{0}, ~uint64_t{0} - 1};
  for (const auto& [start, size] : ranges)
    for (uint64_t pc : {start - 1, start, start + size / 2, start + size - 1, start + size}) pcs.push_back(pc);
  for (uint64_t pc : pcs) {
    SCOPED_TRACE(pc);
    const int want = linear(pc);
    const Fde* got = s.lookup_fde(pc);
    auto found = s.find_fde(pc);
    if (want < 0) {
      EXPECT_EQ(got, nullptr);
      ASSERT_FALSE(found.ok());
      EXPECT_EQ(found.error().code, Errc::kNoFde);
    } else {
      ASSERT_NE(got, nullptr);
      EXPECT_EQ(got->index, static_cast<uint32_t>(want));
      ASSERT_TRUE(found.ok());
      EXPECT_EQ(*found, got);
    }
  }
}

// A function at address 0 and a PC 2^64 - 1 above it: the block number of
// the last address must not wrap.
TEST(SframeSectionTest, FindFdeFromAddressZeroToTheLastAddress) {
  SectionSpec spec = amd64(3);
  spec.fdes[0].start = 0;
  spec.fdes[0].size = 0x10;
  spec.fdes[0].fres = {fre(0, {8})};
  const Section s = parse_ok(build(spec));
  EXPECT_EQ(s.lookup_fde(0), &s.fdes()[0]);
  EXPECT_EQ(s.lookup_fde(0xf), &s.fdes()[0]);
  EXPECT_EQ(s.lookup_fde(0x10), nullptr);
  EXPECT_EQ(s.lookup_fde(~uint64_t{0}), nullptr);
  EXPECT_EQ(s.find_fde(~uint64_t{0}).error().code, Errc::kNoFde);
}

// The FRE scan trusts the bytes an FDE points at, so it takes only FDEs of
// its own section (or copies of them).
TEST(SframeSectionTest, FreLookupRefusesAnotherSectionsFde) {
  const Section s = parse_ok(build(three_functions()));
  SectionSpec other_spec = three_functions();
  other_spec.fdes[0].fres = {fre(0, {8}), fre(2, {16})};  // its FREs lie elsewhere
  const Section other = parse_ok(build(other_spec));
  const Fde copy = s.fdes()[0];
  EXPECT_EQ(s.find_fre(copy, 0x1005)->index, 2u);
  auto foreign = s.find_fre(other.fdes()[1], 0x1045);
  ASSERT_FALSE(foreign.ok());
  EXPECT_EQ(foreign.error().code, Errc::kNoFde);
  EXPECT_TRUE(other.find_fre(other.fdes()[1], 0x1045).ok());
}

TEST(SframeSectionTest, UnsortedSectionsMayHoldAnyOrder) {
  // A relocatable object: not sorted, every start 0 (relocations unapplied).
  SectionSpec spec = amd64(2);
  spec.flags = kFlagFuncStartPcrel;
  spec.fdes.push_back(spec.fdes[0]);
  spec.fdes[0].start = 0x3000;
  const Section s = parse_ok(build(spec));
  EXPECT_EQ(s.fdes()[0].start, 0x3000u);
  EXPECT_EQ(s.fdes()[1].start, 0x1000u);
}

// PLT entries: 16-byte blocks, FREs at 0 (sp+8) and 0xb (sp+16) in each.
SectionSpec plt(uint8_t version) {
  SectionSpec spec = amd64(version);
  FdeSpec f;
  f.start = 0x1030;
  f.size = 0x50;  // five entries
  f.pc_mask = true;
  f.rep_size = 16;
  f.fres = {fre(0, {8}), fre(6, {16}), fre(0xb, {24})};
  spec.fdes = {f};
  return spec;
}

TEST(SframeSectionTest, PcmaskLookups) {
  for (uint8_t version : {1, 2, 3}) {
    SCOPED_TRACE(int(version));
    const Section s = parse_ok(build(plt(version)));
    const Fde& f = s.fdes()[0];
    EXPECT_EQ(f.pc_type, PcType::kMask);
    EXPECT_EQ(s.effective_rep_size(f), 16u);  // V1: the AMD64 PLT entry size
    for (uint64_t entry = 0; entry < 5; ++entry) {
      for (uint64_t off = 0; off < 16; ++off) {
        const uint64_t pc = 0x1030 + entry * 16 + off;
        EXPECT_EQ(s.match_offset(f, pc), off);
        auto hit = s.find_fre(f, pc);
        ASSERT_TRUE(hit.ok());
        EXPECT_EQ(hit->index, off < 6 ? 0u : off < 0xb ? 1u : 2u) << std::hex << pc;
      }
    }
    EXPECT_EQ(s.find_fre(f, 0x1030 + 0x50).error().code, Errc::kNoFde);
    EXPECT_EQ((*s.find_fde(0x1030 + 0x4c))->index, 0u);
  }
}

TEST(SframeSectionTest, PcmaskWithOddRepSize) {
  SectionSpec spec = plt(2);
  spec.fdes[0].rep_size = 12;
  spec.fdes[0].size = 36;
  spec.fdes[0].fres = {fre(0, {8}), fre(6, {16}), fre(0xb, {24})};
  const Section s = parse_ok(build(spec));
  const Fde& f = s.fdes()[0];
  EXPECT_EQ(s.find_fre(f, 0x1030 + 12 + 5)->index, 0u);
  EXPECT_EQ(s.find_fre(f, 0x1030 + 24 + 6)->index, 1u);
  EXPECT_EQ(s.find_fre(f, 0x1030 + 24 + 11)->index, 2u);
}

// ---- validation errors, each with the offset of the offending field ---------

std::vector<uint8_t> patched(std::vector<uint8_t> bytes, size_t at, std::initializer_list<uint8_t> values) {
  for (uint8_t v : values) bytes.at(at++) = v;
  return bytes;
}

TEST(SframeSectionErrors, TooShort) {
  expect_error({}, Errc::kTruncated, 0);
  expect_error({0xe2}, Errc::kTruncated, 1);
  std::vector<uint8_t> bytes = build(amd64(3));
  bytes.resize(27);
  expect_error(bytes, Errc::kTruncated, 27);
}

TEST(SframeSectionErrors, BadMagic) {
  expect_error(patched(build(amd64(3)), 0, {0xe2, 0xdf}), Errc::kBadMagic, 0);
  expect_error(patched(build(amd64(3)), 0, {0x00, 0x00}), Errc::kBadMagic, 0);
}

TEST(SframeSectionErrors, BadVersion) {
  expect_error(patched(build(amd64(3)), 2, {0}), Errc::kBadVersion, 2);
  expect_error(patched(build(amd64(3)), 2, {4}), Errc::kBadVersion, 2);
}

TEST(SframeSectionErrors, FlagsNotDefinedForTheVersion) {
  expect_error(patched(build(amd64(1)), 3, {0x5}), Errc::kBadFlags, 3);  // PCREL is not V1
  expect_error(patched(build(amd64(2)), 3, {0x9}), Errc::kBadFlags, 3);
  expect_error(patched(build(amd64(3)), 3, {0x3}), Errc::kBadFlags, 3);  // FRAME_POINTER is gone in V3
  // The defined ones are fine.
  EXPECT_TRUE(parses(patched(build(amd64(1)), 3, {0x3})));
  EXPECT_TRUE(parses(patched(build(amd64(2)), 3, {0x7})));
}

TEST(SframeSectionErrors, BadAbi) {
  expect_error(patched(build(amd64(3)), 4, {0}), Errc::kBadAbi, 4);
  expect_error(patched(build(amd64(3)), 4, {5}), Errc::kBadAbi, 4);
  expect_error(patched(build(amd64(3)), 4, {1}), Errc::kBadAbi, 4);  // AArch64 big-endian in little-endian data
  expect_error(patched(build(amd64(3)), 4, {4}), Errc::kBadAbi, 4);  // s390x is big-endian
  SectionSpec be = amd64(3);
  be.endian = Endian::kBig;
  expect_error(build(be), Errc::kBadAbi, 4);  // AMD64 in big-endian data
  SectionSpec s390_v1 = amd64(1);
  s390_v1.endian = Endian::kBig;
  s390_v1.abi = 4;
  expect_error(build(s390_v1), Errc::kBadAbi, 4);  // s390x arrived with V2
}

TEST(SframeSectionErrors, AuxiliaryHeader) {
  SectionSpec spec = amd64(3);
  spec.auxhdr_len = 4;
  expect_error(build(spec), Errc::kAuxHeader, 7);
}

std::vector<uint8_t> with_u32(std::vector<uint8_t> bytes, size_t at, uint32_t v) {  // little-endian
  for (int i = 0; i < 4; ++i) bytes.at(at + i) = static_cast<uint8_t>(v >> (8 * i));
  return bytes;
}

TEST(SframeSectionErrors, FdeTableOutOfBounds) {
  const std::vector<uint8_t> good = build(amd64(3));
  // fdeoff beyond freoff, or beyond the section.
  expect_error(with_u32(with_u32(good, 0x14, 32), 0x18, 16), Errc::kFdeTableOutOfBounds, 0x14);
  expect_error(with_u32(with_u32(good, 0x14, 0x100000), 0x18, 0x100000), Errc::kFdeTableOutOfBounds, 0x14);
  // A second FDE would overlap the FRE sub-section.
  expect_error(with_u32(good, 0x08, 2), Errc::kFdeTableOutOfBounds, 0x08);
  // A huge count is neither allocated nor looped on.
  expect_error(with_u32(good, 0x08, 0xffffffff), Errc::kFdeTableOutOfBounds, 0x08);
}

TEST(SframeSectionErrors, FreTableOutOfBounds) {
  const std::vector<uint8_t> good = build(amd64(2));
  expect_error(with_u32(good, 0x18, 0x7fffffff), Errc::kFreTableOutOfBounds, 0x18);
  expect_error(with_u32(good, 0x10, 0xffffffff), Errc::kFreTableOutOfBounds, 0x10);
  const uint32_t fre_len = static_cast<uint32_t>(good.size() - 28 - 20);
  expect_error(with_u32(good, 0x10, fre_len + 1), Errc::kFreTableOutOfBounds, 0x10);
}

TEST(SframeSectionErrors, FreCountMismatch) {
  SectionSpec spec = amd64(3);
  spec.num_fres = 5;
  expect_error(build(spec), Errc::kFreCountMismatch, 0x0c);
}

TEST(SframeSectionErrors, NotSorted) {
  SectionSpec spec = three_functions();
  std::swap(spec.fdes[1], spec.fdes[2]);
  Layout layout;
  const std::vector<uint8_t> bytes = build(spec, &layout);
  expect_error(bytes, Errc::kNotSorted, layout.fde_offsets[2]);
  // Equal starts are not sorted either (the kernel wants them strictly increasing).
  spec = three_functions();
  spec.fdes[2].start = spec.fdes[1].start;
  expect_built_error(spec, Errc::kNotSorted, [](const Layout& layout) { return layout.fde_offsets[2]; });
}

TEST(SframeSectionErrors, FreOffsetOutOfBounds) {
  SectionSpec spec = amd64(2);
  spec.fdes[0].fre_off = 1000;
  Layout layout;
  std::vector<uint8_t> bytes = build(spec, &layout);
  expect_error(bytes, Errc::kFreOffsetOutOfBounds, layout.fde_offsets[0] + 8);
  spec = amd64(3);
  spec.fdes[0].fre_off = 16;  // the 5-byte attribute record would pass fre_len (20)
  bytes = build(spec, &layout);
  expect_error(bytes, Errc::kFreOffsetOutOfBounds, layout.fde_offsets[0] + 12);
}

TEST(SframeSectionErrors, FreCountTooLarge) {
  SectionSpec spec = amd64(2);
  spec.fdes[0].num_fres = 0xffffffff;
  spec.num_fres = 0xffffffff;
  expect_built_error(spec, Errc::kFreCountTooLarge, [](const Layout& layout) { return layout.fde_offsets[0] + 12; });
  spec = amd64(3);
  spec.fdes[0].num_fres = 0xffff;
  expect_built_error(spec, Errc::kFreCountTooLarge, [](const Layout& layout) { return layout.attr_offsets[0]; });
}

TEST(SframeSectionErrors, BadFreType) {
  SectionSpec spec = amd64(2);
  spec.fdes[0].info = 3;
  expect_built_error(spec, Errc::kBadFreType, [](const Layout& layout) { return layout.fde_offsets[0] + 16; });
  spec = amd64(3);
  spec.fdes[0].info = 0x0f;
  expect_built_error(spec, Errc::kBadFreType, [](const Layout& layout) { return layout.attr_offsets[0] + 2; });
}

TEST(SframeSectionErrors, BadFdeType) {
  SectionSpec spec = amd64(3);
  spec.fdes[0].info2 = 2;
  expect_built_error(spec, Errc::kBadFdeType, [](const Layout& layout) { return layout.attr_offsets[0] + 3; });
  // The unused high bits of info2 are ignored, as libsframe and the kernel do.
  spec.fdes[0].info2 = 0xe0;
  EXPECT_TRUE(parses(build(spec)));
}

TEST(SframeSectionErrors, ZeroRepSize) {
  SectionSpec spec = plt(2);
  spec.fdes[0].rep_size = 0;
  expect_built_error(spec, Errc::kZeroRepSize, [](const Layout& layout) { return layout.fde_offsets[0] + 17; });
  spec = plt(3);
  spec.fdes[0].rep_size = 0;
  expect_built_error(spec, Errc::kZeroRepSize, [](const Layout& layout) { return layout.attr_offsets[0] + 4; });
}

TEST(SframeSectionErrors, FunctionWraps) {
  // Ending exactly at 2^64 is already one byte too far for a [begin, end) range.
  SectionSpec spec = amd64(3);
  spec.fdes[0].start = 0xffffffffffffffe0ull;
  spec.fdes[0].size = 0x20;
  expect_built_error(spec, Errc::kFunctionWraps, [](const Layout& layout) { return layout.fde_offsets[0]; });
  spec.fdes[0].size = 0x1f;
  spec.fdes[0].fres.back().start = 0x1e;
  EXPECT_TRUE(parses(build(spec)));
}

TEST(SframeSectionErrors, FreOutOfBounds) {
  SectionSpec spec = amd64(3);  // FREs of 3, 4, 4 and 4 bytes after the 5-byte attribute
  Layout layout;
  std::vector<uint8_t> bytes = build(spec, &layout);
  // fre_len ends inside the last FRE's data words...
  expect_error(with_u32(bytes, 0x10, 19), Errc::kFreOutOfBounds, layout.fre_offsets[0][3]);
  // ... or inside its info byte.
  expect_error(with_u32(bytes, 0x10, 17), Errc::kFreOutOfBounds, layout.fre_offsets[0][3]);
  // ... or before it starts.
  expect_error(with_u32(bytes, 0x10, 16), Errc::kFreOutOfBounds, layout.fre_offsets[0][3]);
}

TEST(SframeSectionErrors, BadDataWordSize) {
  SectionSpec spec = amd64(3);
  spec.fdes[0].fres[1].info = static_cast<uint8_t>(0x60 | (2 << 1) | 1);
  expect_built_error(spec, Errc::kBadDataWordSize, [](const Layout& layout) { return layout.fre_offsets[0][1] + 1; });
}

TEST(SframeSectionErrors, BadDataWordCount) {
  // AMD64 DEFAULT: CFA and FP only (the RA is fixed).
  SectionSpec spec = amd64(3);
  spec.fdes[0].fres[1] = fre(1, {16, -16, -24});
  expect_built_error(spec, Errc::kBadDataWordCount, [](const Layout& layout) { return layout.fre_offsets[0][1] + 1; });
  // AArch64 DEFAULT: at most CFA, RA, FP.
  spec.abi = 2;
  spec.fixed_ra = 0;
  spec.fdes[0].fres[1] = fre(1, {16, -16, -24, -32});
  expect_built_error(spec, Errc::kBadDataWordCount, [](const Layout& layout) { return layout.fre_offsets[0][1] + 1; });
  // V1 has no RA-undefined FRE.
  spec = amd64(1);
  spec.fdes[0].fres[1] = fre(1, {});
  expect_built_error(spec, Errc::kBadDataWordCount, [](const Layout& layout) { return layout.fre_offsets[0][1] + 1; });
  // FLEX: 1, 3 (CFA and a lone padding word), 4 with padding, 5 without, 7.
  for (std::vector<int64_t> words : {std::vector<int64_t>{ctrl(7, false)},
                                     {ctrl(7, false), 8, 0},
                                     {ctrl(7, false), 8, 0, ctrl(6, true)},
                                     {ctrl(7, false), 8, ctrl(3, false), 0, ctrl(6, true)},
                                     {ctrl(7, false), 8, ctrl(3, false), 0, 0, 1},
                                     {ctrl(7, false), 8, ctrl(3, false), 0, ctrl(6, true), 0, 0}}) {
    SCOPED_TRACE(words.size());
    spec = SectionSpec{};
    FdeSpec f;
    f.fde_type = 1;
    f.fres = {fre(0, words)};
    spec.fdes = {f};
    expect_built_error(spec, Errc::kBadDataWordCount, [](const Layout& layout) { return layout.fre_offsets[0][0] + 1; });
  }
}

TEST(SframeSectionErrors, FreStartOutOfRange) {
  SectionSpec spec = amd64(3);
  spec.fdes[0].fres[3].start = 0x21;  // the function is 0x20 bytes
  expect_built_error(spec, Errc::kFreStartOutOfRange, [](const Layout& layout) { return layout.fre_offsets[0][3]; });
  spec.fdes[0].fres[3].start = 0x20;  // at the end is allowed (libsframe PR 33131)
  EXPECT_TRUE(parses(build(spec)));
  spec = plt(2);
  spec.fdes[0].size = 8;  // one PCMASK block, shorter than the FREs reach
  expect_built_error(spec, Errc::kFreStartOutOfRange, [](const Layout& layout) { return layout.fre_offsets[0][2]; });
  spec = plt(2);
  spec.fdes[0].fres[2].start = 16;  // a PCMASK block is 16 bytes
  expect_built_error(spec, Errc::kFreStartOutOfRange, [](const Layout& layout) { return layout.fre_offsets[0][2]; });
}

TEST(SframeSectionErrors, FreNotIncreasing) {
  SectionSpec spec = amd64(3);
  spec.fdes[0].fres[2].start = 1;
  expect_built_error(spec, Errc::kFreNotIncreasing, [](const Layout& layout) { return layout.fre_offsets[0][2]; });
  spec.fdes[0].fres[2].start = 0;
  expect_built_error(spec, Errc::kFreNotIncreasing, [](const Layout& layout) { return layout.fre_offsets[0][2]; });
}

TEST(SframeSectionErrors, FlexCfaNeedsARegister) {
  SectionSpec spec;
  FdeSpec f;
  f.fde_type = 1;
  f.fres = {fre(0, {ctrl(0, true, false), 8})};  // *(CFA + 8) as the CFA
  spec.fdes = {f};
  expect_built_error(spec, Errc::kBadFlexControl, [](const Layout& layout) { return layout.fre_offsets[0][0] + 2; });
}

TEST(SframeSectionErrors, BadRegister) {
  SectionSpec spec;
  FdeSpec f;
  f.fde_type = 1;
  f.fres = {fre(0, {ctrl(7, false), 8, ctrl(0x10000, false), 0}, true, 4)};
  spec.fdes = {f};
  expect_built_error(spec, Errc::kBadRegister, [](const Layout& layout) { return layout.fre_offsets[0][0] + 2 + 8; });
  // V2 s390x: a negative odd word would be a negative register number.
  SectionSpec s390;
  s390.version = 2;
  s390.endian = Endian::kBig;
  s390.abi = 4;
  s390.fixed_ra = 0;
  FdeSpec g;
  g.fres = {fre(0, {0, -3})};
  s390.fdes = {g};
  expect_built_error(s390, Errc::kBadRegister, [](const Layout& layout) { return layout.fre_offsets[0][0] + 2 + 1; });
}

TEST(SframeSectionErrors, ConvertToFrameworkErrors) {
  EXPECT_EQ(to_framewalk_error(Error{Errc::kTruncated, 5}).code, ErrorCode::kTruncated);
  EXPECT_EQ(to_framewalk_error(Error{Errc::kTruncated, 5}).offset, 5u);
  EXPECT_EQ(to_framewalk_error(Error{Errc::kNotSorted, 0}).code, ErrorCode::kUnsortedTable);
  EXPECT_EQ(to_framewalk_error(Error{Errc::kNoFde, 0}).code, ErrorCode::kNotFound);
  EXPECT_EQ(to_framewalk_error(Error{Errc::kBadRegister, 0}).code, ErrorCode::kBadRegister);
  EXPECT_EQ(to_framewalk_error(Error{Errc::kBadMagic, 0}).code, ErrorCode::kBadLength);
  for (int c = 0; c <= static_cast<int>(Errc::kUnsupportedByDumper); ++c)
    EXPECT_STRNE(to_string(static_cast<Errc>(c)), "unknown SFrame error");
}

// Every prefix of a valid section is rejected cleanly, never read past.
TEST(SframeSectionErrors, EveryTruncationIsAnError) {
  for (uint8_t version : {1, 2, 3}) {
    const std::vector<uint8_t> bytes = build(plt(version));
    for (size_t n = 0; n < bytes.size(); ++n) {
      std::vector<uint8_t> cut(bytes.begin(), bytes.begin() + static_cast<long>(n));
      EXPECT_FALSE(Section::parse(cut, kAddress).ok()) << int(version) << " " << n;
    }
  }
}

}  // namespace
}  // namespace framewalk::sframe

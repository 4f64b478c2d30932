// The gmon.out reader on hand-written files: every record kind, both byte
// orders and address sizes, and each error with its offset.
#include "profile/gmon.hpp"

#include <gtest/gtest.h>

#include "profile/gmon_builder.hpp"

namespace framewalk::profile {
namespace {

using test::GmonBuilder;

GmonResult read(const GmonBuilder& b, unsigned address_size = 8, Endian endian = Endian::kLittle) {
  return read_gmon(Bytes(b.bytes().data(), b.bytes().size()), GmonLayout{address_size, endian});
}

TEST(Gmon, HeaderOnly) {
  GmonBuilder b;
  auto r = read(b);
  ASSERT_TRUE(r.ok()) << describe(r.error());
  EXPECT_EQ(r->version, 1u);
  EXPECT_TRUE(r->histograms.empty());
  EXPECT_TRUE(r->arcs.empty());
}

TEST(Gmon, ExactCallSitesAreMarkedInTheSpareBytes) {
  GmonBuilder plain;
  auto r = read(plain);
  ASSERT_TRUE(r.ok()) << describe(r.error());
  EXPECT_FALSE(r->exact_call_sites);  // glibc's: zero
  GmonBuilder marked;
  marked.exact_call_sites();
  auto m = read(marked);
  ASSERT_TRUE(m.ok()) << describe(m.error());
  EXPECT_TRUE(m->exact_call_sites);
}

TEST(Gmon, EveryRecordKind) {
  GmonBuilder b;
  b.histogram(0x1000, 0x1010, {1, 0, 7, 65535}).arc(0x1230, 0x1245, 3).arc(0x1230, 0x1245, 2).basic_blocks(
      {{0x1100, 9}, {0x1200, 1}});
  auto r = read(b);
  ASSERT_TRUE(r.ok()) << describe(r.error());
  ASSERT_EQ(r->histograms.size(), 1u);
  const GmonHistogram& h = r->histograms[0];
  EXPECT_EQ(h.low_pc, 0x1000u);
  EXPECT_EQ(h.high_pc, 0x1010u);
  EXPECT_EQ(h.rate, 100u);
  EXPECT_EQ(h.dimension, "seconds");
  EXPECT_EQ(h.abbreviation, 's');
  EXPECT_EQ(h.bins, (std::vector<uint16_t>{1, 0, 7, 65535}));
  EXPECT_EQ(h.offset, 20u);
  ASSERT_EQ(r->arcs.size(), 2u);  // repeats are kept; the call graph sums them
  EXPECT_EQ(r->arcs[0].from_pc, 0x1230u);
  EXPECT_EQ(r->arcs[0].self_pc, 0x1245u);
  EXPECT_EQ(r->arcs[0].count, 3u);
  EXPECT_EQ(r->arcs[0].offset, 20u + 41 + 8);
  ASSERT_EQ(r->basic_blocks.size(), 2u);
  EXPECT_EQ(r->basic_blocks[0].address, 0x1100u);
  EXPECT_EQ(r->basic_blocks[0].count, 9u);
}

TEST(Gmon, ThirtyTwoBitBigEndian) {
  GmonBuilder b(4, true);
  b.histogram(0x10000, 0x10008, {0, 5}).arc(0x10004, 0x10000, 42);
  auto r = read(b, 4, Endian::kBig);
  ASSERT_TRUE(r.ok()) << describe(r.error());
  EXPECT_EQ(r->histograms[0].bins, (std::vector<uint16_t>{0, 5}));
  EXPECT_EQ(r->arcs[0].count, 42u);
  EXPECT_EQ(r->arcs[0].from_pc, 0x10004u);
  // The same bytes as a little-endian file: the version is 0x01000000.
  auto wrong = read(b, 4, Endian::kLittle);
  ASSERT_FALSE(wrong.ok());
  EXPECT_EQ(wrong.error().code, GmonErrc::kUnsupportedVersion);
  EXPECT_EQ(wrong.error().value, 0x01000000u);
  EXPECT_EQ(describe(wrong.error()), "unsupported gmon.out version 16777216 at offset 0x4");
}

TEST(Gmon, SameRangeHistogramsAreSummedDisjointKept) {
  GmonBuilder b;
  b.histogram(0x1000, 0x1008, {1, 2}).histogram(0x1000, 0x1008, {3, 65535}).histogram(0x2000, 0x2004, {4});
  auto r = read(b);
  ASSERT_TRUE(r.ok()) << describe(r.error());
  ASSERT_EQ(r->histograms.size(), 2u);
  EXPECT_EQ(r->histogram_records, 3u);
  EXPECT_EQ(r->histograms[0].bins, (std::vector<uint16_t>{4, 65535}));  // saturated
  EXPECT_EQ(r->histograms[1].bins, (std::vector<uint16_t>{4}));
}

TEST(Gmon, VersionZeroAccepted) {
  GmonBuilder b(8, false, 0);
  b.arc(1, 2, 3);
  auto r = read(b);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->version, 0u);
  // ... but not its basic-block records, whose layout differs.
  GmonBuilder bb(8, false, 0);
  bb.basic_blocks({});
  auto e = read(bb);
  ASSERT_FALSE(e.ok());
  EXPECT_EQ(e.error().code, GmonErrc::kBadTag);
  EXPECT_EQ(e.error().offset, 20u);
}

struct Bad {
  const char* what;
  std::vector<uint8_t> bytes;
  GmonErrc code;
  uint64_t offset;
  std::string message;
};

std::vector<uint8_t> cut(const GmonBuilder& b, size_t drop) {
  return std::vector<uint8_t>(b.bytes().begin(), b.bytes().end() - static_cast<long>(drop));
}

TEST(Gmon, ErrorsNameTheOffset) {
  GmonBuilder hist;
  hist.histogram(0x1000, 0x1010, {1, 2, 3, 4});
  GmonBuilder arcs;
  arcs.arc(0x10, 0x20, 1).arc(0x30, 0x40, 2);
  GmonBuilder huge;
  huge.histogram_header(0, 0xffffffff, 0xffffffffu).bins({1, 2});
  GmonBuilder backwards;
  backwards.histogram(0x2000, 0x1000, {});
  GmonBuilder rate;
  rate.histogram(0x1000, 0x1008, {1, 2}).histogram(0x1000, 0x1008, {1, 2}, 1000);
  GmonBuilder overlap;
  overlap.histogram(0x1000, 0x1008, {1, 2}).histogram(0x1004, 0x100c, {1, 2});
  GmonBuilder tag;
  tag.arc(1, 2, 3).raw({7});
  GmonBuilder bb;
  bb.raw({2}).u32(0x10000000).address(1);
  const std::vector<Bad> cases = {
      {"empty", {}, GmonErrc::kBadMagic, 0, "not a gmon.out file (no \"gmon\" magic) at offset 0x0"},
      {"BSD-style", {0, 0x10, 0, 0, 0, 0x20, 0, 0}, GmonErrc::kBadMagic, 0, ""},
      {"header cut", {'g', 'm', 'o', 'n', 1, 0}, GmonErrc::kTruncated, 4, "truncated record at offset 0x4"},
      {"spare cut", cut(GmonBuilder(), 3), GmonErrc::kTruncated, 8, ""},
      {"version 2", GmonBuilder(8, false, 2).bytes(), GmonErrc::kUnsupportedVersion, 4,
       "unsupported gmon.out version 2 at offset 0x4"},
      {"bins cut", cut(hist, 3), GmonErrc::kHistogramPastEnd, 20 + 17, "histogram runs past the end of the file (4 bins) at offset 0x25"},
      {"histogram header cut", cut(hist, 8 + 10), GmonErrc::kTruncated, 20 + 25, ""},
      {"huge histogram", huge.bytes(), GmonErrc::kHistogramPastEnd, 37, ""},
      {"high below low", backwards.bytes(), GmonErrc::kBadHistogramRange, 21, ""},
      {"another rate", rate.bytes(), GmonErrc::kHistogramMismatch, 20 + 45, ""},
      {"overlapping ranges", overlap.bytes(), GmonErrc::kHistogramMismatch, 20 + 45, ""},
      {"arc cut in its count", cut(arcs, 1), GmonErrc::kTruncated, 20 + 21 + 17, ""},
      {"arc cut in its address", cut(arcs, 13), GmonErrc::kTruncated, 20 + 21 + 1, ""},
      {"unknown tag", tag.bytes(), GmonErrc::kBadTag, 41, "unknown record tag 7 at offset 0x29"},
      {"basic blocks past the end", bb.bytes(), GmonErrc::kBasicBlocksPastEnd, 21, ""},
  };
  for (const Bad& c : cases) {
    SCOPED_TRACE(c.what);
    auto r = read_gmon(Bytes(c.bytes.data(), c.bytes.size()), GmonLayout{});
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.error().code, c.code) << describe(r.error());
    EXPECT_EQ(r.error().offset, c.offset) << describe(r.error());
    if (!c.message.empty()) {
      EXPECT_EQ(describe(r.error()), c.message);
    }
  }
}

}  // namespace
}  // namespace framewalk::profile

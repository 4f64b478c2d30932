// .eh_frame_hdr: the header fields, every table encoding the binary search
// can use (and those it cannot), lookups and sortedness.
#include "dwarf/eh_frame_hdr.hpp"

#include <gtest/gtest.h>

#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include "support/section_builder.hpp"

namespace framewalk::dwarf {
namespace {

using test::SectionBuilder;

constexpr uint64_t kHdrAddress = 0x402000;
constexpr uint64_t kEhFrameAddress = 0x403000;

struct HdrSpec {
  uint8_t version = 1;
  uint8_t eh_frame_ptr_encoding = pe::kPcrel | pe::kSdata4;
  uint64_t eh_frame_ptr = kEhFrameAddress;
  uint8_t fde_count_encoding = pe::kUdata4;
  uint8_t table_encoding = pe::kDatarel | pe::kSdata4;
  std::vector<std::pair<uint64_t, uint64_t>> entries;  // initial PC, FDE address
  std::optional<uint64_t> fde_count;                   // overrides entries.size()
  uint8_t address_size = 8;
  Endian endian = Endian::kLittle;
};

std::vector<uint8_t> build(const HdrSpec& s) {
  SectionBuilder b(s.endian);
  PointerBases bases;
  bases.section_address = kHdrAddress;
  bases.data = kHdrAddress;
  bases.has_data = true;
  b.u8(s.version).u8(s.eh_frame_ptr_encoding).u8(s.fde_count_encoding).u8(s.table_encoding);
  if (s.eh_frame_ptr_encoding != pe::kOmit) b.encoded(s.eh_frame_ptr_encoding, s.eh_frame_ptr, s.address_size, bases);
  if (s.fde_count_encoding != pe::kOmit)
    b.encoded(s.fde_count_encoding, s.fde_count.value_or(s.entries.size()), s.address_size, bases);
  if (s.table_encoding != pe::kOmit) {
    for (const auto& [pc, fde] : s.entries) {
      b.encoded(s.table_encoding, pc, s.address_size, bases);
      b.encoded(s.table_encoding, fde, s.address_size, bases);
    }
  }
  return b.finish();
}

// The header keeps a view of its bytes: keep both together.
struct Parsed {
  std::vector<uint8_t> data;
  Result<EhFrameHdr> hdr = Error{ErrorCode::kNotFound, 0};
};

std::unique_ptr<Parsed> parse(const HdrSpec& s) {
  auto p = std::make_unique<Parsed>();
  p->data = build(s);
  p->hdr = EhFrameHdr::parse(p->data, s.endian, s.address_size, kHdrAddress);
  return p;
}

const std::vector<std::pair<uint64_t, uint64_t>> kEntries = {
    {0x401000, 0x403018}, {0x401100, 0x403030}, {0x401180, 0x403048}, {0x401400, 0x403060}};

void expect_entries(const EhFrameHdr& h, const std::vector<std::pair<uint64_t, uint64_t>>& want) {
  ASSERT_EQ(h.fde_count(), want.size());
  for (size_t i = 0; i < want.size(); ++i) {
    auto e = h.entry(i);
    ASSERT_TRUE(e.ok()) << i << ": " << to_string(e.error().code);
    EXPECT_EQ(e->initial_pc, want[i].first) << i;
    EXPECT_EQ(e->fde_address, want[i].second) << i;
  }
}

void expect_parse_error(const std::vector<uint8_t>& data, ErrorCode code, uint64_t offset,
                        uint8_t address_size = 8) {
  auto h = EhFrameHdr::parse(data, Endian::kLittle, address_size, kHdrAddress);
  ASSERT_FALSE(h.ok());
  EXPECT_EQ(h.error().code, code) << to_string(h.error().code);
  EXPECT_EQ(h.error().offset, offset);
}

TEST(EhFrameHdrTest, TheUsualLayout) {
  HdrSpec s;
  s.entries = kEntries;
  const auto data = build(s);
  ASSERT_EQ(data.size(), 12u + 8 * kEntries.size());
  auto h = EhFrameHdr::parse(data, Endian::kLittle, 8, kHdrAddress);
  ASSERT_TRUE(h.ok()) << to_string(h.error().code);
  EXPECT_EQ(h->version(), 1);
  EXPECT_EQ(h->eh_frame_address(), kEhFrameAddress);
  EXPECT_EQ(h->fde_count(), 4u);
  EXPECT_TRUE(h->has_table());
  EXPECT_EQ(h->table_encoding(), 0x3b);
  expect_entries(*h, kEntries);
  EXPECT_EQ(h->first_unsorted(), std::nullopt);
}

struct EncodingCase {
  uint8_t encoding;
  uint8_t address_size;
  std::vector<std::pair<uint64_t, uint64_t>> entries;
};

TEST(EhFrameHdrTest, EveryTableEncodingTheSearchCanUse) {
  const std::vector<std::pair<uint64_t, uint64_t>> small = {
      {kHdrAddress + 0x10, kHdrAddress + 0x20}, {kHdrAddress + 0x7000, kHdrAddress + 0x7ff0}};
  const std::vector<std::pair<uint64_t, uint64_t>> below = {
      {0x1000, 0x403018}, {0x401ffe, 0x403030}};  // negative datarel offsets
  const std::vector<std::pair<uint64_t, uint64_t>> above = {  // unsigned datarel offsets
      {kHdrAddress + 0x100, 0x403018}, {kHdrAddress + 0x80000000ull, 0x403030}};
  const std::vector<std::pair<uint64_t, uint64_t>> high = {
      {0xffffffff80001000ull, 0xffffffff80100000ull}, {0xffffffff80002000ull, 0xffffffff80100020ull}};
  const EncodingCase cases[] = {
      {pe::kDatarel | pe::kSdata4, 8, kEntries},
      {pe::kDatarel | pe::kSdata4, 8, below},
      {pe::kDatarel | pe::kUdata4, 8, above},
      {pe::kDatarel | pe::kSdata8, 8, below},
      {pe::kDatarel | pe::kSdata8, 8, high},
      {pe::kDatarel | pe::kUdata8, 8, kEntries},
      {pe::kDatarel | pe::kSdata2, 8, small},
      {pe::kDatarel | pe::kUdata2, 8, small},
      {pe::kUdata4, 8, kEntries},
      {pe::kUdata8, 8, high},
      {pe::kSdata8, 8, high},
      {pe::kSdata4, 8, high},  // sign-extended from 32 bits
      {pe::kUdata2, 8, {{0x100, 0x200}, {0x300, 0xffff}}},
      {pe::kAbsptr, 8, high},
      {pe::kAbsptr, 4, kEntries},
      {pe::kDatarel | pe::kSdata4, 4, kEntries},
      {pe::kPcrel | pe::kSdata4, 8, kEntries},
      {pe::kPcrel | pe::kSdata8, 8, high},
  };
  for (const EncodingCase& c : cases) {
    SCOPED_TRACE(testing::Message() << "encoding 0x" << std::hex << int{c.encoding} << " address size "
                                    << std::dec << int{c.address_size});
    HdrSpec s;
    s.table_encoding = c.encoding;
    s.address_size = c.address_size;
    s.entries = c.entries;
    const auto data = build(s);
    auto h = EhFrameHdr::parse(data, Endian::kLittle, c.address_size, kHdrAddress);
    ASSERT_TRUE(h.ok()) << to_string(h.error().code);
    EXPECT_TRUE(h->has_table());
    EXPECT_EQ(h->table_encoding(), c.encoding);
    expect_entries(*h, c.entries);
    auto hit = h->lookup(c.entries[1].first + 1);
    ASSERT_TRUE(hit.ok());
    EXPECT_EQ(hit->fde_address, c.entries[1].second);
  }
}

TEST(EhFrameHdrTest, BigEndian) {
  HdrSpec s;
  s.endian = Endian::kBig;
  s.entries = kEntries;
  s.table_encoding = pe::kDatarel | pe::kSdata8;
  const auto data = build(s);
  auto h = EhFrameHdr::parse(data, Endian::kBig, 8, kHdrAddress);
  ASSERT_TRUE(h.ok());
  EXPECT_EQ(h->eh_frame_address(), kEhFrameAddress);
  expect_entries(*h, kEntries);
  // Read as little-endian the same bytes give other values.
  auto wrong = EhFrameHdr::parse(data, Endian::kLittle, 8, kHdrAddress);
  EXPECT_TRUE(!wrong.ok() || wrong->eh_frame_address() != kEhFrameAddress);
}

TEST(EhFrameHdrTest, EncodingsWithoutABinarySearchTable) {
  // Variable-size, indirect or other-relative encodings cannot be searched.
  for (uint8_t enc : {pe::kUleb128, pe::kSleb128, uint8_t{pe::kDatarel | pe::kUleb128},
                      uint8_t{pe::kDatarel | pe::kSleb128}, uint8_t{pe::kTextrel | pe::kSdata4},
                      uint8_t{pe::kFuncrel | pe::kSdata4}, uint8_t{pe::kAligned},
                      uint8_t{pe::kIndirect | pe::kDatarel | pe::kSdata4}}) {
    SCOPED_TRACE(int{enc});
    HdrSpec s;
    s.table_encoding = enc;
    s.entries = {};  // the table bytes do not matter
    s.fde_count = 3;
    const auto data = build(s);
    auto h = EhFrameHdr::parse(data, Endian::kLittle, 8, kHdrAddress);
    ASSERT_TRUE(h.ok()) << to_string(h.error().code);
    EXPECT_EQ(h->fde_count(), 3u);
    EXPECT_FALSE(h->has_table());
    auto l = h->lookup(0x401000);
    ASSERT_FALSE(l.ok());
    EXPECT_EQ(l.error().code, ErrorCode::kNotFound);
    EXPECT_EQ(l.error().offset, 0u);
    EXPECT_EQ(h->first_unsorted(), std::nullopt);
    auto e = h->entry(0);
    ASSERT_FALSE(e.ok());
    EXPECT_EQ(e.error().code, ErrorCode::kNotFound);
  }
}

TEST(EhFrameHdrTest, OmittedCountOrTable) {
  HdrSpec no_count;
  no_count.fde_count_encoding = pe::kOmit;
  no_count.entries = kEntries;
  auto h_owner = parse(no_count);
  auto& h = h_owner->hdr;
  ASSERT_TRUE(h.ok());
  EXPECT_EQ(h->eh_frame_address(), kEhFrameAddress);
  EXPECT_EQ(h->fde_count(), 0u);
  EXPECT_FALSE(h->has_table());

  HdrSpec no_table;
  no_table.table_encoding = pe::kOmit;
  no_table.entries = kEntries;
  auto t_owner = parse(no_table);
  auto& t = t_owner->hdr;
  ASSERT_TRUE(t.ok());
  EXPECT_FALSE(t->has_table());
  EXPECT_EQ(t->table_encoding(), 0xff);

  HdrSpec empty;
  auto z_owner = parse(empty);
  auto& z = z_owner->hdr;
  ASSERT_TRUE(z.ok());
  EXPECT_EQ(z->fde_count(), 0u);
  EXPECT_FALSE(z->has_table());
}

TEST(EhFrameHdrTest, EhFramePointerEncodings) {
  for (uint8_t enc : {pe::kUdata4, pe::kUdata8, pe::kAbsptr, uint8_t{pe::kDatarel | pe::kSdata4},
                      uint8_t{pe::kPcrel | pe::kSdata8}, pe::kUleb128}) {
    HdrSpec s;
    s.eh_frame_ptr_encoding = enc;
    s.entries = kEntries;
    auto h_owner = parse(s);
  auto& h = h_owner->hdr;
    ASSERT_TRUE(h.ok()) << int{enc};
    EXPECT_EQ(h->eh_frame_address(), kEhFrameAddress) << int{enc};
    expect_entries(*h, kEntries);
  }
}

TEST(EhFrameHdrTest, BadVersion) {
  for (uint8_t v : {uint8_t{0}, uint8_t{2}, uint8_t{0xff}}) {
    HdrSpec s;
    s.version = v;
    expect_parse_error(build(s), ErrorCode::kBadEhFrameHdr, 0);
  }
}

TEST(EhFrameHdrTest, OmittedEhFramePointer) {
  HdrSpec s;
  s.eh_frame_ptr_encoding = pe::kOmit;
  expect_parse_error(build(s), ErrorCode::kBadEhFrameHdr, 1);
}

TEST(EhFrameHdrTest, BadEhFramePointerEncoding) {
  std::vector<uint8_t> data = {1, 0x0f, pe::kUdata4, 0x3b, 0, 0, 0, 0, 0, 0, 0, 0};
  expect_parse_error(data, ErrorCode::kBadPointerEncoding, 4);
  data[1] = 0x70 | pe::kUdata4;
  expect_parse_error(data, ErrorCode::kBadPointerEncoding, 4);
}

TEST(EhFrameHdrTest, Truncated) {
  expect_parse_error({}, ErrorCode::kTruncated, 0);
  expect_parse_error({1, 0x1b, 0x03}, ErrorCode::kTruncated, 3);
  expect_parse_error({1, 0x1b, 0x03, 0x3b, 0x00, 0x10}, ErrorCode::kTruncated, 4);
  expect_parse_error({1, 0x1b, 0x03, 0x3b, 0x00, 0x10, 0x00, 0x00, 0x04}, ErrorCode::kTruncated, 8);
}

TEST(EhFrameHdrTest, CountLargerThanTheTable) {
  HdrSpec s;
  s.entries = kEntries;
  s.fde_count = kEntries.size() + 1;
  expect_parse_error(build(s), ErrorCode::kBadEhFrameHdr, 12);
  s.fde_count = 0xffffffff;
  expect_parse_error(build(s), ErrorCode::kBadEhFrameHdr, 12);
  // Trailing bytes after the table are fine.
  s.fde_count.reset();
  auto data = build(s);
  data.push_back(0);
  data.push_back(0);
  auto h = EhFrameHdr::parse(data, Endian::kLittle, 8, kHdrAddress);
  ASSERT_TRUE(h.ok());
  EXPECT_EQ(h->fde_count(), kEntries.size());
}

TEST(EhFrameHdrTest, Lookup) {
  HdrSpec s;
  s.entries = kEntries;
  auto h_owner = parse(s);
  auto& h = h_owner->hdr;
  ASSERT_TRUE(h.ok());
  struct Case {
    uint64_t pc;
    uint64_t fde;
  } cases[] = {
      {0x401000, 0x403018}, {0x401001, 0x403018}, {0x4010ff, 0x403018}, {0x401100, 0x403030},
      {0x40117f, 0x403030}, {0x401180, 0x403048}, {0x401400, 0x403060}, {0xffffffffffffffffull, 0x403060},
  };
  for (const Case& c : cases) {
    auto e = h->lookup(c.pc);
    ASSERT_TRUE(e.ok()) << std::hex << c.pc;
    EXPECT_EQ(e->fde_address, c.fde) << std::hex << c.pc;
  }
}

TEST(EhFrameHdrTest, LookupBelowTheFirstEntry) {
  HdrSpec s;
  s.entries = kEntries;
  auto h_owner = parse(s);
  auto& h = h_owner->hdr;
  ASSERT_TRUE(h.ok());
  for (uint64_t pc : {uint64_t{0}, uint64_t{0x400fff}}) {
    auto e = h->lookup(pc);
    ASSERT_FALSE(e.ok());
    EXPECT_EQ(e.error().code, ErrorCode::kNotFound);
    EXPECT_EQ(e.error().offset, 12u);  // the table's offset
  }
}

TEST(EhFrameHdrTest, LookupWithOneEntry) {
  HdrSpec s;
  s.entries = {{0x401000, 0x403018}};
  auto h_owner = parse(s);
  auto& h = h_owner->hdr;
  ASSERT_TRUE(h.ok());
  EXPECT_EQ(h->lookup(0x401000)->fde_address, 0x403018u);
  EXPECT_EQ(h->lookup(0x500000)->fde_address, 0x403018u);
  EXPECT_FALSE(h->lookup(0x400fff).ok());
}

TEST(EhFrameHdrTest, EntryOutOfRange) {
  HdrSpec s;
  s.entries = kEntries;
  auto h_owner = parse(s);
  auto& h = h_owner->hdr;
  ASSERT_TRUE(h.ok());
  auto e = h->entry(4);
  ASSERT_FALSE(e.ok());
  EXPECT_EQ(e.error().code, ErrorCode::kNotFound);
  EXPECT_EQ(e.error().offset, 12u);
}

TEST(EhFrameHdrTest, UnsortedTableDetection) {
  HdrSpec s;
  s.entries = {{0x401000, 0x403018}, {0x401100, 0x403030}, {0x4010f0, 0x403048}, {0x401400, 0x403060}};
  auto h_owner = parse(s);
  auto& h = h_owner->hdr;
  ASSERT_TRUE(h.ok());
  EXPECT_EQ(h->first_unsorted(), std::optional<uint64_t>(2));
  s.entries = {{0x401100, 0x403018}, {0x401000, 0x403030}};
  auto h1_owner = parse(s);
  auto& h1 = h1_owner->hdr;
  EXPECT_EQ(h1->first_unsorted(), std::optional<uint64_t>(1));
  // Equal initial PCs are sorted.
  s.entries = {{0x401000, 0x403018}, {0x401000, 0x403030}, {0x401010, 0x403048}};
  auto h2_owner = parse(s);
  auto& h2 = h2_owner->hdr;
  EXPECT_EQ(h2->first_unsorted(), std::nullopt);
}

}  // namespace
}  // namespace framewalk::dwarf

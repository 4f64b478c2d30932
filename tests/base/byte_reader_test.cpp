#include "base/byte_reader.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <vector>

#include "support/section_builder.hpp"

namespace framewalk {
namespace {

using test::SectionBuilder;

// Asserts that `result` failed with `code` at `offset`.
#define EXPECT_ERROR(result, expected_code, expected_offset)                 \
  do {                                                                       \
    const auto& r_ = (result);                                               \
    ASSERT_FALSE(r_.ok());                                                   \
    EXPECT_EQ(r_.error().code, (expected_code)) << to_string(r_.error().code); \
    EXPECT_EQ(r_.error().offset, uint64_t{expected_offset});                 \
  } while (0)

std::vector<uint8_t> seq(int n) {
  std::vector<uint8_t> v;
  for (int i = 1; i <= n; ++i) v.push_back(static_cast<uint8_t>(i));
  return v;
}

// ---- fixed-width integers ---------------------------------------------------

TEST(ByteReaderTest, FixedWidthLittleEndian) {
  const std::vector<uint8_t> data = seq(15);
  ByteReader r(data, Endian::kLittle);
  EXPECT_EQ(*r.u8(), 0x01);
  EXPECT_EQ(*r.u16(), 0x0302);
  EXPECT_EQ(*r.u32(), 0x07060504u);
  EXPECT_EQ(*r.u64(), 0x0f0e0d0c0b0a0908ull);
  EXPECT_TRUE(r.at_end());
  EXPECT_EQ(r.offset(), 15u);
}

TEST(ByteReaderTest, FixedWidthBigEndian) {
  const std::vector<uint8_t> data = seq(15);
  ByteReader r(data, Endian::kBig);
  EXPECT_EQ(*r.u8(), 0x01);
  EXPECT_EQ(*r.u16(), 0x0203);
  EXPECT_EQ(*r.u32(), 0x04050607u);
  EXPECT_EQ(*r.u64(), 0x08090a0b0c0d0e0full);
  EXPECT_EQ(r.endian(), Endian::kBig);
}

TEST(ByteReaderTest, BuilderWritesBothByteOrders) {
  SectionBuilder b(Endian::kBig);
  b.u16(0x1234).u32(0x11223344, Endian::kLittle).u64(0x0102030405060708ull);
  const std::vector<uint8_t> want = {0x12, 0x34, 0x44, 0x33, 0x22, 0x11,
                                     1, 2, 3, 4, 5, 6, 7, 8};
  EXPECT_EQ(b.finish(), want);
}

TEST(ByteReaderTest, UnsignedOfSize) {
  const std::vector<uint8_t> data = {0xff, 0xfe, 0xff, 0x01, 0x02, 0x03, 0x04,
                                     1, 2, 3, 4, 5, 6, 7, 0x80};
  ByteReader r(data, Endian::kLittle);
  EXPECT_EQ(*r.unsigned_of_size(1), 0xffu);
  EXPECT_EQ(*r.unsigned_of_size(2), 0xfffeu);
  EXPECT_EQ(*r.unsigned_of_size(4), 0x04030201u);
  EXPECT_EQ(*r.address(8), 0x8007060504030201ull);
  ByteReader r2(data, Endian::kLittle, 0x20);
  EXPECT_ERROR(r2.unsigned_of_size(3), ErrorCode::kBadAddressSize, 0x20);
  EXPECT_ERROR(r2.address(0), ErrorCode::kBadAddressSize, 0x20);
}

TEST(ByteReaderTest, TruncatedFixedWidthReportsAbsoluteOffsetAndDoesNotMove) {
  const std::vector<uint8_t> data = {1, 2, 3};
  ByteReader r(data, Endian::kLittle, 100);
  ASSERT_TRUE(r.u8().ok());
  EXPECT_ERROR(r.u32(), ErrorCode::kTruncated, 101);
  EXPECT_EQ(r.offset(), 1u);  // the failed read consumed nothing
  EXPECT_ERROR(r.u64(), ErrorCode::kTruncated, 101);
  EXPECT_EQ(*r.u16(), 0x0302);
  EXPECT_ERROR(r.u8(), ErrorCode::kTruncated, 103);
  EXPECT_EQ(r.absolute_offset(), 103u);
}

TEST(ByteReaderTest, EmptyBuffer) {
  ByteReader r(Bytes{}, Endian::kBig, 7);
  EXPECT_TRUE(r.at_end());
  EXPECT_EQ(r.remaining(), 0u);
  EXPECT_ERROR(r.u8(), ErrorCode::kTruncated, 7);
  EXPECT_ERROR(r.uleb128(), ErrorCode::kTruncated, 7);
  EXPECT_ERROR(r.cstring(), ErrorCode::kTruncated, 7);
}

TEST(ByteReaderTest, SeekSkipBytesSplit) {
  const std::vector<uint8_t> data = seq(10);
  ByteReader r(data, Endian::kLittle, 0x1000);
  ASSERT_TRUE(r.seek(10).ok());
  EXPECT_TRUE(r.at_end());
  EXPECT_ERROR(r.seek(11), ErrorCode::kTruncated, 0x100a);
  ASSERT_TRUE(r.seek(2).ok());
  EXPECT_ERROR(r.skip(9), ErrorCode::kTruncated, 0x1002);
  ASSERT_TRUE(r.skip(1).ok());
  auto b = r.bytes(3);
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(b->size(), 3u);
  EXPECT_EQ((*b)[0], 4);
  EXPECT_ERROR(r.bytes(5), ErrorCode::kTruncated, 0x1006);

  auto sub = r.split(3);
  ASSERT_TRUE(sub.ok());
  EXPECT_EQ(sub->size(), 3u);
  EXPECT_EQ(sub->base_offset(), 0x1006u);
  EXPECT_EQ(r.offset(), 9u);
  EXPECT_EQ(*sub->u16(), 0x0807);
  EXPECT_EQ(*sub->u8(), 9);
  // The sub-reader's errors carry offsets in the enclosing buffer.
  EXPECT_ERROR(sub->u8(), ErrorCode::kTruncated, 0x1009);
  EXPECT_ERROR(r.split(2), ErrorCode::kTruncated, 0x1009);
}

// ---- LEB128 -----------------------------------------------------------------

struct UlebCase {
  std::vector<uint8_t> bytes;
  uint64_t value;
};

TEST(ByteReaderTest, Uleb128Values) {
  const UlebCase cases[] = {
      {{0x00}, 0},
      {{0x01}, 1},
      {{0x7f}, 127},
      {{0x80, 0x01}, 128},
      {{0xff, 0x01}, 255},
      {{0xe5, 0x8e, 0x26}, 624485},
      {{0x80, 0x80, 0x04}, 0x10000},
      {{0xff, 0xff, 0xff, 0xff, 0x0f}, 0xffffffffu},
      {{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f}, 0x7fffffffffffffffull},
      {{0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01}, 0x8000000000000000ull},
      {{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01}, ~uint64_t{0}},
      // Padded (non-minimal) encodings are valid up to ten bytes.
      {{0x80, 0x00}, 0},
      {{0xff, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x00}, 0x7f},
  };
  for (const UlebCase& c : cases) {
    ByteReader r(c.bytes, Endian::kLittle);
    auto v = r.uleb128();
    ASSERT_TRUE(v.ok()) << c.value;
    EXPECT_EQ(*v, c.value);
    EXPECT_TRUE(r.at_end()) << c.value;
    EXPECT_EQ(test::uleb_bytes(c.value).size() <= c.bytes.size(), true);
  }
}

TEST(ByteReaderTest, Uleb128RoundTripsThroughBuilder) {
  for (uint64_t v : {uint64_t{0}, uint64_t{127}, uint64_t{128}, uint64_t{16383}, uint64_t{16384},
                     uint64_t{0xdeadbeef}, ~uint64_t{0}}) {
    SectionBuilder b;
    b.uleb(v).uleb_padded(v == ~uint64_t{0} ? 1 : v, 10);
    const auto bytes = b.finish();
    ByteReader r(bytes, Endian::kBig);
    EXPECT_EQ(*r.uleb128(), v);
    EXPECT_EQ(*r.uleb128(), v == ~uint64_t{0} ? 1 : v);
    EXPECT_TRUE(r.at_end());
  }
}

TEST(ByteReaderTest, Uleb128ElevenBytesIsTooLong) {
  // Two bytes of something else, then 0 encoded in 11 bytes.
  std::vector<uint8_t> data = {0xaa, 0xbb};
  for (int i = 0; i < 10; ++i) data.push_back(0x80);
  data.push_back(0x00);
  ByteReader r(data, Endian::kLittle, 0x40);
  ASSERT_TRUE(r.skip(2).ok());
  EXPECT_ERROR(r.uleb128(), ErrorCode::kLeb128TooLong, 0x42);
}

TEST(ByteReaderTest, Uleb128OverflowingTenthByte) {
  // The tenth byte holds bit 63 only: 0x02 would be bit 64.
  const std::vector<uint8_t> data = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x02};
  ByteReader r(data, Endian::kLittle, 0x10);
  EXPECT_ERROR(r.uleb128(), ErrorCode::kLeb128TooLong, 0x10);
  // A tenth byte that continues is too long too.
  const std::vector<uint8_t> cont = {0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x81, 0x00};
  ByteReader r2(cont, Endian::kLittle);
  EXPECT_ERROR(r2.uleb128(), ErrorCode::kLeb128TooLong, 0);
}

TEST(ByteReaderTest, Uleb128TruncatedReportsItsStart) {
  const std::vector<uint8_t> data = {0x01, 0x02, 0x80, 0x80};
  ByteReader r(data, Endian::kLittle, 0x200);
  ASSERT_TRUE(r.skip(2).ok());
  EXPECT_ERROR(r.uleb128(), ErrorCode::kTruncated, 0x202);
}

struct SlebCase {
  std::vector<uint8_t> bytes;
  int64_t value;
};

TEST(ByteReaderTest, Sleb128Values) {
  const SlebCase cases[] = {
      {{0x00}, 0},
      {{0x01}, 1},
      {{0x3f}, 63},
      {{0xc0, 0x00}, 64},
      {{0xff, 0x00}, 127},
      {{0x80, 0x01}, 128},
      {{0x7f}, -1},
      {{0x40}, -64},
      {{0xbf, 0x7f}, -65},
      {{0x80, 0x7f}, -128},
      {{0xc0, 0xbb, 0x78}, -123456},
      {{0xff, 0xff, 0xff, 0xff, 0x07}, 0x7fffffff},
      {{0x80, 0x80, 0x80, 0x80, 0x78}, -0x80000000ll},
      {{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x00}, std::numeric_limits<int64_t>::max()},
      {{0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x7f}, std::numeric_limits<int64_t>::min()},
      // Padded encodings.
      {{0xff, 0x7f}, -1},
      {{0x80, 0x80, 0x00}, 0},
  };
  for (const SlebCase& c : cases) {
    ByteReader r(c.bytes, Endian::kLittle);
    auto v = r.sleb128();
    ASSERT_TRUE(v.ok()) << c.value;
    EXPECT_EQ(*v, c.value);
    EXPECT_TRUE(r.at_end()) << c.value;
  }
}

TEST(ByteReaderTest, Sleb128RoundTripsThroughBuilder) {
  for (int64_t v : {int64_t{0}, int64_t{-1}, int64_t{63}, int64_t{64}, int64_t{-64}, int64_t{-65},
                    int64_t{1} << 40, -(int64_t{1} << 40), std::numeric_limits<int64_t>::max(),
                    std::numeric_limits<int64_t>::min()}) {
    const auto bytes = test::sleb_bytes(v);
    ByteReader r(bytes, Endian::kLittle);
    EXPECT_EQ(*r.sleb128(), v);
    EXPECT_TRUE(r.at_end());
  }
  EXPECT_EQ(test::sleb_bytes(-65), (std::vector<uint8_t>{0xbf, 0x7f}));
  EXPECT_EQ(test::uleb_bytes(624485), (std::vector<uint8_t>{0xe5, 0x8e, 0x26}));
}

TEST(ByteReaderTest, Sleb128ElevenBytesIsTooLong) {
  std::vector<uint8_t> data = {0x00};
  for (int i = 0; i < 10; ++i) data.push_back(0xff);
  data.push_back(0x7f);  // -1 in 11 bytes
  ByteReader r(data, Endian::kLittle, 0x30);
  ASSERT_TRUE(r.skip(1).ok());
  EXPECT_ERROR(r.sleb128(), ErrorCode::kLeb128TooLong, 0x31);
}

TEST(ByteReaderTest, Sleb128OverflowingTenthByte) {
  // The tenth byte carries bit 63 and the sign: only 0x00 and 0x7f fit 64 bits.
  for (uint8_t last : {uint8_t{0x01}, uint8_t{0x02}, uint8_t{0x40}, uint8_t{0x7e}}) {
    std::vector<uint8_t> data(9, 0x80);
    data.push_back(last);
    ByteReader r(data, Endian::kLittle, 0x50);
    EXPECT_ERROR(r.sleb128(), ErrorCode::kLeb128TooLong, 0x50);
  }
}

TEST(ByteReaderTest, Sleb128TruncatedReportsItsStart) {
  const std::vector<uint8_t> data = {0x7f, 0xff, 0xff};
  ByteReader r(data, Endian::kLittle, 0x300);
  EXPECT_EQ(*r.sleb128(), -1);
  EXPECT_ERROR(r.sleb128(), ErrorCode::kTruncated, 0x301);
}

// ---- initial length -----------------------------------------------------------

TEST(ByteReaderTest, InitialLength32) {
  SectionBuilder b(Endian::kBig);
  b.u32(0x12345678);
  const auto data = b.finish();
  ByteReader r(data, Endian::kBig);
  auto len = r.initial_length();
  ASSERT_TRUE(len.ok());
  EXPECT_EQ(len->length, 0x12345678u);
  EXPECT_FALSE(len->is_dwarf64);
  EXPECT_EQ(len->header_size, 4);
  EXPECT_EQ(r.offset(), 4u);
}

TEST(ByteReaderTest, InitialLength64) {
  SectionBuilder b;
  b.u32(0xffffffffu).u64(0x123456789aull);
  const auto data = b.finish();
  ByteReader r(data, Endian::kLittle);
  auto len = r.initial_length();
  ASSERT_TRUE(len.ok());
  EXPECT_EQ(len->length, 0x123456789aull);
  EXPECT_TRUE(len->is_dwarf64);
  EXPECT_EQ(len->header_size, 12);
  EXPECT_EQ(r.offset(), 12u);
}

TEST(ByteReaderTest, InitialLengthReservedValues) {
  for (uint32_t reserved : {0xfffffff0u, 0xfffffff8u, 0xfffffffeu}) {
    SectionBuilder b;
    b.u32(7).u32(reserved).u64(0);
    const auto data = b.finish();
    ByteReader r(data, Endian::kLittle, 0x100);
    ASSERT_TRUE(r.skip(4).ok());
    EXPECT_ERROR(r.initial_length(), ErrorCode::kBadLength, 0x104);
  }
  // The largest ordinary value is fine.
  SectionBuilder b;
  b.u32(0xffffffefu);
  const auto data = b.finish();
  ByteReader r(data, Endian::kLittle);
  EXPECT_EQ(r.initial_length()->length, 0xffffffefu);
}

TEST(ByteReaderTest, InitialLengthTruncated) {
  const std::vector<uint8_t> short32 = {0x10, 0x00, 0x00};
  ByteReader r(short32, Endian::kLittle, 8);
  EXPECT_ERROR(r.initial_length(), ErrorCode::kTruncated, 8);
  const std::vector<uint8_t> short64 = {0xff, 0xff, 0xff, 0xff, 1, 2, 3, 4, 5, 6, 7};
  ByteReader r64(short64, Endian::kLittle, 8);
  EXPECT_ERROR(r64.initial_length(), ErrorCode::kTruncated, 12);
}

// ---- DW_EH_PE pointers --------------------------------------------------------

TEST(ByteReaderTest, EncodedSize) {
  EXPECT_EQ(ByteReader::encoded_size(pe::kAbsptr, 4), 4);
  EXPECT_EQ(ByteReader::encoded_size(pe::kAbsptr, 8), 8);
  EXPECT_EQ(ByteReader::encoded_size(pe::kUdata2, 8), 2);
  EXPECT_EQ(ByteReader::encoded_size(pe::kSdata2 | pe::kPcrel, 8), 2);
  EXPECT_EQ(ByteReader::encoded_size(pe::kUdata4, 8), 4);
  EXPECT_EQ(ByteReader::encoded_size(pe::kSdata4 | pe::kDatarel, 8), 4);
  EXPECT_EQ(ByteReader::encoded_size(pe::kUdata8, 4), 8);
  EXPECT_EQ(ByteReader::encoded_size(pe::kSdata8, 4), 8);
  EXPECT_EQ(ByteReader::encoded_size(pe::kUleb128, 8), 0);
  EXPECT_EQ(ByteReader::encoded_size(pe::kSleb128, 8), 0);
  for (uint8_t bad : {0x05, 0x06, 0x07, 0x08, 0x0d, 0x0e, 0x0f})
    EXPECT_EQ(ByteReader::encoded_size(bad, 8), -1) << int{bad};
}

struct PointerCase {
  uint8_t encoding;
  unsigned address_size;
  std::vector<uint8_t> bytes;  // little-endian
  uint64_t value;
};

TEST(ByteReaderTest, EncodedPointerFormats) {
  const PointerCase cases[] = {
      {pe::kAbsptr, 4, {0x78, 0x56, 0x34, 0x12}, 0x12345678},
      {pe::kAbsptr, 8, {8, 7, 6, 5, 4, 3, 2, 0x81}, 0x8102030405060708ull},
      {pe::kUleb128, 8, {0xe5, 0x8e, 0x26}, 624485},
      {pe::kUdata2, 8, {0xfe, 0xff}, 0xfffe},
      {pe::kUdata4, 8, {0xfc, 0xff, 0xff, 0xff}, 0xfffffffc},
      {pe::kUdata8, 8, {1, 0, 0, 0, 0, 0, 0, 0x80}, 0x8000000000000001ull},
      {pe::kSleb128, 8, {0xbf, 0x7f}, static_cast<uint64_t>(-65)},
      {pe::kSdata2, 8, {0xfe, 0xff}, static_cast<uint64_t>(-2)},
      {pe::kSdata2, 8, {0xff, 0x7f}, 0x7fff},
      {pe::kSdata4, 8, {0xfc, 0xff, 0xff, 0xff}, static_cast<uint64_t>(-4)},
      {pe::kSdata8, 8, {0xf8, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}, static_cast<uint64_t>(-8)},
      // With 4-byte addresses every value is truncated to 32 bits.
      {pe::kSdata4, 4, {0xfc, 0xff, 0xff, 0xff}, 0xfffffffc},
      {pe::kSdata2, 4, {0xfe, 0xff}, 0xfffffffe},
      {pe::kUdata8, 4, {1, 2, 3, 4, 5, 6, 7, 8}, 0x04030201},
  };
  for (const PointerCase& c : cases) {
    SCOPED_TRACE(testing::Message() << "encoding 0x" << std::hex << int{c.encoding} << " size "
                                    << c.address_size);
    std::vector<uint8_t> data = c.bytes;
    data.push_back(0xee);  // a following byte must not be consumed
    ByteReader r(data, Endian::kLittle);
    PointerBases bases;
    auto v = r.encoded_pointer(c.encoding, c.address_size, bases);
    ASSERT_TRUE(v.ok()) << to_string(v.error().code);
    EXPECT_EQ(*v, c.value);
    EXPECT_EQ(r.offset(), c.bytes.size());
  }
}

TEST(ByteReaderTest, EncodedPointerBigEndian) {
  const std::vector<uint8_t> data = {0xff, 0xfe, 0x12, 0x34, 0x56, 0x78, 0x00, 0x00, 0x00, 0x00,
                                     0x00, 0x00, 0x10, 0x00};
  ByteReader r(data, Endian::kBig);
  PointerBases bases;
  EXPECT_EQ(*r.encoded_pointer(pe::kSdata2, 8, bases), static_cast<uint64_t>(-2));
  EXPECT_EQ(*r.encoded_pointer(pe::kAbsptr, 4, bases), 0x12345678u);
  EXPECT_EQ(*r.encoded_pointer(pe::kUdata8, 8, bases), 0x1000u);
}

TEST(ByteReaderTest, EncodedPointerPcrel) {
  // The pcrel base is the section address plus the field's absolute offset.
  SectionBuilder b;
  b.zeros(4).u32(static_cast<uint32_t>(-0x20));
  const auto data = b.finish();
  ByteReader r(data, Endian::kLittle, 0x10);
  ASSERT_TRUE(r.skip(4).ok());
  PointerBases bases;
  bases.section_address = 0x400000;
  auto v = r.encoded_pointer(pe::kPcrel | pe::kSdata4, 8, bases);
  ASSERT_TRUE(v.ok());
  EXPECT_EQ(*v, 0x400000u + 0x14 - 0x20);
  EXPECT_EQ(r.offset(), 8u);
}

TEST(ByteReaderTest, EncodedPointerPcrelWrapsAt32Bits) {
  const std::vector<uint8_t> data = {0x00, 0x00, 0x00, 0x80};  // sdata4 -0x80000000
  ByteReader r(data, Endian::kLittle);
  PointerBases bases;
  bases.section_address = 0x1000;
  EXPECT_EQ(*r.encoded_pointer(pe::kPcrel | pe::kSdata4, 4, bases), 0x80001000u);
  ByteReader r8(data, Endian::kLittle);
  EXPECT_EQ(*r8.encoded_pointer(pe::kPcrel | pe::kSdata4, 8, bases), 0xffffffff80001000ull);
}

TEST(ByteReaderTest, EncodedPointerTextDataFuncRelative) {
  const std::vector<uint8_t> data = {0x10, 0x00, 0xf0, 0xff, 0x08, 0x00};
  PointerBases bases;
  bases.text = 0x1000;
  bases.has_text = true;
  bases.data = 0x2000;
  bases.has_data = true;
  bases.func = 0x3000;
  bases.has_func = true;
  ByteReader r(data, Endian::kLittle);
  EXPECT_EQ(*r.encoded_pointer(pe::kTextrel | pe::kUdata2, 8, bases), 0x1010u);
  EXPECT_EQ(*r.encoded_pointer(pe::kDatarel | pe::kSdata2, 8, bases), 0x1ff0u);
  EXPECT_EQ(*r.encoded_pointer(pe::kFuncrel | pe::kUleb128, 8, bases), 0x3008u);
  EXPECT_EQ(*r.encoded_pointer(pe::kFuncrel | pe::kSleb128, 8, bases), 0x3000u);
  EXPECT_TRUE(r.at_end());
}

TEST(ByteReaderTest, EncodedPointerAligned) {
  // One byte in, then an aligned absptr: skips to the next 8-byte boundary.
  SectionBuilder b;
  b.u8(0xaa).zeros(7).u64(0x1122334455667788ull).u8(0xbb);
  const auto data = b.finish();
  ByteReader r(data, Endian::kLittle);
  ASSERT_TRUE(r.skip(1).ok());
  PointerBases bases;
  bases.section_address = 0x1000;
  EXPECT_EQ(*r.encoded_pointer(pe::kAligned, 8, bases), 0x1122334455667788ull);
  EXPECT_EQ(r.offset(), 16u);
  // Alignment is of the run-time address: a section at ...4 aligns differently.
  SectionBuilder b4;
  b4.zeros(4).u32(0xcafef00d);
  const auto d4 = b4.finish();
  bases.section_address = 0x1004;
  ByteReader r4(d4, Endian::kLittle);
  EXPECT_EQ(*r4.encoded_pointer(pe::kAligned, 4, bases), 0u);  // 0x1004 is 4-aligned
  EXPECT_EQ(r4.offset(), 4u);
  ByteReader r4b(d4, Endian::kLittle);
  EXPECT_EQ(*r4b.encoded_pointer(pe::kAligned | pe::kUdata4, 8, bases), 0xcafef00du);
  EXPECT_EQ(r4b.offset(), 8u);
  // Already aligned: nothing is skipped.
  ByteReader r0(data, Endian::kLittle);
  bases.section_address = 0;
  EXPECT_EQ(*r0.encoded_pointer(pe::kAligned, 8, bases), 0xaau);
  // No room to align.
  ByteReader rt(data, Endian::kLittle);
  ASSERT_TRUE(rt.seek(17).ok());
  EXPECT_ERROR(rt.encoded_pointer(pe::kAligned, 8, bases), ErrorCode::kTruncated, 17);
  ByteReader rz(data, Endian::kLittle);
  EXPECT_ERROR(rz.encoded_pointer(pe::kAligned, 0, bases), ErrorCode::kBadAddressSize, 0);
}

TEST(ByteReaderTest, EncodedPointerBuilderRoundTrip) {
  PointerBases bases;
  bases.section_address = 0x7000;
  bases.text = 0x1000;
  bases.has_text = true;
  bases.data = 0x9000;
  bases.has_data = true;
  bases.func = 0x6f00;
  bases.has_func = true;
  const uint8_t encodings[] = {
      pe::kAbsptr, pe::kUleb128, pe::kUdata4, pe::kUdata8, pe::kSleb128, pe::kSdata4, pe::kSdata8,
      pe::kPcrel | pe::kSdata4, pe::kPcrel | pe::kSleb128, pe::kPcrel | pe::kSdata8,
      pe::kTextrel | pe::kUdata4, pe::kDatarel | pe::kSdata4, pe::kDatarel | pe::kSleb128,
      pe::kFuncrel | pe::kUdata2, pe::kAligned, pe::kAligned | pe::kUdata4};
  for (uint8_t enc : encodings) {
    SectionBuilder b;
    b.u8(1).encoded(enc, 0x7010, 8, bases).u8(0xee);
    const auto data = b.finish();
    ByteReader r(data, Endian::kLittle);
    ASSERT_TRUE(r.skip(1).ok());
    auto v = r.encoded_pointer(enc, 8, bases);
    ASSERT_TRUE(v.ok()) << int{enc};
    EXPECT_EQ(*v, 0x7010u) << int{enc};
    EXPECT_EQ(*r.u8(), 0xee) << int{enc};
  }
}

TEST(ByteReaderTest, EncodedPointerIndirect) {
  const std::vector<uint8_t> data = {0x00, 0x10, 0x00, 0x00, 0x00, 0x20, 0x00, 0x00};
  PointerBases bases;
  bases.section_address = 0x100;
  ByteReader r(data, Endian::kLittle);
  bool indirect = false;
  // pcrel|indirect|sdata4: the value is the address of the pointer, flagged indirect.
  auto v = r.encoded_pointer(pe::kIndirect | pe::kPcrel | pe::kSdata4, 8, bases, &indirect);
  ASSERT_TRUE(v.ok());
  EXPECT_EQ(*v, 0x1100u);
  EXPECT_TRUE(indirect);
  // A direct pointer clears the flag.
  v = r.encoded_pointer(pe::kUdata4, 8, bases, &indirect);
  ASSERT_TRUE(v.ok());
  EXPECT_EQ(*v, 0x2000u);
  EXPECT_FALSE(indirect);
  // Without a flag to report it through, indirect is an error at the field.
  ByteReader r2(data, Endian::kLittle, 0x40);
  ASSERT_TRUE(r2.skip(4).ok());
  EXPECT_ERROR(r2.encoded_pointer(pe::kIndirect | pe::kUdata4, 8, bases), ErrorCode::kIndirectPointer, 0x44);
}

TEST(ByteReaderTest, EncodedPointerMissingBase) {
  const std::vector<uint8_t> data = {0, 0, 0, 0, 0, 0, 0, 0};
  struct Case {
    uint8_t encoding;
  } cases[] = {{pe::kPcrel | pe::kSdata4}, {pe::kTextrel | pe::kSdata4},
               {pe::kDatarel | pe::kSdata4}, {pe::kFuncrel | pe::kUdata4}};
  for (const Case& c : cases) {
    PointerBases bases;
    bases.has_section_address = false;
    ByteReader r(data, Endian::kLittle, 0x30);
    ASSERT_TRUE(r.skip(2).ok());
    EXPECT_ERROR(r.encoded_pointer(c.encoding, 8, bases), ErrorCode::kPointerEncodingNoBase, 0x32);
  }
  // Each base is independent.
  PointerBases only_text;
  only_text.has_text = true;
  only_text.text = 0x5000;
  ByteReader r(data, Endian::kLittle);
  EXPECT_EQ(*r.encoded_pointer(pe::kTextrel | pe::kUdata2, 8, only_text), 0x5000u);
  EXPECT_EQ(*r.encoded_pointer(pe::kPcrel | pe::kUdata2, 8, only_text), 2u);
  EXPECT_ERROR(r.encoded_pointer(pe::kDatarel | pe::kUdata2, 8, only_text),
               ErrorCode::kPointerEncodingNoBase, 4);
}

TEST(ByteReaderTest, EncodedPointerBadEncodings) {
  const std::vector<uint8_t> data = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};
  PointerBases bases;
  for (uint8_t format : {0x05, 0x06, 0x07, 0x08, 0x0d, 0x0e, 0x0f}) {
    ByteReader r(data, Endian::kLittle, 0x20);
    ASSERT_TRUE(r.skip(1).ok());
    EXPECT_ERROR(r.encoded_pointer(format, 8, bases), ErrorCode::kBadPointerEncoding, 0x21);
  }
  for (uint8_t application : {0x60, 0x70}) {
    ByteReader r(data, Endian::kLittle, 0x20);
    ASSERT_TRUE(r.skip(3).ok());
    EXPECT_ERROR(r.encoded_pointer(application | pe::kUdata4, 8, bases),
                 ErrorCode::kBadPointerEncoding, 0x23);
  }
  ByteReader r(data, Endian::kLittle, 0x20);
  EXPECT_ERROR(r.encoded_pointer(pe::kOmit, 8, bases), ErrorCode::kBadPointerEncoding, 0x20);
}

TEST(ByteReaderTest, EncodedPointerTruncated) {
  const std::vector<uint8_t> data = {0x01, 0x02, 0x03, 0x80};
  PointerBases bases;
  for (uint8_t enc : {pe::kUdata8, pe::kSdata8, pe::kAbsptr}) {
    ByteReader r(data, Endian::kLittle, 0x60);
    EXPECT_ERROR(r.encoded_pointer(enc, 8, bases), ErrorCode::kTruncated, 0x60);
  }
  ByteReader r(data, Endian::kLittle, 0x60);
  ASSERT_TRUE(r.skip(3).ok());
  EXPECT_ERROR(r.encoded_pointer(pe::kUleb128, 8, bases), ErrorCode::kTruncated, 0x63);
}

// ---- strings --------------------------------------------------------------------

TEST(ByteReaderTest, Cstring) {
  SectionBuilder b;
  b.str("zPLR").str("").raw("tail");
  const auto data = b.finish();
  ByteReader r(data, Endian::kLittle, 0x10);
  auto s = r.cstring();
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(*s, "zPLR");
  EXPECT_EQ(r.offset(), 5u);
  EXPECT_EQ(*r.cstring(), "");
  EXPECT_EQ(r.offset(), 6u);
  // No terminator before the end of the buffer: an error, and nothing consumed.
  EXPECT_ERROR(r.cstring(), ErrorCode::kTruncated, 0x16);
  EXPECT_EQ(r.offset(), 6u);
  EXPECT_EQ(r.remaining(), 4u);
}

TEST(ByteReaderTest, CstringTerminatorOutsideSubReader) {
  // A string whose NUL lies just past a split boundary is unterminated there.
  const std::vector<uint8_t> data = {'a', 'b', 'c', 0};
  ByteReader r(data, Endian::kLittle);
  auto sub = r.split(3);
  ASSERT_TRUE(sub.ok());
  EXPECT_ERROR(sub->cstring(), ErrorCode::kTruncated, 0);
}

TEST(ByteReaderTest, ErrorCodesHaveNames) {
  EXPECT_STREQ(to_string(ErrorCode::kTruncated), "truncated data");
  EXPECT_STREQ(to_string(ErrorCode::kUnsortedTable), ".eh_frame_hdr table is not sorted");
  EXPECT_STREQ(to_string(ErrorCode::kArchiveMemberPastEnd), "archive member runs past the end of the archive");
  EXPECT_STREQ(to_string(static_cast<ErrorCode>(9999)), "unknown error");
}

}  // namespace
}  // namespace framewalk

#include "ehabi/exidx.hpp"

#include <gtest/gtest.h>

#include <vector>

namespace framewalk::ehabi {
namespace {

std::vector<uint8_t> words_le(std::vector<uint32_t> words) {
  std::vector<uint8_t> out;
  for (uint32_t w : words)
    for (int i = 0; i < 4; ++i) out.push_back(static_cast<uint8_t>(w >> (8 * i)));
  return out;
}

TEST(EhabiPrel31, SignExtendsFromBit30AndIgnoresBit31) {
  EXPECT_EQ(prel31_target(0x00000010, 0x1000), 0x1010u);
  EXPECT_EQ(prel31_target(0x7ffffff0, 0x1000), 0x1000u - 0x10);
  EXPECT_EQ(prel31_target(0x80000010, 0x1000), 0x1010u);
}

TEST(EhabiIndex, EveryEntryKind) {
  // At 0x20000: cantunwind, inline compact, pointer into extab (+0x100 from the word).
  const auto bytes = words_le({0x7fff0000, 0x1, 0x7fff0100, 0x80aab0b0, 0x7fff0200, 0x00000100});
  const IndexTable table({bytes, 0x20000, Endian::kLittle});
  ASSERT_EQ(table.size(), 3u);
  auto a = table.entry(0);
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(a->kind, EntryKind::kCantUnwind);
  EXPECT_EQ(a->function, 0x20000u - 0x10000);
  auto b = table.entry(1);
  EXPECT_EQ(b->kind, EntryKind::kInline);
  EXPECT_EQ(b->data_word, 0x80aab0b0u);
  EXPECT_EQ(b->function, 0x20008u - 0x10000 + 0x100);
  auto c = table.entry(2);
  EXPECT_EQ(c->kind, EntryKind::kTable);
  EXPECT_EQ(c->table, 0x20014u + 0x100);
  EXPECT_FALSE(c->corrupt_function_word());
  EXPECT_EQ(table.entry(3).error().code, ErrorCode::kTruncated);
  EXPECT_EQ(table.entry(3).error().offset, 24u);
}

TEST(EhabiIndex, TrailingBytesAndCorruptFunctionWord) {
  auto bytes = words_le({0x80000004, 0x1});
  bytes.push_back(0);
  const IndexTable table({bytes, 0, Endian::kLittle});
  EXPECT_EQ(table.size(), 1u);
  EXPECT_TRUE(table.entry(0)->corrupt_function_word());
}

TEST(EhabiIndex, BigEndianWords) {
  const std::vector<uint8_t> bytes{0x00, 0x00, 0x00, 0x10, 0x00, 0x00, 0x00, 0x01};
  const IndexTable table({bytes, 0x100, Endian::kBig});
  EXPECT_EQ(table.entry(0)->function, 0x110u);
  EXPECT_EQ(table.entry(0)->kind, EntryKind::kCantUnwind);
}

TEST(EhabiEntry, CompactIndexZeroHasThreeBytes) {
  const EntryHeader h = read_header(0x8002afb0, 0);
  EXPECT_EQ(h.model, Model::kCompact);
  EXPECT_EQ(h.personality_index, 0);
  const OpcodeBytes b = compact_opcodes(h, nullptr, 4);
  EXPECT_EQ(b.bytes, (std::vector<uint8_t>{0x02, 0xaf, 0xb0}));
  EXPECT_FALSE(b.cut_short);
}

TEST(EhabiEntry, CompactLongFormReadsItsExtraWords) {
  const auto bytes = words_le({0x81010c3f, 0x8400b0b0});
  const SectionWords words{bytes, 0x5000, Endian::kLittle};
  const EntryHeader h = read_header(*words.word(0), 0x5000);
  EXPECT_EQ(h.personality_index, 1);
  const OpcodeBytes b = compact_opcodes(h, &words, 0);
  EXPECT_EQ(b.bytes, (std::vector<uint8_t>{0x0c, 0x3f, 0x84, 0x00, 0xb0, 0xb0}));
  EXPECT_EQ(b.offset_of_byte(0), 0u);
  EXPECT_EQ(b.offset_of_byte(2), 4u);
}

TEST(EhabiEntry, DeclaredWordsPastTheSectionCutTheBytesShort) {
  const auto bytes = words_le({0x82030c3f, 0x8400b0b0});
  const SectionWords words{bytes, 0, Endian::kLittle};
  const OpcodeBytes b = compact_opcodes(read_header(*words.word(0), 0), &words, 0);
  EXPECT_TRUE(b.cut_short);
  EXPECT_EQ(b.missing_word, 8u);
  EXPECT_EQ(b.bytes.size(), 6u);
  // Inline entries have no words to follow.
  const OpcodeBytes inline_long = compact_opcodes(read_header(0x81010c3f, 0), nullptr, 12);
  EXPECT_TRUE(inline_long.cut_short);
  EXPECT_EQ(inline_long.missing_word, 16u);
}

TEST(EhabiEntry, ReservedAndCorruptCompactWords) {
  EXPECT_EQ(read_header(0x83000000, 0).personality_index, 3);
  EXPECT_TRUE(compact_opcodes(read_header(0x83b0b0b0, 0), nullptr, 0).bytes.empty());
  const EntryHeader corrupt = read_header(0x90000000, 0);
  EXPECT_TRUE(corrupt.corrupt_compact_word);
  EXPECT_EQ(corrupt.personality_index, 0x10);
  EXPECT_FALSE(read_header(0x8f000000, 0).corrupt_compact_word);
}

TEST(EhabiEntry, GenericGnuPersonality) {
  // Personality at 0x9000 - 0x10 (prel31 from 0x9000), then N=1, three bytes, one word.
  const auto bytes = words_le({0x7ffffff0, 0x01a0b0b0, 0x8400b0b0});
  const SectionWords words{bytes, 0x9000, Endian::kLittle};
  const EntryHeader h = read_header(*words.word(0), 0x9000);
  EXPECT_EQ(h.model, Model::kGeneric);
  EXPECT_EQ(h.personality, 0x8ff0u);
  auto b = gnu_personality_opcodes(words, 0);
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(b->bytes, (std::vector<uint8_t>{0xa0, 0xb0, 0xb0, 0x84, 0x00, 0xb0, 0xb0}));
  const SectionWords short_words{Bytes(bytes).first(4), 0x9000, Endian::kLittle};
  EXPECT_EQ(gnu_personality_opcodes(short_words, 0).error().offset, 4u);
  EXPECT_TRUE(is_gnu_personality("__gxx_personality_v0"));
  EXPECT_TRUE(is_gnu_personality("__gcc_personality_v0"));
  EXPECT_FALSE(is_gnu_personality("my_personality"));
}

TEST(EhabiEntry, WordReadsAreBoundsChecked) {
  const std::vector<uint8_t> three{1, 2, 3};
  const SectionWords words{three, 0, Endian::kLittle};
  EXPECT_EQ(words.word(0).error().code, ErrorCode::kTruncated);
  const SectionWords none{{}, 0, Endian::kLittle};
  EXPECT_FALSE(none.word(0).ok());
  EXPECT_FALSE(none.word(~uint64_t{0}).ok());
}

}  // namespace
}  // namespace framewalk::ehabi

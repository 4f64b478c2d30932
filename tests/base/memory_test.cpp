// Memory::read_word: whole words in either byte order, or the address that
// could not be read.
#include <gtest/gtest.h>

#include "base/memory.hpp"

namespace framewalk {
namespace {

const uint8_t kBytes[] = {0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08};

TEST(Memory, ReadWordInEitherByteOrder) {
  BufferMemory memory(Bytes(kBytes, sizeof kBytes), 0x1000);
  EXPECT_EQ(*memory.read_word(0x1000, 8, Endian::kLittle), 0x0807060504030201u);
  EXPECT_EQ(*memory.read_word(0x1000, 8, Endian::kBig), 0x0102030405060708u);
  EXPECT_EQ(*memory.read_word(0x1004, 4, Endian::kLittle), 0x08070605u);
  EXPECT_EQ(*memory.read_word(0x1004, 4, Endian::kBig), 0x05060708u);
  EXPECT_EQ(*memory.read_word(0x1007, 1, Endian::kBig), 0x08u);
}

TEST(Memory, ReadWordNeedsEveryByte) {
  BufferMemory memory(Bytes(kBytes, sizeof kBytes), 0x1000);
  auto cut = memory.read_word(0x1005, 4, Endian::kLittle);  // one byte past the end
  ASSERT_FALSE(cut.ok());
  EXPECT_EQ(cut.error().code, ErrorCode::kMemoryUnreadable);
  EXPECT_EQ(cut.error().offset, 0x1005u);
  EXPECT_FALSE(memory.read_word(0x1000, 0, Endian::kLittle).ok());
  EXPECT_FALSE(memory.read_word(0x1000, 9, Endian::kLittle).ok());
}

}  // namespace
}  // namespace framewalk

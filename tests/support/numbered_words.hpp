// Register blocks for the machine tests: words of `size` bytes, word i
// holding base + i, so that a test sees which slot a register came from;
// little-endian, or big-endian (numbered_big_words).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace framewalk::test {

inline std::vector<uint8_t> numbered_words(size_t count, uint64_t base, unsigned size = 8) {
  std::vector<uint8_t> bytes(size * count);
  for (size_t i = 0; i < count; ++i)
    for (unsigned b = 0; b < size; ++b) bytes[size * i + b] = static_cast<uint8_t>((base + i) >> (8 * b));
  return bytes;
}

inline std::vector<uint8_t> numbered_big_words(size_t count, uint64_t base, unsigned size = 8) {
  std::vector<uint8_t> bytes(size * count);
  for (size_t i = 0; i < count; ++i)
    for (unsigned b = 0; b < size; ++b) bytes[size * i + b] = static_cast<uint8_t>((base + i) >> (8 * (size - 1 - b)));
  return bytes;
}

}  // namespace framewalk::test

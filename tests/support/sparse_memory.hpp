// Memory for synthetic stacks: bytes at chosen addresses, nothing elsewhere
// (a read stops at the first byte never written, as unreadable memory does).
#pragma once

#include <cstdint>
#include <initializer_list>
#include <map>

#include "base/memory.hpp"

namespace framewalk::test {

class SparseMemory : public Memory {
 public:
  // `size` bytes of `value`, little-endian.
  void put(uint64_t address, uint64_t value, unsigned size) {
    for (unsigned i = 0; i < size; ++i) cells_[address + i] = static_cast<uint8_t>(value >> (8 * i));
  }
  // `size` bytes of `value`, big-endian.
  void put_big(uint64_t address, uint64_t value, unsigned size) {
    for (unsigned i = 0; i < size; ++i) cells_[address + i] = static_cast<uint8_t>(value >> (8 * (size - 1 - i)));
  }
  void code(uint64_t address, const uint8_t* data, size_t n) {
    for (size_t i = 0; i < n; ++i) cells_[address + i] = data[i];
  }
  void halfwords(uint64_t address, std::initializer_list<uint16_t> values) {
    for (uint16_t h : values) {
      put(address, h, 2);
      address += 2;
    }
  }
  size_t read(uint64_t address, void* out, size_t size) override {
    auto* dst = static_cast<uint8_t*>(out);
    for (size_t i = 0; i < size; ++i) {
      auto it = cells_.find(address + i);
      if (it == cells_.end()) return i;
      dst[i] = it->second;
    }
    return size;
  }

 private:
  std::map<uint64_t, uint8_t> cells_;
};

}  // namespace framewalk::test

// The narrow memory interface every back-end implements: local, ptrace, core
// file, a user's own. Reads never fault; a short count says where memory ends.
#pragma once

#include <bit>
#include <cstdint>
#include <cstring>

#include "base/byte_reader.hpp"
#include "base/result.hpp"

namespace framewalk {

class Memory {
 public:
  virtual ~Memory() = default;
  // Copies up to `size` bytes at `address` into `out`; returns how many were
  // readable (a prefix), 0 when none.
  virtual size_t read(uint64_t address, void* out, size_t size) = 0;

  // A whole value of `size` (1..8) bytes in `endian` byte order (a stack
  // word of the target machine, whatever the host's), or kMemoryUnreadable
  // with the address as the error's offset.
  Result<uint64_t> read_word(uint64_t address, unsigned size, Endian endian) {
    uint8_t bytes[8];
    if (window_ && address - window_base_ < window_size_ && size <= window_size_ - (address - window_base_) &&
        size - 1 < 8) {
      const uint8_t* at = window_ + (address - window_base_);  // no virtual call
      if (size == 8) std::memcpy(bytes, at, 8);
      else std::memcpy(bytes, at, size);
    } else if (size == 0 || size > 8 || read(address, bytes, size) != size) {
      return Error{ErrorCode::kMemoryUnreadable, address};
    }
    const bool native = (endian == Endian::kLittle) == (std::endian::native == std::endian::little);
    if (size == 8) {  // the common sizes in one load (a walk reads a word or two a frame)
      uint64_t v;
      std::memcpy(&v, bytes, 8);
      return native ? v : __builtin_bswap64(v);
    }
    if (size == 4) {
      uint32_t v;
      std::memcpy(&v, bytes, 4);
      return native ? v : __builtin_bswap32(v);
    }
    uint64_t v = 0;
    for (unsigned i = 0; i < size; ++i) {
      const unsigned shift = endian == Endian::kLittle ? 8 * i : 8 * (size - 1 - i);
      v |= uint64_t{bytes[i]} << shift;
    }
    return v;
  }

 protected:
  // Bytes that read() gives for [window_base_, window_base_ + window_size_),
  // which read_word then takes without a virtual call: a back-end whose
  // memory is (partly) one buffer sets it.
  void set_window(const uint8_t* data, uint64_t base, size_t size) {
    window_ = size ? data : nullptr;
    window_base_ = base;
    window_size_ = size;
  }

 private:
  const uint8_t* window_ = nullptr;
  uint64_t window_base_ = 0;
  size_t window_size_ = 0;
};

// Memory backed by a buffer that starts at `base`.
class BufferMemory final : public Memory {
 public:
  BufferMemory(Bytes bytes, uint64_t base) : bytes_(bytes), base_(base) { set_window(bytes.data(), base, bytes.size()); }
  size_t read(uint64_t address, void* out, size_t size) override {
    if (size == 0 || address < base_ || address - base_ >= bytes_.size()) return 0;  // (out may be null for 0)
    const size_t off = static_cast<size_t>(address - base_);
    const size_t n = size < bytes_.size() - off ? size : bytes_.size() - off;
    std::memcpy(out, bytes_.data() + off, n);
    return n;
  }

 private:
  Bytes bytes_;
  uint64_t base_;
};

}  // namespace framewalk

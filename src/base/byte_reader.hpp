// The bounds-checked, endian-aware reader under every parser. Every read checks
// what remains first and returns an Error naming the offset on overrun.
#pragma once

#include <bit>
#include <cstdint>
#include <cstring>
#include <optional>
#include <span>
#include <string_view>

#include "base/result.hpp"

namespace framewalk {

enum class Endian : uint8_t { kLittle, kBig };
// The byte order of the machine framewalk runs on (s390x's is big).
inline constexpr Endian kHostEndian = std::endian::native == std::endian::big ? Endian::kBig : Endian::kLittle;

using Bytes = std::span<const uint8_t>;

// Base addresses for relative DW_EH_PE encodings. The pcrel base is derived by
// the reader: `section_address` + the absolute offset of the encoded value
// (so a reader's base_offset must be its data's offset within the section).
struct PointerBases {
  uint64_t section_address = 0;  // run-time address of the buffer's first byte
  bool has_section_address = true;
  uint64_t text = 0;
  bool has_text = false;
  uint64_t data = 0;
  bool has_data = false;
  uint64_t func = 0;
  bool has_func = false;
};

// DW_EH_PE_* values.
namespace pe {
inline constexpr uint8_t kAbsptr = 0x00, kUleb128 = 0x01, kUdata2 = 0x02, kUdata4 = 0x03,
                         kUdata8 = 0x04, kSigned = 0x08, kSleb128 = 0x09, kSdata2 = 0x0a,
                         kSdata4 = 0x0b, kSdata8 = 0x0c;
inline constexpr uint8_t kPcrel = 0x10, kTextrel = 0x20, kDatarel = 0x30, kFuncrel = 0x40,
                         kAligned = 0x50;
inline constexpr uint8_t kIndirect = 0x80, kOmit = 0xff;
}  // namespace pe

struct InitialLength {
  uint64_t length;
  bool is_dwarf64;
  uint8_t header_size;  // 4 or 12
};

class ByteReader {
 public:
  static constexpr int kMaxLeb128Bytes = 10;  // enough for any 64-bit value

  ByteReader() = default;
  ByteReader(Bytes data, Endian endian, uint64_t base_offset = 0)
      : data_(data), endian_(endian), base_offset_(base_offset) {}

  // Offset of the cursor within `data`, and within the enclosing buffer.
  size_t offset() const { return pos_; }
  uint64_t absolute_offset() const { return base_offset_ + pos_; }
  size_t size() const { return data_.size(); }
  size_t remaining() const { return data_.size() - pos_; }
  bool at_end() const { return pos_ >= data_.size(); }
  Endian endian() const { return endian_; }
  Bytes data() const { return data_; }
  uint64_t base_offset() const { return base_offset_; }

  Error error(ErrorCode code) const { return Error{code, absolute_offset()}; }

  Result<void> seek(size_t pos) {
    if (pos > data_.size()) return error(ErrorCode::kTruncated);
    pos_ = pos;
    return ok();
  }
  Result<void> skip(uint64_t n) {
    if (n > remaining()) return error(ErrorCode::kTruncated);
    pos_ += static_cast<size_t>(n);
    return ok();
  }

  // The next byte without consuming it; the caller checks at_end() first.
  uint8_t peek_unchecked() const { return data_[pos_]; }
  void advance_unchecked(size_t n) { pos_ += n; }

  Result<uint8_t> u8() {
    if (pos_ >= data_.size()) return error(ErrorCode::kTruncated);
    return data_[pos_++];
  }
  Result<uint16_t> u16() { return fixed<uint16_t>(); }
  Result<uint32_t> u32() { return fixed<uint32_t>(); }
  Result<uint64_t> u64() { return fixed<uint64_t>(); }

  // An unsigned integer of 1, 2, 4 or 8 bytes.
  Result<uint64_t> unsigned_of_size(unsigned size) {
    switch (size) {
      case 1: { FW_TRY(uint8_t v, u8()); return uint64_t{v}; }
      case 2: { FW_TRY(uint16_t v, u16()); return uint64_t{v}; }
      case 4: { FW_TRY(uint32_t v, u32()); return uint64_t{v}; }
      case 8: return u64();
      default: return error(ErrorCode::kBadAddressSize);
    }
  }
  Result<uint64_t> address(unsigned address_size) { return unsigned_of_size(address_size); }

  // The unsigned integer of `size` bytes at `offset` in `data`, or nullopt
  // where it is not all there (a register's slot in a gregset or context).
  static std::optional<uint64_t> unsigned_at(Bytes data, size_t offset, unsigned size, Endian endian) {
    ByteReader r(data, endian);
    if (!r.seek(offset).ok()) return std::nullopt;
    auto v = r.unsigned_of_size(size);
    if (!v.ok()) return std::nullopt;
    return *v;
  }

  Result<uint64_t> uleb128() {
    uint64_t result = 0;
    unsigned shift = 0;
    const size_t start = pos_;
    for (int i = 0; i < kMaxLeb128Bytes; ++i) {
      if (pos_ >= data_.size()) return Error{ErrorCode::kTruncated, base_offset_ + start};
      const uint8_t byte = data_[pos_++];
      const uint64_t bits = byte & 0x7f;
      if (shift == 63 && bits > 1) return Error{ErrorCode::kLeb128TooLong, base_offset_ + start};
      result |= bits << shift;
      if (!(byte & 0x80)) return result;
      shift += 7;
    }
    return Error{ErrorCode::kLeb128TooLong, base_offset_ + start};
  }

  Result<int64_t> sleb128() {
    uint64_t result = 0;
    unsigned shift = 0;
    const size_t start = pos_;
    for (int i = 0; i < kMaxLeb128Bytes; ++i) {
      if (pos_ >= data_.size()) return Error{ErrorCode::kTruncated, base_offset_ + start};
      const uint8_t byte = data_[pos_++];
      // At bit 63 only an all-zero or all-one slice (bit 63 equal to the sign) fits 64 bits.
      if (shift == 63 && (byte & 0x7f) != 0 && (byte & 0x7f) != 0x7f)
        return Error{ErrorCode::kLeb128TooLong, base_offset_ + start};
      result |= uint64_t{byte & 0x7fu} << shift;
      shift += 7;
      if (!(byte & 0x80)) {
        if (shift < 64 && (byte & 0x40)) result |= ~uint64_t{0} << shift;
        return static_cast<int64_t>(result);
      }
      if (shift >= 64) break;
    }
    return Error{ErrorCode::kLeb128TooLong, base_offset_ + start};
  }

  Result<Bytes> bytes(uint64_t n) {
    if (n > remaining()) return error(ErrorCode::kTruncated);
    Bytes out = data_.subspan(pos_, static_cast<size_t>(n));
    pos_ += static_cast<size_t>(n);
    return out;
  }

  // A NUL-terminated string; the terminator must lie inside the buffer.
  Result<std::string_view> cstring() {
    // memchr must not see the null pointer of an empty buffer.
    const void* nul = remaining() ? std::memchr(data_.data() + pos_, 0, remaining()) : nullptr;
    if (!nul) return error(ErrorCode::kTruncated);
    const auto* end = static_cast<const uint8_t*>(nul);
    std::string_view out(reinterpret_cast<const char*>(data_.data() + pos_),
                         static_cast<size_t>(end - (data_.data() + pos_)));
    pos_ += out.size() + 1;
    return out;
  }

  // DWARF initial length: 32-bit, or 0xffffffff followed by a 64-bit length.
  Result<InitialLength> initial_length() {
    FW_TRY(uint32_t len32, u32());
    if (len32 == 0xffffffffu) {
      FW_TRY(uint64_t len64, u64());
      return InitialLength{len64, true, 12};
    }
    if (len32 >= 0xfffffff0u) return Error{ErrorCode::kBadLength, absolute_offset() - 4};
    return InitialLength{len32, false, 4};
  }

  // A DW_EH_PE-encoded pointer. Returns the decoded value with the relative
  // base applied; DW_EH_PE_indirect is reported to the caller through
  // `*indirect` (the value is then the address of the pointer).
  Result<uint64_t> encoded_pointer(uint8_t encoding, unsigned address_size,
                                   const PointerBases& bases, bool* indirect = nullptr);

  // Size in bytes of a fixed-size encoding (0 for LEB128 forms, -1 if invalid).
  static int encoded_size(uint8_t encoding, unsigned address_size);

  // A sub-reader over the next `n` bytes, advancing this one past them.
  Result<ByteReader> split(uint64_t n) {
    if (n > remaining()) return error(ErrorCode::kTruncated);
    ByteReader sub(data_.subspan(pos_, static_cast<size_t>(n)), endian_, absolute_offset());
    pos_ += static_cast<size_t>(n);
    return sub;
  }

 private:
  template <typename T>
  Result<T> fixed() {
    if (sizeof(T) > remaining()) return error(ErrorCode::kTruncated);
    T v;
    std::memcpy(&v, data_.data() + pos_, sizeof(T));
    pos_ += sizeof(T);
    if (endian_ != kHostEndian) v = byteswap(v);
    return v;
  }
  template <typename T>
  static T byteswap(T v) {
    if constexpr (sizeof(T) == 2) return static_cast<T>(__builtin_bswap16(v));
    else if constexpr (sizeof(T) == 4) return static_cast<T>(__builtin_bswap32(v));
    else return static_cast<T>(__builtin_bswap64(v));
  }

  Bytes data_;
  size_t pos_ = 0;
  Endian endian_ = Endian::kLittle;
  uint64_t base_offset_ = 0;
};

}  // namespace framewalk

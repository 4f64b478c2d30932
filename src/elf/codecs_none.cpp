// A build without zlib, libzstd and liblzma (FRAMEWALK_COMPRESSION=OFF, as
// the cross-built in-process tests are): compressed sections and
// MiniDebugInfo cannot be read, and say so; the debuglink CRC-32 (zlib's,
// the IEEE polynomial) is computed bytewise.
#include <array>

#include "elf/elf_file.hpp"

namespace framewalk::elf {

Result<ReservedBuffer> decompress_zlib(Bytes, uint64_t) { return Error{ErrorCode::kNoDecompressor, 0}; }
Result<ReservedBuffer> decompress_zstd(Bytes, uint64_t) { return Error{ErrorCode::kNoDecompressor, 0}; }
Result<std::vector<uint8_t>> decompress_xz(Bytes, uint64_t) { return Error{ErrorCode::kNoDecompressor, 0}; }

uint32_t gnu_debuglink_crc32(Bytes data, uint32_t crc) {
  static constexpr std::array<uint32_t, 256> kTable = [] {
    std::array<uint32_t, 256> t{};
    for (uint32_t i = 0; i < 256; ++i) {
      uint32_t c = i;
      for (int k = 0; k < 8; ++k) c = (c & 1) ? 0xedb88320u ^ (c >> 1) : c >> 1;
      t[i] = c;
    }
    return t;
  }();
  crc = ~crc;
  for (uint8_t b : data) crc = kTable[(crc ^ b) & 0xff] ^ (crc >> 8);
  return ~crc;
}

}  // namespace framewalk::elf

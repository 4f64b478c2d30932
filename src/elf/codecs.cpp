// What framewalk takes from Debian's zlib, libzstd and liblzma: the
// decompressors behind compressed sections (zlib, zstd) and MiniDebugInfo
// (xz), and the CRC-32 of .gnu_debuglink. A build without them
// (FRAMEWALK_COMPRESSION=OFF) has codecs_none.cpp instead.
#include "elf/elf_file.hpp"

#include <lzma.h>
#include <zlib.h>
#include <zstd.h>

#include <algorithm>
#include <cstdint>

namespace framewalk::elf {

namespace {
// The output grows as data arrives, up to `expected_size`: the size in a
// header is only a claim, and a few hostile bytes must not make us allocate
// (and zero) gigabytes before the stream turns out to be short.
constexpr size_t kFirstOutputChunk = size_t{1} << 16;
}  // namespace

Result<std::vector<uint8_t>> decompress_zlib(Bytes input, uint64_t expected_size) {
  if (expected_size > kMaxDecompressedSize) return Error{ErrorCode::kDecompressFailed, 0};
  std::vector<uint8_t> out(std::min<uint64_t>(expected_size, kFirstOutputChunk));
  z_stream zs{};
  if (inflateInit(&zs) != Z_OK) return Error{ErrorCode::kDecompressFailed, 0};
  zs.next_in = const_cast<Bytef*>(input.data());
  zs.avail_in = static_cast<uInt>(std::min<size_t>(input.size(), UINT32_MAX));
  int rc;
  for (;;) {
    zs.next_out = out.data() + zs.total_out;
    zs.avail_out = static_cast<uInt>(out.size() - zs.total_out);
    rc = inflate(&zs, Z_FINISH);
    if (rc == Z_STREAM_END || (rc != Z_OK && rc != Z_BUF_ERROR)) break;
    if (zs.avail_out != 0 || out.size() >= expected_size) break;  // input ended, or too much output
    out.resize(std::min<uint64_t>(out.size() * 2, expected_size));
  }
  const uint64_t produced = zs.total_out;
  inflateEnd(&zs);
  if (rc != Z_STREAM_END || produced != expected_size)
    return Error{ErrorCode::kDecompressFailed, 0};
  return out;
}

Result<std::vector<uint8_t>> decompress_zstd(Bytes input, uint64_t expected_size) {
  if (expected_size > kMaxDecompressedSize) return Error{ErrorCode::kDecompressFailed, 0};
  std::vector<uint8_t> out(std::min<uint64_t>(expected_size, kFirstOutputChunk));
  ZSTD_DCtx* dctx = ZSTD_createDCtx();
  if (!dctx) return Error{ErrorCode::kDecompressFailed, 0};
  ZSTD_inBuffer in{input.data(), input.size(), 0};
  size_t produced = 0;
  bool finished = false;  // the last frame ended
  for (;;) {
    ZSTD_outBuffer ob{out.data(), out.size(), produced};
    const size_t in_before = in.pos;
    const size_t rc = ZSTD_decompressStream(dctx, &ob, &in);
    const bool progress = ob.pos != produced || in.pos != in_before;
    produced = ob.pos;
    if (ZSTD_isError(rc)) break;
    if (rc == 0 && in.pos == in.size) {  // a frame ended, and no other follows
      finished = true;
      break;
    }
    if (!progress) break;  // truncated input, or more output than announced
    if (ob.pos == ob.size && out.size() < expected_size)
      out.resize(std::min<uint64_t>(out.size() * 2, expected_size));
  }
  ZSTD_freeDCtx(dctx);
  if (!finished || produced != expected_size) return Error{ErrorCode::kDecompressFailed, 0};
  return out;
}

Result<std::vector<uint8_t>> decompress_xz(Bytes input, uint64_t max_size) {
  lzma_stream strm = LZMA_STREAM_INIT;
  if (lzma_stream_decoder(&strm, /*memlimit=*/uint64_t{512} << 20, 0) != LZMA_OK)
    return Error{ErrorCode::kDecompressFailed, 0};
  // Room for one byte past the limit tells "exactly max_size" from "too much",
  // and the first buffer is no larger than that either.
  const uint64_t cap = max_size < UINT64_MAX ? max_size + 1 : max_size;
  std::vector<uint8_t> out;
  out.resize(std::min<uint64_t>(std::max<size_t>(input.size() * 4, 4096), cap));
  strm.next_in = input.data();
  strm.avail_in = input.size();
  strm.next_out = out.data();
  strm.avail_out = out.size();
  lzma_ret rc;
  for (;;) {
    rc = lzma_code(&strm, LZMA_FINISH);
    if (rc == LZMA_STREAM_END) break;
    if (rc != LZMA_OK && rc != LZMA_BUF_ERROR) break;
    if (strm.avail_out == 0) {
      const size_t used = out.size();
      if (used >= cap) { rc = LZMA_MEMLIMIT_ERROR; break; }
      out.resize(std::min<uint64_t>(used * 2, cap));
      strm.next_out = out.data() + used;
      strm.avail_out = out.size() - used;
    } else if (rc == LZMA_BUF_ERROR) {
      break;  // no progress possible: truncated input
    }
  }
  const size_t produced = strm.total_out;
  lzma_end(&strm);
  if (rc != LZMA_STREAM_END || produced > max_size) return Error{ErrorCode::kDecompressFailed, 0};
  out.resize(produced);
  return out;
}

uint32_t gnu_debuglink_crc32(Bytes data, uint32_t crc) {
  return static_cast<uint32_t>(::crc32(crc, data.data(), static_cast<uInt>(data.size())));
}

}  // namespace framewalk::elf

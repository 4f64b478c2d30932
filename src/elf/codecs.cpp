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

// The output goes straight into a buffer of the claimed size whose pages
// exist only once written (base/reserved_buffer.hpp): the size in a header
// is only a claim, and a few hostile bytes must cost address space, not
// gigabytes of zeroed memory, before the stream turns out to be short.

Result<ReservedBuffer> decompress_zlib(Bytes input, uint64_t expected_size) {
  if (expected_size > kMaxDecompressedSize) return Error{ErrorCode::kDecompressFailed, 0};
  auto out = ReservedBuffer::reserve(static_cast<size_t>(expected_size));
  if (!out) return Error{ErrorCode::kDecompressFailed, 0};
  z_stream zs{};
  if (inflateInit(&zs) != Z_OK) return Error{ErrorCode::kDecompressFailed, 0};
  zs.next_in = const_cast<Bytef*>(input.data());
  zs.avail_in = static_cast<uInt>(std::min<size_t>(input.size(), UINT32_MAX));
  // One output byte more than claimed: a stream that is longer fails.
  uint8_t spare = 0;
  zs.next_out = expected_size ? out->data() : &spare;  // zlib refuses a null buffer, even an empty one
  zs.avail_out = static_cast<uInt>(expected_size);  // kMaxDecompressedSize fits
  int rc;
  for (;;) {
    rc = inflate(&zs, Z_FINISH);
    if (rc == Z_STREAM_END || (rc != Z_OK && rc != Z_BUF_ERROR)) break;
    if (zs.avail_out != 0) break;  // the input ended
    if (zs.next_out == &spare + 1) break;  // more output than claimed
    zs.next_out = &spare;
    zs.avail_out = 1;
  }
  const uint64_t produced = zs.total_out;
  inflateEnd(&zs);
  if (rc != Z_STREAM_END || produced != expected_size) return Error{ErrorCode::kDecompressFailed, 0};
  out->set_size(static_cast<size_t>(produced));
  return out;
}

Result<ReservedBuffer> decompress_zstd(Bytes input, uint64_t expected_size) {
  if (expected_size > kMaxDecompressedSize) return Error{ErrorCode::kDecompressFailed, 0};
  auto out = ReservedBuffer::reserve(static_cast<size_t>(expected_size));
  if (!out) return Error{ErrorCode::kDecompressFailed, 0};
  ZSTD_DCtx* dctx = ZSTD_createDCtx();
  if (!dctx) return Error{ErrorCode::kDecompressFailed, 0};
  ZSTD_inBuffer in{input.data(), input.size(), 0};
  ZSTD_outBuffer ob{out->data(), static_cast<size_t>(expected_size), 0};
  bool finished = false;  // the last frame ended
  for (;;) {
    const size_t in_before = in.pos, out_before = ob.pos;
    const size_t rc = ZSTD_decompressStream(dctx, &ob, &in);
    if (ZSTD_isError(rc)) break;
    if (rc == 0 && in.pos == in.size) {  // a frame ended, and no other follows
      finished = true;
      break;
    }
    if (ob.pos == out_before && in.pos == in_before) break;  // truncated input, or more output than announced
  }
  ZSTD_freeDCtx(dctx);
  if (!finished || ob.pos != expected_size) return Error{ErrorCode::kDecompressFailed, 0};
  out->set_size(ob.pos);
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

#include "target/cached_memory.hpp"

#include <cstring>

namespace framewalk {

CachedMemory::CachedMemory(Memory& backing, size_t blocks) : backing_(backing), blocks_(blocks) {}

void CachedMemory::invalidate() {
  for (Block& b : blocks_) b.base = ~uint64_t{0};
}

CachedMemory::Block& CachedMemory::block_for(uint64_t base) {
  Block& b = blocks_[(base / kBlockSize) % blocks_.size()];
  if (b.base != base) {
    if (!b.bytes) b.bytes = std::make_unique<uint8_t[]>(kBlockSize);
    b.base = base;
    b.valid = backing_.read(base, b.bytes.get(), kBlockSize);
  }
  return b;
}

size_t CachedMemory::read(uint64_t address, void* out, size_t size) {
  size_t done = 0;
  auto* dst = static_cast<uint8_t*>(out);
  while (done < size) {
    const uint64_t at = address + done;
    if (at < address) break;  // wrapped
    const uint64_t base = at - at % kBlockSize;
    Block& b = block_for(base);
    const size_t off = static_cast<size_t>(at - base);
    if (off >= b.valid) break;
    const size_t n = std::min(size - done, b.valid - off);
    std::memcpy(dst + done, b.bytes.get() + off, n);
    done += n;
    if (b.valid < kBlockSize && off + n >= b.valid) break;
  }
  return done;
}

}  // namespace framewalk

// A block cache in front of a slow Memory (ptrace, core files): unwinding reads
// a few words per frame, mostly from the same stack pages, and each read of a
// live process costs a system call.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "base/memory.hpp"

namespace framewalk {

class CachedMemory final : public Memory {
 public:
  static constexpr size_t kBlockSize = 4096;
  explicit CachedMemory(Memory& backing, size_t blocks = 256);

  size_t read(uint64_t address, void* out, size_t size) override;
  // Forget everything (the target ran).
  void invalidate();

 private:
  struct Block {
    uint64_t base = ~uint64_t{0};
    size_t valid = 0;  // readable bytes from base
    std::unique_ptr<uint8_t[]> bytes;
  };
  Block& block_for(uint64_t base);

  Memory& backing_;
  std::vector<Block> blocks_;
};

}  // namespace framewalk

// Strings kept for a tool's life, copied into large blocks: one allocation
// per 64 KiB instead of one per string, and no per-string header.
#pragma once

#include <cstring>
#include <memory>
#include <string_view>
#include <vector>

namespace framewalk {

class TextArena {
 public:
  // A copy of `text`, valid as long as the arena.
  std::string_view keep(std::string_view text) {
    if (text.size() > kBlock / 4) {  // a long text gets a block of its own
      long_texts_.push_back(std::make_unique<char[]>(text.size()));
      long_bytes_ += text.size();
      std::memcpy(long_texts_.back().get(), text.data(), text.size());
      return {long_texts_.back().get(), text.size()};
    }
    if (blocks_.empty() || used_ + text.size() > kBlock) {
      blocks_.push_back(std::make_unique<char[]>(kBlock));
      used_ = 0;
    }
    char* at = blocks_.back().get() + used_;
    std::memcpy(at, text.data(), text.size());
    used_ += text.size();
    return {at, text.size()};
  }
  // What the arena holds, in bytes (blocks counted whole).
  size_t bytes() const { return kBlock * blocks_.size() + long_bytes_; }
  // Forgets every text kept (their views dangle).
  void clear() {
    blocks_.clear();
    long_texts_.clear();
    used_ = long_bytes_ = 0;
  }

 private:
  static constexpr size_t kBlock = 64 * 1024;
  std::vector<std::unique_ptr<char[]>> blocks_;  // the last one is being filled
  std::vector<std::unique_ptr<char[]>> long_texts_;
  size_t used_ = 0;
  size_t long_bytes_ = 0;
};

}  // namespace framewalk

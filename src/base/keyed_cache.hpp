// Values kept by a 64-bit key: what a symbolizer remembers of each DIE or
// name it has answered for. A std::map or std::unordered_map spends 50 to 70
// bytes a value on nodes; this keeps the values in chunks (stable addresses)
// and 4-byte slots of open addressing, about 6 bytes a value besides the
// value and its key. Values are never removed. Not thread-safe.
#pragma once

#include <cstdint>
#include <deque>
#include <vector>

namespace framewalk {

template <class Value>
class KeyedCache {
 public:
  const Value* find(uint64_t key) const {
    if (slots_.empty()) return nullptr;
    for (size_t i = slot_of(key);; i = (i + 1) & (slots_.size() - 1)) {
      const uint32_t s = slots_[i];
      if (s == 0) return nullptr;
      if (entries_[s - 1].key == key) return &entries_[s - 1].value;
    }
  }
  Value* find(uint64_t key) { return const_cast<Value*>(static_cast<const KeyedCache&>(*this).find(key)); }

  // `key` must not be in yet. The reference stays valid as long as the cache.
  Value& insert(uint64_t key, const Value& value) {
    entries_.push_back(Entry{key, value});
    if (4 * entries_.size() > 3 * slots_.size()) {
      slots_.assign(slots_.empty() ? 64 : 2 * slots_.size(), 0);
      for (size_t e = 0; e < entries_.size(); ++e) place(e);
    } else {
      place(entries_.size() - 1);
    }
    return entries_.back().value;
  }
  size_t size() const { return entries_.size(); }
  void clear() {
    entries_.clear();
    slots_.clear();
  }

 private:
  struct Entry {
    uint64_t key;
    Value value;
  };
  size_t slot_of(uint64_t key) const {
    return static_cast<size_t>((key * 0x9e3779b97f4a7c15ull) >> 32) & (slots_.size() - 1);
  }
  void place(size_t entry) {
    size_t i = slot_of(entries_[entry].key);
    while (slots_[i] != 0) i = (i + 1) & (slots_.size() - 1);
    slots_[i] = static_cast<uint32_t>(entry + 1);
  }
  std::deque<Entry> entries_;
  std::vector<uint32_t> slots_;  // a power of two of them; 0: empty, else an index into entries_ plus one
};

}  // namespace framewalk

// A stable LSD radix sort on a 64-bit key, a byte at a time, skipping the
// bytes every key shares: for the tens of thousands of addresses and string
// offsets an ELF symbol table has, several times faster than a comparison
// sort, whose every other branch is mispredicted on such keys.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace framewalk {

// Sorts `items` by `key(item)` (uint64_t), ascending; equal keys keep their order.
template <typename T, typename KeyOf>
void radix_sort(std::vector<T>& items, KeyOf key) {
  if (items.size() < 64) {
    std::stable_sort(items.begin(), items.end(), [&](const T& a, const T& b) { return key(a) < key(b); });
    return;
  }
  uint64_t any = 0, all = ~uint64_t{0};
  for (const T& item : items) {
    any |= key(item);
    all &= key(item);
  }
  const uint64_t varying = any ^ all;
  std::vector<T> sorted(items.size());
  for (unsigned shift = 0; shift < 64; shift += 8) {
    if (((varying >> shift) & 0xff) == 0) continue;  // the same byte in every key
    size_t start[256] = {};
    for (const T& item : items) ++start[(key(item) >> shift) & 0xff];
    size_t sum = 0;
    for (size_t& s : start) {
      const size_t n = s;
      s = sum;
      sum += n;
    }
    for (const T& item : items) sorted[start[(key(item) >> shift) & 0xff]++] = item;
    items.swap(sorted);
  }
}

}  // namespace framewalk

// radix_sort: the same order as a stable comparison sort, for small and
// large inputs, keys that share bytes, duplicates, and keys using all 64 bits.
#include "base/radix_sort.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <utility>
#include <vector>

namespace framewalk {
namespace {

using Item = std::pair<uint64_t, size_t>;  // key, original position

std::vector<Item> items_with(const std::vector<uint64_t>& keys) {
  std::vector<Item> items;
  for (size_t i = 0; i < keys.size(); ++i) items.emplace_back(keys[i], i);
  return items;
}

void expect_stable_sorted(std::vector<Item> items) {
  std::vector<Item> want = items;
  std::stable_sort(want.begin(), want.end(), [](const Item& a, const Item& b) { return a.first < b.first; });
  radix_sort(items, [](const Item& item) { return item.first; });
  EXPECT_EQ(items, want);
}

TEST(RadixSort, MatchesAStableSort) {
  std::mt19937_64 random(7);
  for (size_t n : {0, 1, 5, 63, 64, 65, 1000, 20000}) {
    std::vector<uint64_t> any(n), addresses(n), few(n);
    for (size_t i = 0; i < n; ++i) {
      any[i] = random();                                   // every byte varies
      addresses[i] = 0x7f0000000000 + (random() % 0x200000);  // high bytes shared
      few[i] = random() % 4;                               // many duplicates
    }
    expect_stable_sorted(items_with(any));
    expect_stable_sorted(items_with(addresses));
    expect_stable_sorted(items_with(few));
  }
}

TEST(RadixSort, EqualKeysKeepTheirOrder) {
  expect_stable_sorted(items_with(std::vector<uint64_t>(500, 42)));
  std::vector<uint64_t> descending;
  for (uint64_t k = 300; k > 0; --k) descending.push_back(k % 7 == 0 ? ~uint64_t{0} : k);
  expect_stable_sorted(items_with(descending));
}

}  // namespace
}  // namespace framewalk

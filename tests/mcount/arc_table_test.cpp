#include "mcount/arc_table.hpp"

#include <gtest/gtest.h>

#include <map>
#include <utility>

namespace framewalk::mcount {
namespace {

TEST(ArcTable, CountsRepeatedArcsInOneSlot) {
  ArcTable* t = arc_table_create(16);
  ASSERT_NE(t, nullptr);
  for (int i = 0; i < 5; ++i) ASSERT_TRUE(arc_table_add(*t, 0x1000, 0x2000, 1));
  ASSERT_TRUE(arc_table_add(*t, 0x1000, 0x2004, 3));  // another callee from the same call site
  ASSERT_TRUE(arc_table_add(*t, 0x0, 0x2000, 2));     // a from_pc of 0 is an arc like any other
  EXPECT_EQ(t->used, 3u);
  std::map<std::pair<uintptr_t, uintptr_t>, uint64_t> seen;
  arc_table_for_each(*t, [&](uintptr_t from, uintptr_t self, uint64_t count) { seen[{from, self}] += count; });
  EXPECT_EQ((seen[{0x1000, 0x2000}]), 5u);
  EXPECT_EQ((seen[{0x1000, 0x2004}]), 3u);
  EXPECT_EQ((seen[{0x0, 0x2000}]), 2u);
  arc_table_destroy(t);
}

TEST(ArcTable, RefusesANewArcAtHalfFullAndGrowsWithEveryCount) {
  ArcTable* t = arc_table_create(8);
  ASSERT_NE(t, nullptr);
  for (uintptr_t i = 0; i < 4; ++i) ASSERT_TRUE(arc_table_add(*t, i * 16, 0x5000 + i, i + 1));
  EXPECT_FALSE(arc_table_add(*t, 0x999, 0x5999, 1));  // new, and the table is at its limit
  EXPECT_TRUE(arc_table_add(*t, 0, 0x5000, 10));      // a known arc still counts
  EXPECT_EQ(t->used, 4u);
  uint64_t total = 0;
  std::size_t arcs = 0;
  // Grow until 100,000 distinct arcs fit, as a thread's table does.
  for (uintptr_t i = 4; i < 100000; ++i) {
    while (!arc_table_add(*t, i * 16, 0x5000 + i, i + 1)) {
      ArcTable* bigger = arc_table_grown(*t);
      ASSERT_NE(bigger, nullptr);
      EXPECT_EQ(bigger->capacity, t->capacity * 2);
      arc_table_destroy(t);
      t = bigger;
    }
  }
  arc_table_for_each(*t, [&](uintptr_t from, uintptr_t self, uint64_t count) {
    EXPECT_EQ(from / 16, self - 0x5000);
    total += count;
    ++arcs;
  });
  EXPECT_EQ(arcs, 100000u);
  EXPECT_EQ(total, 100000ull * 100001ull / 2 + 10);
  EXPECT_LE(t->used, t->limit);
  arc_table_destroy(t);
}

TEST(ArcTable, SlotIsTheArcsOwnAndANewOneStartsAtZero) {
  ArcTable* t = arc_table_create(8);
  ASSERT_NE(t, nullptr);
  ArcSlot* a = arc_table_slot(*t, t->shift, 0x1000, 0x2000);
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(a->count, 0u);  // published before its first call is added
  EXPECT_EQ(a->self_pc, 0x2000u);
  EXPECT_EQ(a->from_pc, 0x1000u);
  a->count += 7;
  EXPECT_EQ(arc_table_slot(*t, t->shift, 0x1000, 0x2000), a);  // found again, not added twice
  EXPECT_NE(arc_table_slot(*t, t->shift, 0x1000, 0x2004), a);
  EXPECT_EQ(t->used, 2u);
  for (uintptr_t i = 0; i < 2; ++i) ASSERT_NE(arc_table_slot(*t, t->shift, 0x3000 + i, 0x4000), nullptr);
  EXPECT_EQ(arc_table_slot(*t, t->shift, 0x5000, 0x6000), nullptr);  // at its limit: nothing changed
  EXPECT_EQ(t->used, 4u);
  EXPECT_EQ(arc_table_slot(*t, t->shift, 0x1000, 0x2000)->count, 7u);
  arc_table_destroy(t);
}

TEST(ArcTable, FirstProbeIndexIsInRangeAndSpreadsNearbyArcs) {
  // Call sites a few bytes apart into one callee, as in a loop of calls.
  bool used[kFirstProbeEntries] = {};
  std::size_t distinct = 0;
  for (uintptr_t site = 0; site < 256; ++site) {
    const std::size_t i = first_probe_index(0x401000 + site * 5, 0x402000);
    ASSERT_LT(i, kFirstProbeEntries);
    if (!used[i]) ++distinct;
    used[i] = true;
  }
  EXPECT_GE(distinct, 200u);
  EXPECT_EQ(first_probe_index(0x1234, 0x5678), first_probe_index(0x1234, 0x5678));
}

TEST(ArcTable, CapacityMustBeAPowerOfTwo) {
  EXPECT_EQ(arc_table_create(0), nullptr);
  EXPECT_EQ(arc_table_create(1), nullptr);
  EXPECT_EQ(arc_table_create(12), nullptr);
}

}  // namespace
}  // namespace framewalk::mcount

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

TEST(ArcTable, CapacityMustBeAPowerOfTwo) {
  EXPECT_EQ(arc_table_create(0), nullptr);
  EXPECT_EQ(arc_table_create(1), nullptr);
  EXPECT_EQ(arc_table_create(12), nullptr);
}

}  // namespace
}  // namespace framewalk::mcount

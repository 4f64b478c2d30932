// The call-graph model from hand-written profiles: histogram bins shared
// among the functions they overlap, arcs summed and charged to functions,
// self-recursion, cycles, gprof's propagation, and the PIE bias.
#include "profile/call_graph.hpp"

#include <gtest/gtest.h>

#include "profile/gmon_builder.hpp"

namespace framewalk::profile {
namespace {

using test::GmonBuilder;

// main 0x1000..0x1040, a 0x1040..0x1080, b 0x1080..0x10c0, c 0x10c0..0x1100.
FunctionTable table() {
  return FunctionTable({{0x1000, 0x1040, "main"}, {0x1040, 0x1080, "a"}, {0x1080, 0x10c0, "b"}, {0x10c0, 0x1100, "c"}});
}

CallGraph graph(const GmonBuilder& b, uint64_t bias = 0) {
  auto r = read_gmon(Bytes(b.bytes().data(), b.bytes().size()), GmonLayout{});
  EXPECT_TRUE(r.ok()) << describe(r.error());
  return build_call_graph(r.value(), table(), bias);
}

const ProfileFunction* named(const CallGraph& g, const std::string& name) {
  for (const ProfileFunction& f : g.functions)
    if (f.name == name) return &f;
  return nullptr;
}

TEST(FunctionTable, RangesAndLookup) {
  const FunctionTable t({{0x20, 0x30, "second"}, {0x10, 0x28, "first"}, {0x10, 0x18, "alias"}, {0x40, 0x40, "empty"}});
  ASSERT_EQ(t.ranges().size(), 2u);
  EXPECT_EQ(t.ranges()[0].name, "first");
  EXPECT_EQ(t.ranges()[0].end, 0x20u);  // cut where the next begins
  EXPECT_EQ(t.find(0x0f), -1);
  EXPECT_EQ(t.find(0x10), 0);
  EXPECT_EQ(t.find(0x2f), 1);
  EXPECT_EQ(t.find(0x30), -1);
}

TEST(CallGraph, BinsAreSharedByOverlap) {
  GmonBuilder b;
  // 4 bins of 0x30 bytes over 0x1000..0x10c0: bin 1 (0x1030..0x1060) is
  // shared by main (0x10 bytes) and a (0x20 bytes).
  b.histogram(0x1000, 0x10c0, {3, 6, 0, 9});
  const CallGraph g = graph(b);
  EXPECT_TRUE(g.has_histogram);
  EXPECT_FALSE(g.has_arcs);
  EXPECT_DOUBLE_EQ(g.total_ticks, 18);
  EXPECT_DOUBLE_EQ(named(g, "main")->self_ticks, 3 + 2);
  EXPECT_DOUBLE_EQ(named(g, "a")->self_ticks, 4);
  EXPECT_DOUBLE_EQ(named(g, "b")->self_ticks, 9);
  EXPECT_EQ(named(g, "c"), nullptr);  // nothing names it
  EXPECT_DOUBLE_EQ(g.unattributed_ticks, 0);
  EXPECT_DOUBLE_EQ(g.seconds_per_tick(), 0.01);
}

TEST(CallGraph, TicksOutsideEveryFunction) {
  GmonBuilder b;
  b.histogram(0x0f00, 0x1100, {5, 0, 1, 0});  // the first bin lies before main, the third is half main's
  const CallGraph g = graph(b);
  EXPECT_DOUBLE_EQ(g.unattributed_ticks, 5);
  EXPECT_DOUBLE_EQ(named(g, "main")->self_ticks, 0.5);
  EXPECT_DOUBLE_EQ(named(g, "a")->self_ticks, 0.5);
}

TEST(CallGraph, ArcsSelfRecursionAndDropped) {
  GmonBuilder b;
  b.arc(0x1010, 0x1045, 2).arc(0x1020, 0x1041, 3)  // main -> a, two call sites
      .arc(0x1050, 0x1045, 7)                       // a -> a
      .arc(0x1050, 0x1085, 4)                       // a -> b
      .arc(0x9000, 0x1085, 100)                     // from outside: dropped, as gprof drops it
      .arc(0x1010, 0x9000, 1);
  const CallGraph g = graph(b);
  EXPECT_EQ(g.dropped_arcs, 2u);
  EXPECT_EQ(g.dropped_calls, 101u);
  ASSERT_EQ(g.arcs.size(), 3u);
  EXPECT_EQ(named(g, "a")->calls, 5u);
  EXPECT_EQ(named(g, "a")->self_calls, 7u);
  EXPECT_EQ(named(g, "b")->calls, 4u);
  EXPECT_EQ(named(g, "main")->calls, 0u);
  EXPECT_TRUE(g.cycles.empty());
}

TEST(CallGraph, CallSitesOnlyWhereTheFileSaysTheyAreExact) {
  GmonBuilder glibc;
  glibc.arc(0x1010, 0x1045, 2).arc(0x1020, 0x1041, 3).arc(0x1010, 0x1041, 1);
  for (const ProfileArc& a : graph(glibc).arcs) EXPECT_TRUE(a.call_sites.empty());  // rounded: not sites
  GmonBuilder exact;
  exact.exact_call_sites().arc(0x1010, 0x1045, 2).arc(0x1020, 0x1041, 3).arc(0x1010, 0x1041, 1);
  const CallGraph g = graph(exact, 0x10);  // the sites are link-time addresses, as the functions are
  ASSERT_EQ(g.arcs.size(), 1u);
  EXPECT_EQ(g.arcs[0].count, 6u);
  const std::vector<std::pair<uint64_t, uint64_t>> want = {{0x1000, 3}, {0x1010, 3}};
  EXPECT_EQ(g.arcs[0].call_sites, want);
}

TEST(CallGraph, CyclesAndPropagation) {
  GmonBuilder b;
  // main -> a (1), main -> b (3); a <-> c is a cycle; c -> b (1).
  b.histogram(0x1000, 0x1100, {0, 8, 4, 2})  // a 8, b 4, c 2 ticks
      .arc(0x1000, 0x1040, 1)
      .arc(0x1000, 0x1080, 3)
      .arc(0x1040, 0x10c0, 5)
      .arc(0x10c0, 0x1040, 4)
      .arc(0x10c0, 0x1080, 1);
  const CallGraph g = graph(b);
  ASSERT_EQ(g.cycles.size(), 1u);
  const ProfileCycle& cycle = g.cycles[0];
  EXPECT_EQ(cycle.calls, 1u);
  EXPECT_EQ(cycle.internal_calls, 9u);
  EXPECT_DOUBLE_EQ(cycle.self_ticks, 10);
  // b's 4 ticks go up in proportion: 3/4 to main, 1/4 to c (into the cycle).
  EXPECT_DOUBLE_EQ(cycle.child_ticks, 1);
  EXPECT_DOUBLE_EQ(named(g, "c")->child_ticks, 1);
  EXPECT_EQ(named(g, "a")->cycle, 1);
  EXPECT_EQ(named(g, "c")->cycle, 1);
  EXPECT_EQ(named(g, "b")->cycle, 0);
  // main: the whole cycle (10 + 1) and 3/4 of b.
  EXPECT_DOUBLE_EQ(named(g, "main")->child_ticks, 11 + 3);
  EXPECT_EQ(named(g, "a")->calls, 5u);  // 1 from main, 4 from c
}

TEST(CallGraph, LoadBiasIsSubtracted) {
  const uint64_t base = 0x555555554000;
  GmonBuilder b;
  b.histogram(base + 0x1000, base + 0x1080, {0, 2}).arc(base + 0x1000, base + 0x1041, 6);
  const CallGraph g = graph(b, base);
  EXPECT_DOUBLE_EQ(named(g, "a")->self_ticks, 2);
  EXPECT_EQ(named(g, "a")->calls, 6u);
  EXPECT_EQ(g.bias, base);
}

TEST(CallGraph, EmptyAndDegenerateHistograms) {
  GmonBuilder b;
  b.histogram(0x1040, 0x1040, {3}).histogram(0x2000, 0x2000, {});
  const CallGraph g = graph(b);
  EXPECT_DOUBLE_EQ(named(g, "a")->self_ticks, 3);  // a zero-width bin goes to the function at its address
}

}  // namespace
}  // namespace framewalk::profile

// The renderings of a call graph: JSON fields, folded lines (arcs with
// exact counts; paths weighted by self time), the gprof-style text.
#include "profile/reports.hpp"

#include <gtest/gtest.h>

#include "json_check.hpp"
#include "profile/gmon_builder.hpp"

namespace framewalk::profile {
namespace {

using test::GmonBuilder;

CallGraph sample_graph() {
  const FunctionTable table({{0x1000, 0x1040, "main"}, {0x1040, 0x1080, "fib"}, {0x1080, 0x10c0, "spin"}});
  GmonBuilder b;
  b.histogram(0x1000, 0x10c0, {1, 2, 7})
      .arc(0x1010, 0x1045, 3)   // main -> fib
      .arc(0x1050, 0x1045, 12)  // fib -> fib
      .arc(0x1050, 0x1085, 15)  // fib -> spin
      .arc(0x1020, 0x1085, 5);  // main -> spin
  auto r = read_gmon(Bytes(b.bytes().data(), b.bytes().size()), GmonLayout{});
  EXPECT_TRUE(r.ok());
  return build_call_graph(r.value(), table);
}

std::string render(void (*fn)(const CallGraph&, dump::TextWriter&), const CallGraph& g) {
  dump::TextWriter w;
  fn(g, w);
  return std::string(w.text());
}

TEST(Reports, Json) {
  const CallGraph g = sample_graph();
  dump::TextWriter w;
  write_json_report(g, ReportSource{"gmon.out", "a.out", 1, 1, 4}, w);
  const std::string json(w.text());
  EXPECT_TRUE(fuzz::valid_json(json)) << json;
  EXPECT_NE(json.find("\"histogram\":{\"rate\":100,\"dimension\":\"seconds\",\"abbreviation\":\"s\","
                      "\"seconds_per_tick\":0.01,\"total_ticks\":10,\"unattributed_ticks\":0}"),
            std::string::npos)
      << json;
  EXPECT_NE(json.find("{\"index\":1,\"name\":\"fib\",\"address\":\"0x1040\",\"size\":64,\"self_ticks\":2,"
                      "\"self_seconds\":0.02,\"child_seconds\":0.0525,\"calls\":3,\"self_calls\":12,\"cycle\":null}"),
            std::string::npos)
      << json;
  EXPECT_NE(json.find("{\"caller\":\"main\",\"callee\":\"spin\",\"caller_index\":0,\"callee_index\":2,\"count\":5,"),
            std::string::npos)
      << json;
  EXPECT_NE(json.find("\"dropped\":{\"arcs\":0,\"calls\":0}}"), std::string::npos) << json;
}

TEST(Reports, FoldedCallsAreTheArcs) {
  dump::TextWriter w;
  EXPECT_TRUE(write_folded(sample_graph(), FoldedValue::kCalls, w));
  EXPECT_EQ(std::string(w.text()), "main;fib 3\nmain;spin 5\nfib;fib 12\nfib;spin 15\n");
}

TEST(Reports, FoldedTimeSharesSelfTimeAlongPaths) {
  dump::TextWriter w;
  EXPECT_TRUE(write_folded(sample_graph(), FoldedValue::kTime, w));
  // spin's 70 ms: 5/20 called from main directly, 15/20 through fib.
  EXPECT_EQ(std::string(w.text()), "main 10000\nmain;fib 20000\nmain;fib;spin 52500\nmain;spin 17500\n");
}

// main's calls of spin are made at two sites: 0x1020 inside inlined helper
// (inlined in turn into main through outer), and one where nothing is inlined.
CallGraph graph_with_call_sites() {
  CallGraph g = sample_graph();
  for (ProfileArc& a : g.arcs)
    if (g.functions[a.caller].name == "main" && g.functions[a.callee].name == "spin") a.call_sites = {{0x1021, 3}, {0x1031, 2}};
  return g;
}

std::vector<std::string> inlined_in_main(uint64_t call) {
  if (call == 0x1020) return {"outer", "help;er"};
  return {};
}

TEST(Reports, FoldedCallsThroughInlinedFrames) {
  dump::TextWriter w;
  EXPECT_TRUE(write_folded(graph_with_call_sites(), FoldedValue::kCalls, w, {}, inlined_in_main));
  // The site's call address is the byte before its return address; ';' in a name is folded away.
  EXPECT_EQ(std::string(w.text()),
            "main;fib 3\nmain;outer_[i];help_er_[i];spin 3\nmain;spin 2\nfib;fib 12\nfib;spin 15\n");
  // Without the lookup, the sites change nothing.
  dump::TextWriter plain;
  EXPECT_TRUE(write_folded(graph_with_call_sites(), FoldedValue::kCalls, plain));
  EXPECT_EQ(std::string(plain.text()), "main;fib 3\nmain;spin 5\nfib;fib 12\nfib;spin 15\n");
}

TEST(Reports, FoldedTimeThroughInlinedFrames) {
  dump::TextWriter w;
  EXPECT_TRUE(write_folded(graph_with_call_sites(), FoldedValue::kTime, w, {}, inlined_in_main));
  // main -> spin's 17500 us split 3:2 by call site; the total is unchanged.
  EXPECT_EQ(std::string(w.text()),
            "main 10000\nmain;fib 20000\nmain;fib;spin 52500\nmain;outer_[i];help_er_[i];spin 10500\nmain;spin 7000\n");
  // Calls of no exact site (here one of 6) keep the path without inline frames.
  CallGraph g = graph_with_call_sites();
  for (ProfileArc& a : g.arcs)
    if (!a.call_sites.empty()) a.count = 6;
  dump::TextWriter more;
  EXPECT_TRUE(write_folded(g, FoldedValue::kCalls, more, {}, inlined_in_main));
  EXPECT_NE(std::string(more.text()).find("main;outer_[i];help_er_[i];spin 3\nmain;spin 3\n"), std::string::npos)
      << more.text();
  // Inline frames count toward the depth limit.
  dump::TextWriter cut;
  EXPECT_FALSE(write_folded(graph_with_call_sites(), FoldedValue::kTime, cut, FoldedLimits{3, 100}, inlined_in_main));
  EXPECT_EQ(cut.text().find("outer_[i]"), std::string_view::npos) << cut.text();
}

TEST(Reports, FoldedLimits) {
  dump::TextWriter w;
  EXPECT_FALSE(write_folded(sample_graph(), FoldedValue::kTime, w, FoldedLimits{2, 100}));
  EXPECT_EQ(std::string(w.text()), "main 10000\nmain;fib 20000\nmain;spin 17500\n");
}

TEST(Reports, Text) {
  const std::string text = render(write_text_report, sample_graph());
  EXPECT_NE(text.find("Each sample counts as 0.01 seconds."), std::string::npos) << text;
  EXPECT_NE(text.find(" 70.00      0.07     0.07       20"), std::string::npos) << text;
  EXPECT_NE(text.find("\n[2]     72.5    0.02        0.05       3+12      fib [2]\n"), std::string::npos) << text;
  EXPECT_NE(text.find("\n                                      12         fib [2]\n"), std::string::npos) << text;
  EXPECT_NE(text.find("\n                0.05        0.00      15/20      spin [3]\n"), std::string::npos) << text;
  EXPECT_NE(text.find("<spontaneous>"), std::string::npos) << text;
}

}  // namespace
}  // namespace framewalk::profile

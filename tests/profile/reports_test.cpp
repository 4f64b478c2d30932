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

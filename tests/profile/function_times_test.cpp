// The runtime's .times file: read strictly (errors name the line), charged
// to the functions that start at its addresses, and shown in the reports.
#include <gtest/gtest.h>

#include <cstdio>
#include <string>

#include "dump/text_writer.hpp"
#include "profile/function_times.hpp"
#include "profile/functions.hpp"
#include "profile/reports.hpp"

namespace framewalk::profile {
namespace {

constexpr const char* kFile =
    "# framewalk mcount function times 1\n"
    "# clock monotonic\n"
    "# address calls inclusive_ns self_ns\n"
    "0x1189 1 60213455 10071233\n"
    "0x11c0 3 50142222 50142222\n"
    "0x9999 1 5 5\n"
    "# 2 functions outside the executable not listed\n";

TEST(FunctionTimes, ReadsEveryLine) {
  FunctionTimesError error;
  auto times = read_function_times(kFile, &error);
  ASSERT_TRUE(times) << error.line << ": " << error.what;
  EXPECT_EQ(times->clock, "monotonic");
  ASSERT_EQ(times->functions.size(), 3u);
  EXPECT_EQ(times->functions[0].address, 0x1189u);
  EXPECT_EQ(times->functions[0].calls, 1u);
  EXPECT_EQ(times->functions[0].inclusive_ns, 60213455u);
  EXPECT_EQ(times->functions[0].self_ns, 10071233u);
}

TEST(FunctionTimes, BadFilesNameTheLine) {
  const struct {
    const char* text;
    size_t line;
  } cases[] = {
      {"", 0},
      {"# something else\n", 1},
      {"# framewalk mcount function times 1\n0x10 1 2\n", 2},
      {"# framewalk mcount function times 1\n0x10 1 2 x\n", 2},
      {"# framewalk mcount function times 1\n10 1 2 3\n", 2},
      {"# framewalk mcount function times 1\n0x10 1 2 3", 2},  // cut short
      {"# framewalk mcount function times 1\n0x10 99999999999999999999 2 3\n", 2},
  };
  for (const auto& c : cases) {
    FunctionTimesError error;
    EXPECT_FALSE(read_function_times(c.text, &error)) << c.text;
    EXPECT_EQ(error.line, c.line) << c.text;
    EXPECT_FALSE(error.what.empty());
  }
}

TEST(FunctionTimes, ChargedToFunctionsAndReported) {
  // The graph has main and a callee of main's; `work` is only in the
  // symbol table (its only caller is outside the executable).
  CallGraph graph;
  graph.functions.push_back(ProfileFunction{"main", 0x1189, 0x11a0});
  graph.functions.push_back(ProfileFunction{"helper", 0x11a0, 0x11c0});
  ProfileArc arc;
  arc.caller = 0;
  arc.callee = 1;
  arc.count = 7;
  graph.arcs.push_back(arc);
  const FunctionTable table({FunctionRange{0x1189, 0x11a0, "main"}, FunctionRange{0x11a0, 0x11c0, "helper"},
                             FunctionRange{0x11c0, 0x1200, "work"}, FunctionRange{0x1200, 0x1300, "spare"}});
  FunctionTimesError error;
  auto times = read_function_times(kFile, &error);
  ASSERT_TRUE(times);
  EXPECT_EQ(attach_function_times(*times, table, 0, &graph), 1u);  // 0x9999 starts no function
  ASSERT_EQ(graph.functions.size(), 3u);
  EXPECT_EQ(graph.functions[2].name, "work");
  EXPECT_EQ(graph.arcs[0].callee, 1u);  // arcs keep their functions
  EXPECT_FALSE(graph.functions[1].exact);
  ASSERT_TRUE(graph.functions[2].exact);
  EXPECT_EQ(graph.functions[2].exact->calls, 3u);
  EXPECT_EQ(graph.functions[2].exact->self_ns, 50142222u);

  char* text = nullptr;
  size_t size = 0;
  std::FILE* f = open_memstream(&text, &size);
  {
    dump::TextWriter w(f);
    write_text_report(graph, w);
  }
  std::fclose(f);
  const std::string report(text, size);
  free(text);
  EXPECT_NE(report.find("Exact times (-finstrument-functions, wall clock)"), std::string::npos) << report;
  // By self time: work (50.142 ms) before main (10.071 ms).
  const size_t work = report.find("      50.142  work"), main_line = report.find("      10.071  main");
  EXPECT_NE(work, std::string::npos) << report;
  EXPECT_NE(main_line, std::string::npos) << report;
  EXPECT_LT(work, main_line);

  f = open_memstream(&text, &size);
  {
    dump::TextWriter w(f);
    write_json_report(graph, ReportSource{}, w);
  }
  std::fclose(f);
  const std::string json(text, size);
  free(text);
  EXPECT_NE(json.find("\"exact\":{\"calls\":1,\"inclusive_ns\":60213455,\"self_ns\":10071233}"), std::string::npos)
      << json;
}

}  // namespace
}  // namespace framewalk::profile

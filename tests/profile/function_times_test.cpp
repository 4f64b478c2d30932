// The runtime's .times file: read strictly (errors name the line), charged
// to the functions that start at its addresses, and shown in the reports.
#include <gtest/gtest.h>

#include <cstdio>
#include <string>
#include <vector>

#include "dump/text_writer.hpp"
#include "profile/function_times.hpp"
#include "profile/functions.hpp"
#include "profile/reports.hpp"

namespace framewalk::profile {
namespace {

ProfileFunction function_at(const char* name, uint64_t address, uint64_t end) {
  ProfileFunction f;
  f.name = name;
  f.address = address;
  f.end = end;
  return f;
}

// What `write` puts through a TextWriter.
template <typename Write>
std::string rendered(Write&& write) {
  char* text = nullptr;
  size_t size = 0;
  std::FILE* f = open_memstream(&text, &size);
  {
    dump::TextWriter w(f);
    write(w);
  }
  std::fclose(f);
  std::string out(text, size);
  free(text);
  return out;
}

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
      {"# framewalk mcount function times 1\n0x10 1 2 3 /lib/x.so\n", 2},  // version 1 has no libraries
      {"# framewalk mcount function times 2\n0x10 1 2 3 \n", 2},           // a library without a path
      {"# framewalk mcount function times 2\n0x10 1 2\n", 2},
      {"# framewalk mcount function times 3\n", 1},
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
  graph.functions.push_back(function_at("main", 0x1189, 0x11a0));
  graph.functions.push_back(function_at("helper", 0x11a0, 0x11c0));
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

  const std::string report = rendered([&](dump::TextWriter& w) { write_text_report(graph, w); });
  EXPECT_NE(report.find("Exact times (the runtime's .times file, wall clock)"), std::string::npos) << report;
  // By self time: work (50.142 ms) before main (10.071 ms).
  const size_t work = report.find("      50.142  work"), main_line = report.find("      10.071  main");
  EXPECT_NE(work, std::string::npos) << report;
  EXPECT_NE(main_line, std::string::npos) << report;
  EXPECT_LT(work, main_line);

  const std::string json = rendered([&](dump::TextWriter& w) { write_json_report(graph, ReportSource{}, w); });
  EXPECT_NE(json.find("\"exact\":{\"calls\":1,\"inclusive_ns\":60213455,\"self_ns\":10071233}"), std::string::npos)
      << json;
}

TEST(FunctionTimes, LibraryLinesAreNamedFromTheLibrarysSymbols) {
  constexpr const char* kV2 =
      "# framewalk mcount function times 2\n"
      "# clock thread\n"
      "# address calls inclusive_ns self_ns [module]\n"
      "0x1189 1 60 10\n"
      "0x2000 3 50 40 /usr/lib/my lib.so\n"  // a path may hold spaces: the rest of the line
      "0x2100 1 7 7 /usr/lib/my lib.so\n"
      "0x3000 2 9 9 /gone/libother.so\n";
  FunctionTimesError error;
  auto times = read_function_times(kV2, &error);
  ASSERT_TRUE(times) << error.line << ": " << error.what;
  ASSERT_EQ(times->functions.size(), 4u);
  EXPECT_EQ(times->functions[0].module, "");
  EXPECT_EQ(times->functions[1].module, "/usr/lib/my lib.so");
  EXPECT_EQ(times->functions[1].self_ns, 40u);

  CallGraph graph;
  graph.functions.push_back(function_at("main", 0x1189, 0x11a0));
  const FunctionTable exe({FunctionRange{0x1189, 0x11a0, "main"}});
  EXPECT_EQ(attach_function_times(*times, exe, 0, &graph), 0u);  // the library lines are not the executable's
  const FunctionTable lib({FunctionRange{0x2000, 0x2100, "lib_work"}, FunctionRange{0x2100, 0x2200, "lib_leaf"}});
  std::vector<std::string> asked;
  const size_t unnamed = attach_module_times(
      *times,
      [&](const std::string& module) -> const FunctionTable* {
        asked.push_back(module);
        return module == "/usr/lib/my lib.so" ? &lib : nullptr;
      },
      &graph);
  EXPECT_EQ(unnamed, 1u);  // the library that cannot be read
  ASSERT_EQ(graph.module_functions.size(), 3u);
  EXPECT_EQ(graph.module_functions[0].name, "lib_work");
  EXPECT_EQ(graph.module_functions[1].name, "lib_leaf");
  EXPECT_EQ(graph.module_functions[2].name, "0x3000");
  EXPECT_EQ(graph.module_functions[2].module, "/gone/libother.so");
  EXPECT_EQ(graph.module_functions[0].exact.calls, 3u);
  EXPECT_EQ(graph.functions.size(), 1u);

  const std::string report = rendered([&](dump::TextWriter& w) { write_text_report(graph, w); });
  EXPECT_NE(report.find("thread CPU clock"), std::string::npos) << report;
  // By self time: lib_work (40 ns) first, main (10) before lib_leaf (7).
  const size_t work = report.find("  lib_work (my lib.so)\n"), main_line = report.find("  main\n"),
               leaf = report.find("  lib_leaf (my lib.so)\n");
  ASSERT_NE(work, std::string::npos) << report;
  ASSERT_NE(leaf, std::string::npos) << report;
  EXPECT_LT(work, main_line);
  EXPECT_LT(main_line, leaf);
  EXPECT_NE(report.find("  0x3000 (libother.so)\n"), std::string::npos) << report;

  const std::string json = rendered([&](dump::TextWriter& w) { write_json_report(graph, ReportSource{}, w); });
  EXPECT_NE(json.find("{\"name\":\"lib_work\",\"module\":\"/usr/lib/my lib.so\",\"address\":\"0x2000\","
                      "\"exact\":{\"calls\":3,\"inclusive_ns\":50,\"self_ns\":40}}"),
            std::string::npos)
      << json;
}

}  // namespace
}  // namespace framewalk::profile

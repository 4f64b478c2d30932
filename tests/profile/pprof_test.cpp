// The pprof writer: tables deduplicated, ids from 1, string 0 empty, and a
// gmon.out call graph as samples with exact call counts, read back with the
// protobuf classes (gzip and plain).
#include <gtest/gtest.h>
#include <google/protobuf/io/gzip_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>

#include "profile.pb.h"
#include "profile/gmon_builder.hpp"
#include "profile/pprof_report.hpp"

namespace framewalk::profile {
namespace {

perftools::profiles::Profile parse(const std::string& bytes, bool gzip) {
  perftools::profiles::Profile p;
  if (gzip) {
    google::protobuf::io::ArrayInputStream raw(bytes.data(), static_cast<int>(bytes.size()));
    google::protobuf::io::GzipInputStream unzipped(&raw);
    EXPECT_TRUE(p.ParseFromZeroCopyStream(&unzipped));
  } else {
    EXPECT_TRUE(p.ParseFromString(bytes));
  }
  return p;
}

TEST(PprofWriter, TablesAreDeduplicated) {
  pprof::ProfileBuilder b;
  b.add_sample_type("samples", "count");
  EXPECT_EQ(b.string_id(""), 0);
  EXPECT_EQ(b.string_id("samples"), 1);
  const uint64_t m = b.add_mapping({0x400000, 0x401000, 0, "/opt/demo", "abcd"});
  const uint64_t f1 = b.function_id("main"), f2 = b.function_id("work");
  EXPECT_EQ(f1, 1u);
  EXPECT_EQ(f2, 2u);
  EXPECT_EQ(b.function_id("main"), f1);
  const uint64_t l1 = b.location_id(m, 0x400080, f1), l2 = b.location_id(m, 0x400120, f2);
  EXPECT_EQ(b.location_id(m, 0x400080, f1), l1);
  const uint64_t stack[] = {l2, l1};
  const int64_t values[] = {7};
  const pprof::Label labels[] = {{"thread", "main-thread", 0, {}}};
  b.add_sample(stack, values, labels);
  const perftools::profiles::Profile p = parse(b.serialize(false), false);
  EXPECT_EQ(p.string_table(0), "");
  ASSERT_EQ(p.mapping_size(), 1);
  EXPECT_EQ(p.mapping(0).id(), 1u);
  EXPECT_EQ(p.string_table(p.mapping(0).filename()), "/opt/demo");
  EXPECT_EQ(p.string_table(p.mapping(0).build_id()), "abcd");
  ASSERT_EQ(p.location_size(), 2);
  ASSERT_EQ(p.sample_size(), 1);
  EXPECT_EQ(p.sample(0).location_id(0), l2);
  EXPECT_EQ(p.string_table(p.sample(0).label(0).str()), "main-thread");
}

TEST(PprofReport, ArcsAndSelfTime) {
  const FunctionTable table({{0x1000, 0x1040, "main"}, {0x1040, 0x1080, "fib"}});
  test::GmonBuilder g;
  g.histogram(0x1000, 0x1080, {1, 3}).arc(0x1010, 0x1041, 5).arc(0x1050, 0x1041, 9);
  auto file = read_gmon(Bytes(g.bytes().data(), g.bytes().size()), GmonLayout{});
  ASSERT_TRUE(file.ok());
  const CallGraph graph = build_call_graph(file.value(), table);
  pprof::ProfileBuilder b;
  fill_pprof(graph, ReportSource{"gmon.out", "/bin/prog", 1, 1, 2}, PprofImage{0x1000, 0x2000, 0x1000, "ff"}, &b);
  const perftools::profiles::Profile p = parse(b.serialize(), true);
  auto str = [&](int64_t i) { return p.string_table(static_cast<int>(i)); };
  ASSERT_EQ(p.sample_type_size(), 2);
  EXPECT_EQ(str(p.sample_type(0).type()), "calls");
  EXPECT_EQ(str(p.sample_type(0).unit()), "count");
  EXPECT_EQ(str(p.sample_type(1).type()), "cpu");
  EXPECT_EQ(str(p.sample_type(1).unit()), "nanoseconds");
  EXPECT_EQ(str(p.default_sample_type()), "cpu");
  EXPECT_EQ(p.period(), 10000000);
  // Two arcs (callee first), then self time of main and fib.
  ASSERT_EQ(p.sample_size(), 4);
  auto name_of = [&](uint64_t location) {
    for (const auto& l : p.location())
      if (l.id() == location)
        for (const auto& f : p.function())
          if (f.id() == l.line(0).function_id()) return str(f.name());
    return std::string("?");
  };
  EXPECT_EQ(name_of(p.sample(0).location_id(0)), "fib");
  EXPECT_EQ(name_of(p.sample(0).location_id(1)), "main");
  EXPECT_EQ(p.sample(0).value(0), 5);
  EXPECT_EQ(p.sample(0).value(1), 0);
  EXPECT_EQ(name_of(p.sample(1).location_id(0)), "fib");
  EXPECT_EQ(name_of(p.sample(1).location_id(1)), "fib");
  EXPECT_EQ(p.sample(1).value(0), 9);
  EXPECT_EQ(p.sample(2).location_id_size(), 1);
  EXPECT_EQ(p.sample(2).value(1), 10000000);
  EXPECT_EQ(p.sample(3).value(1), 30000000);
  EXPECT_EQ(p.mapping(0).memory_start(), 0x1000u);
  EXPECT_EQ(str(p.mapping(0).filename()), "/bin/prog");
  EXPECT_TRUE(p.mapping(0).has_functions());
}

}  // namespace

// With source lines: functions carry their file and first line, and each
// call site is a caller location whose lines are the calls inlined there,
// innermost first, the caller's own line last.
TEST(PprofReport, CallSitesWithInlineLines) {
  const FunctionTable table({{0x1000, 0x1040, "main"}, {0x1040, 0x1080, "leaf"}});
  test::GmonBuilder g;
  g.exact_call_sites().arc(0x1011, 0x1041, 5).arc(0x1021, 0x1041, 2);
  auto file = read_gmon(Bytes(g.bytes().data(), g.bytes().size()), GmonLayout{});
  ASSERT_TRUE(file.ok());
  const CallGraph graph = build_call_graph(file.value(), table);
  SourceLookup lookup = [](uint64_t address) -> std::vector<SourcePosition> {
    switch (address) {
      case 0x1000: return {{"", "main.c", 10}};
      case 0x1040: return {{"", "leaf.c", 3}};
      case 0x1010: return {{"helper", "inl.h", 7}, {"", "main.c", 12}};  // a call inside an inlined helper
      case 0x1020: return {{"", "main.c", 14}};
      default: return {};
    }
  };
  pprof::ProfileBuilder b;
  fill_pprof(graph, ReportSource{"gmon.out", "/bin/prog", 1, 0, 2}, PprofImage{0x1000, 0x2000, 0x1000, ""}, &b,
             lookup);
  const perftools::profiles::Profile p = parse(b.serialize(), true);
  auto str = [&](int64_t i) { return p.string_table(static_cast<int>(i)); };
  auto function = [&](uint64_t id) -> const perftools::profiles::Function& {
    for (const auto& f : p.function())
      if (f.id() == id) return f;
    ADD_FAILURE() << "no function " << id;
    return p.function(0);
  };
  auto lines_of = [&](uint64_t location) {
    std::vector<std::pair<std::string, int64_t>> out;
    for (const auto& l : p.location())
      if (l.id() == location)
        for (const auto& line : l.line()) out.emplace_back(str(function(line.function_id()).name()), line.line());
    return out;
  };
  ASSERT_EQ(p.sample_size(), 2);  // one per call site
  using Lines = std::vector<std::pair<std::string, int64_t>>;
  EXPECT_EQ(lines_of(p.sample(0).location_id(0)), (Lines{{"leaf", 3}}));
  EXPECT_EQ(lines_of(p.sample(0).location_id(1)), (Lines{{"helper", 7}, {"main", 12}}));
  EXPECT_EQ(p.sample(0).value(0), 5);
  EXPECT_EQ(lines_of(p.sample(1).location_id(1)), (Lines{{"main", 14}}));
  EXPECT_EQ(p.sample(1).value(0), 2);
  for (const auto& f : p.function()) {
    if (str(f.name()) == "main") {
      EXPECT_EQ(str(f.filename()), "main.c");
      EXPECT_EQ(f.start_line(), 10);
    }
    if (str(f.name()) == "helper") {
      EXPECT_EQ(str(f.filename()), "inl.h");
    }
  }
}

}  // namespace framewalk::profile

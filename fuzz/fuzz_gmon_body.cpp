// fuzz_gmon: byte 0 chooses the address size (bit 0: 4 bytes) and byte order
// (bit 1: big-endian); the rest is a gmon.out. A file that reads is charged
// to sixteen functions at 0x1000 + 0x40 * i (names with ';', quotes and bytes
// that are no UTF-8 among them) and rendered in every format: the JSON must
// be valid, the folded lines well formed, the pprof profile serializable.
#include <cmath>
#include <string>
#include <vector>

#include "fuzz_bodies.hpp"
#include "json_check.hpp"
#include "profile/call_graph.hpp"
#include "profile/gmon.hpp"
#include "profile/reports.hpp"
#if FRAMEWALK_PPROF
#include "profile/pprof_report.hpp"
#endif

namespace framewalk::fuzz {

namespace {

const profile::FunctionTable& functions() {
  static const profile::FunctionTable table = [] {
    std::vector<profile::FunctionRange> ranges;
    for (uint64_t i = 0; i < 16; ++i) {
      std::string name = "f" + std::to_string(i);
      if (i == 3) name = "semi;colon";
      if (i == 4) name = "quote\"back\\slash";
      if (i == 5) name = "bad\xff utf8 7";
      ranges.push_back({0x1000 + 0x40 * i, 0x1040 + 0x40 * i, name});
    }
    return profile::FunctionTable(std::move(ranges));
  }();
  return table;
}

void check_graph(const profile::GmonFile& file, const profile::CallGraph& g) {
  double charged = g.unattributed_ticks;
  for (const profile::ProfileFunction& f : g.functions) {
    FUZZ_CHECK(f.self_ticks >= 0 && std::isfinite(f.self_ticks));
    FUZZ_CHECK(std::isfinite(f.child_ticks) && f.child_ticks >= -1e-6);
    charged += f.self_ticks;
  }
  FUZZ_CHECK(std::fabs(charged - g.total_ticks) <= 1e-6 * (1 + g.total_ticks));
  uint64_t calls = 0;
  for (const profile::ProfileArc& a : g.arcs) {
    FUZZ_CHECK(a.caller < g.functions.size() && a.callee < g.functions.size());
    calls += a.count;
  }
  uint64_t in_file = 0;
  for (const profile::GmonArc& a : file.arcs) in_file += a.count;
  FUZZ_CHECK(calls + g.dropped_calls == in_file);
}

}  // namespace

int fuzz_gmon(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const profile::GmonLayout layout{(data[0] & 1) ? 4u : 8u, (data[0] & 2) ? Endian::kBig : Endian::kLittle};
  const Bytes bytes(data + 1, size - 1);
  const profile::GmonResult result = profile::read_gmon(bytes, layout);
  if (!result) {
    FUZZ_CHECK(result.error().offset <= bytes.size());
    (void)profile::describe(result.error());
    return 0;
  }
  FUZZ_CHECK(result->arcs.size() <= bytes.size() / 13);
  const profile::CallGraph g = profile::build_call_graph(result.value(), functions(), 0);
  check_graph(result.value(), g);
  {
    dump::TextWriter w;
    profile::write_json_report(g, profile::ReportSource{"fuzz", "fuzz", result->version, 1, result->arcs.size()}, w);
    FUZZ_CHECK(valid_json(w.text()));
  }
  {
    dump::TextWriter w;
    profile::write_text_report(g, w);
  }
  for (profile::FoldedValue value : {profile::FoldedValue::kCalls, profile::FoldedValue::kTime}) {
    dump::TextWriter w;
    (void)profile::write_folded(g, value, w, profile::FoldedLimits{16, 200});
    // Every line: frames without line breaks, one space, a count.
    for (std::string_view text = w.text(); !text.empty();) {
      const size_t end = text.find('\n');
      FUZZ_CHECK(end != std::string_view::npos);
      const std::string_view line = text.substr(0, end);
      const size_t space = line.rfind(' ');
      FUZZ_CHECK(space != std::string_view::npos && space + 1 < line.size());
      for (char c : line.substr(space + 1)) FUZZ_CHECK(c >= '0' && c <= '9');
      text.remove_prefix(end + 1);
    }
  }
#if FRAMEWALK_PPROF
  profile::pprof::ProfileBuilder builder;
  profile::fill_pprof(g, profile::ReportSource{"fuzz", "fuzz", 1, 1, 0}, profile::PprofImage{0x1000, 0x1400, 0, ""},
                      &builder);
  FUZZ_CHECK(!builder.serialize(false).empty() || g.functions.empty());
#endif
  return 0;
}

}  // namespace framewalk::fuzz

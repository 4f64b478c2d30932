// Renderings of a CallGraph: gprof-style text (flat profile and call graph),
// JSON, and folded stacks (docs/OUTPUT.md describes each).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "dump/text_writer.hpp"
#include "profile/call_graph.hpp"

namespace framewalk::profile {

// Where a report's data came from, for the JSON and pprof headers.
struct ReportSource {
  std::string profile;     // the gmon.out path
  std::string executable;  // the program its names come from
  uint32_t version = 1;
  size_t histogram_records = 0;
  size_t arc_records = 0;
};

// The flat profile, then the call graph, in gprof's layout.
void write_text_report(const CallGraph& graph, dump::TextWriter& out);
void write_json_report(const CallGraph& graph, const ReportSource& source, dump::TextWriter& out);

enum class FoldedValue : uint8_t {
  kCalls,  // one line per arc, "caller;callee COUNT": exact
  kTime,   // call paths from the roots, each weighted by self time (microseconds) shared out by call counts
};
struct FoldedLimits {
  size_t max_depth = 64;
  size_t max_lines = 100000;
};
// The functions inlined at a call (the address of the call instruction), outermost
// first, the physical caller itself left out; empty when none or unknown.
using InlinedAtCall = std::function<std::vector<std::string>(uint64_t call_address)>;
// Returns false when the limits cut the paths short (kTime only). With
// `inlined`, an arc whose call sites are exact (ProfileArc::call_sites) goes
// through the calls inlined at each site as frames of their own, named
// "NAME_[i]" (flamegraph.pl's mark for inline frames), its count split by
// site; self time stays on the physical function.
bool write_folded(const CallGraph& graph, FoldedValue value, dump::TextWriter& out, FoldedLimits limits = {},
                  const InlinedAtCall& inlined = {});

}  // namespace framewalk::profile

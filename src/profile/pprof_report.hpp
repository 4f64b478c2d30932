// A CallGraph as a pprof profile. gmon.out holds arcs, not stacks, so the
// samples are what the file knows exactly (docs/OUTPUT.md):
//  - one sample per arc, locations [callee, caller], values [count, 0]
//    (per call site, with source lines: see fill_pprof);
//  - one sample per function with self time, locations [function],
//    values [0, self time in nanoseconds].
// Sample types calls/count and cpu/nanoseconds; cpu is the default when the
// file has a histogram. `go tool pprof -top -sample_index=calls` lists each
// function's calls (flat) and the calls it made and received (cum).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "profile/call_graph.hpp"
#include "profile/pprof_writer.hpp"
#include "profile/reports.hpp"

namespace framewalk::profile {

// The executable's text as the profile maps it (addresses as the file has them).
struct PprofImage {
  uint64_t start = 0;
  uint64_t limit = 0;
  uint64_t file_offset = 0;
  std::string build_id;  // hex
};

// What the executable's DWARF says of a link-time address: the inlined
// functions there, innermost first, then the function they are in (whose
// `function` the profile's own name replaces); empty when nothing is known.
struct SourcePosition {
  std::string function;
  std::string file;
  int64_t line = 0;
};
using SourceLookup = std::function<std::vector<SourcePosition>(uint64_t address)>;

// With `lookup`, functions get their file and first line, and each arc is
// one sample per call site whose caller location is the call's line with
// the calls inlined there as lines of their own (what pprof shows as inline
// frames).
void fill_pprof(const CallGraph& graph, const ReportSource& source, const PprofImage& image,
                pprof::ProfileBuilder* out, const SourceLookup& lookup = {});

}  // namespace framewalk::profile

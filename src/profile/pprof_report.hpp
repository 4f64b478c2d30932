// A CallGraph as a pprof profile. gmon.out holds arcs, not stacks, so the
// samples are what the file knows exactly (docs/OUTPUT.md):
//  - one sample per arc, locations [callee, caller], values [count, 0];
//  - one sample per function with self time, locations [function],
//    values [0, self time in nanoseconds].
// Sample types calls/count and cpu/nanoseconds; cpu is the default when the
// file has a histogram. `go tool pprof -top -sample_index=calls` lists each
// function's calls (flat) and the calls it made and received (cum).
#pragma once

#include <cstdint>
#include <string>

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

void fill_pprof(const CallGraph& graph, const ReportSource& source, const PprofImage& image,
                pprof::ProfileBuilder* out);

}  // namespace framewalk::profile

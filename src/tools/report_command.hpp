// `framewalk report [gmon.out] [--exe PROG]`: the flat profile and call graph
// of a gmon.out (as glibc's -pg runtime writes it), named from the
// executable's symbols, as gprof-style text, JSON, folded stacks or pprof;
// or, for a recording of `framewalk record` (.fwprof, told by its magic),
// its sampled profile in every format of profile/sample_reports.hpp.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "profile/sample_reports.hpp"

namespace framewalk::tools {

struct ReportCommandOptions {
  std::string profile = "gmon.out";
  std::string exe = "a.out";
  std::string format = "text";          // text, json, folded, pprof; .fwprof also speedscope, firefox, html
  std::string folded_value = "calls";   // calls or time
  bool inlines = false;                 // folded: the calls inlined at each call site as frames (DWARF)
  std::string output;                   // empty: stdout
  std::optional<uint64_t> load_bias;    // subtracted from the file's addresses; default: found from the histogram
  // The runtime's exact times (-finstrument-functions); unset: PROFILE.times
  // when it exists; empty: none.
  std::optional<std::string> times;
  // A .fwprof recording (framewalk record): formats text, json, folded,
  // pprof, speedscope, firefox, html.
  bool tree = false;
  std::optional<uint32_t> thread;
  bool per_thread = false;
  std::string function;
  size_t top = 50;
  std::string kind = "on-cpu";
  // A perf.data file (tools/perf_report_command.hpp): its samples as perf
  // script prints them (format "script", or "folded").
  bool format_given = false;  // --format was given (a perf.data's default is script, not text)
  bool stats = false;      // counts of samples, walks by stop reason, lost samples, on stderr
  bool verbose = false;    // each sample's stop reason
  bool link_addresses = false;  // frames' addresses as their modules' link-time ones
  size_t max_frames = 256;
  std::string sysroot;     // prefixed to the recorded paths
  // Kernel frames' names: this file (a copy of the recording machine's
  // /proc/kallsyms); "" none (--kallsyms none); unset: /proc/kallsyms when the recording's
  // kernel release is the running one.
  std::optional<std::string> kallsyms;
};

// Returns the exit status: 0 when the report was written, 1 when the profile
// or the executable could not be read (the message names the file and the
// offset), 2 for usage errors.
int run_report_command(const ReportCommandOptions& options);

// The options a sampled profile's report takes from the command line (a
// .fwprof's and a perf.data's alike).
profile::SampleReportOptions sample_report_options(const ReportCommandOptions& options);

}  // namespace framewalk::tools

// The reports of a sampled profile (a SampleProfile, read from a .fwprof):
// one writer a format, each in its own file, all from the same CallTree so
// that they show the same totals (docs/report.md describes each format).
//
//   sample_text.cpp       text and JSON: top functions, --tree, callers/callees
//   sample_folded.cpp     collapsed stacks (FlameGraph, speedscope)
//   sample_pprof.cpp      profile.proto, gzip-compressed (go tool pprof)
//   sample_speedscope.cpp speedscope's file format
//   sample_firefox.cpp    the Firefox Profiler's processed format (pinned version)
//   sample_html.cpp       one self-contained HTML file: an interactive flame graph
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "dump/text_writer.hpp"
#include "profile/sample_profile.hpp"
#include "profile/sample_tree.hpp"

namespace framewalk::profile {

struct SampleReportOptions {
  std::string profile_path;     // named in the headers
  std::optional<uint32_t> tid;  // one thread; all when unset
  bool per_thread = false;      // text, JSON: one report a thread
  bool tree = false;            // text, JSON: the call tree
  std::string function;         // text, JSON: the callers and callees of this function
  size_t top = 50;              // text: functions listed (0: all)
  SampleKind kind = SampleKind::kOnCpu;  // folded: which samples
  bool complete = true;         // the file had its end chunk
  std::string damage;           // where reading stopped, when it did
};

void write_sample_text(const SampleProfile& p, const SampleReportOptions& o, dump::TextWriter& out);
void write_sample_json(const SampleProfile& p, const SampleReportOptions& o, dump::TextWriter& out);
// "outer;…;leaf WEIGHT" a stack; inline frames marked "_[i]" as flamegraph.pl does.
void write_sample_folded(const SampleProfile& p, const SampleReportOptions& o, dump::TextWriter& out);
void write_sample_speedscope(const SampleProfile& p, const SampleReportOptions& o, dump::TextWriter& out);
void write_sample_firefox(const SampleProfile& p, const SampleReportOptions& o, dump::TextWriter& out);
void write_sample_html(const SampleProfile& p, const SampleReportOptions& o, dump::TextWriter& out);
#if FRAMEWALK_PPROF
// Gzip-compressed profile.proto bytes.
std::string write_sample_pprof(const SampleProfile& p, const SampleReportOptions& o);
#endif

// The Firefox Profiler format version written (meta.version and
// meta.preprocessedProfileVersion).
inline constexpr int kFirefoxGeckoVersion = 24;
inline constexpr int kFirefoxProcessedVersion = 41;

// Shared by the writers.
const char* kind_name(SampleKind k);  // "on-cpu", "off-cpu"
// The weight's unit: "nanoseconds" unless the recording says otherwise.
std::string weight_unit(const SampleProfile& p);
// 100 * part / whole with two decimals ("60.00"); "0.00" for an empty whole.
std::string percent(uint64_t part, uint64_t whole);
// The threads of the samples: those of the profile's thread table, then any
// other tid a sample names.
std::vector<uint32_t> sample_tids(const SampleProfile& p);
// A function's display name: "name" or "name (module)" when `with_module`.
std::string display_name(const ReportFunction& f, bool with_module);

}  // namespace framewalk::profile

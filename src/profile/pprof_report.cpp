#include "profile/pprof_report.hpp"

#include <cmath>
#include <vector>

namespace framewalk::profile {

void fill_pprof(const CallGraph& g, const ReportSource& source, const PprofImage& image,
                pprof::ProfileBuilder* out) {
  out->add_sample_type("calls", "count");
  out->add_sample_type("cpu", "nanoseconds");
  const double ns_per_tick = g.seconds_per_tick() * 1e9;
  if (g.has_histogram) {
    out->set_period("cpu", "nanoseconds", std::llround(ns_per_tick));
    out->set_default_sample_type("cpu");
  } else {
    out->set_default_sample_type("calls");
  }
  out->add_comment("framewalk report " + source.profile + ": arcs as two-frame samples (callee, caller) with exact "
                   "call counts, self time as one-frame samples");
  const uint64_t mapping = out->add_mapping(
      pprof::Mapping{image.start + g.bias, image.limit + g.bias, image.file_offset, source.executable, image.build_id});
  std::vector<uint64_t> location(g.functions.size());
  for (size_t i = 0; i < g.functions.size(); ++i) {
    const ProfileFunction& f = g.functions[i];
    location[i] = out->location_id(mapping, f.address + g.bias, out->function_id(f.name));
  }
  for (const ProfileArc& a : g.arcs) {
    const uint64_t stack[2] = {location[a.callee], location[a.caller]};
    const int64_t values[2] = {static_cast<int64_t>(a.count), 0};
    out->add_sample(stack, values);
  }
  for (size_t i = 0; i < g.functions.size(); ++i) {
    const int64_t ns = std::llround(g.functions[i].self_ticks * ns_per_tick);
    if (ns <= 0) continue;
    const int64_t values[2] = {0, ns};
    out->add_sample(std::span<const uint64_t>(&location[i], 1), values);
  }
}

}  // namespace framewalk::profile

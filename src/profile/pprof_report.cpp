#include "profile/pprof_report.hpp"

#include <cmath>
#include <vector>

namespace framewalk::profile {

void fill_pprof(const CallGraph& g, const ReportSource& source, const PprofImage& image,
                pprof::ProfileBuilder* out, const SourceLookup& lookup) {
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
  std::vector<uint64_t> location(g.functions.size()), function(g.functions.size());
  for (size_t i = 0; i < g.functions.size(); ++i) {
    const ProfileFunction& f = g.functions[i];
    int64_t line = 0;
    std::string file;
    if (lookup) {
      const std::vector<SourcePosition> at = lookup(f.address);
      if (!at.empty()) {
        file = at.back().file;
        line = at.back().line;
      }
    }
    function[i] = out->function_id(f.name, {}, file, line);
    location[i] = out->location_id(mapping, f.address + g.bias, function[i], line);
  }
  for (const ProfileArc& a : g.arcs) {
    const int64_t values[2] = {static_cast<int64_t>(a.count), 0};
    if (!lookup || a.call_sites.empty()) {
      const uint64_t stack[2] = {location[a.callee], location[a.caller]};
      out->add_sample(stack, values);
      continue;
    }
    for (const auto& [return_address, count] : a.call_sites) {
      // The call is just before the address it returns to.
      const std::vector<SourcePosition> chain = lookup(return_address - 1);
      std::vector<pprof::ProfileBuilder::LineOf> lines;
      for (size_t k = 0; k + 1 < chain.size(); ++k)
        lines.push_back({out->function_id(chain[k].function, {}, chain[k].file), chain[k].line});
      lines.push_back({function[a.caller], chain.empty() ? 0 : chain.back().line});
      const uint64_t stack[2] = {location[a.callee], out->location_id(mapping, return_address + g.bias, lines)};
      const int64_t site_values[2] = {static_cast<int64_t>(count), 0};
      out->add_sample(stack, site_values);
    }
  }
  for (size_t i = 0; i < g.functions.size(); ++i) {
    const int64_t ns = std::llround(g.functions[i].self_ticks * ns_per_tick);
    if (ns <= 0) continue;
    const int64_t values[2] = {0, ns};
    out->add_sample(std::span<const uint64_t>(&location[i], 1), values);
  }
}

}  // namespace framewalk::profile

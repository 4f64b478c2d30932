// speedscope's file format (https://www.speedscope.app/file-format-schema.json):
// the functions as shared frames, and one "sampled" profile per thread and
// kind of sample (on-CPU, off-CPU), its samples in time order, consecutive
// equal stacks merged into one weighted sample.
#include "base/text.hpp"
#include "profile/sample_reports.hpp"

namespace framewalk::profile {

namespace {

void json_string(dump::TextWriter& out, std::string_view s) { out.ch('"').str(json_escape(s)).ch('"'); }

}  // namespace

void write_sample_speedscope(const SampleProfile& p, const SampleReportOptions& o, dump::TextWriter& out) {
  const FunctionIndex index(p);
  const std::string unit = weight_unit(p) == "nanoseconds" ? "nanoseconds" : "none";
  out.str("{\"$schema\":\"https://www.speedscope.app/file-format-schema.json\",\"exporter\":\"framewalk\",\"name\":");
  json_string(out, o.profile_path);
  out.str(",\"activeProfileIndex\":0,\"shared\":{\"frames\":[");
  for (size_t i = 0; i < index.functions().size(); ++i) {
    const ReportFunction& f = index.functions()[i];
    out.str(i ? ",{\"name\":" : "{\"name\":");
    json_string(out, display_name(f, true));
    if (!f.file.empty()) {
      out.str(",\"file\":");
      json_string(out, f.file);
      if (f.line) out.str(",\"line\":").udec(f.line);
    }
    out.ch('}');
  }
  out.str("]},\"profiles\":[");
  bool first_profile = true;
  std::vector<uint32_t> path;
  for (SampleKind kind : {SampleKind::kOnCpu, SampleKind::kOffCpu}) {
    const CallTree tree(p, index, SampleFilter{kind, std::nullopt});
    for (const uint32_t tid : sample_tids(p)) {
      if (o.tid && tid != *o.tid) continue;
      // The samples of this thread and kind, consecutive equal stacks merged.
      std::vector<std::pair<uint32_t, uint64_t>> runs;
      uint64_t total = 0;
      for (const Sample& s : p.samples()) {
        if (s.kind != kind || s.tid != tid) continue;
        const uint32_t node = tree.node_of_stack(s.stack);
        total += s.weight;
        if (!runs.empty() && runs.back().first == node) runs.back().second += s.weight;
        else runs.emplace_back(node, s.weight);
      }
      if (runs.empty()) continue;
      out.str(first_profile ? "{" : ",{");
      first_profile = false;
      out.str("\"type\":\"sampled\",\"name\":");
      const SampleThread* t = p.thread(tid);
      json_string(out, std::string(t ? p.string(t->name) : "thread") + " (" + std::to_string(tid) + ") " +
                           (kind == SampleKind::kOffCpu ? "off-CPU" : "on-CPU"));
      out.str(",\"unit\":\"").str(unit).str("\",\"startValue\":0,\"endValue\":").udec(total).str(",\"samples\":[");
      for (size_t i = 0; i < runs.size(); ++i) {
        path.clear();
        for (uint32_t n = runs[i].first; n; n = tree.nodes()[n].parent) path.push_back(tree.nodes()[n].function);
        out.str(i ? ",[" : "[");
        for (size_t k = path.size(); k-- > 0;) {
          out.udec(path[k]);
          if (k) out.ch(',');
        }
        out.ch(']');
      }
      out.str("],\"weights\":[");
      for (size_t i = 0; i < runs.size(); ++i) {
        if (i) out.ch(',');
        out.udec(runs[i].second);
      }
      out.str("]}");
    }
  }
  out.str("]}\n");
}

}  // namespace framewalk::profile

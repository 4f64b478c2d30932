// The text and JSON reports of a sampled profile: the recording, then for
// each kind of sample (on-CPU, off-CPU) that has any, the functions by self
// and total weight; with --tree the call tree, with --function the callers
// and callees of one function.
#include <algorithm>
#include <cstdio>
#include <unordered_set>

#include "base/text.hpp"
#include "profile/sample_reports.hpp"

namespace framewalk::profile {

const char* kind_name(SampleKind k) { return k == SampleKind::kOffCpu ? "off-cpu" : "on-cpu"; }

std::string weight_unit(const SampleProfile& p) {
  const std::string_view u = p.string(p.info().weight_unit);
  return u.empty() ? std::string("nanoseconds") : std::string(u);
}

std::string percent(uint64_t part, uint64_t whole) {
  if (whole == 0) return "0.00";
#if defined(__SIZEOF_INT128__)
  const unsigned __int128 hundredths = (static_cast<unsigned __int128>(part) * 10000 + whole / 2) / whole;
  const auto h = static_cast<uint64_t>(hundredths);
#else  // 32-bit machines: exact while part * 10000 fits 64 bits, rounded to the nearest after
  const uint64_t h = part <= (UINT64_MAX - whole / 2) / 10000
                         ? (part * 10000 + whole / 2) / whole
                         : static_cast<uint64_t>(static_cast<long double>(part) * 10000 / whole + 0.5L);
#endif
  char buf[32];
  std::snprintf(buf, sizeof buf, "%llu.%02llu", static_cast<unsigned long long>(h / 100),
                static_cast<unsigned long long>(h % 100));
  return buf;
}

std::vector<uint32_t> sample_tids(const SampleProfile& p) {
  std::vector<uint32_t> out;
  std::unordered_set<uint32_t> seen;
  for (const SampleThread& t : p.threads())
    if (seen.insert(t.tid).second) out.push_back(t.tid);
  for (const Sample& s : p.samples())
    if (seen.insert(s.tid).second) out.push_back(s.tid);
  return out;
}

std::string display_name(const ReportFunction& f, bool with_module) {
  if (!with_module || f.module.empty()) return f.name;
  return f.name + " (" + f.module + ")";
}

namespace {

// A weight for people: nanoseconds as ms or s, other units as they are.
std::string amount(uint64_t w, bool ns) {
  if (!ns) return std::to_string(w);
  char buf[48];
  if (w >= 10'000'000'000ULL)
    std::snprintf(buf, sizeof buf, "%.3fs", static_cast<double>(w) / 1e9);
  else
    std::snprintf(buf, sizeof buf, "%.3fms", static_cast<double>(w) / 1e6);
  return buf;
}

void pad_left(dump::TextWriter& out, const std::string& s, size_t width) {
  for (size_t i = s.size(); i < width; ++i) out.ch(' ');
  out.str(s);
}

struct Section {
  SampleKind kind;
  std::optional<uint32_t> tid;
};

std::vector<Section> sections(const SampleProfile& p, const SampleReportOptions& o) {
  std::vector<std::optional<uint32_t>> tids;
  if (o.tid) {
    tids.push_back(o.tid);
  } else if (o.per_thread) {
    for (const SampleThread& t : p.threads()) tids.push_back(t.tid);
  } else {
    tids.push_back(std::nullopt);
  }
  std::vector<Section> out;
  for (const auto& tid : tids)
    for (SampleKind k : {SampleKind::kOnCpu, SampleKind::kOffCpu}) {
      const bool any = std::any_of(p.samples().begin(), p.samples().end(), [&](const Sample& s) {
        return s.kind == k && (!tid || s.tid == *tid);
      });
      if (any || (k == SampleKind::kOnCpu && tids.size() == 1)) out.push_back({k, tid});
    }
  return out;
}

std::string thread_label(const SampleProfile& p, std::optional<uint32_t> tid) {
  if (!tid) return "all threads";
  const SampleThread* t = p.thread(*tid);
  std::string s = "thread " + std::to_string(*tid);
  if (t && t->name) s += " (" + std::string(p.string(t->name)) + ")";
  return s;
}

void text_tree(const CallTree& tree, const FunctionIndex& index, bool ns, dump::TextWriter& out) {
  out.str("  call tree: total% self% total self function\n");
  std::vector<std::pair<uint32_t, uint32_t>> stack;  // node, depth
  const std::vector<uint32_t> roots = tree.children(0);
  for (size_t i = roots.size(); i-- > 0;) stack.push_back({roots[i], 0});
  while (!stack.empty()) {
    const auto [n, depth] = stack.back();
    stack.pop_back();
    const CallNode& c = tree.nodes()[n];
    out.str("  ");
    pad_left(out, percent(c.total, tree.total()) + "%", 8);
    out.ch(' ');
    pad_left(out, percent(c.self, tree.total()) + "%", 8);
    out.ch(' ');
    pad_left(out, amount(c.total, ns), 14);
    out.ch(' ');
    pad_left(out, amount(c.self, ns), 14);
    out.str("  ");
    if (depth > 64) {
      out.str("[").udec(depth).str("] ");
    } else {
      for (uint32_t d = 0; d < depth; ++d) out.ch(' ');
    }
    out.str(display_name(index.functions()[c.function], true));
    if (c.inlined) out.str(" [inlined]");
    out.ch('\n');
    const std::vector<uint32_t> kids = tree.children(n);
    for (size_t i = kids.size(); i-- > 0;) stack.push_back({kids[i], depth + 1});
  }
}

void text_neighbours(const CallTree& tree, const FunctionIndex& index, const std::string& name, bool ns,
                     dump::TextWriter& out) {
  const std::optional<uint32_t> f = index.find(name);
  if (!f) {
    out.str("  function ").str(name).str(": not in the profile\n");
    return;
  }
  const CallTree::Neighbours nb = tree.neighbours(*f);
  out.str("  function ").str(name).str(": self ").str(percent(nb.self, tree.total())).str("% (")
      .str(amount(nb.self, ns)).str("), total ").str(percent(nb.total, tree.total())).str("% (")
      .str(amount(nb.total, ns)).str(")\n");
  out.str("  callers:\n");
  for (const auto& c : nb.callers) {
    out.str("    ");
    pad_left(out, percent(c.weight, tree.total()) + "%", 8);
    out.str("  ").str(c.function == UINT32_MAX ? std::string("(root)")
                                               : display_name(index.functions()[c.function], true)).ch('\n');
  }
  out.str("  callees:\n");
  for (const auto& c : nb.callees) {
    out.str("    ");
    pad_left(out, percent(c.weight, tree.total()) + "%", 8);
    out.str("  ").str(display_name(index.functions()[c.function], true)).ch('\n');
  }
}

}  // namespace

void write_sample_text(const SampleProfile& p, const SampleReportOptions& o, dump::TextWriter& out) {
  const RecordingInfo& in = p.info();
  const bool ns = weight_unit(p) == "nanoseconds";
  out.str("profile: ").str(o.profile_path);
  if (!o.complete) out.str(" (cut short: ").str(o.damage.empty() ? "no end chunk" : o.damage).str(")");
  out.ch('\n');
  if (!in.command_line.empty()) {
    out.str("command:");
    for (StringId s : in.command_line) out.ch(' ').str(p.string(s));
    out.ch('\n');
  }
  out.str("event: ").str(in.event ? p.string(in.event) : "unknown");
  if (in.frequency) out.str(", ").udec(in.frequency).str(" Hz");
  if (in.period) out.str(", period ").udec(in.period);
  out.str("; duration ").str(amount(in.duration_ns, true)).str("; ").udec(p.samples().size()).str(" samples, ")
      .udec(p.threads().size()).str(" threads\n");
  out.str("lost samples: ").udec(p.lost_samples());
  if (!p.stop_reasons().empty()) {
    out.str("; walks stopped:");
    for (size_t i = 0; i < p.stop_reasons().size(); ++i)
      out.str(i ? ", " : " ").str(p.string(p.stop_reasons()[i].reason)).ch(' ').udec(p.stop_reasons()[i].count);
  }
  out.ch('\n');
  const FunctionIndex index(p);
  for (const Section& sec : sections(p, o)) {
    const CallTree tree(p, index, SampleFilter{sec.kind, sec.tid});
    out.ch('\n').str(sec.kind == SampleKind::kOffCpu ? "off-CPU" : "on-CPU").str(", ").str(thread_label(p, sec.tid))
        .str(": ").udec(tree.samples()).str(" samples, ").str(amount(tree.total(), ns)).ch('\n');
    out.str("   self%          self  total%         total  function\n");
    const std::vector<FunctionTotal> fns = tree.functions();
    size_t shown = 0;
    for (const FunctionTotal& f : fns) {
      if (o.top && shown++ == o.top) {
        out.str("  (").udec(fns.size() - o.top).str(" more functions: --top 0 lists all)\n");
        break;
      }
      pad_left(out, percent(f.self, tree.total()) + "%", 8);
      pad_left(out, amount(f.self, ns), 14);
      pad_left(out, percent(f.total, tree.total()) + "%", 8);
      pad_left(out, amount(f.total, ns), 14);
      out.str("  ").str(display_name(index.functions()[f.function], true)).ch('\n');
    }
    if (o.tree) text_tree(tree, index, ns, out);
    if (!o.function.empty()) text_neighbours(tree, index, o.function, ns, out);
  }
}

// ---------------------------------------------------------------- JSON

namespace {

void json_string(dump::TextWriter& out, std::string_view s) { out.ch('"').str(json_escape(s)).ch('"'); }

// The call tree as a flat list (a parent before its children): a profile
// 300 frames deep must not nest JSON 300 levels deep.
void json_tree(const CallTree& tree, dump::TextWriter& out) {
  out.ch('[');
  for (uint32_t i = 1; i < tree.nodes().size(); ++i) {
    const CallNode& c = tree.nodes()[i];
    out.str(i > 1 ? ",{\"node\":" : "{\"node\":").udec(i).str(",\"parent\":").udec(c.parent).str(",\"function\":")
        .udec(c.function).str(",\"inlined\":").str(c.inlined ? "true" : "false").str(",\"self\":").udec(c.self)
        .str(",\"total\":").udec(c.total).ch('}');
  }
  out.ch(']');
}

}  // namespace

void write_sample_json(const SampleProfile& p, const SampleReportOptions& o, dump::TextWriter& out) {
  const RecordingInfo& in = p.info();
  const FunctionIndex index(p);
  out.str("{\"profile\":");
  json_string(out, o.profile_path);
  out.str(",\"complete\":").str(o.complete ? "true" : "false");
  if (!o.damage.empty()) {
    out.str(",\"damage\":");
    json_string(out, o.damage);
  }
  out.str(",\"event\":");
  json_string(out, p.string(in.event));
  out.str(",\"frequency\":").udec(in.frequency).str(",\"period\":").udec(in.period).str(",\"unit\":");
  json_string(out, weight_unit(p));
  out.str(",\"start_time_ns\":").udec(in.start_time_ns).str(",\"duration_ns\":").udec(in.duration_ns);
  out.str(",\"command_line\":[");
  for (size_t i = 0; i < in.command_line.size(); ++i) {
    if (i) out.ch(',');
    json_string(out, p.string(in.command_line[i]));
  }
  out.str("],\"samples\":").udec(p.samples().size()).str(",\"lost_samples\":").udec(p.lost_samples());
  out.str(",\"stop_reasons\":[");
  for (size_t i = 0; i < p.stop_reasons().size(); ++i) {
    out.str(i ? ",{\"reason\":" : "{\"reason\":");
    json_string(out, p.string(p.stop_reasons()[i].reason));
    out.str(",\"count\":").udec(p.stop_reasons()[i].count).ch('}');
  }
  out.str("],\"threads\":[");
  for (size_t i = 0; i < p.threads().size(); ++i) {
    const SampleThread& t = p.threads()[i];
    out.str(i ? ",{\"pid\":" : "{\"pid\":").udec(t.pid).str(",\"tid\":").udec(t.tid).str(",\"name\":");
    json_string(out, p.string(t.name));
    out.ch('}');
  }
  out.str("],\"functions\":[");
  for (size_t i = 0; i < index.functions().size(); ++i) {
    const ReportFunction& f = index.functions()[i];
    out.str(i ? ",{\"name\":" : "{\"name\":");
    json_string(out, f.name);
    out.str(",\"module\":");
    json_string(out, f.module);
    out.str(",\"file\":");
    json_string(out, f.file);
    out.str(",\"line\":").udec(f.line).ch('}');
  }
  out.str("],\"reports\":[");
  bool first = true;
  for (const Section& sec : sections(p, o)) {
    const CallTree tree(p, index, SampleFilter{sec.kind, sec.tid});
    out.str(first ? "{" : ",{");
    first = false;
    out.str("\"kind\":\"").str(kind_name(sec.kind)).str("\",\"tid\":");
    if (sec.tid) out.udec(*sec.tid); else out.str("null");
    out.str(",\"samples\":").udec(tree.samples()).str(",\"total\":").udec(tree.total()).str(",\"top\":[");
    bool f1 = true;
    for (const FunctionTotal& f : tree.functions()) {
      out.str(f1 ? "{" : ",{");
      f1 = false;
      out.str("\"function\":").udec(f.function).str(",\"name\":");
      json_string(out, index.functions()[f.function].name);
      out.str(",\"self\":").udec(f.self).str(",\"total\":").udec(f.total).str(",\"self_percent\":")
          .str(percent(f.self, tree.total())).str(",\"total_percent\":").str(percent(f.total, tree.total())).ch('}');
    }
    out.ch(']');
    if (o.tree) {
      out.str(",\"tree\":");
      json_tree(tree, out);
    }
    if (!o.function.empty()) {
      out.str(",\"function\":");
      const std::optional<uint32_t> f = index.find(o.function);
      if (!f) {
        out.str("null");
      } else {
        const CallTree::Neighbours nb = tree.neighbours(*f);
        out.str("{\"function\":").udec(*f).str(",\"self\":").udec(nb.self).str(",\"total\":").udec(nb.total);
        for (int side = 0; side < 2; ++side) {
          out.str(side ? ",\"callees\":[" : ",\"callers\":[");
          const auto& list = side ? nb.callees : nb.callers;
          for (size_t i = 0; i < list.size(); ++i) {
            out.str(i ? ",{\"function\":" : "{\"function\":");
            if (list[i].function == UINT32_MAX) out.str("null"); else out.udec(list[i].function);
            out.str(",\"weight\":").udec(list[i].weight).ch('}');
          }
          out.ch(']');
        }
        out.ch('}');
      }
    }
    out.ch('}');
  }
  out.str("]}\n");
}

}  // namespace framewalk::profile

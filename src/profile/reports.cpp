#include "profile/reports.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <string_view>

#include "base/text.hpp"

namespace framewalk::profile {

namespace {

std::string fixed(double v, int decimals, int width = 0) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%*.*f", width, decimals, v);
  return buf;
}

std::string padded(std::string_view s, size_t width, bool left = false) {
  std::string out(s);
  if (out.size() < width) out.insert(left ? out.size() : 0, width - out.size(), ' ');
  return out;
}

// gprof's per-call unit: the largest that keeps the biggest per-call time readable.
struct PerCallUnit {
  const char* name;
  double scale;
};
PerCallUnit per_call_unit(const CallGraph& g) {
  double largest = 0;
  for (const ProfileFunction& f : g.functions)
    if (f.calls) largest = std::max(largest, (f.self_ticks + f.child_ticks) * g.seconds_per_tick() / f.calls);
  if (largest == 0) return {"Ts", 1e12};
  if (largest >= 1) return {" s", 1};
  if (largest >= 1e-3) return {"ms", 1e3};
  if (largest >= 1e-6) return {"us", 1e6};
  return {"ns", 1e9};
}

std::string function_label(const CallGraph& g, size_t f) {
  std::string s = g.functions[f].name;
  if (g.functions[f].cycle) s += " <cycle " + std::to_string(g.functions[f].cycle) + ">";
  return s;
}

void write_flat(const CallGraph& g, dump::TextWriter& out) {
  const double tick = g.seconds_per_tick();
  out.str("Flat profile:\n\n");
  if (g.has_histogram) {
    out.str("Each sample counts as ").str(fixed(tick, 2)).ch(' ').str(g.dimension).str(".\n");
  }
  if (g.total_ticks == 0) out.str(" no time accumulated\n\n");
  const PerCallUnit unit = per_call_unit(g);
  out.str("  %   cumulative   self              self     total           \n");
  out.str(" time   seconds   seconds    calls  ").str(unit.name).str("/call  ").str(unit.name).str("/call  name    \n");
  std::vector<size_t> order;
  for (size_t i = 0; i < g.functions.size(); ++i)
    if (g.functions[i].self_ticks > 0 || g.functions[i].calls > 0) order.push_back(i);
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    const ProfileFunction &x = g.functions[a], &y = g.functions[b];
    if (x.self_ticks != y.self_ticks) return x.self_ticks > y.self_ticks;
    if (x.calls != y.calls) return x.calls > y.calls;
    return x.name < y.name;
  });
  double cumulative = 0;
  for (size_t i : order) {
    const ProfileFunction& f = g.functions[i];
    const double self = f.self_ticks * tick;
    cumulative += self;
    const double percent = g.total_ticks > 0 ? 100.0 * f.self_ticks / g.total_ticks : 0.0;
    out.str(fixed(percent, 2, 6)).ch(' ').str(fixed(cumulative, 2, 9)).ch(' ').str(fixed(self, 2, 8)).ch(' ');
    if (f.calls) {
      const double per_call_self = self / f.calls * unit.scale;
      const double per_call_total = (f.self_ticks + f.child_ticks) * tick / f.calls * unit.scale;
      out.str(padded(std::to_string(f.calls), 8)).ch(' ').str(fixed(per_call_self, 2, 8)).ch(' ')
          .str(fixed(per_call_total, 2, 8)).str("  ");
    } else {
      out.str(std::string(37 - 9, ' '));
    }
    out.str(function_label(g, i)).ch('\n');
  }
}

// One line of an entry in gprof's columns: the lead (index and % time, or
// blanks), self and children (or blanks), the count split in two ("60" and
// "/80", or "+12"), the name and its index.
void entry_line(dump::TextWriter& out, const std::string& lead, const double* self, const double* child,
                const std::string& count, const std::string& rest, const std::string& name, int index) {
  char buf[96];
  if (self) std::snprintf(buf, sizeof buf, "%-13s%7.2f %11.2f %7s%-8s ", lead.c_str(), *self, *child, count.c_str(), rest.c_str());
  else std::snprintf(buf, sizeof buf, "%-13s%7s %11s %7s%-8s ", lead.c_str(), "", "", count.c_str(), rest.c_str());
  out.str(buf).str(name).str(" [").udec(static_cast<uint64_t>(index)).str("]\n");
}

void write_call_graph(const CallGraph& g, dump::TextWriter& out) {
  const double tick = g.seconds_per_tick();
  out.str("\n\t\t\tCall graph\n\n\n");
  out.str("index % time    self  children    called     name\n");
  // Entries: functions and whole cycles, by total time, then calls, then name.
  struct Entry {
    int cycle;   // > 0: a whole cycle
    size_t function;
    double total;
    uint64_t calls;
  };
  std::vector<Entry> entries;
  for (size_t i = 0; i < g.functions.size(); ++i) {
    const ProfileFunction& f = g.functions[i];
    entries.push_back({0, i, f.self_ticks + f.child_ticks, f.calls + f.self_calls});
  }
  for (const ProfileCycle& c : g.cycles) entries.push_back({c.number, 0, c.self_ticks + c.child_ticks, c.calls});
  std::stable_sort(entries.begin(), entries.end(), [&](const Entry& a, const Entry& b) {
    if (a.total != b.total) return a.total > b.total;
    if (a.calls != b.calls) return a.calls > b.calls;
    if ((a.cycle > 0) != (b.cycle > 0)) return a.cycle > 0;
    return a.cycle ? a.cycle < b.cycle : g.functions[a.function].name < g.functions[b.function].name;
  });
  std::vector<int> index_of(g.functions.size(), 0), cycle_index(g.cycles.size() + 1, 0);
  for (size_t k = 0; k < entries.size(); ++k) {
    if (entries[k].cycle) cycle_index[static_cast<size_t>(entries[k].cycle)] = static_cast<int>(k + 1);
    else index_of[entries[k].function] = static_cast<int>(k + 1);
  }
  const double total = g.total_ticks > 0 ? g.total_ticks : 1;
  const std::string lead;
  for (size_t k = 0; k < entries.size(); ++k) {
    const Entry& e = entries[k];
    const int index = static_cast<int>(k + 1);
    char head[32];
    std::snprintf(head, sizeof head, "%-6s %5.1f ", ("[" + std::to_string(index) + "]").c_str(), 100.0 * e.total / total);
    if (e.cycle) {
      const ProfileCycle& c = g.cycles[static_cast<size_t>(e.cycle - 1)];
      const double self = c.self_ticks * tick, child = c.child_ticks * tick;
      entry_line(out, head, &self, &child, std::to_string(c.calls), "+" + std::to_string(c.internal_calls),
                 "<cycle " + std::to_string(c.number) + " as a whole>", index);
      for (size_t m : c.members) {
        const ProfileFunction& f = g.functions[m];
        const double fs = f.self_ticks * tick, fc = f.child_ticks * tick;
        entry_line(out, lead, &fs, &fc, std::to_string(f.calls), "", function_label(g, m), index_of[m]);
      }
      out.str("-----------------------------------------------\n");
      continue;
    }
    const size_t fi = e.function;
    const ProfileFunction& f = g.functions[fi];
    // Callers: arcs from inside its cycle (and self-recursion) show their count only.
    const std::vector<size_t> in = g.arcs_into(fi);
    uint64_t outside = 0;
    for (size_t a : in) {
      const ProfileArc& arc = g.arcs[a];
      if (arc.caller != fi && !(f.cycle && g.functions[arc.caller].cycle == f.cycle)) outside += arc.count;
    }
    if (in.empty() || (in.size() == 1 && g.arcs[in[0]].caller == fi))
      out.str(std::string(49, ' ')).str("<spontaneous>\n");
    for (size_t a : in) {
      const ProfileArc& arc = g.arcs[a];
      const bool internal = arc.caller == fi || (f.cycle && g.functions[arc.caller].cycle == f.cycle);
      if (internal) {
        entry_line(out, lead, nullptr, nullptr, std::to_string(arc.count), "", function_label(g, arc.caller),
                   index_of[arc.caller]);
      } else {
        const double as = arc.self_ticks * tick, ac = arc.child_ticks * tick;
        entry_line(out, lead, &as, &ac, std::to_string(arc.count), "/" + std::to_string(outside),
                   function_label(g, arc.caller), index_of[arc.caller]);
      }
    }
    const double fs = f.self_ticks * tick, fc = f.child_ticks * tick;
    entry_line(out, head, &fs, &fc, f.calls || f.self_calls ? std::to_string(f.calls) : "",
               f.self_calls ? "+" + std::to_string(f.self_calls) : "", function_label(g, fi), index);
    for (size_t a : g.arcs_out_of(fi)) {
      const ProfileArc& arc = g.arcs[a];
      const ProfileFunction& callee = g.functions[arc.callee];
      const bool internal = arc.callee == fi || (f.cycle && callee.cycle == f.cycle);
      if (internal) {
        entry_line(out, lead, nullptr, nullptr, std::to_string(arc.count), "", function_label(g, arc.callee),
                   index_of[arc.callee]);
        continue;
      }
      uint64_t callee_outside = 0;
      for (size_t b : g.arcs_into(arc.callee)) {
        const ProfileArc& other = g.arcs[b];
        if (other.caller != arc.callee && !(callee.cycle && g.functions[other.caller].cycle == callee.cycle))
          callee_outside += other.count;
      }
      const double as = arc.self_ticks * tick, ac = arc.child_ticks * tick;
      entry_line(out, lead, &as, &ac, std::to_string(arc.count), "/" + std::to_string(callee_outside),
                 function_label(g, arc.callee), index_of[arc.callee]);
    }
    out.str("-----------------------------------------------\n");
  }
}

std::string json_number(double v) {
  if (!std::isfinite(v)) return "0";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.9g", v);
  return buf;
}

}  // namespace

// -finstrument-functions' exact times, by self time: the executable's
// functions and the shared libraries' (named "function (library)").
void write_exact_times(const CallGraph& g, dump::TextWriter& out) {
  struct Timed {
    const ExactTime* exact;
    const std::string* name;
    const std::string* module;  // nullptr: the executable's
  };
  std::vector<Timed> timed;
  for (const ProfileFunction& f : g.functions)
    if (f.exact) timed.push_back(Timed{&*f.exact, &f.name, nullptr});
  for (const ModuleFunction& f : g.module_functions) timed.push_back(Timed{&f.exact, &f.name, &f.module});
  std::stable_sort(timed.begin(), timed.end(),
                   [](const Timed& a, const Timed& b) { return a.exact->self_ns > b.exact->self_ns; });
  out.str("Exact times (the runtime's .times file, ").str(g.exact_clock == "thread" ? "thread CPU" : "wall").str(" clock):\n\n");
  out.str("       calls  inclusive ms       self ms  name\n");
  for (const Timed& t : timed) {
    const std::string calls = std::to_string(t.exact->calls);
    const std::string inclusive = fixed(static_cast<double>(t.exact->inclusive_ns) / 1e6, 3);
    const std::string self = fixed(static_cast<double>(t.exact->self_ns) / 1e6, 3);
    out.str(std::string(calls.size() < 12 ? 12 - calls.size() : 0, ' ')).str(calls)
        .str(std::string(inclusive.size() < 14 ? 14 - inclusive.size() : 0, ' ')).str(inclusive)
        .str(std::string(self.size() < 14 ? 14 - self.size() : 0, ' ')).str(self).str("  ").str(*t.name);
    if (t.module != nullptr) {
      const size_t slash = t.module->rfind('/');
      out.str(" (").str(slash == std::string::npos ? *t.module : t.module->substr(slash + 1)).ch(')');
    }
    out.ch('\n');
  }
  out.ch('\n');
}

void write_text_report(const CallGraph& g, dump::TextWriter& out) {
  if (g.has_exact_times) write_exact_times(g, out);
  if (g.has_histogram) write_flat(g, out);
  if (g.has_arcs) write_call_graph(g, out);
  if (g.unattributed_ticks > 0 || g.dropped_arcs > 0) out.ch('\n');
  if (g.unattributed_ticks > 0)
    out.str(fixed(g.unattributed_ticks, 2)).str(" of ").str(fixed(g.total_ticks, 0))
        .str(" samples fell outside every function\n");
  if (g.dropped_arcs > 0)
    out.udec(g.dropped_arcs).str(" arcs (").udec(g.dropped_calls).str(" calls) left out: caller or callee outside every function\n");
}

void write_json_report(const CallGraph& g, const ReportSource& source, dump::TextWriter& out) {
  const double tick = g.seconds_per_tick();
  out.str("{\"profile\":\"").str(json_escape(source.profile)).str("\",\"executable\":\"")
      .str(json_escape(source.executable)).str("\",\"version\":").udec(source.version)
      .str(",\"histogram_records\":").udec(source.histogram_records).str(",\"arc_records\":").udec(source.arc_records)
      .str(",\"load_bias\":\"0x").hex(g.bias).str("\",\n\"histogram\":");
  if (g.has_histogram) {
    out.str("{\"rate\":").udec(g.rate).str(",\"dimension\":\"").str(json_escape(g.dimension))
        .str("\",\"abbreviation\":\"").str(json_escape(std::string_view(&g.abbreviation, g.abbreviation ? 1 : 0)))
        .str("\",\"seconds_per_tick\":").str(json_number(tick)).str(",\"total_ticks\":").str(json_number(g.total_ticks))
        .str(",\"unattributed_ticks\":").str(json_number(g.unattributed_ticks)).ch('}');
  } else {
    out.str("null");
  }
  out.str(",\n\"functions\":[");
  for (size_t i = 0; i < g.functions.size(); ++i) {
    const ProfileFunction& f = g.functions[i];
    out.str(i ? ",\n" : "\n").str("{\"index\":").udec(i).str(",\"name\":\"").str(json_escape(f.name))
        .str("\",\"address\":\"0x").hex(f.address).str("\",\"size\":").udec(f.end - f.address)
        .str(",\"self_ticks\":").str(json_number(f.self_ticks)).str(",\"self_seconds\":")
        .str(json_number(f.self_ticks * tick)).str(",\"child_seconds\":").str(json_number(f.child_ticks * tick))
        .str(",\"calls\":").udec(f.calls).str(",\"self_calls\":").udec(f.self_calls).str(",\"cycle\":");
    if (f.cycle) out.udec(static_cast<uint64_t>(f.cycle)); else out.str("null");
    if (g.has_exact_times) {
      out.str(",\"exact\":");
      if (f.exact)
        out.str("{\"calls\":").udec(f.exact->calls).str(",\"inclusive_ns\":").udec(f.exact->inclusive_ns)
            .str(",\"self_ns\":").udec(f.exact->self_ns).ch('}');
      else
        out.str("null");
    }
    out.ch('}');
  }
  out.str("],\n\"arcs\":[");
  for (size_t i = 0; i < g.arcs.size(); ++i) {
    const ProfileArc& a = g.arcs[i];
    out.str(i ? ",\n" : "\n").str("{\"caller\":\"").str(json_escape(g.functions[a.caller].name))
        .str("\",\"callee\":\"").str(json_escape(g.functions[a.callee].name)).str("\",\"caller_index\":")
        .udec(a.caller).str(",\"callee_index\":").udec(a.callee).str(",\"count\":").udec(a.count)
        .str(",\"self_seconds\":").str(json_number(a.self_ticks * tick)).str(",\"child_seconds\":")
        .str(json_number(a.child_ticks * tick)).ch('}');
  }
  out.str("],\n\"cycles\":[");
  for (size_t i = 0; i < g.cycles.size(); ++i) {
    const ProfileCycle& c = g.cycles[i];
    out.str(i ? ",\n" : "\n").str("{\"number\":").udec(static_cast<uint64_t>(c.number)).str(",\"members\":[");
    for (size_t m = 0; m < c.members.size(); ++m) out.str(m ? "," : "").udec(c.members[m]);
    out.str("],\"calls\":").udec(c.calls).str(",\"internal_calls\":").udec(c.internal_calls)
        .str(",\"self_seconds\":").str(json_number(c.self_ticks * tick)).str(",\"child_seconds\":")
        .str(json_number(c.child_ticks * tick)).ch('}');
  }
  out.str("],\n");
  if (g.has_exact_times) {
    out.str("\"module_functions\":[");
    for (size_t i = 0; i < g.module_functions.size(); ++i) {
      const ModuleFunction& f = g.module_functions[i];
      out.str(i ? ",\n" : "\n").str("{\"name\":\"").str(json_escape(f.name)).str("\",\"module\":\"")
          .str(json_escape(f.module)).str("\",\"address\":\"0x").hex(f.address)
          .str("\",\"exact\":{\"calls\":").udec(f.exact.calls).str(",\"inclusive_ns\":").udec(f.exact.inclusive_ns)
          .str(",\"self_ns\":").udec(f.exact.self_ns).str("}}");
    }
    out.str("],\n");
  }
  out.str("\"dropped\":{\"arcs\":").udec(g.dropped_arcs).str(",\"calls\":").udec(g.dropped_calls).str("}}\n");
}

namespace {

// Frame names must not hold ';' or a line break, nor end in " <digits>".
std::string folded_name(const std::string& name) {
  std::string s = name.empty() ? "??" : name;
  for (char& c : s)
    if (c == ';' || c == '\n' || c == '\r') c = '_';
  return s;
}

// An arc's calls grouped by the frames inlined at their call sites (in the
// order the sites first come); calls of no exact site go in a group with none.
struct InlinedGroup {
  std::vector<std::string> frames;  // folded names, outermost first
  uint64_t count = 0;
};
using ArcGroups = std::vector<InlinedGroup>;

ArcGroups group_by_inlined(const ProfileArc& arc, const InlinedAtCall& inlined) {
  ArcGroups groups;
  uint64_t placed = 0;
  if (inlined) {
    for (const auto& [return_address, count] : arc.call_sites) {
      std::vector<std::string> frames = inlined(return_address - 1);  // the call, not what follows it
      for (std::string& f : frames) f = folded_name(f) + "_[i]";
      auto it = std::find_if(groups.begin(), groups.end(), [&](const InlinedGroup& g) { return g.frames == frames; });
      if (it == groups.end()) groups.push_back({std::move(frames), count});
      else it->count += count;
      placed += count;
    }
  }
  if (placed < arc.count) {
    auto it = std::find_if(groups.begin(), groups.end(), [](const InlinedGroup& g) { return g.frames.empty(); });
    if (it == groups.end()) groups.push_back({{}, arc.count - placed});
    else it->count += arc.count - placed;
  }
  return groups;
}

struct PathWriter {
  const CallGraph& g;
  dump::TextWriter& out;
  FoldedLimits limits;
  double us_per_tick;
  std::vector<std::vector<size_t>> callees;  // arcs out of each function, self-arcs left out
  std::vector<uint64_t> incoming;            // calls into each function, self-calls left out
  std::vector<bool> on_path, reached;
  std::vector<ArcGroups> groups;             // by arc
  std::vector<std::string> path;
  size_t lines = 0;
  size_t visits = 0;  // paths are exponential in the worst case: each one walked counts
  bool complete = true;

  void visit(size_t f, double share) {
    if (lines >= limits.max_lines || visits >= 16 * limits.max_lines || path.size() >= limits.max_depth) {
      complete = false;
      return;
    }
    ++visits;
    on_path[f] = true;
    reached[f] = true;
    path.push_back(folded_name(g.functions[f].name));
    const double weight = g.functions[f].self_ticks * share * us_per_tick;
    if (weight >= 0.5) {
      for (size_t i = 0; i < path.size(); ++i) out.str(i ? ";" : "").str(path[i]);
      out.ch(' ').udec(static_cast<uint64_t>(std::llround(weight))).ch('\n');
      ++lines;
    }
    for (size_t a : callees[f]) {
      const ProfileArc& arc = g.arcs[a];
      if (on_path[arc.callee] || incoming[arc.callee] == 0) continue;  // recursion stays in its frame
      const double per_call = share / static_cast<double>(incoming[arc.callee]);
      for (const InlinedGroup& group : groups[a]) {
        if (path.size() + group.frames.size() >= limits.max_depth) {
          complete = false;
          continue;
        }
        path.insert(path.end(), group.frames.begin(), group.frames.end());
        visit(arc.callee, per_call * static_cast<double>(group.count));
        path.resize(path.size() - group.frames.size());
      }
    }
    path.pop_back();
    on_path[f] = false;
  }
};

}  // namespace

bool write_folded(const CallGraph& g, FoldedValue value, dump::TextWriter& out, FoldedLimits limits,
                  const InlinedAtCall& inlined) {
  if (value == FoldedValue::kCalls) {
    for (const ProfileArc& a : g.arcs) {
      for (const InlinedGroup& group : group_by_inlined(a, inlined)) {
        out.str(folded_name(g.functions[a.caller].name));
        for (const std::string& f : group.frames) out.ch(';').str(f);
        out.ch(';').str(folded_name(g.functions[a.callee].name)).ch(' ').udec(group.count).ch('\n');
      }
    }
    return true;
  }
  const size_t n = g.functions.size();
  PathWriter w{g,
               out,
               limits,
               g.seconds_per_tick() * 1e6,
               std::vector<std::vector<size_t>>(n),
               std::vector<uint64_t>(n, 0),
               std::vector<bool>(n, false),
               std::vector<bool>(n, false),
               {},
               {},
               0,
               0,
               true};
  w.groups.reserve(g.arcs.size());
  for (size_t i = 0; i < g.arcs.size(); ++i) {
    const ProfileArc& a = g.arcs[i];
    w.groups.push_back(a.caller == a.callee ? ArcGroups{} : group_by_inlined(a, inlined));
    if (a.caller == a.callee) continue;
    w.callees[a.caller].push_back(i);
    w.incoming[a.callee] += a.count;
  }
  for (size_t f = 0; f < n; ++f)
    if (w.incoming[f] == 0) w.visit(f, 1.0);
  // Functions no root reaches (a cycle entered only from outside the profile) stand alone.
  for (size_t f = 0; f < n; ++f)
    if (!w.reached[f]) w.visit(f, 1.0);
  return w.complete;
}

}  // namespace framewalk::profile

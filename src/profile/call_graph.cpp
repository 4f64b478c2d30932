#include "profile/call_graph.hpp"

#include <algorithm>
#include <map>
#include <utility>

namespace framewalk::profile {

std::vector<size_t> CallGraph::arcs_into(size_t f) const {
  std::vector<size_t> out;
  for (size_t i = 0; i < arcs.size(); ++i)
    if (arcs[i].callee == f) out.push_back(i);
  return out;
}

std::vector<size_t> CallGraph::arcs_out_of(size_t f) const {
  std::vector<size_t> out;
  for (size_t i = 0; i < arcs.size(); ++i)
    if (arcs[i].caller == f) out.push_back(i);
  return out;
}

namespace {

// Histogram counts charged to table ranges: a bin's count is shared among
// the functions its address range overlaps, in proportion to the overlap.
void charge_histogram(const GmonHistogram& h, const FunctionTable& table, uint64_t bias,
                      std::map<int64_t, double>* ticks, double* unattributed) {
  if (h.bins.empty()) return;
  const std::vector<FunctionRange>& ranges = table.ranges();
  const double low = static_cast<double>(h.low_pc - bias);
  const double width = static_cast<double>(h.high_pc - h.low_pc) / static_cast<double>(h.bins.size());
  for (size_t i = 0; i < h.bins.size(); ++i) {
    const double count = h.bins[i];
    if (count == 0) continue;
    const double lo = low + width * static_cast<double>(i);
    const double hi = lo + width;
    double charged = 0;
    // The first range that ends after lo.
    auto it = std::upper_bound(ranges.begin(), ranges.end(), lo,
                               [](double a, const FunctionRange& r) { return a < static_cast<double>(r.end); });
    if (width == 0) {
      if (it != ranges.end() && static_cast<double>(it->start) <= lo) {
        (*ticks)[it - ranges.begin()] += count;
        charged = count;
      }
    } else {
      for (; it != ranges.end() && static_cast<double>(it->start) < hi; ++it) {
        const double overlap = std::min(hi, static_cast<double>(it->end)) - std::max(lo, static_cast<double>(it->start));
        if (overlap <= 0) continue;
        const double credit = count * overlap / width;
        (*ticks)[it - ranges.begin()] += credit;
        charged += credit;
      }
    }
    *unattributed += count - charged;
  }
}

// Strongly connected components of the functions' call graph (self-arcs
// left out), iterative Tarjan: components come out callees first (reverse
// topological order of the condensed graph).
std::vector<std::vector<size_t>> components(size_t n, const std::vector<ProfileArc>& arcs) {
  std::vector<std::vector<size_t>> out_edges(n);
  for (const ProfileArc& a : arcs)
    if (a.caller != a.callee) out_edges[a.caller].push_back(a.callee);
  constexpr size_t kUnvisited = ~size_t{0};
  std::vector<size_t> index(n, kUnvisited), low(n, 0);
  std::vector<bool> on_stack(n, false);
  std::vector<size_t> stack;
  std::vector<std::pair<size_t, size_t>> work;  // (node, next edge)
  std::vector<std::vector<size_t>> result;
  size_t next_index = 0;
  for (size_t root = 0; root < n; ++root) {
    if (index[root] != kUnvisited) continue;
    work.push_back({root, 0});
    while (!work.empty()) {
      auto& [v, edge] = work.back();
      if (edge == 0 && index[v] == kUnvisited) {
        index[v] = low[v] = next_index++;
        stack.push_back(v);
        on_stack[v] = true;
      }
      if (edge < out_edges[v].size()) {
        const size_t w = out_edges[v][edge++];
        if (index[w] == kUnvisited) {
          work.push_back({w, 0});
        } else if (on_stack[w]) {
          low[v] = std::min(low[v], index[w]);
        }
        continue;
      }
      const size_t done = v;
      work.pop_back();
      if (!work.empty()) low[work.back().first] = std::min(low[work.back().first], low[done]);
      if (low[done] == index[done]) {
        std::vector<size_t> component;
        size_t w;
        do {
          w = stack.back();
          stack.pop_back();
          on_stack[w] = false;
          component.push_back(w);
        } while (w != done);
        std::sort(component.begin(), component.end());
        result.push_back(std::move(component));
      }
    }
  }
  return result;
}

// gprof's propagation: each node's (function's or cycle's) self and child
// ticks go up its incoming arcs in proportion to their call counts.
void propagate(CallGraph* g) {
  const size_t n = g->functions.size();
  const std::vector<std::vector<size_t>> sccs = components(n, g->arcs);
  std::vector<size_t> node_of(n);
  for (size_t c = 0; c < sccs.size(); ++c)
    for (size_t f : sccs[c]) node_of[f] = c;

  // Cycles, numbered by their lowest address.
  std::vector<size_t> cyclic;
  for (size_t c = 0; c < sccs.size(); ++c)
    if (sccs[c].size() > 1) cyclic.push_back(c);
  std::sort(cyclic.begin(), cyclic.end(), [&](size_t a, size_t b) { return sccs[a][0] < sccs[b][0]; });
  std::vector<int> cycle_of_node(sccs.size(), 0);
  for (size_t k = 0; k < cyclic.size(); ++k) {
    ProfileCycle cycle;
    cycle.number = static_cast<int>(k + 1);
    cycle.members = sccs[cyclic[k]];
    cycle_of_node[cyclic[k]] = cycle.number;
    for (size_t f : cycle.members) g->functions[f].cycle = cycle.number;
    g->cycles.push_back(std::move(cycle));
  }

  std::vector<double> node_self(sccs.size(), 0), node_child(sccs.size(), 0), node_calls(sccs.size(), 0);
  for (size_t f = 0; f < n; ++f) node_self[node_of[f]] += g->functions[f].self_ticks;
  for (const ProfileArc& a : g->arcs)
    if (node_of[a.caller] != node_of[a.callee]) node_calls[node_of[a.callee]] += static_cast<double>(a.count);

  std::vector<std::vector<size_t>> arcs_from_node(sccs.size());
  for (size_t i = 0; i < g->arcs.size(); ++i) arcs_from_node[node_of[g->arcs[i].caller]].push_back(i);
  // sccs are callees first: every callee node is final before its callers.
  for (size_t c = 0; c < sccs.size(); ++c) {
    for (size_t i : arcs_from_node[c]) {
      ProfileArc& a = g->arcs[i];
      const size_t callee = node_of[a.callee];
      if (callee == c || node_calls[callee] == 0) continue;
      const double share = static_cast<double>(a.count) / node_calls[callee];
      a.self_ticks = node_self[callee] * share;
      a.child_ticks = node_child[callee] * share;
      g->functions[a.caller].child_ticks += a.self_ticks + a.child_ticks;
      node_child[c] += a.self_ticks + a.child_ticks;
    }
  }
  for (ProfileCycle& cycle : g->cycles) {
    const size_t c = node_of[cycle.members[0]];
    cycle.self_ticks = node_self[c];
    cycle.child_ticks = node_child[c];
    cycle.calls = static_cast<uint64_t>(node_calls[c]);
    for (const ProfileArc& a : g->arcs)
      if (a.caller != a.callee && node_of[a.caller] == c && node_of[a.callee] == c) cycle.internal_calls += a.count;
  }
}

}  // namespace

CallGraph build_call_graph(const GmonFile& file, const FunctionTable& table, uint64_t bias) {
  CallGraph g;
  g.bias = bias;
  g.has_histogram = !file.histograms.empty();
  g.has_arcs = !file.arcs.empty();
  if (g.has_histogram) {
    g.rate = file.histograms[0].rate;
    g.dimension = file.histograms[0].dimension;
    g.abbreviation = file.histograms[0].abbreviation;
  }

  std::map<int64_t, double> ticks;
  for (const GmonHistogram& h : file.histograms) {
    for (uint16_t b : h.bins) g.total_ticks += b;
    charge_histogram(h, table, bias, &ticks, &g.unattributed_ticks);
  }
  if (g.unattributed_ticks < 1e-9) g.unattributed_ticks = 0;

  std::map<std::pair<int64_t, int64_t>, uint64_t> arc_counts;
  std::map<std::pair<int64_t, int64_t>, std::map<uint64_t, uint64_t>> arc_sites;
  for (const GmonArc& a : file.arcs) {
    const int64_t caller = table.find(a.from_pc - bias), callee = table.find(a.self_pc - bias);
    if (caller < 0 || callee < 0) {
      ++g.dropped_arcs;
      g.dropped_calls += a.count;
      continue;
    }
    arc_counts[{caller, callee}] += a.count;
    if (file.exact_call_sites) arc_sites[{caller, callee}][a.from_pc - bias] += a.count;
  }

  // The functions the profile names, in address order.
  std::map<int64_t, size_t> slot;
  for (const auto& [f, t] : ticks) slot[f] = 0;
  for (const auto& [arc, count] : arc_counts) {
    slot[arc.first] = 0;
    slot[arc.second] = 0;
  }
  for (auto& [f, index] : slot) {
    index = g.functions.size();
    const FunctionRange& r = table.ranges()[static_cast<size_t>(f)];
    g.functions.push_back(ProfileFunction{r.name, r.start, r.end, 0, 0, 0, 0, 0, std::nullopt});
  }
  for (const auto& [f, t] : ticks) g.functions[slot[f]].self_ticks = t;
  for (const auto& [arc, count] : arc_counts) {
    ProfileArc a;
    a.caller = slot[arc.first];
    a.callee = slot[arc.second];
    a.count = count;
    const auto& sites = arc_sites[arc];
    a.call_sites.assign(sites.begin(), sites.end());
    if (a.caller == a.callee) g.functions[a.callee].self_calls += count;
    else g.functions[a.callee].calls += count;
    g.arcs.push_back(a);
  }
  propagate(&g);
  return g;
}

}  // namespace framewalk::profile

#include "profile/sample_tree.hpp"

#include <algorithm>
#include <map>
#include <unordered_map>

namespace framewalk::profile {

namespace {

std::string base_name(std::string_view path) {
  if (const size_t slash = path.rfind('/'); slash != std::string_view::npos) path.remove_prefix(slash + 1);
  return std::string(path);
}

}  // namespace

FunctionIndex::FunctionIndex(const SampleProfile& p) {
  std::map<std::pair<std::string, std::string>, uint32_t> ids;
  std::vector<std::string> module_names;
  for (const SampleModule& m : p.modules()) module_names.push_back(base_name(p.string(m.path)));
  first_.reserve(p.frames().size() + 1);
  for (const SampleFrame& f : p.frames()) {
    first_.push_back(static_cast<uint32_t>(entries_.size()));
    const std::string module = f.module < module_names.size() ? module_names[f.module] : std::string();
    const std::span<const SourceLine> lines = p.lines_of(f);
    const size_t n = std::max<size_t>(lines.size(), 1);
    for (size_t i = 0; i < n; ++i) {
      std::string name = frame_name(p, f, i);
      auto [it, added] = ids.try_emplace({name, module}, static_cast<uint32_t>(functions_.size()));
      if (added) {
        ReportFunction fn{std::move(name), module, {}, 0};
        if (i < lines.size()) {
          fn.file = std::string(p.string(lines[i].file));
          fn.line = lines[i].line;
        }
        functions_.push_back(std::move(fn));
      }
      entries_.push_back(it->second);
    }
  }
  first_.push_back(static_cast<uint32_t>(entries_.size()));
}

std::optional<uint32_t> FunctionIndex::find(std::string_view name) const {
  for (uint32_t i = 0; i < functions_.size(); ++i)
    if (functions_[i].name == name) return i;
  return std::nullopt;
}

CallTree::CallTree(const SampleProfile& p, const FunctionIndex& index, const SampleFilter& filter) : index_(&index) {
  // Weight and samples per stack node.
  std::vector<uint64_t> weight(p.nodes().size(), 0), count(p.nodes().size(), 0);
  uint64_t root_weight = 0, root_count = 0;
  for (const Sample& s : p.samples()) {
    if (s.kind != filter.kind || (filter.tid && s.tid != *filter.tid)) continue;
    ++samples_;
    if (s.stack < weight.size()) {
      weight[s.stack] += s.weight;
      ++count[s.stack];
    } else {
      root_weight += s.weight;
      ++root_count;
    }
  }
  // Stack nodes into call-tree nodes; only the stacks that have samples
  // below them are kept (a parent's id is below its children's, so one pass
  // from the leaves up marks them).
  std::vector<bool> used(p.nodes().size(), false);
  for (size_t i = p.nodes().size(); i-- > 0;) {
    if (count[i] || used[i]) {
      used[i] = true;
      if (p.nodes()[i].parent != kNoNode) used[p.nodes()[i].parent] = true;
    }
  }
  nodes_.push_back(CallNode{});
  nodes_[0].self = root_weight;
  nodes_[0].self_samples = root_count;
  std::unordered_map<uint64_t, uint32_t> child;  // (parent << 32 | function << 1 | inlined) -> node
  leaf_.assign(p.nodes().size(), 0);
  for (uint32_t i = 0; i < p.nodes().size(); ++i) {
    if (!used[i]) continue;
    const StackNode& sn = p.nodes()[i];
    uint32_t at = sn.parent == kNoNode ? 0 : leaf_[sn.parent];
    const std::span<const uint32_t> fns = index.of_frame(sn.frame);
    for (size_t k = fns.size(); k-- > 0;) {  // outermost first
      const bool inl = k != fns.size() - 1;
      const uint64_t key = (uint64_t{at} << 32) | (uint64_t{fns[k]} << 1) | (inl ? 1 : 0);
      auto [it, added] = child.try_emplace(key, static_cast<uint32_t>(nodes_.size()));
      if (added) nodes_.push_back(CallNode{at, fns[k], inl, 0, 0, 0});
      at = it->second;
    }
    leaf_[i] = at;
    nodes_[at].self += weight[i];
    nodes_[at].self_samples += count[i];
  }
  for (CallNode& n : nodes_) n.total = n.self;
  for (size_t i = nodes_.size(); i-- > 1;) nodes_[nodes_[i].parent].total += nodes_[i].total;
  first_child_.assign(nodes_.size(), 0);
  next_sibling_.assign(nodes_.size(), 0);
  for (size_t i = nodes_.size(); i-- > 1;) {
    next_sibling_[i] = first_child_[nodes_[i].parent];
    first_child_[nodes_[i].parent] = static_cast<uint32_t>(i);
  }
}

std::vector<uint32_t> CallTree::children(uint32_t node) const {
  std::vector<uint32_t> out;
  for (uint32_t c = first_child_[node]; c; c = next_sibling_[c]) out.push_back(c);
  std::stable_sort(out.begin(), out.end(), [&](uint32_t a, uint32_t b) {
    if (nodes_[a].total != nodes_[b].total) return nodes_[a].total > nodes_[b].total;
    return index_->functions()[nodes_[a].function].name < index_->functions()[nodes_[b].function].name;
  });
  return out;
}

std::vector<bool> CallTree::recursive() const {
  // Depth-first with a count of each function on the path.
  std::vector<bool> out(nodes_.size(), false);
  std::vector<uint32_t> on_path(index_->functions().size(), 0);
  std::vector<std::pair<uint32_t, bool>> stack{{0, false}};  // node, leaving
  while (!stack.empty()) {
    auto [n, leaving] = stack.back();
    stack.pop_back();
    if (leaving) {
      if (n) --on_path[nodes_[n].function];
      continue;
    }
    if (n) {
      out[n] = on_path[nodes_[n].function] > 0;
      ++on_path[nodes_[n].function];
    }
    stack.push_back({n, true});
    for (uint32_t c = first_child_[n]; c; c = next_sibling_[c]) stack.push_back({c, false});
  }
  return out;
}

std::vector<FunctionTotal> CallTree::functions() const {
  std::vector<FunctionTotal> by(index_->functions().size());
  for (uint32_t i = 0; i < by.size(); ++i) by[i].function = i;
  const std::vector<bool> rec = recursive();
  for (uint32_t i = 1; i < nodes_.size(); ++i) {
    by[nodes_[i].function].self += nodes_[i].self;
    if (!rec[i]) by[nodes_[i].function].total += nodes_[i].total;
  }
  std::vector<FunctionTotal> out;
  for (const FunctionTotal& f : by)
    if (f.total) out.push_back(f);
  std::sort(out.begin(), out.end(), [&](const FunctionTotal& a, const FunctionTotal& b) {
    if (a.self != b.self) return a.self > b.self;
    if (a.total != b.total) return a.total > b.total;
    return index_->functions()[a.function].name < index_->functions()[b.function].name;
  });
  return out;
}

CallTree::Neighbours CallTree::neighbours(uint32_t function) const {
  Neighbours out;
  const std::vector<bool> rec = recursive();
  std::map<uint32_t, uint64_t> callers, callees;
  for (uint32_t i = 1; i < nodes_.size(); ++i) {
    const CallNode& n = nodes_[i];
    if (n.function == function) {
      out.self += n.self;
      if (!rec[i]) {
        out.total += n.total;
        callers[n.parent ? nodes_[n.parent].function : UINT32_MAX] += n.total;
      }
    }
    if (n.parent && nodes_[n.parent].function == function && !rec[n.parent]) callees[n.function] += n.total;
  }
  for (auto [f, w] : callers) out.callers.push_back({f, w});
  for (auto [f, w] : callees)
    if (f != UINT32_MAX) out.callees.push_back({f, w});
  const auto heavier = [](const Neighbour& a, const Neighbour& b) {
    return a.weight != b.weight ? a.weight > b.weight : a.function < b.function;
  };
  std::sort(out.callers.begin(), out.callers.end(), heavier);
  std::sort(out.callees.begin(), out.callees.end(), heavier);
  return out;
}

}  // namespace framewalk::profile

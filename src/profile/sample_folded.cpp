// Collapsed stacks ("outer;…;leaf WEIGHT", one line a distinct stack), as
// flamegraph.pl and speedscope read them: the samples of one kind
// (--kind), of one thread or all. Inline frames are named "NAME_[i]",
// flamegraph.pl's mark for them; ';' in a name becomes ':'.
#include "profile/sample_reports.hpp"

namespace framewalk::profile {

namespace {

std::string folded_name(const ReportFunction& f, bool inlined) {
  std::string s = f.name;
  for (char& c : s)
    if (c == ';' || c == '\n' || c == '\r') c = c == ';' ? ':' : ' ';
  if (inlined) s += "_[i]";
  return s;
}

}  // namespace

void write_sample_folded(const SampleProfile& p, const SampleReportOptions& o, dump::TextWriter& out) {
  const FunctionIndex index(p);
  const CallTree tree(p, index, SampleFilter{o.kind, o.tid});
  // Depth first, the path's names kept as a string cut back on the way up.
  std::string path;
  struct Item {
    uint32_t node;
    size_t path_size;
  };
  std::vector<Item> stack;
  const std::vector<uint32_t> roots = tree.children(0);
  for (size_t i = roots.size(); i-- > 0;) stack.push_back({roots[i], 0});
  if (tree.nodes()[0].self) out.str("[no frames] ").udec(tree.nodes()[0].self).ch('\n');
  while (!stack.empty()) {
    const Item it = stack.back();
    stack.pop_back();
    path.resize(it.path_size);
    const CallNode& n = tree.nodes()[it.node];
    if (!path.empty()) path.push_back(';');
    path += folded_name(index.functions()[n.function], n.inlined);
    if (n.self) out.str(path).ch(' ').udec(n.self).ch('\n');
    const std::vector<uint32_t> kids = tree.children(it.node);
    for (size_t i = kids.size(); i-- > 0;) stack.push_back({kids[i], path.size()});
  }
}

}  // namespace framewalk::profile

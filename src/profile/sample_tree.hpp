// A SampleProfile seen by function: every frame expanded to its named
// frames (inline frames first), the stacks merged into one call tree of
// functions with self and total weights, for one kind of sample (on- or
// off-CPU) and one thread or all. What every report format is written from
// (sample_reports.hpp), so that all formats show the same totals.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "profile/sample_profile.hpp"

namespace framewalk::profile {

// A function as reports name it: its name and the module it is in.
struct ReportFunction {
  std::string name;
  std::string module;  // the module's file name (no directory); empty when none
  std::string file;    // its source file, when known
  uint32_t line = 0;   // a line of it, when known
};

// The named frames of the profile: functions deduplicated by (name, module).
class FunctionIndex {
 public:
  explicit FunctionIndex(const SampleProfile& p);
  const std::vector<ReportFunction>& functions() const { return functions_; }
  // The functions of frame `f`, innermost first (inlined ones before the
  // function they are in); never empty.
  std::span<const uint32_t> of_frame(uint32_t f) const {
    return std::span<const uint32_t>(entries_).subspan(first_[f], first_[f + 1] - first_[f]);
  }
  // The first function of this name, if any.
  std::optional<uint32_t> find(std::string_view name) const;

 private:
  std::vector<ReportFunction> functions_;
  std::vector<uint32_t> entries_;
  std::vector<uint32_t> first_;  // frames + 1
};

struct SampleFilter {
  SampleKind kind = SampleKind::kOnCpu;
  std::optional<uint32_t> tid;  // all threads when unset
};

// The call tree of functions. Node 0 is the root (no function); every other
// node's parent has a lower id.
struct CallNode {
  uint32_t parent = 0;
  uint32_t function = 0;
  bool inlined = false;  // an inline frame (inlined into its parent's function)
  uint64_t self = 0;     // weight of the samples whose leaf this is
  uint64_t total = 0;    // self and the subtree's
  uint64_t self_samples = 0;
};

struct FunctionTotal {
  uint32_t function = 0;
  uint64_t self = 0;
  uint64_t total = 0;  // weight of the samples with the function on their stack (once, whatever the recursion)
};

class CallTree {
 public:
  CallTree(const SampleProfile& p, const FunctionIndex& index, const SampleFilter& filter);

  const std::vector<CallNode>& nodes() const { return nodes_; }
  // Children of a node, heaviest first.
  std::vector<uint32_t> children(uint32_t node) const;
  uint64_t total() const { return nodes_[0].total; }
  uint64_t samples() const { return samples_; }
  // By self weight, then total, then name; functions without weight left out.
  std::vector<FunctionTotal> functions() const;
  // The call-tree node of each stack node (0 for none): what a sample's
  // stack expands to.
  uint32_t node_of_stack(uint32_t stack) const { return stack < leaf_.size() ? leaf_[stack] : 0; }

  // Callers and callees of one function, with the weight through each.
  struct Neighbour {
    uint32_t function = 0;  // UINT32_MAX: the root (no caller) or self (no callee)
    uint64_t weight = 0;
  };
  struct Neighbours {
    uint64_t self = 0, total = 0;
    std::vector<Neighbour> callers, callees;
  };
  Neighbours neighbours(uint32_t function) const;

 private:
  // For each node, whether an ancestor is of the same function.
  std::vector<bool> recursive() const;

  const FunctionIndex* index_;
  std::vector<CallNode> nodes_;
  std::vector<uint32_t> leaf_;
  std::vector<uint32_t> first_child_, next_sibling_;
  uint64_t samples_ = 0;
};

}  // namespace framewalk::profile

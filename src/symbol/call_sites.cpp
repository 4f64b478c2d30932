#include "symbol/call_sites.hpp"

#include "symbol/function_index.hpp"

#include <algorithm>
#include <optional>

namespace framewalk::symbol {

namespace {
constexpr size_t kMaxTreeDepth = 4096;
constexpr int kMaxReferenceDepth = 16;

bool is_call_site(uint64_t t) { return t == tag::kCallSite || t == tag::kGnuCallSite; }

// The DIE a reference of a DIE in `unit` (of the supplementary file when
// `in_alt`) points at: in which file, at which .debug_info offset. None for a
// type signature (never a function).
struct DieRef {
  bool in_alt = false;
  uint64_t offset = 0;
};
std::optional<DieRef> die_reference(const UnitHeader& unit, bool in_alt, const FormValue& v) {
  switch (v.kind) {
    case FormClass::kUnitRef: return DieRef{in_alt, unit.offset + v.number};
    case FormClass::kSectionRef: return DieRef{in_alt, v.number};
    case FormClass::kAltRef: return DieRef{true, v.number};
    default: return std::nullopt;
  }
}
}  // namespace

const CallSite* FunctionCallSites::at_return(uint64_t return_pc) const {
  for (const CallSite& s : sites)
    if (s.return_pc == return_pc) return &s;
  return nullptr;
}

struct CallSiteIndex::Impl {
  DwarfSections main_sections;
  std::optional<DwarfSections> alt_sections;
  std::mutex mutex;
  std::unique_ptr<DwarfFile> main, alt;
  std::map<uint64_t, std::unique_ptr<FunctionCallSites>> cache;  // a null entry: not a readable subprogram

  void start() {
    if (main) return;
    main = std::make_unique<DwarfFile>(main_sections);
    if (alt_sections) alt = std::make_unique<DwarfFile>(*alt_sections);
  }
  std::unique_ptr<FunctionCallSites> read(uint64_t die);
  void resolve_origin(bool in_alt, uint64_t die, int depth, CallSite* site, bool* linkage_found);
};

CallSiteIndex::CallSiteIndex(const DwarfSections& sections, const DwarfSections* supplementary)
    : impl_(std::make_unique<Impl>()) {
  impl_->main_sections = sections;
  if (supplementary) impl_->alt_sections = *supplementary;
}

CallSiteIndex::~CallSiteIndex() = default;

const FunctionCallSites* CallSiteIndex::sites(uint64_t die) const {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  impl_->start();
  auto found = impl_->cache.find(die);
  if (found != impl_->cache.end()) return found->second.get();
  return impl_->cache.emplace(die, impl_->read(die)).first->second.get();
}

// The target of a call site whose origin is the DIE at `die`: its entry when
// it has code, else the name to find it by (a linkage name anywhere on its
// specification / abstract_origin chain, else the first DW_AT_name).
void CallSiteIndex::Impl::resolve_origin(bool in_alt, uint64_t die, int depth, CallSite* site,
                                         bool* linkage_found) {
  if (depth > kMaxReferenceDepth) return;
  DwarfFile* file = in_alt ? alt.get() : main.get();
  if (!file) return;
  const UnitHeader* unit = file->unit_containing(die);
  if (!unit) return;
  auto ctx = file->context(*unit);
  auto table = ctx ? file->abbrevs(unit->abbrev_offset) : Result<const AbbrevTable*>(ctx.error());
  auto r = file->reader_at(*unit, die);
  if (!ctx || !table || !r) return;
  std::optional<FormValue> low, ranges, name, linkage, origin, specification;
  auto read = file->read_die(*unit, **table, *r, [&](uint64_t at_name, const FormValue& v) {
    switch (at_name) {
      case at::kLowPc: low = v; break;
      case at::kRanges: ranges = v; break;
      case at::kName: name = v; break;
      case at::kLinkageName:
      case at::kMipsLinkageName: linkage = v; break;
      case at::kAbstractOrigin: origin = v; break;
      case at::kSpecification: specification = v; break;
      default: break;
    }
  });
  if (!read || !*read) return;
  if (depth == 0 && !in_alt) {  // code of its own: the entry
    if (low) {
      if (auto a = value_address(*ctx, *low)) {
        site->target = CallTargetKind::kAddress;
        site->address = *a;
        return;
      }
    } else if (ranges) {
      std::vector<AddressRange> list;
      if (read_ranges(*ctx, *ranges, &list) && !list.empty()) {
        site->target = CallTargetKind::kAddress;
        site->address = std::min_element(list.begin(), list.end(), [](const AddressRange& x, const AddressRange& y) {
                          return x.low < y.low;
                        })->low;
        return;
      }
    }
  }
  const Bytes alt_str = !in_alt && alt ? alt->sections().str : Bytes{};
  auto text = [&](const FormValue& v) -> std::optional<std::string_view> {
    if (in_alt && v.kind == FormClass::kAltStrOffset) return std::nullopt;
    auto s = value_string(*ctx, v, alt_str);
    if (!s || s->empty()) return std::nullopt;
    return *s;
  };
  if (linkage) {
    if (auto s = text(*linkage)) {
      site->target = CallTargetKind::kName;
      site->name = *s;
      *linkage_found = true;
      return;
    }
  }
  if (name && site->target != CallTargetKind::kName) {  // the first DW_AT_name, unless a linkage name follows
    if (auto s = text(*name)) {
      site->target = CallTargetKind::kName;
      site->name = *s;
    }
  }
  for (const std::optional<FormValue>* ref : {&origin, &specification}) {
    if (!*ref) continue;
    const std::optional<DieRef> target = die_reference(*unit, in_alt, **ref);
    if (!target || (target->offset == die && target->in_alt == in_alt)) continue;
    resolve_origin(target->in_alt, target->offset, depth + 1, site, linkage_found);
    if (*linkage_found) return;
  }
}

std::unique_ptr<FunctionCallSites> CallSiteIndex::Impl::read(uint64_t die) {
  const UnitHeader* unit = main->unit_containing(die);
  if (!unit) return nullptr;
  auto ctx = main->context(*unit);
  auto table = ctx ? main->abbrevs(unit->abbrev_offset) : Result<const AbbrevTable*>(ctx.error());
  auto reader = main->reader_at(*unit, die);
  if (!ctx || !table || !reader) return nullptr;
  ByteReader& r = *reader;
  auto out = std::make_unique<FunctionCallSites>();
  out->die = die;
  auto head = main->read_die(*unit, **table, r, [&](uint64_t name, const FormValue& v) {
    if ((name == at::kCallAllCalls || name == at::kCallAllTailCalls || name == at::kGnuAllCallSites ||
         name == at::kGnuAllTailCallSites) &&
        v.number != 0)
      out->all_tail_calls = true;
  });
  if (!head || !*head || (*head)->tag != tag::kSubprogram) return nullptr;
  if (!(*head)->has_children) return out;
  size_t depth = 1;   // levels open below the subprogram
  size_t nested = 0;  // the level of a nested subprogram's children (0: none open)
  while (depth > 0) {
    const uint64_t offset = r.absolute_offset();
    if (r.at_end()) {
      out->problem = DwarfProblem{Error{ErrorCode::kTruncated, offset}, ".debug_info"};
      break;
    }
    ByteReader peek = r;
    auto code = peek.uleb128();
    const Abbrev* next = code && *code != 0 ? (*table)->find(*code) : nullptr;
    const bool wanted = next && nested == 0 && is_call_site(next->tag);
    std::optional<FormValue> return_pc, low_pc, call_pc, target, origin;
    bool tail = false;
    auto abbrev = wanted ? main->read_die(*unit, **table, r,
                                          [&](uint64_t name, const FormValue& v) {
                                            switch (name) {
                                              case at::kCallReturnPc: return_pc = v; break;
                                              case at::kLowPc: low_pc = v; break;
                                              case at::kCallPc: call_pc = v; break;
                                              case at::kCallTailCall:
                                              case at::kGnuTailCall: tail = v.number != 0; break;
                                              case at::kCallTarget:
                                              case at::kGnuCallSiteTarget: target = v; break;
                                              case at::kCallOrigin: origin = v; break;
                                              case at::kAbstractOrigin:
                                                if (!origin) origin = v;
                                                break;
                                              default: break;
                                            }
                                          })
                         : main->skip_die(*unit, **table, r);
    if (!abbrev) {
      out->problem = DwarfProblem{abbrev.error(), ".debug_info"};
      break;
    }
    if (!*abbrev) {
      --depth;
      if (nested && depth < nested) nested = 0;
      continue;
    }
    const Abbrev& a = **abbrev;
    if (wanted) {
      CallSite s;
      s.die = offset;
      s.tail_call = tail;
      const std::optional<FormValue>& ret = return_pc ? return_pc : low_pc;
      auto address = ret ? value_address(*ctx, *ret) : Result<uint64_t>(Error{ErrorCode::kNotFound, offset});
      if (call_pc)
        if (auto c = value_address(*ctx, *call_pc)) s.call_pc = *c;
      if (target) {
        if (target->kind == FormClass::kAddress || target->kind == FormClass::kAddrIndex) {
          if (auto t = value_address(*ctx, *target)) {
            s.target = CallTargetKind::kAddress;
            s.address = *t;
          }
        }  // an expression: computed from the caller's registers, unknown here
      } else if (origin) {
        bool linkage = false;
        if (const std::optional<DieRef> ref = die_reference(*unit, false, *origin))
          resolve_origin(ref->in_alt, ref->offset, 0, &s, &linkage);
      }
      if (address) {  // a call site without its return address cannot be matched with a frame
        s.return_pc = *address;
        out->sites.push_back(s);
      }
    }
    if (a.has_children) {
      if (depth >= kMaxTreeDepth) {
        out->problem = DwarfProblem{Error{ErrorCode::kTooDeep, offset}, ".debug_info"};
        break;
      }
      if (a.tag == tag::kSubprogram && nested == 0) nested = depth + 1;
      ++depth;
    }
  }
  return out;
}

std::vector<TailCallFrame> find_tail_call_frames(uint64_t first_target, uint64_t callee_entry,
                                                 const TailCallGraph& graph, TailCallLimits limits) {
  if (first_target == callee_entry) return {};  // a direct call: nothing was left off
  struct Step {
    const CallSite* site;
    uint64_t entry, die;
  };
  std::vector<Step> path, chain;
  size_t callers = 0, callees = 0, steps = 0;
  bool found = false, failed = false;
  // Keeps what every chain found so far agrees on; false when nothing is left.
  auto candidate = [&]() {
    if (!found) {
      found = true;
      chain = path;
      callers = callees = chain.size();
      return true;
    }
    callers = std::min(callers, path.size());
    for (size_t i = 0; i < callers; ++i)
      if (chain[i].site != path[i].site) {
        callers = i;
        break;
      }
    callees = std::min(callees, path.size());
    for (size_t i = 0; i < callees; ++i)
      if (chain[chain.size() - 1 - i].site != path[path.size() - 1 - i].site) {
        callees = i;
        break;
      }
    return callers != 0 || callees != 0;
  };
  // Depth first through the tail calls of the function at `entry`.
  auto visit = [&](auto& self, uint64_t entry) -> void {
    const FunctionCallSites* f = graph.sites_of(entry);
    if (!f) {
      failed = true;
      return;
    }
    if (!f->all_tail_calls) return;
    for (const CallSite& s : f->sites) {
      if (!s.tail_call) continue;
      if (std::any_of(path.begin(), path.end(), [&](const Step& p) { return p.site->return_pc == s.return_pc; }))
        continue;
      if (++steps > limits.max_steps || path.size() >= limits.max_depth) {
        failed = true;
        return;
      }
      const std::optional<uint64_t> target = graph.target_of(s);
      if (!target) {
        failed = true;
        return;
      }
      path.push_back({&s, entry, f->die});
      if (*target == callee_entry) {
        if (!candidate()) failed = true;
      } else {
        self(self, *target);
      }
      path.pop_back();
      if (failed) return;
    }
  };
  visit(visit, first_target);
  if (failed || !found || chain.empty()) return {};
  std::vector<TailCallFrame> out;
  auto add = [&](const Step& s) { out.push_back({s.entry, s.die, s.site->return_pc}); };
  for (size_t i = 0; i < callees; ++i) add(chain[chain.size() - 1 - i]);
  if (callees != chain.size())
    for (size_t i = 0; i < callers; ++i) add(chain[callers - 1 - i]);
  return out;
}

const CallSite* ModuleCallGraph::call_site_at(uint64_t return_address) const {
  if (return_address == 0) return nullptr;
  const std::vector<FunctionLevel> caller = functions.chain(return_address - 1);  // the call itself
  if (caller.empty()) return nullptr;
  const FunctionCallSites* sites = call_sites.sites(caller.back().die);
  return sites ? sites->at_return(return_address) : nullptr;
}

std::optional<uint64_t> ModuleCallGraph::call_target(const CallSite& site) const {
  if (site.target == CallTargetKind::kAddress) return site.address;
  if (site.target == CallTargetKind::kName) return function_named(site.name);
  return std::nullopt;
}

std::vector<TailCallFrame> ModuleCallGraph::tail_calls_from(uint64_t first_target, uint64_t callee_entry) const {
  // The function with code that starts at `entry` (not one that merely covers it).
  auto sites_of = [&](uint64_t entry) -> const FunctionCallSites* {
    const std::vector<FunctionLevel> at = functions.chain(entry);
    if (at.empty() || at.back().entry != entry) return nullptr;
    return call_sites.sites(at.back().die);
  };
  auto target_of = [&](const CallSite& s) { return call_target(s); };
  return find_tail_call_frames(first_target, callee_entry, TailCallGraph{sites_of, target_of});
}

std::vector<TailCallFrame> ModuleCallGraph::tail_call_frames(uint64_t return_address, uint64_t callee_entry) const {
  const CallSite* site = call_site_at(return_address);
  if (!site) return {};
  const std::optional<uint64_t> first = call_target(*site);
  if (!first) return {};
  return tail_calls_from(*first, callee_entry);
}

}  // namespace framewalk::symbol

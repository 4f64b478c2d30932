#include "symbol/call_sites.hpp"

#include "symbol/function_index.hpp"

#include <algorithm>
#include <optional>

namespace framewalk::symbol {

namespace {
constexpr size_t kMaxTreeDepth = 4096;
constexpr int kMaxReferenceDepth = 16;

bool is_call_site(uint64_t t) { return t == tag::kCallSite || t == tag::kGnuCallSite; }

constexpr uint32_t kAltSource = kSupplementarySource;
constexpr uint64_t kSplitOffsetMask = (uint64_t{1} << kSplitDieShift) - 1;
}  // namespace

const CallSite* FunctionCallSites::at_return(uint64_t return_pc) const {
  for (const CallSite& s : sites)
    if (s.return_pc == return_pc) return &s;
  return nullptr;
}

struct CallSiteIndex::Impl {
  DwarfSections main_sections;
  std::optional<DwarfSections> alt_sections;
  const FunctionIndex* split_units = nullptr;
  std::mutex mutex;
  std::unique_ptr<DwarfFile> main, alt;
  // The split units read so far, by number: their own DwarfFile (the
  // FunctionIndex's is under its lock), with the skeleton's bases. A null
  // file: the index has no such unit.
  struct Split {
    SplitUnitView view;
    std::unique_ptr<DwarfFile> file;
  };
  std::map<uint32_t, Split> splits;
  std::map<uint64_t, std::unique_ptr<FunctionCallSites>> cache;  // a null entry: not a readable subprogram

  void start() {
    if (main) return;
    main = std::make_unique<DwarfFile>(main_sections);
    if (alt_sections) alt = std::make_unique<DwarfFile>(*alt_sections);
  }
  const Split* split(uint32_t number) {
    auto found = splits.find(number);
    if (found == splits.end()) {
      Split s;
      if (std::optional<SplitUnitView> v = split_units ? split_units->split_unit(number) : std::nullopt) {
        s.view = std::move(*v);
        s.file = std::make_unique<DwarfFile>(s.view.sections, &s.view.bases);
      }
      found = splits.emplace(number, std::move(s)).first;
    }
    return found->second.file ? &found->second : nullptr;
  }
  DwarfFile* file_for(uint32_t source) {
    if (source == 0) return main.get();
    if (source == kAltSource) return alt.get();
    const Split* s = split(source);
    return s ? s->file.get() : nullptr;
  }
  // A problem at `e.offset` of .debug_info of `source`: a split unit's names its .dwo.
  DwarfProblem problem(uint32_t source, Error e) {
    const Split* s = source != 0 && source != kAltSource ? split(source) : nullptr;
    return s ? s->view.problem(e, ".debug_info") : DwarfProblem{e, ".debug_info"};
  }
  std::unique_ptr<FunctionCallSites> read(uint64_t die);
  void resolve_origin(uint32_t source, uint64_t die, int depth, CallSite* site, bool* linkage_found);
};

CallSiteIndex::CallSiteIndex(const DwarfSections& sections, const DwarfSections* supplementary,
                             const FunctionIndex* split_units)
    : impl_(std::make_unique<Impl>()) {
  impl_->main_sections = sections;
  impl_->split_units = split_units;
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
void CallSiteIndex::Impl::resolve_origin(uint32_t source, uint64_t die, int depth, CallSite* site,
                                         bool* linkage_found) {
  if (depth > kMaxReferenceDepth) return;
  const bool in_alt = source == kAltSource;
  DwarfFile* file = file_for(source);
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
  const Bytes alt_str = source == 0 && alt ? alt->sections().str : Bytes{};
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
    const std::optional<DieRef> target = die_reference(*unit, source, **ref);
    if (!target || (target->offset == die && target->source == source)) continue;
    resolve_origin(target->source, target->offset, depth + 1, site, linkage_found);
    if (*linkage_found) return;
  }
}

// `tagged`: a main-file offset, or a split unit's offset with its number above kSplitDieShift.
std::unique_ptr<FunctionCallSites> CallSiteIndex::Impl::read(uint64_t tagged) {
  const uint32_t source = static_cast<uint32_t>(tagged >> kSplitDieShift);
  const uint64_t tag_bits = tagged & ~kSplitOffsetMask;
  const uint64_t die = tagged & kSplitOffsetMask;
  DwarfFile* file = file_for(source);
  if (!file) return nullptr;
  const UnitHeader* unit = file->unit_containing(die);
  if (!unit) return nullptr;
  auto ctx = file->context(*unit);
  auto table = ctx ? file->abbrevs(unit->abbrev_offset) : Result<const AbbrevTable*>(ctx.error());
  auto reader = file->reader_at(*unit, die);
  if (!ctx || !table || !reader) return nullptr;
  ByteReader& r = *reader;
  auto out = std::make_unique<FunctionCallSites>();
  out->die = tagged;
  auto head = file->read_die(*unit, **table, r, [&](uint64_t name, const FormValue& v) {
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
      out->problem = problem(source, Error{ErrorCode::kTruncated, offset});
      break;
    }
    ByteReader peek = r;
    auto code = peek.uleb128();
    const Abbrev* next = code && *code != 0 ? (*table)->find(*code) : nullptr;
    const bool wanted = next && nested == 0 && is_call_site(next->tag);
    std::optional<FormValue> return_pc, low_pc, call_pc, target, origin;
    bool tail = false;
    auto abbrev = wanted ? file->read_die(*unit, **table, r,
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
                         : file->skip_die(*unit, **table, r);
    if (!abbrev) {
      out->problem = problem(source, abbrev.error());
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
      s.die = tag_bits | offset;
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
        if (const std::optional<DieRef> ref = die_reference(*unit, source, *origin))
          resolve_origin(ref->source, ref->offset, 0, &s, &linkage);
      }
      if (address) {  // a call site without its return address cannot be matched with a frame
        s.return_pc = *address;
        out->sites.push_back(s);
      }
    }
    if (a.has_children) {
      if (depth >= kMaxTreeDepth) {
        out->problem = problem(source, Error{ErrorCode::kTooDeep, offset});
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

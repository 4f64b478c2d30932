#include "symbol/function_index.hpp"

#include <algorithm>
#include <array>
#include <set>

#include "base/keyed_cache.hpp"
#include "base/packed_leb128.hpp"
#include "symbol/line_program.hpp"
#include "symbol/line_table.hpp"

namespace framewalk::symbol {

namespace {
// Chains of abstract_origin/specification and DIE trees are followed this deep at most.
constexpr int kMaxReferenceDepth = 16;
constexpr size_t kMaxTreeDepth = 4096;

}  // namespace

// A function (subprogram or inlined subroutine) read back from its unit's
// packed nodes (Unit::packed): a large program has hundreds of thousands,
// most of them inlined calls, kept in 5 to 9 bytes each. Nodes are kept in
// DIE order: a node's descendants are the nodes after it of a greater
// function depth, its children those one deeper. What is printed of it
// (name, call site) is read from its DIE when asked for (Impl::about).
struct FunctionIndex::Node {
  uint32_t at = 0, end = 0;  // its record in Unit::packed, and where the next one starts
  uint64_t die = 0;          // offset from its unit's start
  uint64_t low = 0, high = 0;  // its first range
  uint32_t range_count = 0;
  uint32_t more_ranges = 0;  // where its ranges after the first are in Unit::packed (when read back)
  uint32_t depth = 0;        // of its DIE in the unit's tree (kMaxTreeDepth fits); subprograms only
  uint32_t function_depth = 0;  // functions around it
  bool inlined = false;
};

namespace {

// A node's record in Unit::packed:
//   flags: bit 0 inlined, bit 1 several ranges, bits 2-7 the function depth
//          (kDepthFollows: the depth follows as a ULEB128);
//   the length of the rest (ULEB128): a descent skips whatever is not a
//          child of the node it is in without decoding it;
//   then in LEB128:
//   a subprogram: its DIE's offset in the unit, its DIE's depth (ULEB128s),
//                 its first range's low less the unit's base (SLEB128): it
//                 can be read where by_low points, with nothing else;
//   an inlined call: its DIE's offset less its parent's (ULEB128), its
//                 first low less its parent's (SLEB128): it is read with the
//                 function it is inlined into, which comes before it;
//   the range count when several; the first range's length; each further
//   range's low less the previous range's high (SLEB128) and its length.
// Differences wrap modulo 2^64, so that any unit, however wide, fits.
constexpr uint8_t kInlined = 1, kSeveralRanges = 2;
constexpr unsigned kDepthShift = 2, kDepthFollows = 63;

}  // namespace

namespace {
// DIEs whose subtrees hold no DW_TAG_subprogram with code nor inlined
// subroutine: call sites (their parameters), array, enumeration and
// subroutine types. Not classes: gcc describes the code of a local class's
// member functions (a lambda's operator()) inside the class.
bool holds_no_code(uint32_t tag) {
  switch (tag) {
    case 0x01: case 0x04: case 0x15:  // DW_TAG_array_type, enumeration_type, subroutine_type
    case 0x48: case 0x4109:           // DW_TAG_call_site, DW_TAG_GNU_call_site
      return true;
    default:
      return false;
  }
}
}  // namespace

struct FunctionIndex::Unit {
  const UnitHeader* header = nullptr;  // in the main file
  // Where its DIEs are read: the main file's unit, or a skeleton's split unit (once found).
  DwarfFile* file = nullptr;
  const UnitHeader* die_header = nullptr;
  uint32_t source = 0;  // 0: the main file, else the split unit's number (Impl::split_files)
  bool skeleton = false;
  SkeletonInfo skeleton_info;
  SplitBases bases;
  std::vector<AddressRange> root_ranges;
  bool decoded = false;
  bool broken = false;
  bool root_read = false;
  std::optional<uint64_t> stmt_list;
  std::string_view comp_dir;
  std::vector<uint8_t> packed;  // its function nodes' records, in DIE order
  uint64_t base = 0;            // the first node's low: what subprograms' lows are offsets from
  struct Entry {
    uint32_t node, range;  // the `range`th range of the subprogram whose record starts at `node`
  };
  std::vector<Entry> by_low;     // subprogram ranges, sorted by low
  std::vector<uint64_t> lows;    // lows[i]: by_low[i]'s low (what a lookup searches, undecoded)
  std::vector<uint64_t> reach;   // reach[i]: the largest high of by_low[0..i]

  // Appends a node's record; `parent`: the node an inlined call is in.
  // `scratch`: room for the record's body while it is made.
  void pack(const Node& n, const Node* parent, const AddressRange* ranges, std::vector<uint8_t>& scratch) {
    const uint8_t depth = static_cast<uint8_t>(std::min<uint32_t>(n.function_depth, kDepthFollows));
    packed.push_back(static_cast<uint8_t>((n.inlined ? kInlined : 0) | (n.range_count > 1 ? kSeveralRanges : 0) |
                                          depth << kDepthShift));
    scratch.clear();
    if (depth == kDepthFollows) put_uleb(scratch, n.function_depth);
    if (n.inlined) {
      put_uleb(scratch, n.die - parent->die);
      put_sleb(scratch, static_cast<int64_t>(ranges[0].low - parent->low));
    } else {
      put_uleb(scratch, n.die);
      put_uleb(scratch, n.depth);
      put_sleb(scratch, static_cast<int64_t>(ranges[0].low - base));
    }
    if (n.range_count > 1) put_uleb(scratch, n.range_count);
    put_uleb(scratch, ranges[0].high - ranges[0].low);
    for (uint32_t k = 1; k < n.range_count; ++k) {
      put_sleb(scratch, static_cast<int64_t>(ranges[k].low - ranges[k - 1].high));
      put_uleb(scratch, ranges[k].high - ranges[k].low);
    }
    put_uleb(packed, scratch.size());
    packed.insert(packed.end(), scratch.begin(), scratch.end());
  }
  // What a record's first bytes say: enough to pass over it.
  struct RecordHeader {
    bool inlined;
    uint32_t function_depth;
    uint32_t end;  // where the next record starts
  };
  RecordHeader record_header(uint32_t at) const {
    const uint8_t* p = packed.data() + at;
    const uint8_t flags = *p++;
    const uint64_t length = get_uleb(p);
    RecordHeader h{static_cast<bool>(flags & kInlined), static_cast<uint32_t>(flags >> kDepthShift),
             static_cast<uint32_t>(p - packed.data() + length)};
    if (h.function_depth == kDepthFollows) h.function_depth = static_cast<uint32_t>(get_uleb(p));
    return h;
  }
  // The record at `at`: a subprogram's, or an inlined call's in `parent`.
  Node node(uint32_t at, const Node* parent = nullptr) const {
    const uint8_t* p = packed.data() + at;
    Node n;
    n.at = at;
    const uint8_t flags = *p++;
    const uint64_t length = get_uleb(p);
    n.end = static_cast<uint32_t>(p - packed.data() + length);
    n.inlined = flags & kInlined;
    n.function_depth = flags >> kDepthShift;
    if (n.function_depth == kDepthFollows) n.function_depth = static_cast<uint32_t>(get_uleb(p));
    if (n.inlined) {
      n.die = parent->die + get_uleb(p);
      n.low = parent->low + static_cast<uint64_t>(get_sleb(p));
    } else {
      n.die = get_uleb(p);
      n.depth = static_cast<uint32_t>(get_uleb(p));
      n.low = base + static_cast<uint64_t>(get_sleb(p));
    }
    n.range_count = flags & kSeveralRanges ? static_cast<uint32_t>(get_uleb(p)) : 1;
    n.high = n.low + get_uleb(p);
    n.more_ranges = static_cast<uint32_t>(p - packed.data());
    return n;
  }
  // Calls `f(low, high)` for each of a node's ranges until it returns true; whether one did.
  template <class F>
  bool any_range(const Node& n, F&& f) const {
    if (f(n.low, n.high)) return true;
    const uint8_t* p = packed.data() + n.more_ranges;
    for (uint64_t k = 1, high = n.high; k < n.range_count; ++k) {
      const uint64_t low = high + static_cast<uint64_t>(get_sleb(p));
      high = low + get_uleb(p);
      if (f(low, high)) return true;
    }
    return false;
  }
  AddressRange range(const Node& n, uint32_t k) const {
    AddressRange r{};
    uint32_t i = 0;
    any_range(n, [&](uint64_t low, uint64_t high) { return r = {low, high}, i++ == k; });
    return r;
  }
  bool covers(const Node& n, uint64_t address) const {
    return any_range(n, [&](uint64_t low, uint64_t high) { return address >= low && address < high; });
  }
  bool files_loaded = false;
  // The line header's paths, by DW_AT_call_file index: the shared line table's, or `files`.
  const LineTable::UnitPaths* shared_paths = nullptr;
  std::vector<std::string> files;
  size_t path_count = 0;  // those the header names
  std::string_view path(size_t i) const { return shared_paths ? (*shared_paths)[i] : std::string_view(files[i]); }
  bool zero_based_files = false;
};

struct FunctionIndex::Impl {
  DwarfSections main_sections;
  std::optional<DwarfSections> alt_sections;
  PathStyle style = PathStyle::kBinutils;
  const LineTable* shared_lines = nullptr;
  mutable std::mutex mutex;
  mutable std::unique_ptr<DwarfFile> main;
  mutable std::unique_ptr<DwarfFile> alt;
  std::unique_ptr<SplitUnitSource> split_source;
  static constexpr uint32_t kAltSource = kSupplementarySource;
  mutable std::vector<std::unique_ptr<DwarfFile>> split_files;  // source n is split_files[n - 1]
  struct SplitOrigin {
    std::string file;
    std::array<uint64_t, static_cast<size_t>(DwpSection::kCount)> bases{};
  };
  mutable std::vector<SplitOrigin> split_origins;  // by source - 1
  mutable bool started = false;
  mutable std::vector<Unit> units;  // compile and partial units of `main`, by offset
  struct UnitRange {
    uint64_t low, high;
    size_t unit;
  };
  mutable std::vector<UnitRange> unit_ranges;  // sorted by low
  mutable std::vector<uint64_t> unit_reach;
  mutable std::vector<size_t> rangeless;  // units without root ranges or aranges
  mutable std::vector<DwarfProblem> problems;
  // What is printed of a function's DIE: its name (down the
  // abstract_origin and specification chain) and, for an inlined one, its
  // call site. Read when first asked for.
  struct About {
    std::string_view name;
    bool linkage = false, final = false;
    bool has_call_file = false;
    uint32_t call_file = 0;  // as written (one past the last index: none that exists); when has_call_file
    uint32_t call_line = 0, call_column = 0;
  };
  mutable KeyedCache<About> about_cache;  // by FunctionLevel::die

  void start() const;
  void read_root(Unit& u) const;  // the root's ranges, and what makes it a skeleton
  void decode(Unit& u) const;
  bool open_split(Unit& u) const;
  void load_files(Unit& u) const;
  const About& about(uint32_t source, uint64_t die) const;
  // Fills `out`'s name from the DIE at `die` and what it refers to; at depth 0 also its call site.
  void resolve(uint32_t source, uint64_t die, int depth, About* out) const;
  bool chain_in(Unit& u, uint64_t address, std::vector<FunctionLevel>* out) const;
  DwarfFile* file_for(uint32_t source) const {
    return source == 0 ? main.get() : source == kAltSource ? alt.get() : split_files[source - 1].get();
  }
  void report(Error e, const char* section) const { problems.push_back({e, section, {}}); }
  // A problem of a unit's DIEs: in a split unit, in the .dwo's section of that name.
  void report(const Unit& u, Error e, const char* section) const {
    if (u.source == 0) return report(e, section);
    report_split(u.source, e, section);
  }
  // In a split unit's file: the .dwo section of that name, the offset in the
  // file's section (a .dwp's contribution's start added).
  void report_split(uint32_t source, Error e, const char* section) const {
    const SplitOrigin& origin = split_origins[source - 1];
    problems.push_back(split_unit_problem(origin.file, origin.bases, e, section));
  }
};

std::optional<DieRef> die_reference(const UnitHeader& unit, uint32_t source, const FormValue& v) {
  switch (v.kind) {
    case FormClass::kUnitRef: return DieRef{source, unit.offset + v.number};
    case FormClass::kSectionRef: return DieRef{source, v.number};
    case FormClass::kAltRef: return DieRef{kSupplementarySource, v.number};
    default: return std::nullopt;
  }
}

FunctionIndex::FunctionIndex(const DwarfSections& sections, const DwarfSections* supplementary, PathStyle style,
                             std::unique_ptr<SplitUnitSource> split)
    : impl_(std::make_unique<Impl>()) {
  impl_->main_sections = sections;
  impl_->split_source = std::move(split);
  impl_->style = style;
  if (supplementary) impl_->alt_sections = *supplementary;
}

FunctionIndex::~FunctionIndex() = default;

void FunctionIndex::Impl::read_root(Unit& u) const {
  if (u.root_read) return;
  u.root_read = true;
  const UnitHeader& h = *u.header;
  auto ctx = main->context(h);
  auto table = ctx ? main->abbrevs(h.abbrev_offset) : Result<const AbbrevTable*>(ctx.error());
  if (!ctx || !table) {
    report(ctx ? table.error() : ctx.error(), ".debug_info");
    u.broken = true;
    return;
  }
  auto r = main->reader_at(h, h.first_die);
  if (!r) return;
  std::optional<FormValue> low, high, ranges, dwo_name, comp_dir, stmt_list;
  std::optional<uint64_t> gnu_dwo_id, gnu_ranges_base;
  auto root = main->read_die(h, **table, *r, [&](uint64_t name, const FormValue& v) {
    if (name == at::kLowPc) low = v;
    else if (name == at::kHighPc) high = v;
    else if (name == at::kRanges) ranges = v;
    else if (name == at::kDwoName || name == at::kGnuDwoName) dwo_name = v;
    else if (name == at::kCompDir) comp_dir = v;
    else if (name == at::kStmtList) stmt_list = v;
    else if (name == at::kGnuDwoId) gnu_dwo_id = v.number;
    else if (name == at::kGnuRangesBase) gnu_ranges_base = v.number;
  });
  if (!root) {
    report(root.error(), ".debug_info");
    u.broken = true;
    return;
  }
  // A skeleton: its split unit is found when an address first falls in it.
  if (h.unit_type == ut::kSkeleton || (h.version < 5 && dwo_name)) {
    u.skeleton = true;
    SkeletonInfo& k = u.skeleton_info;
    k.unit_offset = h.offset;
    k.version = h.version;
    k.dwo_id = h.version >= 5 ? h.signature : gnu_dwo_id.value_or(0);
    const Bytes alt_str = alt ? alt->sections().str : Bytes{};
    if (dwo_name)
      if (auto text = value_string(*ctx, *dwo_name, alt_str)) k.dwo_name = *text;
    if (comp_dir)
      if (auto text = value_string(*ctx, *comp_dir, alt_str)) k.comp_dir = u.comp_dir = *text;
    if (stmt_list && stmt_list->kind != FormClass::kString) u.stmt_list = stmt_list->number;
    u.bases.addr_base = ctx->has_addr_base ? ctx->addr_base : h.version >= 5 ? (h.dwarf64 ? 16 : 8) : 0;
    u.bases.ranges_base = gnu_ranges_base.value_or(0);
    u.bases.base_address = ctx->base_address;
  }
  if (ranges) {
    auto read = read_ranges(*ctx, *ranges, &u.root_ranges);
    if (!read) report(read.error(), h.version >= 5 ? ".debug_rnglists" : ".debug_ranges");
  } else if (low && high) {
    auto l = value_address(*ctx, *low);
    if (l) {
      uint64_t hi = high->kind == FormClass::kConstant ? *l + high->number : 0;
      if (high->kind != FormClass::kConstant) {
        auto a = value_address(*ctx, *high);
        if (a) hi = *a;
      }
      if (*l < hi) u.root_ranges.push_back({*l, hi});
    }
  }
}

void FunctionIndex::Impl::start() const {
  if (started) return;
  started = true;
  main = std::make_unique<DwarfFile>(main_sections);
  problems.insert(problems.end(), main->problems().begin(), main->problems().end());
  if (alt_sections) alt = std::make_unique<DwarfFile>(*alt_sections);
  for (const UnitHeader& h : main->units()) {
    if (h.unit_type != ut::kCompile && h.unit_type != ut::kPartial && h.unit_type != ut::kSkeleton) continue;
    Unit u;
    u.header = &h;
    u.file = main.get();
    u.die_header = &h;
    units.push_back(std::move(u));
  }
  // .debug_aranges, when every compile unit has a set there.
  std::vector<DwarfProblem> arange_problems;
  std::vector<ArangeSet> sets = read_aranges(main_sections.aranges, main_sections.endian, &arange_problems);
  problems.insert(problems.end(), arange_problems.begin(), arange_problems.end());
  std::map<uint64_t, size_t> by_offset;
  for (size_t i = 0; i < units.size(); ++i) by_offset[units[i].header->offset] = i;
  std::set<uint64_t> covered;
  for (const ArangeSet& s : sets) covered.insert(s.unit_offset);
  bool complete = !sets.empty() && arange_problems.empty();
  for (const Unit& u : units)
    if (u.header->unit_type == ut::kCompile && !covered.count(u.header->offset)) complete = false;
  // Without complete aranges, the units' own ranges are in their roots: every
  // root now. With them, a unit's root is read when an address first falls
  // in the unit (a cold file's first answer need not parse every unit's
  // abbreviations).
  if (!complete)
    for (Unit& u : units) read_root(u);
  std::vector<bool> ranged(units.size(), false);
  if (complete) {
    for (const ArangeSet& s : sets) {
      auto it = by_offset.find(s.unit_offset);
      if (it == by_offset.end()) continue;
      for (const AddressRange& r : s.ranges) unit_ranges.push_back({r.low, r.high, it->second});
      ranged[it->second] = !s.ranges.empty();
    }
  } else {
    for (size_t i = 0; i < units.size(); ++i) {
      for (const AddressRange& r : units[i].root_ranges) unit_ranges.push_back({r.low, r.high, i});
      ranged[i] = !units[i].root_ranges.empty();
    }
  }
  for (size_t i = 0; i < units.size(); ++i)
    if (!ranged[i] && !units[i].broken) rangeless.push_back(i);
  std::sort(unit_ranges.begin(), unit_ranges.end(),
            [](const UnitRange& a, const UnitRange& b) { return a.low < b.low; });
  uint64_t reach = 0;
  for (const UnitRange& r : unit_ranges) unit_reach.push_back(reach = std::max(reach, r.high));
}

bool FunctionIndex::Impl::open_split(Unit& u) const {
  const SkeletonInfo& k = u.skeleton_info;
  if (!split_source) {
    problems.push_back({Error{ErrorCode::kSplitUnitNotFound, k.unit_offset}, ".debug_info", std::string(k.dwo_name)});
    return false;
  }
  auto found = split_source->find(k, main_sections, &problems);
  if (!found) return false;
  auto file = std::make_unique<DwarfFile>(found->sections, &u.bases);
  split_origins.push_back({found->file, found->bases});
  const uint32_t source = static_cast<uint32_t>(split_origins.size());
  auto unusable = [&](Error e) {  // keeps the origin for the report, the source stays unused
    report_split(source, e, ".debug_info");
    return false;
  };
  for (const DwarfProblem& p : file->problems()) report_split(source, p.error, ".debug_info");
  // The split compile unit (a .dwo may hold type units too).
  const UnitHeader* split = nullptr;
  for (const UnitHeader& h : file->units())
    if (h.version >= 5 ? h.unit_type == ut::kSplitCompile : h.unit_type == ut::kCompile) {
      split = &h;
      break;
    }
  if (!split) return unusable(Error{ErrorCode::kSplitUnitNotFound, 0});
  // Its dwo id must be the skeleton's: a stale .dwo describes other code.
  std::optional<uint64_t> id;
  if (split->version >= 5) {
    id = split->signature;
  } else if (auto table = file->abbrevs(split->abbrev_offset)) {
    if (auto r = file->reader_at(*split, split->first_die)) {
      auto root = file->read_die(*split, **table, *r, [&](uint64_t name, const FormValue& v) {
        if (name == at::kGnuDwoId) id = v.number;
      });
      (void)root;
    }
  }
  if (!id || *id != k.dwo_id) return unusable(Error{ErrorCode::kSplitUnitMismatch, split->offset});
  u.file = file.get();
  u.die_header = split;
  u.source = source;
  split_files.resize(source);
  split_files[source - 1] = std::move(file);
  return true;
}

void FunctionIndex::Impl::decode(Unit& u) const {
  if (u.decoded) return;
  u.decoded = true;
  read_root(u);
  if (u.broken) return;
  if (u.skeleton && !open_split(u)) return;  // the line table still answers
  DwarfFile* file = u.file;
  const UnitHeader& h = *u.die_header;
  auto ctx = file->context(h);
  if (!ctx) {
    report(u, ctx.error(), ".debug_info");
    u.broken = true;
    return;
  }
  auto table = file->abbrevs(h.abbrev_offset);
  if (!table) {
    report(u, table.error(), ".debug_abbrev");
    u.broken = true;
    return;
  }
  auto reader = file->reader_at(h, h.first_die);
  if (!reader) {
    u.broken = true;
    return;
  }
  ByteReader& r = *reader;
  // Per open level: the function depth of the function node DIEs there belong to, or -1.
  std::vector<int32_t> enclosing;
  // Nodes are packed as they are found: the last one (what the next one is
  // packed against) and a node's ranges, while it is read.
  std::vector<Node> open_functions;  // by function depth: the node last packed there (an inlined call's parent)
  bool packed_any = false;
  std::vector<AddressRange> ranges;
  std::vector<uint8_t> scratch;
  struct SubprogramRange {
    AddressRange range;
    Unit::Entry entry;
  };
  std::vector<SubprogramRange> subprogram_ranges;  // by_low, lows and reach, once sorted
  const uint64_t unit_start = h.offset;
  bool root = true;
  while (!r.at_end()) {
    const uint64_t die = r.absolute_offset();
    std::optional<FormValue> low, high, range_list, stmt_list, comp_dir;
    // Only the root and functions are looked at: other DIEs are skipped, their values not decoded.
    bool looked_at = root;
    if (!looked_at) {
      ByteReader peek = r;
      auto code = peek.uleb128();
      const Abbrev* next = code && *code != 0 ? (*table)->find(*code) : nullptr;
      looked_at = next && (next->tag == tag::kSubprogram || next->tag == tag::kInlinedSubroutine);
      // Some DIEs' children hold no function with code: jumped
      // over by the DIE's DW_AT_sibling (gcc gives one to most DIEs with
      // children), which must lead past the DIE and stay in the unit.
      if (next && next->has_children && holds_no_code(next->tag)) {
        std::optional<uint64_t> sibling;
        ByteReader probe = r;
        static constexpr uint16_t kSiblingOnly[] = {at::kSibling};
        auto read = file->read_die(h, **table, probe, kSiblingOnly, [&](uint64_t, const FormValue& v) {
          if (v.kind == FormClass::kUnitRef) sibling = h.offset + v.number;
        });
        if (read && *read && sibling && *sibling >= probe.absolute_offset() && *sibling < h.end &&
            r.seek(static_cast<size_t>(*sibling)).ok())
          continue;
      }
    }
    auto read = [&](uint64_t name, const FormValue& v) {
      switch (name) {
        case at::kLowPc: low = v; break;
        case at::kHighPc: high = v; break;
        case at::kRanges: range_list = v; break;
        case at::kStmtList: stmt_list = v; break;
        case at::kCompDir: comp_dir = v; break;
        default: break;
      }
    };
    static constexpr uint16_t kRootWanted[] = {at::kLowPc, at::kHighPc, at::kRanges, at::kStmtList, at::kCompDir};
    const std::span<const uint16_t> wanted(kRootWanted, root ? std::size(kRootWanted) : 3);
    auto abbrev = looked_at ? file->read_die(h, **table, r, wanted, read) : file->skip_die(h, **table, r);
    if (!abbrev) {
      // What was decoded before the fault still answers.
      report(u, abbrev.error(), ".debug_info");
      u.broken = true;
      break;
    }
    if (!*abbrev) {
      if (enclosing.empty()) break;  // padding after the root's children
      enclosing.pop_back();
      if (enclosing.empty()) break;
      continue;
    }
    const Abbrev& a = **abbrev;
    if (root) {
      root = false;
      // A split unit's call files index its skeleton's line table.
      if (stmt_list && stmt_list->kind != FormClass::kString && !u.skeleton) u.stmt_list = stmt_list->number;
      if (comp_dir && u.comp_dir.empty()) {  // a skeleton's is known already
        auto dir = value_string(*ctx, *comp_dir, alt ? alt->sections().str : Bytes{});
        if (dir) u.comp_dir = *dir;
      }
      if (!a.has_children) break;
      enclosing.push_back(-1);
      continue;
    }
    int32_t created = -1;
    const int32_t parent = enclosing.empty() ? -1 : enclosing.back();
    const bool is_sub = a.tag == tag::kSubprogram;
    const bool is_inline = a.tag == tag::kInlinedSubroutine && parent >= 0;
    if (is_sub || is_inline) {
      ranges.clear();
      if (range_list) {
        auto read = read_ranges(*ctx, *range_list, &ranges);
        if (!read) {
          report(u, read.error(), h.version >= 5 ? ".debug_rnglists" : ".debug_ranges");
          ranges.clear();
        }
      } else if (low && high) {
        auto l = value_address(*ctx, *low);
        std::optional<uint64_t> hi;
        if (l && (high->kind == FormClass::kConstant || high->kind == FormClass::kSigned)) {
          hi = *l + high->number;
        } else if (l) {
          auto a2 = value_address(*ctx, *high);
          if (a2) hi = *a2;
          else report(a2.error(), ".debug_addr");
        } else {
          report(l.error(), ".debug_addr");
        }
        if (l && hi && *l < *hi) ranges.push_back({*l, *hi});
      }
      // Records are found by 32-bit offsets; one takes at most 51 bytes and 20 a range more.
      if (!ranges.empty() && u.packed.size() + 20 * uint64_t{ranges.size()} + 51 > UINT32_MAX) {
        report(u, Error{ErrorCode::kUnitTooLarge, die}, ".debug_info");
        u.broken = true;
        break;
      }
      if (!ranges.empty()) {
        Node n;
        n.die = die - unit_start;
        n.low = ranges[0].low;
        n.range_count = static_cast<uint32_t>(ranges.size());
        n.inlined = is_inline;
        n.depth = static_cast<uint32_t>(enclosing.size());
        n.function_depth = parent >= 0 ? static_cast<uint32_t>(parent) + 1u : 0u;
        if (!packed_any) u.base = n.low;
        const auto at = static_cast<uint32_t>(u.packed.size());
        u.pack(n, is_inline ? &open_functions[n.function_depth - 1] : nullptr, ranges.data(), scratch);
        if (!is_inline)
          for (uint32_t k = 0; k < n.range_count; ++k) subprogram_ranges.push_back({ranges[k], {at, k}});
        open_functions.resize(n.function_depth + 1);
        open_functions[n.function_depth] = n;
        packed_any = true;
        created = static_cast<int32_t>(n.function_depth);
      }
    }
    if (a.has_children) {
      if (enclosing.size() >= kMaxTreeDepth) {
        report(u, Error{ErrorCode::kTooDeep, die}, ".debug_info");
        u.broken = true;
        break;
      }
      enclosing.push_back(created >= 0 ? created : parent);
    }
  }
  // Decoded units stay for the index's life: no room left over from growing.
  u.packed.shrink_to_fit();
  std::sort(subprogram_ranges.begin(), subprogram_ranges.end(), [](const SubprogramRange& x, const SubprogramRange& y) {
    if (x.range.low != y.range.low) return x.range.low < y.range.low;
    return x.entry.node != y.entry.node ? x.entry.node < y.entry.node : x.entry.range < y.entry.range;
  });
  u.by_low.reserve(subprogram_ranges.size());
  u.lows.reserve(subprogram_ranges.size());
  u.reach.reserve(subprogram_ranges.size());
  uint64_t reach = 0;
  for (const SubprogramRange& r : subprogram_ranges) {
    u.by_low.push_back(r.entry);
    u.lows.push_back(r.range.low);
    u.reach.push_back(reach = std::max(reach, r.range.high));
  }
}

void FunctionIndex::Impl::load_files(Unit& u) const {
  if (u.files_loaded) return;
  u.files_loaded = true;
  if (!u.stmt_list) return;
  if (shared_lines) {
    if (auto files = shared_lines->unit_files(*u.stmt_list)) {
      u.shared_paths = files->paths;
      u.path_count = files->header_files;
      u.zero_based_files = files->zero_based;
      return;
    }
  }
  LineSections s;
  s.line = main_sections.line;
  s.line_str = main_sections.line_str;
  s.str = main_sections.str;
  s.endian = main_sections.endian;
  s.address_size = u.header->address_size;
  auto header = parse_line_header(s, *u.stmt_list);
  if (!header) {
    report(header.error(), ".debug_line");
    return;
  }
  u.zero_based_files = header->zero_based();
  for (const LineFileEntry& f : header->files) u.files.push_back(resolve_file_path(*header, f, u.comp_dir, style));
  u.path_count = u.files.size();
}

void FunctionIndex::share_paths(const LineTable& lines) { impl_->shared_lines = &lines; }

void FunctionIndex::Impl::resolve(uint32_t source, uint64_t die, int depth, About* out) const {
  const bool in_alt = source == kAltSource;
  if (depth > kMaxReferenceDepth) {
    report(Error{ErrorCode::kTooDeep, die}, ".debug_info");
    return;
  }
  DwarfFile* file = file_for(source);
  const UnitHeader* unit = file->unit_containing(die);
  const char* section = in_alt ? ".debug_info (supplementary)" : ".debug_info";  // split: made .dwo's by report
  auto report = [&](Error e, const char* where) {
    if (source && !in_alt) report_split(source, e, where);
    else problems.push_back({e, where, {}});
  };
  if (!unit) {
    report(Error{ErrorCode::kBadReference, die}, section);
    return;
  }
  auto ctx = file->context(*unit);
  auto table = ctx ? file->abbrevs(unit->abbrev_offset) : Result<const AbbrevTable*>(ctx.error());
  auto r = file->reader_at(*unit, die);
  if (!ctx || !table || !r) {
    report(!ctx ? ctx.error() : !table ? table.error() : r.error(), section);
    return;
  }
  std::optional<FormValue> own_name, linkage_name, origin, specification;
  static constexpr uint16_t kWanted[] = {at::kName,           at::kLinkageName, at::kMipsLinkageName,
                                         at::kAbstractOrigin, at::kSpecification, at::kCallFile,
                                         at::kCallLine,       at::kCallColumn};
  auto read = file->read_die(*unit, **table, *r, kWanted, [&](uint64_t at_name, const FormValue& v) {
    if (at_name == at::kName) own_name = v;
    else if (at_name == at::kLinkageName || at_name == at::kMipsLinkageName) linkage_name = v;
    else if (at_name == at::kAbstractOrigin) origin = v;
    else if (at_name == at::kSpecification) specification = v;
    else if (depth > 0) return;
    else if (at_name == at::kCallFile && v.kind == FormClass::kConstant) {
      out->call_file = static_cast<uint32_t>(std::min<uint64_t>(v.number, UINT32_MAX));
      out->has_call_file = true;
    } else if (at_name == at::kCallLine) {
      out->call_line = static_cast<uint32_t>(v.number);
    } else if (at_name == at::kCallColumn) {
      out->call_column = static_cast<uint32_t>(v.number);
    }
  });
  if (!read || !*read) {
    report(read ? Error{ErrorCode::kBadReference, die} : read.error(), section);
    return;
  }
  // Strings of a supplementary file's DIE are its own; its GNU_strp_alt are not used there.
  const Bytes alt_str = !in_alt && alt ? alt->sections().str : Bytes{};
  auto text = [&](const FormValue& v) -> std::optional<std::string_view> {
    if (in_alt && v.kind == FormClass::kAltStrOffset) return std::nullopt;
    auto s = value_string(*ctx, v, alt_str);
    if (!s) {
      report(s.error(), s.error().code == ErrorCode::kNeedsSupplementary ? section : ".debug_str");
      return std::nullopt;
    }
    return *s;
  };
  if (linkage_name) {
    if (auto s = text(*linkage_name)) {
      out->name = *s;
      out->linkage = true;
      out->final = true;
      return;
    }
  }
  if (own_name && out->name.empty()) {
    if (auto s = text(*own_name)) {
      out->name = *s;
      out->final = !language_mangles(ctx->language);
    }
  }
  for (const std::optional<FormValue>* ref : {&origin, &specification}) {
    if (!*ref) continue;
    const std::optional<DieRef> ref_to = die_reference(*unit, source, **ref);
    if (!ref_to) continue;
    if (ref_to->source == kAltSource && !alt) {
      report(Error{ErrorCode::kNeedsSupplementary, die}, section);
      continue;
    }
    const uint32_t target_source = ref_to->source;
    const uint64_t target = ref_to->offset;
    if (target == die && target_source == source) continue;
    resolve(target_source, target, depth + 1, out);
    if (out->linkage) return;
  }
}

const FunctionIndex::Impl::About& FunctionIndex::Impl::about(uint32_t source, uint64_t die) const {
  const uint64_t key = source ? uint64_t{source} << kSplitDieShift | die : die;
  if (const About* known = about_cache.find(key)) return *known;
  About a;
  resolve(source, die, 0, &a);
  return about_cache.insert(key, a);
}

bool FunctionIndex::Impl::chain_in(Unit& u, uint64_t address, std::vector<FunctionLevel>* out) const {
  decode(u);
  // The deepest subprogram covering the address (nested functions lie inside their parents).
  auto it = std::upper_bound(u.lows.begin(), u.lows.end(), address);
  std::optional<Node> best;
  for (size_t i = static_cast<size_t>(it - u.lows.begin()); i-- > 0;) {
    if (u.reach[i] <= address) break;
    const Unit::Entry& e = u.by_low[i];
    const Node n = u.node(e.node);
    if (address < u.range(n, e.range).high &&
        (!best || n.depth > best->depth || (n.depth == best->depth && n.at > best->at)))
      best = n;
  }
  if (!best) return false;
  // Down the inlined calls that cover the address: among a node's
  // descendants (the nodes after it deeper than it), its children.
  std::vector<Node> path{*best};
  for (uint32_t at = best->end; at < u.packed.size();) {
    const Unit::RecordHeader h = u.record_header(at);
    const unsigned child_depth = path.back().function_depth + 1u;
    if (h.function_depth < child_depth) break;
    if (h.function_depth == child_depth && h.inlined) {
      const Node child = u.node(at, &path.back());
      if (u.covers(child, address)) path.push_back(child);
    }
    at = h.end;
  }
  load_files(u);
  out->clear();
  const uint64_t unit_start = u.die_header->offset;
  for (size_t i = path.size(); i-- > 0;) {
    const Node& n = path[i];
    const uint64_t die = unit_start + n.die;
    const About& known = about(u.source, die);
    FunctionLevel level;
    level.name = known.name;
    level.linkage_name = known.linkage;
    level.final_name = known.final;
    level.entry = n.low;
    level.die = u.source ? uint64_t{u.source} << kSplitDieShift | die : die;
    level.inlined = n.inlined;
    if (n.inlined) {
      if (known.has_call_file) {
        const uint64_t index = u.zero_based_files ? known.call_file : known.call_file - uint64_t{1};
        if (index < u.path_count) level.call_file = u.path(static_cast<size_t>(index));
      }
      level.call_line = known.call_line;
      level.call_column = known.call_column;
    }
    out->push_back(level);
  }
  return true;
}

std::vector<FunctionLevel> FunctionIndex::chain(uint64_t address) const {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  Impl& m = *impl_;
  m.start();
  std::vector<FunctionLevel> out;
  auto it = std::upper_bound(m.unit_ranges.begin(), m.unit_ranges.end(), address,
                             [](uint64_t a, const Impl::UnitRange& r) { return a < r.low; });
  std::vector<size_t> tried;
  for (size_t i = static_cast<size_t>(it - m.unit_ranges.begin()); i-- > 0;) {
    if (m.unit_reach[i] <= address) break;
    const Impl::UnitRange& r = m.unit_ranges[i];
    if (address >= r.high || std::find(tried.begin(), tried.end(), r.unit) != tried.end()) continue;
    tried.push_back(r.unit);
    if (m.chain_in(m.units[r.unit], address, &out)) return out;
  }
  for (size_t unit : m.rangeless)
    if (m.chain_in(m.units[unit], address, &out)) return out;
  return {};
}

std::vector<uint64_t> FunctionIndex::function_entries() const {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  Impl& m = *impl_;
  m.start();
  std::vector<uint64_t> out;
  for (Unit& u : m.units) {
    m.decode(u);
    for (uint32_t at = 0; at < u.packed.size(); at = u.record_header(at).end)
      if (!u.record_header(at).inlined) out.push_back(u.node(at).low);
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

std::vector<DwarfProblem> FunctionIndex::problems() const {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  return impl_->problems;
}

std::optional<SplitUnitView> FunctionIndex::split_unit(uint32_t number) const {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  const Impl& m = *impl_;
  if (number == 0 || number > m.split_files.size() || !m.split_files[number - 1]) return std::nullopt;
  for (const Unit& u : m.units) {
    if (u.source != number) continue;
    SplitUnitView v;
    v.sections = u.file->sections();
    v.bases = u.bases;
    v.unit_offset = u.die_header->offset;
    v.file = m.split_origins[number - 1].file;
    v.package_bases = m.split_origins[number - 1].bases;
    return v;
  }
  return std::nullopt;
}

}  // namespace framewalk::symbol

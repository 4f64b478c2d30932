#include "symbol/line_table.hpp"

#include <algorithm>

#include "base/packed_leb128.hpp"
#include "symbol/unit_roots.hpp"

namespace framewalk::symbol {

std::string resolve_file_path(const LineHeader& h, const LineFileEntry& entry, std::string_view comp_dir,
                              PathStyle style) {
  const std::string_view name = entry.name;
  if (!name.empty() && name[0] == '/') return std::string(name);
  // LLVM: a DWARF 5 file of directory 0 is that directory's, without DW_AT_comp_dir.
  if (style == PathStyle::kLlvm && h.zero_based() && entry.directory == 0 && !h.directories.empty()) comp_dir = {};
  std::string_view subdir;
  bool has_subdir = false;
  // v2-4 number directories from 1 (0 is the unit's own); v5 from 0.
  const uint64_t dir = h.zero_based() ? entry.directory : entry.directory - 1;
  if (dir < h.directories.size()) {
    subdir = h.directories[static_cast<size_t>(dir)];
    has_subdir = true;
  }
  std::string_view dir_name;
  bool has_dir = false;
  if (!has_subdir || subdir.empty() || subdir[0] != '/') {
    dir_name = comp_dir;
    has_dir = !comp_dir.empty();
  }
  if (!has_dir) {
    dir_name = subdir;
    has_dir = has_subdir;
    has_subdir = false;
  }
  if (!has_dir) return std::string(name);
  std::string out(dir_name);
  out += '/';
  if (has_subdir) {
    out += subdir;
    out += '/';
  }
  out += name;
  return out;
}

namespace {

uint64_t address_mask(const LineHeader& h) {
  return h.address_size >= 8 ? ~uint64_t{0} : (uint64_t{1} << (8 * h.address_size)) - 1;
}

// A packed row's flags: which fields follow, and the line's change when small.
constexpr uint8_t kFileFollows = 1, kColumnFollows = 2, kDiscriminatorFollows = 4;
constexpr int kLineShift = 3, kLineBias = 15, kLineFollows = 31;  // line change in the top 5 bits

}  // namespace

void LineTable::RowBlocks::append(const Row* rows, size_t count) {
  Row last{};
  for (size_t i = 0; i < count; ++i) {
    const Row& r = rows[i];
    if (i % kRowsPerBlock == 0) {
      address.push_back(r.address);
      offset.push_back(static_cast<uint32_t>(bytes.size()));
      last = Row{r.address, 0, 0, 0, 0};
    }
    // Line numbers wrap as the line program's do: the change is modulo 2^32.
    const int64_t line_change = static_cast<int32_t>(r.line - last.line);
    uint8_t flags = 0;
    if (r.file != last.file) flags |= kFileFollows;
    if (r.column != last.column) flags |= kColumnFollows;
    if (r.discriminator != last.discriminator) flags |= kDiscriminatorFollows;
    const bool small = line_change >= -kLineBias && line_change <= kLineBias;
    flags |= static_cast<uint8_t>((small ? line_change + kLineBias : kLineFollows) << kLineShift);
    bytes.push_back(flags);
    if (i % kRowsPerBlock != 0) put_uleb(bytes, r.address - last.address);  // sorted: never negative
    if (flags & kFileFollows) put_uleb(bytes, r.file);
    if (!small) put_uleb(bytes, r.line - last.line);
    if (flags & kColumnFollows) put_uleb(bytes, r.column);
    if (flags & kDiscriminatorFollows) put_uleb(bytes, r.discriminator);
    last = r;
  }
}

template <class F>
void LineTable::RowBlocks::decode(uint32_t block, F&& row) const {
  const uint8_t* p = bytes.data() + offset[block];
  const uint8_t* end = bytes.data() + (block + 1 < offset.size() ? offset[block + 1] : bytes.size());
  Row r{address[block], 0, 0, 0, 0};
  for (bool first = true; p < end; first = false) {
    const uint8_t flags = *p++;
    if (!first) r.address += get_uleb(p);
    if (flags & kFileFollows) r.file = static_cast<uint32_t>(get_uleb(p));
    const int code = flags >> kLineShift;
    r.line += code == kLineFollows ? static_cast<uint32_t>(get_uleb(p)) : static_cast<uint32_t>(code - kLineBias);
    if (flags & kColumnFollows) r.column = static_cast<uint32_t>(get_uleb(p));
    if (flags & kDiscriminatorFollows) r.discriminator = static_cast<uint32_t>(get_uleb(p));
    if (!row(r)) return;
  }
}

LineTable LineTable::scan(const LineSections& s, const std::vector<std::pair<uint64_t, std::string_view>>& comp_dirs,
                          PathStyle style) {
  LineTable t;
  t.sections_ = s;
  t.style_ = style;
  std::vector<Sequence> sequences;
  uint64_t offset = 0;
  while (offset < s.line.size()) {
    auto header = parse_line_header(s, offset);
    if (!header) {
      t.problems_.push_back({header.error(), ".debug_line"});
      // A broken header inside a sound unit length: the next unit follows it.
      ByteReader r(s.line, s.endian);
      auto length = r.seek(static_cast<size_t>(offset)).ok() ? r.initial_length() : Result<InitialLength>(header.error());
      if (!length || length->length > r.remaining()) break;
      offset += length->header_size + length->length;
      continue;
    }
    LineHeader& h = *header;
    auto unit = std::make_unique<Unit>();
    unit->offset = h.offset;
    auto named = std::lower_bound(comp_dirs.begin(), comp_dirs.end(), h.offset,
                                  [](const auto& entry, uint64_t o) { return entry.first < o; });
    if (named != comp_dirs.end() && named->first == h.offset) unit->comp_dir = named->second;
    const auto index = static_cast<uint32_t>(t.units_.size());
    t.units_.push_back(std::move(unit));
    // The bounds of each sequence with rows, as made() keeps them: its rows
    // sorted, those at or past its end address dropped; rows after the last
    // end_sequence belong to no sequence.
    const uint64_t mask = address_mask(h);
    uint64_t low = 0;
    bool any = false;
    uint32_t ordinal = 0;
    auto result = run_line_program(s, h, [&](const LineRow& r) {
      const uint64_t address = r.address & mask;
      if (!r.end_sequence) {
        if (!any || address < low) low = address;
        any = true;
        return;
      }
      if (any && low < address) sequences.push_back({low, address, index, ordinal++});
      any = false;
    });
    if (!result) t.problems_.push_back({result.error(), ".debug_line"});
    offset = h.end;
  }
  std::stable_sort(sequences.begin(), sequences.end(), [](const Sequence& a, const Sequence& b) {
    return a.start != b.start ? a.start < b.start : a.end < b.end;
  });
  // Sequences that overlap one kept before them are dropped (the table stays
  // sorted, one row in force per address): in a linked file only those of
  // discarded sections do, all at address 0.
  uint64_t kept_end = 0;
  for (const Sequence& q : sequences) {
    if (t.sequences_ > 0 && q.start < kept_end) continue;
    t.kept_.push_back(q);
    kept_end = q.end;
    ++t.sequences_;
  }
  return t;
}

LineTable LineTable::build(const LineSections& s, const std::vector<std::pair<uint64_t, std::string_view>>& comp_dirs,
                           PathStyle style) {
  LineTable t = scan(s, comp_dirs, style);
  // The caller's sections need not outlive the table: every unit now.
  for (uint32_t i = 0; i < t.units_.size(); ++i) t.made(i);
  return t;
}

const LineTable::Unit& LineTable::made(uint32_t index) const {
  Unit& u = *units_[index];
  std::call_once(u.made, [&] {
    // Problems were reported by build(), which ran this program before.
    auto header = parse_line_header(sections_, u.offset);
    if (!header) return;
    LineHeader& h = *header;
    size_t resolved = 0;  // files of the header resolved so far (define_file adds more)
    auto resolve_new_files = [&] {
      for (; resolved < h.files.size(); ++resolved)
        u.paths.push_back(resolve_file_path(h, h.files[resolved], u.comp_dir, style_));
    };
    resolve_new_files();
    u.header_files = resolved;
    u.zero_based = h.zero_based();
    const uint64_t mask = address_mask(h);
    std::vector<Row> pending;  // the rows of the sequence being run
    (void)run_line_program(sections_, h, [&](const LineRow& r) {
      resolve_new_files();
      Row row{r.address & mask, kNoFile, r.line, r.column, r.discriminator};
      const uint64_t file = h.zero_based() ? r.file : r.file - 1;
      if (file < resolved) row.file = static_cast<uint32_t>(file);
      if (r.end_sequence) row.file = kEndOfSequence;
      if (!r.end_sequence) {
        // binutils and LLVM keep the last of several rows at one address.
        if (!pending.empty() && pending.back().address == row.address) pending.back() = row;
        else pending.push_back(row);
        return;
      }
      // A hostile program may go backwards: a sequence's rows are kept sorted,
      // and rows at or past its end address cover nothing.
      std::stable_sort(pending.begin(), pending.end(), [](const Row& a, const Row& b) { return a.address < b.address; });
      while (!pending.empty() && pending.back().address >= row.address) pending.pop_back();
      if (!pending.empty()) {
        pending.push_back(row);
        const auto first = static_cast<uint32_t>(u.rows.address.size());
        u.rows.append(pending.data(), pending.size());
        u.sequences.emplace_back(first, static_cast<uint32_t>(u.rows.address.size()) - first);
      }
      pending.clear();
    });
    // Rows after the last end_sequence belong to no sequence.
    u.paths.shrink_to_fit();
    u.rows.bytes.shrink_to_fit();
    u.rows.address.shrink_to_fit();
    u.rows.offset.shrink_to_fit();
    u.sequences.shrink_to_fit();
  });
  return u;
}

LineTable LineTable::load(std::shared_ptr<const elf::ElfFile> file, PathStyle style, Bytes alt_str) {
  auto data = [&](std::string_view name, std::vector<LineProblem>* problems) -> Bytes {
    const elf::Section* section = file->debug_section(name);
    if (!section) return {};
    auto bytes = file->section_data(*section);
    if (!bytes) {
      problems->push_back({bytes.error(), section->name.data()});
      return {};
    }
    return *bytes;
  };
  std::vector<LineProblem> problems;
  LineSections s;
  s.endian = file->endian();
  s.address_size = static_cast<uint8_t>(file->address_size());
  s.line = data(".debug_line", &problems);
  s.line_str = data(".debug_line_str", &problems);
  s.str = data(".debug_str", &problems);
  UnitRootSections u;
  u.endian = file->endian();
  u.str = s.str;
  u.line_str = s.line_str;
  u.alt_str = alt_str;
  // The programs first: .debug_info (for each unit's DW_AT_comp_dir, only
  // needed when rows are made) may still be inflating on another thread.
  LineTable t = scan(s, {}, style);  // the file keeps the sections alive for made()
  u.info = data(".debug_info", &problems);
  u.abbrev = data(".debug_abbrev", &problems);
  u.str_offsets = data(".debug_str_offsets", &problems);
  std::vector<Error> root_problems;
  for (const UnitRoot& root : read_unit_roots(u, &root_problems)) {
    if (!root.stmt_list) continue;
    auto unit = std::lower_bound(t.units_.begin(), t.units_.end(), *root.stmt_list,
                                 [](const std::unique_ptr<Unit>& x, uint64_t o) { return x->offset < o; });
    if (unit != t.units_.end() && (*unit)->offset == *root.stmt_list && (*unit)->comp_dir.empty())
      (*unit)->comp_dir = root.comp_dir;
  }
  for (const Error& e : root_problems) problems.push_back({e, ".debug_info"});
  problems.insert(problems.end(), t.problems_.begin(), t.problems_.end());
  t.problems_ = std::move(problems);
  t.file_ = std::move(file);
  return t;
}

std::optional<LineLocation> LineTable::lookup(uint64_t address) const {
  auto seq = std::upper_bound(kept_.begin(), kept_.end(), address,
                              [](uint64_t a, const Sequence& q) { return a < q.start; });
  if (seq == kept_.begin()) return std::nullopt;
  const Sequence& q = *(seq - 1);
  if (address >= q.end) return std::nullopt;  // between sequences: the end row is in force
  const Unit& u = made(q.unit);
  if (q.ordinal >= u.sequences.size()) return std::nullopt;
  const auto [first, count] = u.sequences[q.ordinal];
  const auto begin = u.rows.address.begin() + first, end = begin + count;
  auto block = std::upper_bound(begin, end, address);
  if (block == begin) return std::nullopt;
  Row in_force{};
  u.rows.decode(static_cast<uint32_t>(block - 1 - u.rows.address.begin()), [&](const Row& r) {
    if (r.address > address) return false;
    in_force = r;
    return true;
  });
  const Row& r = in_force;
  if (r.file == kEndOfSequence) return std::nullopt;
  LineLocation loc;
  if (r.file != kNoFile) loc.file = u.paths[r.file];
  loc.line = r.line;
  loc.column = r.column;
  loc.discriminator = r.discriminator;
  return loc;
}

void LineTable::make_units(const std::atomic<bool>& stop) const {
  for (uint32_t i = 0; i < units_.size() && !stop.load(std::memory_order_relaxed); ++i) (void)made(i);
}

std::optional<LineTable::UnitFiles> LineTable::unit_files(uint64_t offset) const {
  auto unit = std::lower_bound(units_.begin(), units_.end(), offset,
                               [](const std::unique_ptr<Unit>& x, uint64_t o) { return x->offset < o; });
  if (unit == units_.end() || (*unit)->offset != offset) return std::nullopt;
  const Unit& u = made(static_cast<uint32_t>(unit - units_.begin()));
  return UnitFiles{&u.paths, u.header_files, u.zero_based};
}

size_t LineTable::row_count() const {
  size_t n = 0;
  for (const Sequence& q : kept_) {
    const Unit& u = made(q.unit);
    if (q.ordinal >= u.sequences.size()) continue;
    const auto [first, count] = u.sequences[q.ordinal];
    for (uint32_t b = first; b < first + count; ++b) u.rows.decode(b, [&](const Row&) { return ++n, true; });
  }
  return n;
}

std::vector<uint64_t> LineTable::row_addresses() const {
  std::vector<uint64_t> out;
  for (const Sequence& q : kept_) {
    const Unit& u = made(q.unit);
    if (q.ordinal >= u.sequences.size()) continue;
    const auto [first, count] = u.sequences[q.ordinal];
    for (uint32_t b = first; b < first + count; ++b)
      u.rows.decode(b, [&](const Row& r) {
        if (r.file != kEndOfSequence) out.push_back(r.address);
        return true;
      });
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

}  // namespace framewalk::symbol

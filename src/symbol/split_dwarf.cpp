#include "symbol/split_dwarf.hpp"

#include <unistd.h>

#include <algorithm>

#include "elf/debug_file.hpp"
#include "elf/elf_file.hpp"

namespace framewalk::symbol {

namespace {

Error bad_index(uint64_t at) { return Error{ErrorCode::kBadCuIndex, at}; }

// The meaning of a DW_SECT_* id in an index of `version`; kCount: not one framewalk reads.
DwpSection section_of(uint32_t version, uint32_t id) {
  switch (id) {
    case 1: return DwpSection::kInfo;
    case 3: return DwpSection::kAbbrev;
    case 4: return DwpSection::kLine;
    case 6: return DwpSection::kStrOffsets;
    case 8: return version == 5 ? DwpSection::kRnglists : DwpSection::kCount;  // v2: DW_SECT_MACRO
    default: return DwpSection::kCount;
  }
}

bool readable(const std::string& path) { return ::access(path.c_str(), R_OK) == 0; }

std::string directory_of(const std::string& path) {
  const auto slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

}  // namespace

Result<CuIndex> CuIndex::parse(Bytes data, Endian endian) {
  CuIndex t;
  ByteReader r(data, endian);
  // Version 2 (GNU, DWARF 4) is a 4-byte number; version 5 two bytes and two of padding.
  auto v32 = r.u32();
  if (!v32) return bad_index(0);
  t.version_ = *v32;
  if (t.version_ != 2) {
    FW_CHECK(r.seek(0));
    FW_TRY(uint16_t v16, r.u16());
    if (v16 != 5) return bad_index(0);
    t.version_ = 5;
    FW_CHECK(r.skip(2));
  }
  auto section_count = r.u32(), unit_count = r.u32(), slot_count = r.u32();
  if (!section_count || !unit_count || !slot_count) return bad_index(data.size());
  const uint64_t sections = *section_count, units = *unit_count, slots = *slot_count;
  if (slots & (slots - 1)) return bad_index(12);  // not a power of two (0 is allowed: an empty table)
  if (units > slots) return bad_index(8);         // more units than slots to find them by
  if (units > 0 && sections == 0) return bad_index(4);
  // The table's size, the counts being the input's: only the product of the
  // section and unit counts can pass 64 bits (the others are below 2^36).
  uint64_t id_and_row_bytes = 0;
  if (__builtin_mul_overflow(sections, 4 * (1 + 2 * units), &id_and_row_bytes) ||
      16 + slots * 12 + id_and_row_bytes < id_and_row_bytes || 16 + slots * 12 + id_and_row_bytes > data.size())
    return bad_index(data.size());
  const uint64_t signatures_at = 16, rows_at = signatures_at + 8 * slots, ids_at = rows_at + 4 * slots;
  const uint64_t offsets_at = ids_at + 4 * sections, sizes_at = offsets_at + 4 * sections * units;
  t.slot_signatures_.resize(static_cast<size_t>(slots));
  t.slot_rows_.resize(static_cast<size_t>(slots));
  for (uint64_t i = 0; i < slots; ++i) {
    FW_TRY(t.slot_signatures_[i], r.u64());
  }
  for (uint64_t i = 0; i < slots; ++i) {
    FW_TRY(t.slot_rows_[i], r.u32());
    if (t.slot_rows_[i] > units) return bad_index(rows_at + 4 * i);
  }
  // A signature in two slots would make the answer depend on the probe order.
  std::vector<std::pair<uint64_t, uint64_t>> used;  // (signature, slot)
  for (uint64_t i = 0; i < slots; ++i)
    if (t.slot_rows_[i]) used.emplace_back(t.slot_signatures_[i], i);
  std::sort(used.begin(), used.end());
  for (size_t i = 1; i < used.size(); ++i)
    if (used[i].first == used[i - 1].first)
      return bad_index(signatures_at + 8 * std::max(used[i].second, used[i - 1].second));
  // Nor may two slots name one row: a unit has one dwo id.
  std::vector<uint64_t> slot_of_row(static_cast<size_t>(units), slots);
  for (uint64_t i = 0; i < slots; ++i) {
    const uint32_t row = t.slot_rows_[i];
    if (row == 0) continue;
    if (slot_of_row[row - 1] != slots) return bad_index(rows_at + 4 * i);
    slot_of_row[row - 1] = i;
  }
  std::vector<DwpSection> columns;
  for (uint64_t c = 0; c < sections; ++c) {
    FW_TRY(uint32_t id, r.u32());
    const DwpSection s = section_of(t.version_, id);
    if (s != DwpSection::kCount && std::find(columns.begin(), columns.end(), s) != columns.end())
      return bad_index(ids_at + 4 * c);
    columns.push_back(s);
  }
  if (units > 0 && std::find(columns.begin(), columns.end(), DwpSection::kInfo) == columns.end())
    return bad_index(ids_at);  // no DW_SECT_INFO column: no unit can be found
  t.rows_.resize(static_cast<size_t>(units));
  for (uint64_t u = 0; u < units; ++u)
    for (uint64_t c = 0; c < sections; ++c) {
      FW_TRY(uint32_t offset, r.u32());
      if (columns[c] == DwpSection::kCount) continue;
      DwpContribution& k = t.rows_[u].sections[static_cast<size_t>(columns[c])];
      k.offset = offset;
      k.present = true;
    }
  (void)sizes_at;
  for (uint64_t u = 0; u < units; ++u)
    for (uint64_t c = 0; c < sections; ++c) {
      FW_TRY(uint32_t size, r.u32());
      if (columns[c] != DwpSection::kCount) t.rows_[u].sections[static_cast<size_t>(columns[c])].size = size;
    }
  for (uint64_t i = 0; i < slots; ++i)
    if (t.slot_rows_[i]) t.rows_[t.slot_rows_[i] - 1].signature = t.slot_signatures_[i];
  return t;
}

const CuIndexRow* CuIndex::find(uint64_t signature) const {
  const uint64_t slots = slot_rows_.size();
  if (slots == 0) return nullptr;
  const uint64_t mask = slots - 1;
  uint64_t h = signature & mask;
  const uint64_t step = ((signature >> 32) & mask) | 1;
  for (uint64_t i = 0; i < slots; ++i) {
    const uint32_t row = slot_rows_[static_cast<size_t>(h)];
    if (row == 0) return nullptr;
    if (slot_signatures_[static_cast<size_t>(h)] == signature) return &rows_[row - 1];
    h = (h + step) & mask;
  }
  return nullptr;
}

Result<DwarfSections> package_unit_sections(const DwarfSections& package, const CuIndexRow& row,
                                            const char** bad_section) {
  DwarfSections s = package;
  struct Column {
    DwpSection kind;
    Bytes DwarfSections::*field;
    const char* name;
  };
  static constexpr Column kColumns[] = {
      {DwpSection::kInfo, &DwarfSections::info, ".debug_info.dwo"},
      {DwpSection::kAbbrev, &DwarfSections::abbrev, ".debug_abbrev.dwo"},
      {DwpSection::kStrOffsets, &DwarfSections::str_offsets, ".debug_str_offsets.dwo"},
      {DwpSection::kRnglists, &DwarfSections::rnglists, ".debug_rnglists.dwo"},
  };
  for (const Column& c : kColumns) {
    const DwpContribution& k = row[c.kind];
    const Bytes whole = package.*c.field;
    if (!k.present) {
      if (c.kind == DwpSection::kInfo) {
        *bad_section = ".debug_cu_index";
        return bad_index(0);
      }
      s.*c.field = {};
      continue;
    }
    if (k.offset > whole.size() || k.size > whole.size() - k.offset) {
      *bad_section = c.name;
      return bad_index(k.offset);
    }
    s.*c.field = whole.subspan(static_cast<size_t>(k.offset), static_cast<size_t>(k.size));
  }
  s.line = {};  // a split unit's call files index its skeleton's line table
  return s;
}

DwarfProblem split_unit_problem(const std::string& file,
                                const std::array<uint64_t, static_cast<size_t>(DwpSection::kCount)>& bases, Error e,
                                const char* section) {
  struct Dwo {
    std::string_view main_name;
    const char* name;
    DwpSection contribution;
  };
  static constexpr Dwo kDwo[] = {{".debug_info", ".debug_info.dwo", DwpSection::kInfo},
                                 {".debug_abbrev", ".debug_abbrev.dwo", DwpSection::kAbbrev},
                                 {".debug_str", ".debug_str.dwo", DwpSection::kCount},
                                 {".debug_rnglists", ".debug_rnglists.dwo", DwpSection::kRnglists}};
  for (const Dwo& d : kDwo)
    if (d.main_name == section) {
      if (d.contribution != DwpSection::kCount) e.offset += bases[static_cast<size_t>(d.contribution)];
      return {e, d.name, file};
    }
  return {e, section};  // .debug_addr, .debug_ranges: the main file's
}

Bytes elf_section_bytes(const elf::ElfFile& file, std::string_view name, std::vector<DwarfProblem>* problems,
                        const std::string& path) {
  const elf::Section* section = file.debug_section(name);
  if (!section) return {};
  auto bytes = file.section_data(*section);
  if (!bytes) {
    if (problems) problems->push_back({bytes.error(), section->name.data(), path});
    return {};
  }
  return *bytes;
}

namespace {
// The .debug_info.dwo of the split compile unit. gcc's .dwo of
// -fdebug-types-section keeps each type unit in a .debug_info.dwo of its own
// (the object's COMDAT sections, never merged since no linker sees them)
// beside the compile unit's: that is the section with a compile unit, else
// the first one.
Bytes split_info_section(const elf::ElfFile& file, std::vector<DwarfProblem>* problems, const std::string& path) {
  const Bytes first = elf_section_bytes(file, ".debug_info.dwo", problems, path);
  size_t named = 0;
  for (const elf::Section& section : file.sections()) named += section.name == ".debug_info.dwo";
  if (named < 2) return first;
  for (const elf::Section& section : file.sections()) {
    if (section.name != ".debug_info.dwo") continue;
    auto bytes = file.section_data(section);
    if (!bytes) continue;  // reported if it is the first; else another section may hold the unit
    std::vector<DwarfProblem> ignored;
    for (const UnitHeader& h : read_unit_headers(*bytes, file.endian(), &ignored))
      if (h.version >= 5 ? h.unit_type == ut::kSplitCompile : h.unit_type == ut::kCompile) return *bytes;
  }
  return first;
}
}  // namespace

DwarfSections dwo_sections(const elf::ElfFile& file, std::vector<DwarfProblem>* problems, const std::string& path) {
  DwarfSections s;
  s.endian = file.endian();
  s.address_size = static_cast<uint8_t>(file.address_size());
  s.info = split_info_section(file, problems, path);
  s.abbrev = elf_section_bytes(file, ".debug_abbrev.dwo", problems, path);
  s.str = elf_section_bytes(file, ".debug_str.dwo", problems, path);
  s.str_offsets = elf_section_bytes(file, ".debug_str_offsets.dwo", problems, path);
  s.rnglists = elf_section_bytes(file, ".debug_rnglists.dwo", problems, path);
  return s;
}

struct SplitDwarfFiles::Opened {
  std::shared_ptr<const elf::ElfFile> file;
  DwarfSections sections;
  Bytes cu_index;
};

SplitDwarfFiles::SplitDwarfFiles(std::string program_path) : program_path_(std::move(program_path)) {}
SplitDwarfFiles::~SplitDwarfFiles() = default;

const SplitDwarfFiles::Opened* SplitDwarfFiles::open(const std::string& path, std::vector<DwarfProblem>* problems) {
  auto found = files_.find(path);
  if (found != files_.end()) return found->second.get();
  std::unique_ptr<Opened> o;
  auto file = elf::ElfFile::open(path);
  if (file) {
    o = std::make_unique<Opened>();
    o->file = *file;
    o->sections = dwo_sections(*o->file, problems, path);
    o->cu_index = elf_section_bytes(*o->file, ".debug_cu_index", problems, path);
  } else {
    problems->push_back({file.error(), "ELF file", path});
  }
  return (files_[path] = std::move(o)).get();
}

std::optional<SplitUnitDwarf> SplitDwarfFiles::find(const SkeletonInfo& skeleton, const DwarfSections& main,
                                                    std::vector<DwarfProblem>* problems) {
  auto with_main = [&](DwarfSections s, const std::string& file, bool package) {
    s.addr = main.addr;
    s.ranges = main.ranges;
    return SplitUnitDwarf{s, file, package, {}};
  };
  if (!package_looked_for_ && !program_path_.empty()) {
    package_looked_for_ = true;
    if (auto path = elf::find_dwp_file(program_path_)) {
      package_path_ = *path;
      package_ = open(*path, problems);
      if (package_) {
        auto index = CuIndex::parse(package_->cu_index, package_->sections.endian);
        if (index) index_ = std::move(*index);
        else problems->push_back({index.error(), ".debug_cu_index", *path});
      }
    }
  }
  if (index_) {
    const std::string& path = package_path_;
    if (const CuIndexRow* row = index_->find(skeleton.dwo_id)) {
      const char* bad = ".debug_cu_index";
      auto sections = package_unit_sections(package_->sections, *row, &bad);
      if (!sections) {
        problems->push_back({sections.error(), bad, path});
        return std::nullopt;
      }
      SplitUnitDwarf out = with_main(*sections, path, true);
      for (size_t i = 0; i < out.bases.size(); ++i) out.bases[i] = row->sections[i].offset;
      return out;
    }
  }
  // The .dwo: as written when absolute, else under the unit's directory, then beside the program.
  const std::string name(skeleton.dwo_name);
  std::vector<std::string> candidates;
  if (!name.empty() && name[0] == '/') {
    candidates.push_back(name);
  } else if (!name.empty()) {
    if (!skeleton.comp_dir.empty()) candidates.push_back(std::string(skeleton.comp_dir) + "/" + name);
    if (!program_path_.empty()) {
      const std::string beside = directory_of(program_path_);
      candidates.push_back(beside + "/" + name);
      const auto slash = name.rfind('/');
      if (slash != std::string::npos) candidates.push_back(beside + "/" + name.substr(slash + 1));
    }
  }
  for (const std::string& c : candidates) {
    if (!readable(c)) continue;
    if (const Opened* o = open(c, problems)) return with_main(o->sections, c, false);
  }
  problems->push_back({Error{ErrorCode::kSplitUnitNotFound, skeleton.unit_offset}, ".debug_info",
                       candidates.empty() ? std::string("(no DW_AT_dwo_name)") : candidates.front()});
  return std::nullopt;
}

}  // namespace framewalk::symbol

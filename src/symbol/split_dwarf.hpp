// Split DWARF (-gsplit-dwarf): the split units skeleton units name, found in
// a .dwp package (its .debug_cu_index, version 2 of the GNU extension to
// DWARF 4 and version 5, parsed and checked by `CuIndex`) or in the .dwo file
// DW_AT_dwo_name / DW_AT_GNU_dwo_name names. `SplitDwarfFiles` opens each file
// on first use and hands out the sections of one split unit: its DIEs,
// abbreviations, strings, string offsets and DWARF 5 range lists from the
// .dwo (a .dwp's contributions for that unit, sliced by the index), its
// addresses (.debug_addr) and DWARF 4 range lists (.debug_ranges) from the
// main file.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/byte_reader.hpp"
#include "base/result.hpp"
#include "symbol/debug_info.hpp"

namespace framewalk::elf {
class ElfFile;
}

namespace framewalk::symbol {

// The sections of a .dwp a unit has a contribution to, by meaning (the
// DW_SECT_* numbers differ: version 2 has 8 = MACRO where version 5 has 8 = RNGLISTS).
enum class DwpSection : uint8_t { kInfo, kAbbrev, kLine, kStrOffsets, kRnglists, kCount };

struct DwpContribution {
  uint64_t offset = 0;
  uint64_t size = 0;
  bool present = false;
};

struct CuIndexRow {
  uint64_t signature = 0;  // the dwo id
  std::array<DwpContribution, static_cast<size_t>(DwpSection::kCount)> sections{};
  const DwpContribution& operator[](DwpSection s) const { return sections[static_cast<size_t>(s)]; }
};

// A .debug_cu_index (or .debug_tu_index): header, hash table of signatures,
// row indexes, section ids, offsets and sizes. Every slot and row is checked
// when parsed: a truncated table, a slot count that is not a power of two, a
// row index past the unit count, a signature in two slots or a section id
// twice give kBadCuIndex at the offset of the field at fault.
class CuIndex {
 public:
  static Result<CuIndex> parse(Bytes data, Endian endian);
  uint32_t version() const { return version_; }
  size_t size() const { return rows_.size(); }
  // The row of the unit whose dwo id is `signature` (looked up in the hash
  // table as the DWARF 5 standard, 7.3.5.3, says), or null.
  const CuIndexRow* find(uint64_t signature) const;

 private:
  uint32_t version_ = 0;
  std::vector<uint64_t> slot_signatures_;
  std::vector<uint32_t> slot_rows_;  // 0: empty, else 1 + index into rows_
  std::vector<CuIndexRow> rows_;     // by row index - 1
};

// What a skeleton unit says of its split unit.
struct SkeletonInfo {
  uint64_t unit_offset = 0;  // of the skeleton in the main .debug_info
  uint16_t version = 0;
  uint64_t dwo_id = 0;
  std::string_view dwo_name;  // DW_AT_dwo_name / DW_AT_GNU_dwo_name
  std::string_view comp_dir;  // DW_AT_comp_dir
};

// The sections of one split unit, and where they came from.
struct SplitUnitDwarf {
  DwarfSections sections;
  std::string file;        // the .dwp or .dwo
  bool from_package = false;
  // Where a .dwp's contributions start in its sections, by DwpSection (0 for
  // a .dwo): added to the offsets of problems, so that they are the file's.
  std::array<uint64_t, static_cast<size_t>(DwpSection::kCount)> bases{};
};

// A problem at `e.offset` in `section` (".debug_info", ".debug_abbrev",
// ".debug_str", ".debug_rnglists") of a split unit from `file`, as that file
// has it: in the .dwo section of that name, a .dwp's contribution start
// (`bases`, SplitUnitDwarf::bases) added. Other sections (.debug_addr,
// .debug_ranges) are the main file's: the problem names no file.
DwarfProblem split_unit_problem(const std::string& file,
                                const std::array<uint64_t, static_cast<size_t>(DwpSection::kCount)>& bases, Error e,
                                const char* section);

// Where split units come from (an interface, so that tests can hand in bytes).
class SplitUnitSource {
 public:
  virtual ~SplitUnitSource() = default;
  // The split unit of `skeleton`, or nothing with the reasons in `problems`.
  // `main`: the main file's sections (.debug_addr, .debug_ranges).
  virtual std::optional<SplitUnitDwarf> find(const SkeletonInfo& skeleton, const DwarfSections& main,
                                             std::vector<DwarfProblem>* problems) = 0;
};

// The sections of a .dwp's row: each contribution sliced out of its section
// (.debug_str.dwo whole); a contribution outside its section is kBadCuIndex
// at the contribution's offset, naming the section.
Result<DwarfSections> package_unit_sections(const DwarfSections& package, const CuIndexRow& row,
                                            const char** bad_section);

// The split DWARF of a program on disk: `<program>.dwp` first, then the .dwo
// at DW_AT_dwo_name (as written when absolute, else under DW_AT_comp_dir,
// then beside the program). Each file is opened once, when a unit first needs it.
class SplitDwarfFiles : public SplitUnitSource {
 public:
  explicit SplitDwarfFiles(std::string program_path);
  ~SplitDwarfFiles() override;
  std::optional<SplitUnitDwarf> find(const SkeletonInfo& skeleton, const DwarfSections& main,
                                     std::vector<DwarfProblem>* problems) override;

 private:
  struct Opened;
  const Opened* open(const std::string& path, std::vector<DwarfProblem>* problems);
  std::string program_path_, package_path_;
  bool package_looked_for_ = false;
  const Opened* package_ = nullptr;
  std::optional<CuIndex> index_;
  std::map<std::string, std::unique_ptr<Opened>> files_;  // by path; null: could not be opened
};

// The bytes of section `name` of `file` (or of its .zdebug_ spelling), decompressed; empty when
// the file has none. A section that cannot be read is appended to `problems` naming `path`.
Bytes elf_section_bytes(const elf::ElfFile& file, std::string_view name, std::vector<DwarfProblem>* problems,
                        const std::string& path = {});
// The .dwo sections of an ELF file (.debug_info.dwo, ...), opened from `path`.
DwarfSections dwo_sections(const elf::ElfFile& file, std::vector<DwarfProblem>* problems, const std::string& path);

}  // namespace framewalk::symbol

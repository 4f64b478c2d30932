// The functions of a file's .debug_info, found by address: each
// DW_TAG_subprogram with code (low_pc/high_pc or DW_AT_ranges) and the tree
// of DW_TAG_inlined_subroutine under it, with their call sites. Lazy: the
// unit headers and roots are read at the first lookup, a unit's DIEs when an
// address first falls in it (then cached). The unit of an address comes from
// .debug_aranges when every compile unit has a set there, else from the
// units' root ranges; units without root ranges are scanned last. Names
// follow DW_AT_abstract_origin and DW_AT_specification chains, across units
// (DW_FORM_ref_addr) and into a supplementary (dwz) file when one is given.
// A skeleton unit (DWARF 5 DW_UT_skeleton, or a DWARF 4 unit with
// DW_AT_GNU_dwo_name) is decoded from its split unit, which the
// SplitUnitSource finds (a .dwp row or a .dwo file) when an address first
// falls in the skeleton; its dwo id is checked, its call files index the
// skeleton's line table.
#pragma once

#include <cstdint>
#include <array>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "symbol/debug_info.hpp"
#include "symbol/line_table.hpp"
#include "symbol/split_dwarf.hpp"

namespace framewalk::symbol {

// One level of an inline chain as .debug_info has it.
struct FunctionLevel {
  std::string_view name;      // DW_AT_linkage_name anywhere on the chain, else the first DW_AT_name; empty: none
  bool linkage_name = false;  // `name` is a linkage (mangled) name
  // binutils' is_linkage: a linkage name, or a DW_AT_name in a unit of a
  // language it does not demangle (C). Else binutils looks the ELF symbol up.
  bool final_name = false;
  uint64_t entry = 0;         // the low address of its first range
  // The offset of its DIE in .debug_info: what tells two functions apart. A
  // DIE of a split unit: its offset in the unit's .debug_info.dwo (or the
  // .dwp's contribution) with the split unit's number (1, 2, ...) above
  // kSplitDieShift, so that it names no main-file DIE.
  uint64_t die = 0;
  bool inlined = false;       // a DW_TAG_inlined_subroutine (else the physical DW_TAG_subprogram)
  // Where an inlined function was called from (in the level after it); meaningful when `inlined`.
  std::string_view call_file;  // resolved as the line table resolves paths; empty when unknown
  uint32_t call_line = 0;
  uint32_t call_column = 0;
};

inline constexpr unsigned kSplitDieShift = 48;

// Where a DIE is read: the main file (0), a split unit (its number, as in
// FunctionLevel::die) or the supplementary (dwz) file.
inline constexpr uint32_t kSupplementarySource = 0xffffffffu;
struct DieRef {
  uint32_t source = 0;
  uint64_t offset = 0;  // in the .debug_info of `source`
};
// The DIE a reference attribute of a DIE in `unit` (of `source`) points at;
// none for a type signature (DW_FORM_ref_sig8: a type, never a function) or
// a value that is no reference.
std::optional<DieRef> die_reference(const UnitHeader& unit, uint32_t source, const FormValue& v);

// A split unit the index has opened, for readers of what the index does not
// keep (call sites): where its DIEs are and how to read them.
struct SplitUnitView {
  // The split unit's sections (the .dwo's, or a .dwp row's contributions),
  // with .debug_addr and .debug_ranges of the main file; a DwarfFile reads
  // them with `bases`.
  DwarfSections sections;
  SplitBases bases;          // the skeleton's
  uint64_t unit_offset = 0;  // of the split compile unit in `sections.info`
  std::string file;          // the .dwo or .dwp
  std::array<uint64_t, static_cast<size_t>(DwpSection::kCount)> package_bases{};  // SplitUnitDwarf::bases
  // A problem at `e.offset` of `section` (".debug_info", ...) of the unit, as the file has it (split_unit_problem).
  DwarfProblem problem(Error e, const char* section) const {
    return split_unit_problem(file, package_bases, e, section);
  }
};

class FunctionIndex {
 public:
  // `supplementary`: the sections of the dwz file `.gnu_debugaltlink` names, if found.
  // Call-site files are resolved in `style` (line_table.hpp).
  // `split`: where the split units of skeleton units are found (none: each skeleton is reported).
  explicit FunctionIndex(const DwarfSections& sections, const DwarfSections* supplementary = nullptr,
                         PathStyle style = PathStyle::kBinutils, std::unique_ptr<SplitUnitSource> split = nullptr);
  ~FunctionIndex();
  FunctionIndex(const FunctionIndex&) = delete;
  FunctionIndex& operator=(const FunctionIndex&) = delete;

  // Call-site files from `lines`' paths (made in this index's style, kept
  // as long as the index) instead of each unit's own copy; before any lookup.
  void share_paths(const LineTable& lines);

  // The functions covering `address`, innermost first, ending with the
  // physical subprogram; empty when no function with code covers it.
  // The views stay valid as long as the index.
  std::vector<FunctionLevel> chain(uint64_t address) const;

  // The entry of every subprogram with code (all units decoded), sorted.
  std::vector<uint64_t> function_entries() const;

  // Problems met so far (each names its section and offset); grows as units are decoded.
  std::vector<DwarfProblem> problems() const;

  // The split unit of a split DIE's number (FunctionLevel::die >> kSplitDieShift),
  // once an address in it has been looked up; nothing for 0, for a number
  // not given out, or for a split unit that could not be used.
  std::optional<SplitUnitView> split_unit(uint32_t number) const;

 private:
  struct Node;
  struct Unit;
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace framewalk::symbol

// .debug_info, DWARF 2 to 5, read on framewalk's bounds-checked reader: unit
// headers (compile, partial, type, skeleton and split units; DWARF 32 and 64),
// .debug_abbrev tables, every DW_FORM (read into a value of its class), the
// bases DWARF 5 indexes through (.debug_str_offsets, .debug_addr,
// .debug_rnglists) and range lists (.debug_ranges for DWARF 2-4,
// .debug_rnglists with every DW_RLE_* kind for DWARF 5). Errors carry the
// offset in the section they name (`DwarfProblem`).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/byte_reader.hpp"
#include "base/function_ref.hpp"
#include "base/result.hpp"

namespace framewalk::symbol {

// DW_TAG_*, DW_AT_* and DW_UT_* values this reader looks at.
namespace tag {
inline constexpr uint64_t kEntryPoint = 0x03, kLexicalBlock = 0x0b, kCompileUnit = 0x11, kInlinedSubroutine = 0x1d,
                          kSubprogram = 0x2e, kPartialUnit = 0x3c, kTypeUnit = 0x41, kSkeletonUnit = 0x4a;
}  // namespace tag
namespace at {
inline constexpr uint64_t kSibling = 0x01, kName = 0x03, kStmtList = 0x10, kLowPc = 0x11, kHighPc = 0x12,
                          kLanguage = 0x13, kCompDir = 0x1b, kAbstractOrigin = 0x31, kSpecification = 0x47, kRanges = 0x55,
                          kCallColumn = 0x57, kCallFile = 0x58, kCallLine = 0x59, kLinkageName = 0x6e,
                          kStrOffsetsBase = 0x72, kAddrBase = 0x73, kRnglistsBase = 0x74, kDwoName = 0x76,
                          kMipsLinkageName = 0x2007, kGnuDwoName = 0x2130, kGnuDwoId = 0x2131,
                          kGnuRangesBase = 0x2132, kGnuAddrBase = 0x2133;
}  // namespace at
namespace ut {
inline constexpr uint8_t kCompile = 1, kType = 2, kPartial = 3, kSkeleton = 4, kSplitCompile = 5, kSplitType = 6;
}  // namespace ut

// The sections of one file's DWARF (empty spans for those it lacks).
struct DwarfSections {
  Bytes info, abbrev, str, line_str, str_offsets, addr, ranges, rnglists, aranges, line;
  Endian endian = Endian::kLittle;
  uint8_t address_size = 8;  // the file's (for .debug_line of DWARF 2-4)
};

// A problem: what, where, in which section. `section` is a static string;
// `file` names the file the section is in when that is not the one asked
// about (a .dwo or .dwp of split DWARF), or for kSplitUnitNotFound the .dwo
// looked for (the offset is then the skeleton unit's in the main .debug_info).
struct DwarfProblem {
  DwarfProblem(Error e, const char* in_section, std::string in_file = {})
      : error(e), section(in_section), file(std::move(in_file)) {}
  Error error;
  const char* section;
  std::string file;
};

struct UnitHeader {
  uint64_t offset = 0;     // of the unit in .debug_info
  uint64_t end = 0;        // one past it
  uint64_t first_die = 0;  // offset of the root DIE
  uint64_t abbrev_offset = 0;
  uint64_t signature = 0;    // type units: the type signature; skeleton/split: the dwo id
  uint64_t type_offset = 0;  // type units
  uint16_t version = 0;
  uint8_t unit_type = ut::kCompile;  // DWARF 2-4 compile units as DW_UT_compile
  uint8_t address_size = 8;
  bool dwarf64 = false;
  uint8_t offset_size() const { return dwarf64 ? 8 : 4; }
};

// The header of the unit at `offset` of `info` (the unit's length included).
Result<UnitHeader> parse_unit_header(Bytes info, Endian endian, uint64_t offset);

struct AbbrevAttribute {  // 8 bytes: a program's tables have hundreds of thousands
  uint16_t name = 0;  // larger values (no DWARF defines them) saturate: they match nothing
  uint16_t form = 0;  // larger values saturate: an unknown form, an error where it is read
  uint32_t implicit_const = 0;  // DW_FORM_implicit_const: its value's index (AbbrevTable::implicit_const)
};

struct Abbrev {  // 12 bytes
  uint32_t tag = 0;  // larger values (no DWARF defines them) saturate
  uint32_t first = 0;  // into AbbrevTable::attributes
  uint16_t count = 0;
  bool has_children = false;
};

// One .debug_abbrev table (the declarations starting at one offset).
class AbbrevTable {
 public:
  static Result<AbbrevTable> parse(Bytes abbrev, Endian endian, uint64_t offset);
  const Abbrev* find(uint64_t code) const;
  const AbbrevAttribute* attributes(const Abbrev& a) const { return attributes_.data() + a.first; }
  int64_t implicit_const(const AbbrevAttribute& a) const {
    return a.implicit_const < implicit_consts_.size() ? implicit_consts_[a.implicit_const] : 0;
  }
  size_t size() const { return abbrevs_.size(); }

 private:
  std::vector<Abbrev> abbrevs_;  // sorted by code
  std::vector<uint64_t> codes_;  // of abbrevs_, when they are not 1, 2, 3, ... (else empty)
  std::vector<AbbrevAttribute> attributes_;
  std::vector<int64_t> implicit_consts_;
};

// What a form's value is, by class.
enum class FormClass : uint8_t {
  kAddress,         // number: an address
  kAddrIndex,       // number: an index into .debug_addr (addrx*)
  kConstant,        // number: an unsigned constant (data*, udata, implicit_const)
  kSigned,          // number: a signed constant (sdata), as its two's complement
  kString,          // text
  kStrIndex,        // number: an index into .debug_str_offsets (strx*)
  kStrOffset,       // number: an offset into .debug_str (strp)
  kLineStrOffset,   // number: into .debug_line_str
  kAltStrOffset,    // number: into the supplementary file's .debug_str (GNU_strp_alt, strp_sup)
  kUnitRef,         // number: a DIE offset relative to the unit (ref1-8, ref_udata)
  kSectionRef,      // number: a DIE offset in .debug_info (ref_addr)
  kAltRef,          // number: a DIE offset in the supplementary file's .debug_info (GNU_ref_alt, ref_sup*)
  kSignatureRef,    // number: a type signature (ref_sig8)
  kSectionOffset,   // number: sec_offset (or data4/8 in DWARF 2-3 where a section offset is meant)
  kRnglistIndex,    // number: rnglistx
  kLoclistIndex,    // number: loclistx
  kBlock,           // block: block*, exprloc, data16
  kFlag,            // number: 0 or 1
};

struct FormValue {
  FormClass kind = FormClass::kConstant;
  uint64_t number = 0;
  std::string_view text;
  Bytes block;
};

// A 3-byte unsigned integer (DW_FORM_strx3, addrx3) in the reader's byte order.
Result<uint64_t> read_u24(ByteReader& r);

// Reads one value of `form` at `r` for a unit of shape `unit`.
// DW_FORM_indirect is followed once (an indirect form naming indirect is an error).
Result<FormValue> read_form(ByteReader& r, const UnitHeader& unit, uint64_t form, int64_t implicit_const);

// The range of [low, high) pairs an address may be in.
struct AddressRange {
  uint64_t low = 0;
  uint64_t high = 0;
};

// One unit's context for resolving values: its header and its bases.
struct UnitContext {
  const DwarfSections* sections = nullptr;
  UnitHeader header;
  uint64_t str_offsets_base = 0;  // DW_AT_str_offsets_base (DWARF 5 default: after the first contribution's header)
  bool has_str_offsets_base = false;
  uint64_t addr_base = 0;
  bool has_addr_base = false;
  uint64_t rnglists_base = 0;
  bool has_rnglists_base = false;
  uint64_t base_address = 0;  // the root's DW_AT_low_pc: the base of range lists
  uint64_t language = 0;      // the root's DW_AT_language (0: none)
  uint64_t ranges_base = 0;   // DWARF 4 split units: the skeleton's DW_AT_GNU_ranges_base (.debug_ranges offsets add it)
};

// What a skeleton unit gives the split unit it names: the split unit's DIEs
// are in the .dwo's sections, its addresses in the main file's .debug_addr at
// the skeleton's base, its DWARF 4 range lists in the main file's .debug_ranges.
struct SplitBases {
  uint64_t addr_base = 0;     // DW_AT_addr_base / DW_AT_GNU_addr_base of the skeleton
  uint64_t ranges_base = 0;   // DW_AT_GNU_ranges_base of a DWARF 4 skeleton
  uint64_t base_address = 0;  // the skeleton's DW_AT_low_pc, where the split root has none
};

// Whether binutils demangles names of `language` (dwarf2.c mangle_style is
// not 0): for these a DW_AT_name is not taken as the function's final name.
bool language_mangles(uint64_t language);

// The string of a value of class string, strx or strp/line_strp. Alt strings
// need the supplementary file's .debug_str (`alt_str`, empty when not given).
Result<std::string_view> value_string(const UnitContext& u, const FormValue& v, Bytes alt_str = {});
// The address of a value of class address or addrx.
Result<uint64_t> value_address(const UnitContext& u, const FormValue& v);
// The ranges of a DW_AT_ranges value (sec_offset or rnglistx), appended to `out`;
// empty ranges are left out.
Result<void> read_ranges(const UnitContext& u, const FormValue& v, std::vector<AddressRange>* out);

// One .debug_aranges set: the unit it names and its ranges.
struct ArangeSet {
  uint64_t unit_offset = 0;
  std::vector<AddressRange> ranges;
};
// Every set of `aranges`; a broken set is reported and the next one read when its length is sound.
std::vector<ArangeSet> read_aranges(Bytes aranges, Endian endian, std::vector<DwarfProblem>* problems);

// Every unit header of .debug_info; a broken header inside a sound length is
// reported and skipped, the walk ends at a length it cannot trust.
std::vector<UnitHeader> read_unit_headers(Bytes info, Endian endian, std::vector<DwarfProblem>* problems);

// One file's units, their abbreviation tables (parsed once per offset,
// cached) and the reading of single DIEs by section offset.
class DwarfFile {
 public:
  // `split`: the sections are a split unit's (a .dwo, or a .dwp's contributions
  // for one unit with .debug_addr and .debug_ranges of the main file), read
  // with its skeleton's bases.
  explicit DwarfFile(const DwarfSections& sections, const SplitBases* split = nullptr);

  const DwarfSections& sections() const { return sections_; }
  const std::vector<UnitHeader>& units() const { return units_; }
  const std::vector<DwarfProblem>& problems() const { return problems_; }
  // The unit holding section offset `offset`, if any.
  const UnitHeader* unit_containing(uint64_t offset) const;
  // The abbreviation table at `offset` of .debug_abbrev, parsed on first use.
  Result<const AbbrevTable*> abbrevs(uint64_t offset);
  // The unit's bases, from its root DIE (read once per unit and cached).
  Result<UnitContext> context(const UnitHeader& unit);

  // Reads the DIE at `r` (positioned at its abbreviation code), calling
  // `attribute(name, value)` for each attribute; returns the abbreviation, or
  // null for a null entry (the end of a sibling list). `r` ends past the DIE.
  Result<const Abbrev*> read_die(const UnitHeader& unit, const AbbrevTable& table, ByteReader& r,
                                 FunctionRef<void(uint64_t name, const FormValue& value)> attribute);
  // As read_die without decoding any value (what a DIE that is not looked at
  // needs): the same abbreviation, the same end and the same errors.
  Result<const Abbrev*> skip_die(const UnitHeader& unit, const AbbrevTable& table, ByteReader& r);
  // A reader over the unit's bytes positioned at section offset `offset`.
  Result<ByteReader> reader_at(const UnitHeader& unit, uint64_t offset) const;

 private:
  DwarfSections sections_;
  std::optional<SplitBases> split_;
  std::vector<UnitHeader> units_;  // by offset
  std::vector<DwarfProblem> problems_;
  std::map<uint64_t, std::unique_ptr<AbbrevTable>> abbrevs_;
  std::map<uint64_t, UnitContext> contexts_;
};

}  // namespace framewalk::symbol

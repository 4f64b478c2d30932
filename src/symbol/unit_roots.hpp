// The root DIE of each unit of .debug_info (DWARF 2-5), read only as far as
// a line table needs: where its line program is (DW_AT_stmt_list) and the
// directory it was compiled in (DW_AT_comp_dir), which DWARF 2-4 file names
// are relative to. The rest of the DIE is skipped form by form.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "base/byte_reader.hpp"
#include "base/result.hpp"

namespace framewalk::symbol {

struct UnitRootSections {
  Bytes info;      // .debug_info
  Bytes abbrev;    // .debug_abbrev
  Bytes str;       // .debug_str
  Bytes line_str;  // .debug_line_str
  Bytes str_offsets;  // .debug_str_offsets (DW_FORM_strx*, through DW_AT_str_offsets_base)
  Bytes alt_str;      // the supplementary (dwz) file's .debug_str (DW_FORM_GNU_strp_alt, strp_sup)
  Endian endian = Endian::kLittle;
};

struct UnitRoot {
  uint64_t offset = 0;  // of the unit in .debug_info
  uint16_t version = 0;
  std::optional<uint64_t> stmt_list;
  std::string_view comp_dir;  // empty when absent (or a strx whose index leads nowhere)
};

// Every unit's root; a unit that cannot be read is reported with its offset
// to `problems` and the walk goes on at the next unit when its length is sound.
std::vector<UnitRoot> read_unit_roots(const UnitRootSections& sections, std::vector<Error>* problems);

}  // namespace framewalk::symbol

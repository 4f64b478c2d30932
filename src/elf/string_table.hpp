// Names out of ELF string tables (.shstrtab, .strtab, .dynstr).
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "base/byte_reader.hpp"

namespace framewalk::elf {

// The NUL-terminated strings at `offsets` of a string table, each cut at the
// table's end (empty past it). Looks at each byte of the table at most once:
// one search per string is quadratic when a hostile table has no NULs.
// (Defined in elf_file.cpp.)
std::vector<std::string_view> strings_at(Bytes table, const std::vector<uint32_t>& offsets);

}  // namespace framewalk::elf

// A small hand-made ELF image for tests that need a file around a section.
#pragma once

#include <cstdint>
#include <vector>

#include "base/byte_reader.hpp"

namespace framewalk::test {

// ELF header, two program headers (PT_LOAD of the first 0x300 bytes at
// 0x10000, PT_NOTE), .text at file offset 0x100 (0x10100, 0x10 bytes),
// .shstrtab, section headers at 0x200 (none without `with_sections`).
std::vector<uint8_t> tiny_elf(bool is64, Endian e, bool with_sections = true);

}  // namespace framewalk::test

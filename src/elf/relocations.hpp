// Applying a relocatable object's relocations to one of its sections, the way
// readelf does before it dumps debug sections: each supported relocation
// stores symbol value + addend (minus the place, for PC-relative ones) with
// every section at address 0. The relocation types of x86-64, i386, AArch64,
// ARM, PowerPC (32 and 64), s390/s390x and RISC-V are known.
#pragma once

#include <cstdint>
#include <vector>

#include "base/byte_reader.hpp"
#include "base/result.hpp"
#include "elf/elf_file.hpp"

namespace framewalk::elf {

struct RelocationCounts {
  uint64_t applied = 0;
  // Left as they are, as readelf leaves them: an unknown type, a place or
  // symbol index out of range, or a symbol of a type that cannot be a target.
  uint64_t skipped = 0;
};

// A copy of `contents` (the bytes of `target`, decompressed if it was) with
// the relocations of every SHT_REL/SHT_RELA section aimed at `target` applied.
// Errors only when a relocation or symbol table cannot be read.
Result<std::vector<uint8_t>> relocated_contents(const ElfFile& file, const Section& target, Bytes contents,
                                                RelocationCounts* counts = nullptr);

}  // namespace framewalk::elf

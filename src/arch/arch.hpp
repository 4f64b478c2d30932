// Per-architecture facts the machine-independent layers need, selected by
// ELF e_machine. Each architecture lives in arch/<name>/ with the same files.
#pragma once

#include <cstdint>

namespace framewalk::arch {

// What call frame opcode 0x2d means: the number is shared by machines.
enum class CfaOpcode2d : uint8_t {
  kUnassigned,     // no meaning on this machine: an unknown opcode
  kNegateRaState,  // AArch64: DW_CFA_AARCH64_negate_ra_state, toggles "RA signed"
};

struct ArchInfo {
  const char* name;
  uint16_t elf_machine;
  // DWARF register names as binutils' readelf spells them (null entries: no name).
  const char* const* dwarf_register_names;
  unsigned dwarf_register_count;
  uint16_t stack_pointer;   // DWARF number
  uint16_t frame_pointer;
  uint16_t return_address;  // the CIE's usual RA column
  CfaOpcode2d opcode_2d = CfaOpcode2d::kUnassigned;
};

// 0x2d's meaning for a file's machine (`arch` may be null: unassigned).
inline CfaOpcode2d cfa_opcode_2d(const ArchInfo* arch) {
  return arch ? arch->opcode_2d : CfaOpcode2d::kUnassigned;
}

// Null for machines framewalk does not know.
const ArchInfo* arch_for_machine(uint16_t elf_machine);

// A register's name, or nullptr when the architecture has none for it.
const char* dwarf_register_name(const ArchInfo* arch, unsigned reg);

}  // namespace framewalk::arch

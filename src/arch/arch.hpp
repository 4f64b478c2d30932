// A machine's facts that the machine-independent layers need, one
// descriptor per machine (arch/<name>/registers.cpp), selected by the
// whole MachineKey: its registers as DWARF numbers them and binutils names
// them, which are the stack pointer, frame pointer, return-address column
// and PC, and its word. arch::Machine (machine.hpp) adds the behaviour of
// the machines framewalk unwinds; machines whose files framewalk only
// reads (s390x's SFrame) have a descriptor alone.
#pragma once

#include <cstdint>

#include "base/machine_key.hpp"

namespace framewalk::arch {

// What call frame opcode 0x2d means: the number is shared by machines.
enum class CfaOpcode2d : uint8_t {
  kUnassigned,     // no meaning on this machine: an unknown opcode
  kNegateRaState,  // AArch64: DW_CFA_AARCH64_negate_ra_state, toggles "RA signed"
  kGnuWindowSave,  // SPARC: DW_CFA_GNU_window_save, the register window saved (`save`)
};

inline constexpr uint16_t kNoRegister = 0xffff;

struct ArchInfo {
  const char* name;
  // The machine's key; of its e_flags, only the bits of `flags_mask` count
  // (ppc64's ABI version), and those bits all 0 say nothing (ppc64's ABI
  // version 0, "unspecified": what qemu-user writes in its cores).
  MachineKey key;
  uint32_t flags_mask = 0;
  // DWARF register names as binutils' readelf spells them (null entries: no name).
  const char* const* dwarf_register_names = nullptr;
  unsigned dwarf_register_count = 0;
  // DWARF numbers.
  uint16_t stack_pointer = kNoRegister;
  uint16_t frame_pointer = kNoRegister;
  uint16_t return_address = kNoRegister;  // the CIEs' usual return-address column
  // The PC as a RegisterFile keeps it and a DWARF expression reads it: the
  // return-address column itself where the call pushes the return address
  // (x86), a register of its own where a link register holds it (AArch64's
  // pc is 32, ARM's r15, s390x's PSW address).
  uint16_t program_counter = kNoRegister;
  // A call leaves the return address in a register (the return-address
  // column) rather than on the stack: a row without a rule for it means
  // "still there".
  bool link_register = false;
  // How far the CFA lies above the caller's stack pointer: the caller's SP
  // is the CFA less this (s390x: 160, the register save area every caller
  // keeps for its callee; 0 elsewhere, where the caller's SP is the CFA).
  uint16_t cfa_above_stack_pointer = 0;
  // How far above the CFA the words a frame saves reach, in bytes: ppc64's
  // prologues save LR in their caller's frame (ELFv2's LR save doubleword,
  // at CFA + 16), so 24 there; 0 elsewhere, where they lie below the CFA.
  // Compact rules (unwind/compact_rule) count their slots down from there.
  uint8_t saved_above_cfa = 0;
  // Where the machine's code keeps its frame pointer in one of two
  // registers, by instruction set, the other one (32-bit ARM: Thumb's r7
  // beside ARM state's r11, frame_pointer).
  uint16_t second_frame_pointer = kNoRegister;
  CfaOpcode2d opcode_2d = CfaOpcode2d::kUnassigned;

  uint16_t elf_machine() const { return key.elf_machine; }
  // A stack word (saved registers, return addresses).
  uint8_t address_size() const { return key.is_64 ? 8 : 4; }
  Endian endian() const { return key.endian; }
  bool matches(const MachineKey& k) const {
    return k.elf_machine == key.elf_machine && k.is_64 == key.is_64 && k.endian == key.endian &&
           ((k.flags & flags_mask) == (key.flags & flags_mask) || (k.flags & flags_mask) == 0);
  }
};

// 0x2d's meaning for a file's machine (`arch` may be null: unassigned).
inline CfaOpcode2d cfa_opcode_2d(const ArchInfo* arch) {
  return arch ? arch->opcode_2d : CfaOpcode2d::kUnassigned;
}

// The descriptor of a machine; null for machines framewalk does not know.
const ArchInfo* arch_for(const MachineKey& key);
// The descriptor whose DWARF registers a file of `key` uses, for reading
// and naming its CFI: the machine's own, else that of a machine with the
// same e_machine, whose psABI numbers the registers the same way (x32's
// are x86-64's, aarch64_be's AArch64's, 31-bit s390's s390x's), as
// readelf names them by e_machine alone. Null: none known.
const ArchInfo* dwarf_arch_for(const MachineKey& key);

// A register's name, or nullptr when the architecture has none for it.
const char* dwarf_register_name(const ArchInfo* arch, unsigned reg);

}  // namespace framewalk::arch

// PowerPC DWARF register numbering, shared by the 32-bit SysV psABI and the
// 64-bit ELFv2 psABI ("DWARF Register Number Mapping"), and the number
// framewalk gives the PC, which neither numbers.
#pragma once

#include <cstdint>

namespace framewalk::arch::power {

enum DwarfRegister : uint16_t {
  kR0 = 0,
  kR1 = 1,    // the stack pointer
  kR2 = 2,    // ppc64's TOC pointer, ppc32's thread pointer
  kR31 = 31,  // gcc's frame pointer, where it keeps one
  kF0 = 32,   // f0-f31: 32-63
  kLr = 65,   // the link register: the return-address column
  kCtr = 66,
  kCr0 = 68,  // the condition register's fields cr0-cr7: 68-75
  kCr7 = 75,
  kXer = 76,
  kV0 = 77,   // v0-v31: 77-108
  // The PC (nip) has no DWARF number. GCC's DWARF numbers for the machine
  // run to 113 (vrsave 109, vscr 110, SPE's 111 and 112, its soft frame
  // pointer 113), which no CFI names past; 114 is the next, libunwind's
  // UNW_PPC64_NIP too.
  kNip = 114,
};

}  // namespace framewalk::arch::power

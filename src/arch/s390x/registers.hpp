// s390x DWARF register numbering (s390x ELF ABI supplement, "DWARF
// definition"), also 31-bit s390's: the registers SFrame names, and every
// register's name as readelf spells it.
#pragma once

#include <cstdint>

#include "arch/arch.hpp"

namespace framewalk::arch::s390x {

enum DwarfRegister : uint16_t {
  kR11 = 11,  // the preferred frame pointer
  kR14 = 14,  // the link register: the return-address column
  kR15 = 15,  // the stack pointer
  kF0 = 16,   // the floating-point registers, in the order f0 f2 f4 f6 f1 f3 f5 f7 f8 f10 ..: 16..31
  kCr0 = 32,  // control registers: 32..47
  kA0 = 48,   // access registers: 48..63
  kPswMask = 64,
  kPswAddress = 65,
  kV16 = 68,  // vector registers v16..v31, in the floating-point registers' order: 68..83
};

// brasl leaves the return address in r14; the CFA is the caller's r15 + 160.
extern const ArchInfo kArchInfo;
// 31-bit s390 (ELFCLASS32, EM_S390): the same registers of 4 bytes in
// memory, the CFA the caller's r15 + 96.
extern const ArchInfo kS390ArchInfo;

}  // namespace framewalk::arch::s390x

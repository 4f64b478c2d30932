// x86-64 DWARF register numbering (System V psABI, figure 3.36).
#pragma once

#include <cstdint>

#include "arch/arch.hpp"

namespace framewalk::arch::x86_64 {

enum DwarfRegister : uint16_t {
  kRax = 0, kRdx = 1, kRcx = 2, kRbx = 3, kRsi = 4, kRdi = 5, kRbp = 6, kRsp = 7,
  kR8 = 8, kR9, kR10, kR11, kR12, kR13, kR14, kR15,
  kRip = 16,  // the return-address column
};

// The call pushes the return address: rip is both the PC and the RA column.
extern const ArchInfo kArchInfo;
// x32, the ILP32 ABI of x86-64 (ELFCLASS32, EM_X86_64): the same registers
// and instructions, 4-byte pointers in memory, 8-byte stack slots.
extern const ArchInfo kX32ArchInfo;

}  // namespace framewalk::arch::x86_64

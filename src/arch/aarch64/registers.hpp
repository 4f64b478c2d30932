// AArch64 DWARF register numbering (ARM aadwarf64, "DWARF register names").
#pragma once

#include <cstdint>

#include "arch/arch.hpp"

namespace framewalk::arch::aarch64 {

enum DwarfRegister : uint16_t {
  kX0 = 0,
  kX29 = 29,  // the frame pointer
  kX30 = 30,  // the link register: the return-address column
  kSp = 31,
  kPc = 32,  // aadwarf64's PC; where the RegisterFile keeps the program counter
  kRaSignState = 34,  // pseudo-register toggled by DW_CFA_AARCH64_negate_ra_state
  kV0 = 64,
};

// bl leaves the return address in x30, which a prologue may save or sign.
extern const ArchInfo kArchInfo;

}  // namespace framewalk::arch::aarch64

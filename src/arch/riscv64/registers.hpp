// RISC-V DWARF register numbering (RISC-V ELF psABI, "DWARF Register
// Numbers"), for riscv64 and riscv32 alike: names only. framewalk dumps
// RISC-V CFI with readelf's register names but does not unwind RISC-V yet.
#pragma once

#include <cstdint>

#include "arch/arch.hpp"

namespace framewalk::arch::riscv64 {

enum DwarfRegister : uint16_t {
  kRa = 1,   // x1, the return-address column
  kSp = 2,   // x2
  kFp = 8,   // x8 (s0), the frame pointer
  kF0 = 32,  // f0..f31: 32..63
  kV0 = 96,  // v0..v31: 96..127
  kCsr0 = 4096,  // the control and status registers: 4096..8191
};

extern const ArchInfo kArchInfo;

}  // namespace framewalk::arch::riscv64

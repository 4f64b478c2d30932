// RISC-V DWARF register numbering (RISC-V ELF psABI, "DWARF Register
// Numbers"), for riscv64 and riscv32 alike, and the number framewalk gives
// the PC, which the psABI does not number.
#pragma once

#include <cstdint>

#include "arch/arch.hpp"

namespace framewalk::arch::riscv64 {

enum DwarfRegister : uint16_t {
  kRa = 1,   // x1, the return-address column
  kSp = 2,   // x2
  kFp = 8,   // x8 (s0), the frame pointer
  kA7 = 17,  // x17, the system call number
  kF0 = 32,  // f0..f31: 32..63
  // The PC has no DWARF number: 64 is the psABI's "alternate frame return
  // column", which no function's CFI uses; libgcc's RISC-V signal-frame
  // fallback keeps the interrupted PC in it, and libunwind's UNW_RISCV_PC
  // is 64 too.
  kPc = 64,
  kV0 = 96,  // v0..v31: 96..127
  kCsr0 = 4096,  // the control and status registers: 4096..8191
};

extern const ArchInfo kArchInfo;

}  // namespace framewalk::arch::riscv64

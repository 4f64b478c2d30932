// x86-64 DWARF register numbering (System V psABI, figure 3.36).
#pragma once

#include <cstdint>

#include "arch/arch.hpp"
#include "arch/frame_registers.hpp"

namespace framewalk::arch::x86_64 {

enum DwarfRegister : uint16_t {
  kRax = 0, kRdx = 1, kRcx = 2, kRbx = 3, kRsi = 4, kRdi = 5, kRbp = 6, kRsp = 7,
  kR8 = 8, kR9, kR10, kR11, kR12, kR13, kR14, kR15,
  kRip = 16,  // the return-address column
};

extern const ArchInfo kArchInfo;

// The call pushes the return address: rip is both the PC and the RA column.
inline constexpr FrameRegisters kFrameRegisters{62, kRsp, kRbp, kRip, kRip, false};

}  // namespace framewalk::arch::x86_64

// 32-bit ARM DWARF register numbering (ARM aadwarf32, "DWARF register names").
#pragma once

#include <cstdint>

#include "arch/arch.hpp"

namespace framewalk::arch::arm {

enum DwarfRegister : uint16_t {
  kR0 = 0,
  kR7 = 7,    // the Thumb-state frame pointer
  kR11 = 11,  // the ARM-state frame pointer
  kIp = 12,
  kSp = 13,
  kLr = 14,   // the return-address column of ARM CIEs
  kPc = 15,   // the PC of a RegisterFile (arch::Machine::program_counter)
  // Not a DWARF register: AADWARF32 leaves 16-63 unused. framewalk keeps the
  // frame's CPSR here, where a RegisterFile (registers < 64) holds it: from
  // NT_PRSTATUS for frame 0, from the kernel's sigcontext for a frame a
  // signal interrupted. Its T bit says whether an activation runs Thumb
  // code; for a frame at a return address it is stale (no unwind table
  // restores it), and bit 0 of the return address said it instead.
  kCpsr = 16,
  kWcgr0 = 104,       // iWMMX control wCGR0-7
  kWr0 = 112,         // iWMMX data wR0-15
  kRaAuthCode = 143,  // PACBTI return-address authentication code
  kD0 = 256,          // VFPv3/Neon d0-d31
};

// CPSR bit 5: the thread runs Thumb code.
inline constexpr uint32_t kCpsrThumb = 0x20;

extern const ArchInfo kArchInfo;

}  // namespace framewalk::arch::arm

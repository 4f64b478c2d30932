// s390x DWARF register numbering (s390x ELF ABI supplement, "DWARF
// definition"): only what SFrame names. framewalk reads s390x SFrame but
// neither dumps s390x CFI with register names nor unwinds s390x.
#pragma once

#include <cstdint>

#include "arch/frame_registers.hpp"

namespace framewalk::arch::s390x {

enum DwarfRegister : uint16_t {
  kR11 = 11,  // the preferred frame pointer
  kR14 = 14,  // the link register: the return-address column
  kR15 = 15,  // the stack pointer
  kPswAddress = 65,
};

inline constexpr uint16_t kElfMachine = 22;  // EM_S390

inline constexpr FrameRegisters kFrameRegisters{kElfMachine, kR15, kR11, kR14, kPswAddress, true};

}  // namespace framewalk::arch::s390x

// 32-bit ARM DWARF register numbering (ARM aadwarf32, "DWARF register names").
#pragma once

#include <cstdint>

#include "arch/arch.hpp"

namespace framewalk::arch::arm {

enum DwarfRegister : uint16_t {
  kR0 = 0,
  kR11 = 11,  // the ARM-state frame pointer (Thumb code uses r7)
  kSp = 13,
  kLr = 14,   // the return-address column
  kPc = 15,
};

extern const ArchInfo kArchInfo;

}  // namespace framewalk::arch::arm

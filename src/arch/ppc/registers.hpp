// 32-bit PowerPC DWARF register numbering: PowerPC's (arch/power/registers.hpp).
#pragma once

#include "arch/arch.hpp"
#include "arch/power/registers.hpp"

namespace framewalk::arch::ppc {

using enum power::DwarfRegister;

// bl leaves the return address in the link register; a prologue saves it
// in its caller's frame (4 bytes above the caller's stack pointer).
extern const ArchInfo kArchInfo;

}  // namespace framewalk::arch::ppc

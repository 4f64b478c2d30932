// The 32-bit PowerPC (SysV ABI, big-endian) descriptor for the step loop
// (arch/machine.hpp).
#pragma once

#include "arch/machine.hpp"

namespace framewalk::arch::ppc {

const Machine& machine();

}  // namespace framewalk::arch::ppc

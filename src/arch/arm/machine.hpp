// The 32-bit ARM (armhf, EABI, little endian) descriptor for the step loop
// (arch/machine.hpp).
#pragma once

#include "arch/machine.hpp"

namespace framewalk::arch::arm {

const Machine& machine();

}  // namespace framewalk::arch::arm

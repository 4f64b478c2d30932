// The x86-64 descriptor for the step loop (arch/machine.hpp).
#pragma once

#include "arch/machine.hpp"

namespace framewalk::arch::x86_64 {

const Machine& machine();
// x32: x86-64's instructions and registers with 4-byte pointers (no x32
// kernel here: its cores are read, its processes never traced).
const Machine& x32_machine();

}  // namespace framewalk::arch::x86_64

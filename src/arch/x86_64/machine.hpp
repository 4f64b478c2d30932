// The x86-64 descriptor for the step loop (arch/machine.hpp).
#pragma once

#include "arch/machine.hpp"

namespace framewalk::arch::x86_64 {

const Machine& machine();

}  // namespace framewalk::arch::x86_64

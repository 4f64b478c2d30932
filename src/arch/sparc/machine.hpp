// The sparc64 descriptor for the step loop (arch/machine.hpp).
#pragma once

#include "arch/machine.hpp"

namespace framewalk::arch::sparc {

const Machine& sparc64_machine();

}  // namespace framewalk::arch::sparc

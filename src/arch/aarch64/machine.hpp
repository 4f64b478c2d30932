// The AArch64 descriptor for the step loop (arch/machine.hpp).
#pragma once

#include "arch/machine.hpp"

namespace framewalk::arch::aarch64 {

const Machine& machine();

}  // namespace framewalk::arch::aarch64

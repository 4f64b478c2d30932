// The riscv64 (LP64D) descriptor for the step loop (arch/machine.hpp).
#pragma once

#include "arch/machine.hpp"

namespace framewalk::arch::riscv64 {

const Machine& machine();

}  // namespace framewalk::arch::riscv64

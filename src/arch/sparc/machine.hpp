// The SPARC descriptors for the step loop (arch/machine.hpp): sparc64, and
// 32-bit SPARC under either of its e_machines (EM_SPARC, EM_SPARC32PLUS).
#pragma once

#include "arch/machine.hpp"

namespace framewalk::arch::sparc {

const Machine& sparc64_machine();
const Machine& sparc32_machine();
const Machine& sparc32plus_machine();

}  // namespace framewalk::arch::sparc

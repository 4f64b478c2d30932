// The ppc64le (ELFv2) descriptor for the step loop (arch/machine.hpp).
#pragma once

#include "arch/machine.hpp"

namespace framewalk::arch::ppc64le {

const Machine& machine();

}  // namespace framewalk::arch::ppc64le

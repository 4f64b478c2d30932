// The s390x descriptor for the step loop (arch/machine.hpp).
#pragma once

#include "arch/machine.hpp"

namespace framewalk::arch::s390x {

const Machine& machine();

}  // namespace framewalk::arch::s390x

// The i386 descriptor for the step loop (arch/machine.hpp).
#pragma once

#include "arch/machine.hpp"

namespace framewalk::arch::i386 {

const Machine& machine();

}  // namespace framewalk::arch::i386

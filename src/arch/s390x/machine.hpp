// The s390x descriptor for the step loop (arch/machine.hpp).
#pragma once

#include "arch/machine.hpp"

namespace framewalk::arch::s390x {

const Machine& machine();
// 31-bit s390: s390x's instructions and registers with 4-byte words (no
// 31-bit kernel or qemu target here: its cores are read, its processes never
// traced).
const Machine& s390_machine();

}  // namespace framewalk::arch::s390x

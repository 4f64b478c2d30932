#include "arch/arm/registers.hpp"

namespace framewalk::arch::arm {

// binutils 2.40 has no register-name table for EM_ARM: readelf prints every
// register as "r<N>", and so must the dumps (the generic fallback does that).
const ArchInfo kArchInfo = {"ARM", 40, nullptr, 0, kSp, kR11, kLr};

}  // namespace framewalk::arch::arm

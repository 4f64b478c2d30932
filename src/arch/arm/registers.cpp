#include "arch/arm/registers.hpp"

namespace framewalk::arch::arm {

// binutils 2.40 has no register-name table for EM_ARM: readelf prints every
// register as "r<N>", and so must the dumps (the generic fallback does that).
// bl leaves the return address in lr; Thumb code keeps its frame pointer in
// r7, ARM state in r11.
const ArchInfo kArchInfo = {.name = "ARM",
                            .key = {kEmArm, false, Endian::kLittle, 0},
                            .stack_pointer = kSp,
                            .frame_pointer = kR11,
                            .return_address = kLr,
                            .program_counter = kPc,
                            .link_register = true,
                            .second_frame_pointer = kR7};

}  // namespace framewalk::arch::arm

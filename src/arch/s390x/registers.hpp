// s390x DWARF register numbering (s390x ELF ABI supplement, "DWARF
// definition"): only what SFrame names. framewalk reads s390x SFrame but
// does not unwind s390x yet.
#pragma once

#include <cstdint>

#include "arch/arch.hpp"

namespace framewalk::arch::s390x {

enum DwarfRegister : uint16_t {
  kR11 = 11,  // the preferred frame pointer
  kR14 = 14,  // the link register: the return-address column
  kR15 = 15,  // the stack pointer
  kPswAddress = 65,
};

// brasl leaves the return address in r14.
inline constexpr ArchInfo kArchInfo = {.name = "s390x",
                                       .key = {kEmS390, true, Endian::kBig, 0},
                                       .stack_pointer = kR15,
                                       .frame_pointer = kR11,
                                       .return_address = kR14,
                                       .program_counter = kPswAddress,
                                       .link_register = true};

}  // namespace framewalk::arch::s390x

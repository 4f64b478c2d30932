#include "arch/ppc64le/registers.hpp"

namespace framewalk::arch::ppc64le {

// binutils' readelf has no names for PowerPC registers ("r1", "r65"): none here.
// Of e_flags, the ABI version (EF_PPC64_ABI): 2, ELFv2.
const ArchInfo kArchInfo = {.name = "ppc64le",
                            .key = {kEmPpc64, true, Endian::kLittle, 2},
                            .flags_mask = 3,
                            .stack_pointer = kR1,
                            .frame_pointer = kR31,
                            .return_address = kLr,
                            .program_counter = kNip,
                            .link_register = true,
                            .saved_above_cfa = 24};

}  // namespace framewalk::arch::ppc64le

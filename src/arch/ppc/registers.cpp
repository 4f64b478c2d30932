#include "arch/ppc/registers.hpp"

namespace framewalk::arch::ppc {

// binutils' readelf has no names for PowerPC registers ("r1", "r65"): none here.
const ArchInfo kArchInfo = {.name = "ppc",
                            .key = {kEmPpc, false, Endian::kBig, 0},
                            .stack_pointer = kR1,
                            .frame_pointer = kR31,
                            .return_address = kLr,
                            .program_counter = kNip,
                            .link_register = true};

}  // namespace framewalk::arch::ppc

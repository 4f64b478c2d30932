#include "arch/i386/registers.hpp"

namespace framewalk::arch::i386 {

namespace {
// As binutils' dwarf_regnames_i386.
const char* const kNames[] = {
    "eax", "ecx", "edx", "ebx", "esp", "ebp", "esi", "edi",
    "eip", "eflags", nullptr,
    "st0", "st1", "st2", "st3", "st4", "st5", "st6", "st7",
    nullptr, nullptr,
    "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7",
    "mm0", "mm1", "mm2", "mm3", "mm4", "mm5", "mm6", "mm7",
    "fcw", "fsw", "mxcsr",
    "es", "cs", "ss", "ds", "fs", "gs", nullptr, nullptr,
    "tr", "ldtr",
    nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr,  // 50 - 57
    nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr,  // 58 - 65
    nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr,  // 66 - 73
    nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr,  // 74 - 81
    nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr,  // 82 - 89
    nullptr, nullptr, nullptr,                                               // 90 - 92
    "k0", "k1", "k2", "k3", "k4", "k5", "k6", "k7",
};
}  // namespace

// The call pushes the return address: eip is both the PC and the RA column.
const ArchInfo kArchInfo = {.name = "i386",
                            .key = {kEm386, false, Endian::kLittle, 0},
                            .dwarf_register_names = kNames,
                            .dwarf_register_count = sizeof(kNames) / sizeof(kNames[0]),
                            .stack_pointer = kEsp,
                            .frame_pointer = kEbp,
                            .return_address = kEip,
                            .program_counter = kEip,
                            .link_register = false};

}  // namespace framewalk::arch::i386

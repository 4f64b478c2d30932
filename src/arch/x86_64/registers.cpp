#include "arch/x86_64/registers.hpp"

namespace framewalk::arch::x86_64 {

namespace {
// Names and count follow binutils' dwarf_regnames_x86_64 so that
// `framewalk cfi --format=readelf` prints the same columns.
const char* const kNames[] = {
    "rax", "rdx", "rcx", "rbx", "rsi", "rdi", "rbp", "rsp",
    "r8", "r9", "r10", "r11", "r12", "r13", "r14", "r15",
    "rip",
    "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7",
    "xmm8", "xmm9", "xmm10", "xmm11", "xmm12", "xmm13", "xmm14", "xmm15",
    "st0", "st1", "st2", "st3", "st4", "st5", "st6", "st7",
    "mm0", "mm1", "mm2", "mm3", "mm4", "mm5", "mm6", "mm7",
    "rflags",
    "es", "cs", "ss", "ds", "fs", "gs", nullptr, nullptr,
    "fs.base", "gs.base", nullptr, nullptr,
    "tr", "ldtr",
    "mxcsr", "fcw", "fsw",
    "xmm16", "xmm17", "xmm18", "xmm19", "xmm20", "xmm21", "xmm22", "xmm23",
    "xmm24", "xmm25", "xmm26", "xmm27", "xmm28", "xmm29", "xmm30", "xmm31",
    nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr,  // 83 - 90
    nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr,  // 91 - 98
    nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr,  // 99 - 106
    nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr,  // 107 - 114
    nullptr, nullptr, nullptr,                                               // 115 - 117
    "k0", "k1", "k2", "k3", "k4", "k5", "k6", "k7",
};

// x86-64 and x32 differ in their pointers alone (the ELF class).
constexpr ArchInfo info_of(const char* name, bool is_64) {
  return {.name = name,
          .key = {kEmX86_64, is_64, Endian::kLittle, 0},
          .dwarf_register_names = kNames,
          .dwarf_register_count = sizeof(kNames) / sizeof(kNames[0]),
          .stack_pointer = kRsp,
          .frame_pointer = kRbp,
          .return_address = kRip,
          .program_counter = kRip,
          .link_register = false};
}
}  // namespace

const ArchInfo kArchInfo = info_of("x86_64", true);
const ArchInfo kX32ArchInfo = info_of("x32", false);

}  // namespace framewalk::arch::x86_64

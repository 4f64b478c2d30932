#include "arch/s390x/registers.hpp"

namespace framewalk::arch::s390x {

namespace {
// As binutils' readelf names them: no names for r0..r15, which readelf
// shows as "r5" already.
const char* const kNames[] = {
    nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr,  // 0 - 7
    nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr,  // 8 - 15
    "f0", "f2", "f4", "f6", "f1", "f3", "f5", "f7",
    "f8", "f10", "f12", "f14", "f9", "f11", "f13", "f15",
    "cr0", "cr1", "cr2", "cr3", "cr4", "cr5", "cr6", "cr7",
    "cr8", "cr9", "cr10", "cr11", "cr12", "cr13", "cr14", "cr15",
    "a0", "a1", "a2", "a3", "a4", "a5", "a6", "a7",
    "a8", "a9", "a10", "a11", "a12", "a13", "a14", "a15",
    "pswm", "pswa",
    nullptr, nullptr,  // 66, 67
    "v16", "v18", "v20", "v22", "v17", "v19", "v21", "v23",
    "v24", "v26", "v28", "v30", "v25", "v27", "v29", "v31",
};

// s390x and 31-bit s390 differ in their word (the ELF class) and so in the
// register save area every caller keeps: 16 words of 8 bytes or 4, and 32
// bytes more.
constexpr ArchInfo info_of(const char* name, bool is_64, uint16_t register_save_area) {
  return {.name = name,
          .key = {kEmS390, is_64, Endian::kBig, 0},
          .dwarf_register_names = kNames,
          .dwarf_register_count = sizeof(kNames) / sizeof(kNames[0]),
          .stack_pointer = kR15,
          .frame_pointer = kR11,
          .return_address = kR14,
          .program_counter = kPswAddress,
          .link_register = true,
          .cfa_above_stack_pointer = register_save_area};
}
}  // namespace

const ArchInfo kArchInfo = info_of("s390x", true, 160);
const ArchInfo kS390ArchInfo = info_of("s390", false, 96);

}  // namespace framewalk::arch::s390x

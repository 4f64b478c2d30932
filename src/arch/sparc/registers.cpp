#include "arch/sparc/registers.hpp"

namespace framewalk::arch::sparc {

namespace {
constexpr ArchInfo info_of(const char* name, uint16_t elf_machine, bool is_64) {
  return {.name = name,
          .key = {elf_machine, is_64, Endian::kBig, 0},
          .stack_pointer = kO6,
          .frame_pointer = kI6,
          .return_address = kO7,
          .program_counter = kPc,
          .link_register = true,
          .cfa_above_stack_pointer = is_64 ? uint16_t{kStackBias64} : uint16_t{0},
          .opcode_2d = CfaOpcode2d::kGnuWindowSave};
}
}  // namespace

const ArchInfo kSparc64ArchInfo = info_of("sparc64", kEmSparcv9, true);
const ArchInfo kSparcArchInfo = info_of("sparc", kEmSparc, false);
const ArchInfo kSparc32plusArchInfo = info_of("sparc32plus", kEmSparc32plus, false);

}  // namespace framewalk::arch::sparc

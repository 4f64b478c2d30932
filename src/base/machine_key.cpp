#include "base/machine_key.hpp"

namespace framewalk {

MachineKey usual_machine_key(uint16_t elf_machine) {
  MachineKey key;
  key.elf_machine = elf_machine;
  switch (elf_machine) {
    case kEm386:
    case kEmArm:
    case kEmPpc:
    case kEmSparc:
    case kEmSparc32plus: key.is_64 = false; break;
    default: break;
  }
  if (elf_machine == kEmS390 || elf_machine == kEmSparc || elf_machine == kEmSparc32plus ||
      elf_machine == kEmSparcv9 || elf_machine == kEmPpc)
    key.endian = Endian::kBig;
  if (elf_machine == kEmPpc64) key.flags = 2;  // EF_PPC64_ABI: ELFv2
  return key;
}

std::string machine_name(const MachineKey& key) {
  const bool big = key.endian == Endian::kBig;
  const bool is_64 = key.is_64;
  switch (key.elf_machine) {
    case kEm386: return "i386";
    case kEmX86_64: return is_64 ? "x86-64" : "x32";
    case kEmAarch64: return big ? "AArch64 (big-endian)" : "AArch64";
    case kEmArm: return big ? "ARM (big-endian)" : "ARM";
    case kEmPpc: return big ? "ppc" : "ppcle";
    case kEmPpc64: return big ? "ppc64" : "ppc64le";
    case kEmS390: return is_64 ? "s390x" : "s390";
    case kEmMips: return std::string(is_64 ? "mips64" : "mips") + (big ? "" : "el");
    case kEmSparc: return "sparc";
    case kEmSparc32plus: return "sparc32plus";
    case kEmSparcv9: return "sparc64";
    case kEmRiscv: return is_64 ? "riscv64" : "riscv32";
    case kEmLoongarch: return is_64 ? "loongarch64" : "loongarch32";
    default: return "e_machine " + std::to_string(key.elf_machine);
  }
}

}  // namespace framewalk

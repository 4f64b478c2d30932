// Which machine an ELF file's code is for. e_machine alone does not say:
// x32 and x86-64 share EM_X86_64 (the ELF class tells them apart), 31-bit
// s390 and s390x EM_S390 (the class), big-endian ELFv1 ppc64 and ppc64le
// EM_PPC64 (the byte order and e_flags' ABI version). Every table of
// machines is keyed on the whole key.
#pragma once

#include <cstdint>
#include <string>

#include "base/byte_reader.hpp"

namespace framewalk {

// ELF e_machine numbers (elf.h's EM_*).
inline constexpr uint16_t kEmSparc = 2, kEm386 = 3, kEmMips = 8, kEmPpc = 20, kEmPpc64 = 21, kEmS390 = 22,
                          kEmSparc32plus = 18,
                          kEmArm = 40, kEmSparcv9 = 43, kEmX86_64 = 62, kEmAarch64 = 183, kEmRiscv = 243,
                          kEmLoongarch = 258;

struct MachineKey {
  uint16_t elf_machine = 0;
  bool is_64 = true;                // ELFCLASS64
  Endian endian = Endian::kLittle;  // EI_DATA
  uint32_t flags = 0;               // e_flags

  bool operator==(const MachineKey&) const = default;
};

// The key of the usual machine of an e_machine, where only the number is
// known (a perf.data's HEADER_ARCH, a C API back-end, a snapshot): the
// 64-bit little-endian one where there are two (x86-64, not x32; s390x,
// big-endian; ppc64le).
MachineKey usual_machine_key(uint16_t elf_machine);

// As binutils and the kernel name machines: "x86-64", "x32", "s390x",
// "ppc64le", "ppcle", "AArch64 (big-endian)"; "e_machine N" for an unknown number.
std::string machine_name(const MachineKey& key);

}  // namespace framewalk

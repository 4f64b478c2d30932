#include "arch/arch.hpp"

#include "arch/aarch64/registers.hpp"
#include "arch/arm/registers.hpp"
#include "arch/frame_registers.hpp"
#include "arch/i386/registers.hpp"
#include "arch/riscv64/registers.hpp"
#include "arch/s390x/registers.hpp"
#include "arch/x86_64/registers.hpp"

namespace framewalk::arch {

const ArchInfo* arch_for_machine(uint16_t elf_machine) {
  switch (elf_machine) {
    case 62: return &x86_64::kArchInfo;
    case 3: return &i386::kArchInfo;
    case 183: return &aarch64::kArchInfo;
    case 40: return &arm::kArchInfo;
    case s390x::kElfMachine: return &s390x::kArchInfo;
    case riscv64::kElfMachine: return &riscv64::kArchInfo;
    default: return nullptr;
  }
}

const FrameRegisters* frame_registers_for(uint16_t elf_machine) {
  switch (elf_machine) {
    case 62: return &x86_64::kFrameRegisters;
    case 183: return &aarch64::kFrameRegisters;
    case s390x::kElfMachine: return &s390x::kFrameRegisters;
    default: return nullptr;
  }
}

const char* dwarf_register_name(const ArchInfo* arch, unsigned reg) {
  if (!arch || reg >= arch->dwarf_register_count) return nullptr;
  return arch->dwarf_register_names[reg];
}

}  // namespace framewalk::arch

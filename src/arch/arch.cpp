#include "arch/arch.hpp"

#include "arch/aarch64/registers.hpp"
#include "arch/arm/registers.hpp"
#include "arch/i386/registers.hpp"
#include "arch/ppc/registers.hpp"
#include "arch/ppc64le/registers.hpp"
#include "arch/riscv64/registers.hpp"
#include "arch/s390x/registers.hpp"
#include "arch/sparc/registers.hpp"
#include "arch/x86_64/registers.hpp"

namespace framewalk::arch {

namespace {
const ArchInfo* const kKnown[] = {&x86_64::kArchInfo, &aarch64::kArchInfo, &arm::kArchInfo,
                                  &i386::kArchInfo,   &s390x::kArchInfo,   &riscv64::kArchInfo,
                                  &ppc64le::kArchInfo, &ppc::kArchInfo, &x86_64::kX32ArchInfo,
                                  &sparc::kSparc64ArchInfo, &sparc::kSparcArchInfo, &sparc::kSparc32plusArchInfo,
                                  &s390x::kS390ArchInfo};
}  // namespace

const ArchInfo* arch_for(const MachineKey& key) {
  for (const ArchInfo* info : kKnown)
    if (info->matches(key)) return info;
  return nullptr;
}

const ArchInfo* dwarf_arch_for(const MachineKey& key) {
  if (const ArchInfo* exact = arch_for(key)) return exact;
  for (const ArchInfo* info : kKnown)
    if (info->elf_machine() == key.elf_machine) return info;
  return nullptr;
}

const char* dwarf_register_name(const ArchInfo* arch, unsigned reg) {
  if (!arch || reg >= arch->dwarf_register_count) return nullptr;
  return arch->dwarf_register_names[reg];
}

}  // namespace framewalk::arch

#include "arch/machine.hpp"

#include "arch/arm/machine.hpp"
#include "arch/x86_64/machine.hpp"

namespace framewalk::arch {

const Machine* machine_for(uint16_t elf_machine) {
  switch (elf_machine) {
    case 62: return &x86_64::machine();
    case 40: return &arm::machine();
    default: return nullptr;  // i386 and AArch64 have register names (arch.hpp) but no unwinder yet
  }
}

const Machine& host_machine() {
#if defined(__x86_64__)
  return x86_64::machine();
#else
#error "framewalk has no machine descriptor for this host (src/arch/<machine>/machine.cpp)"
#endif
}

}  // namespace framewalk::arch

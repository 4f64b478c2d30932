// SPARC DWARF register numbering (the SPARC psABIs; gcc's): the 32 integer
// registers of the current window, %g0-%g7, %o0-%o7, %l0-%l7, %i0-%i7, as
// 0-31, then the floating-point registers; and the number framewalk gives
// the PC, which the psABIs do not number. sparc64 and 32-bit SPARC are
// unwound (arch/sparc/machine.hpp).
#pragma once

#include <cstdint>

#include "arch/arch.hpp"

namespace framewalk::arch::sparc {

enum DwarfRegister : uint16_t {
  kG0 = 0,
  kG1 = 1,
  kO0 = 8,
  kO6 = 14,  // %sp
  kO7 = 15,  // the return address (of the call), the CIEs' return-address column
  kL0 = 16,
  kI0 = 24,
  kI6 = 30,  // %fp: the caller's %sp once `save` has run
  kI7 = 31,  // the caller's %o7 once `save` has run
  // The PC has no DWARF number: gcc's columns end at 102 (the FP registers,
  // the condition codes), so the PC takes the next.
  kPc = 103,
};

// sparc64 keeps every stack pointer and frame pointer 2047 bytes below the
// stack frame it points to (the V9 ABI's stack bias): the CFA is %sp + 2047.
inline constexpr int64_t kStackBias64 = 2047;

// sparc64 (EM_SPARCV9); 32-bit SPARC (EM_SPARC) and 32-bit code using v9
// instructions (EM_SPARC32PLUS): big-endian. readelf names no SPARC
// register ("r30"); DW_CFA_GNU_window_save (0x2d) says `save` has run.
extern const ArchInfo kSparc64ArchInfo;
extern const ArchInfo kSparcArchInfo;
extern const ArchInfo kSparc32plusArchInfo;

}  // namespace framewalk::arch::sparc

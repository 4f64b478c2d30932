// SPARC DWARF register numbering (the SPARC psABIs; gcc's): the 32 integer
// registers of the current window, %g0-%g7, %o0-%o7, %l0-%l7, %i0-%i7, as
// 0-31, then the floating-point registers. Files of SPARC are read (their
// CFI dumped and checked); framewalk unwinds no SPARC yet.
#pragma once

#include <cstdint>

#include "arch/arch.hpp"

namespace framewalk::arch::sparc {

enum DwarfRegister : uint16_t {
  kO6 = 14,  // %sp
  kO7 = 15,  // the return address (of the call), the CIEs' return-address column
  kI6 = 30,  // %fp: the caller's %sp once `save` has run
  kI7 = 31,  // the caller's %o7 once `save` has run
};

// sparc64 (EM_SPARCV9); 32-bit SPARC (EM_SPARC) and 32-bit code using v9
// instructions (EM_SPARC32PLUS): big-endian. readelf names no SPARC
// register ("r30"); DW_CFA_GNU_window_save (0x2d) says `save` has run.
extern const ArchInfo kSparc64ArchInfo;
extern const ArchInfo kSparcArchInfo;
extern const ArchInfo kSparc32plusArchInfo;

}  // namespace framewalk::arch::sparc

// i386 DWARF register numbering (System V i386 psABI).
#pragma once

#include <cstdint>

#include "arch/arch.hpp"

namespace framewalk::arch::i386 {

enum DwarfRegister : uint16_t {
  kEax = 0, kEcx, kEdx, kEbx, kEsp, kEbp, kEsi, kEdi,
  kEip = 8,  // the return-address column
  kEflags = 9,
  kEs = 40, kCs, kSs, kDs, kFs, kGs,
};

extern const ArchInfo kArchInfo;

}  // namespace framewalk::arch::i386

// The registers a frame is described by in the stack-trace formats (SFrame):
// the stack and frame pointers a CFA is based on, the return address, and
// where a call leaves it. Machine knowledge, so that no layer outside arch/
// names a machine's registers; one constant per machine in
// arch/<machine>/registers.hpp, also for machines framewalk cannot unwind
// yet (s390x) whose SFrame it reads.
#pragma once

#include <cstdint>

namespace framewalk::arch {

struct FrameRegisters {
  uint16_t elf_machine;
  // DWARF numbers.
  uint16_t stack_pointer;
  uint16_t frame_pointer;
  uint16_t return_address;   // the rows' return-address column
  uint16_t program_counter;  // the PC as a DWARF expression reads it (x86: the RA column itself)
  // A call leaves the return address in a register (the RA column) rather
  // than on the stack: a row without a rule for it means "still there".
  bool link_register;
};

// Null for machines without one.
const FrameRegisters* frame_registers_for(uint16_t elf_machine);

}  // namespace framewalk::arch

// For the PowerPC machines' tests: a frame's registers, and a signal frame
// over a fake stack whose saved gregs slot i holds 0x2000 + i and fregs
// slot i 0x4000 + i, which must give those registers back through the
// machine's signal row at `pc`.
#pragma once

#include <gtest/gtest.h>

#include "arch/machine.hpp"
#include "arch/power/registers.hpp"
#include "unwind/unwinder.hpp"

namespace framewalk::test {

// A frame of a PowerPC machine with only r1 and the PC known.
inline arch::RegisterFile power_registers_at(uint64_t sp, uint64_t pc) {
  arch::RegisterFile r;
  r.set(arch::power::kR1, sp);
  r.set(arch::power::kNip, pc);
  return r;
}

inline void expect_numbered_registers_restored(const arch::Machine& machine, Memory& memory, uint64_t pc,
                                               uint64_t sp) {
  namespace p = arch::power;
  UnwindRow row;
  ASSERT_TRUE(machine.signal_frame_row(memory, pc, &row));
  EXPECT_TRUE(row.signal_frame);
  static const ModuleMap no_modules;
  Unwinder unwinder(no_modules, memory, machine.key());
  arch::RegisterFile regs;
  regs.set(p::kNip, pc);
  regs.set(p::kR1, sp);
  auto interrupted = unwinder.apply_row(row, regs);
  ASSERT_TRUE(interrupted.ok());
  EXPECT_EQ(interrupted->get(p::kR0), 0x2000u);
  EXPECT_EQ(interrupted->get(p::kR1), 0x2001u);
  EXPECT_EQ(interrupted->get(p::kR31), 0x201fu);
  EXPECT_EQ(interrupted->get(p::kNip), 0x2020u);  // then msr, orig_gpr3
  EXPECT_EQ(interrupted->get(p::kCtr), 0x2023u);
  EXPECT_EQ(interrupted->get(p::kLr), 0x2024u);
  EXPECT_EQ(interrupted->get(p::kXer), 0x2025u);
  EXPECT_EQ(interrupted->get(p::kF0 + 31), 0x401fu);
}

}  // namespace framewalk::test

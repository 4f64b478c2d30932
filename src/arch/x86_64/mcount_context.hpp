// What the mcount runtime (src/mcount/) needs to know of this machine beyond
// its entry stubs (mcount_entry.S): the PC a profiling signal interrupted,
// a code address as the arc tables keep it, whether its stubs read the
// first probe, and how a count of the thread's table is added to.
#pragma once

#include <cstdint>
#include <ucontext.h>

namespace framewalk::mcount::host {

// The interrupted PC, from the ucontext_t a SA_SIGINFO handler receives.
inline uintptr_t interrupted_pc(const void* context) {
  const auto* uc = static_cast<const ucontext_t*>(context);
  return static_cast<uintptr_t>(uc->uc_mcontext.gregs[REG_RIP]);
}

// A function address or return address from -finstrument-functions' hooks
// as an arc keeps it.
inline uintptr_t code_address(uintptr_t address) { return address; }

// The entry stubs read the thread's first probe (mcount/first_probe.h) and
// add a call to the slot they find with one instruction, without the
// thread's guard: a signal cannot split an instruction.
inline constexpr bool kStubReadsFirstProbe = true;

// Adds n calls to a count of the calling thread's table where a signal
// handler's stub may add to the same count: one instruction, which a signal
// cannot split (no lock: only the owning thread adds).
inline void add_count(uint64_t& count, uint64_t n) { asm volatile("addq %1, %0" : "+m"(count) : "r"(n)); }

}  // namespace framewalk::mcount::host

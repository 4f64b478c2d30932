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
  return static_cast<uintptr_t>(uc->uc_mcontext.psw.addr);  // the PSW address
}

// A function address or return address from -finstrument-functions' hooks
// as an arc keeps it.
inline uintptr_t code_address(uintptr_t address) { return address; }

// The entry stubs do not read the thread's first probe (mcount/first_probe.h):
// every call goes through the C side, under the thread's guard.
inline constexpr bool kStubReadsFirstProbe = false;

// Adds n calls to a count of the calling thread's table (under the thread's
// guard: no stub adds without it on this machine).
inline void add_count(uint64_t& count, uint64_t n) { count += n; }

// No stub patches return addresses on this machine (FRAMEWALK_MCOUNT_FENTRY_TIMES
// is ignored): -finstrument-functions gives exact times.
inline constexpr bool kStubPatchesReturns = false;
inline uintptr_t fentry_function_start(uintptr_t self_pc) { return self_pc; }  // not called here

}  // namespace framewalk::mcount::host

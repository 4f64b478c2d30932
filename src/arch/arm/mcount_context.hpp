// What the mcount runtime (src/mcount/) needs to know of this machine beyond
// its entry stubs (mcount_entry.S): the PC a profiling signal interrupted,
// a code address as the arc tables keep it (what its stubs do is
// mcount/plain_stubs.hpp's).
#pragma once

#include <cstdint>
#include <ucontext.h>

#include "mcount/plain_stubs.hpp"

namespace framewalk::mcount::host {

// The interrupted PC, from the ucontext_t a SA_SIGINFO handler receives.
inline uintptr_t interrupted_pc(const void* context) {
  const auto* uc = static_cast<const ucontext_t*>(context);
  return static_cast<uintptr_t>(uc->uc_mcontext.arm_pc);
}

// A function address or return address from -finstrument-functions' hooks
// as an arc keeps it. A Thumb function's address and a Thumb return
// address carry the Thumb bit (bit 0), which gprof's symbol lookup must not
// see.
inline uintptr_t code_address(uintptr_t address) { return address & ~uintptr_t{1}; }

}  // namespace framewalk::mcount::host

// What the mcount runtime knows of a machine whose entry stubs call the C
// side for every call (every machine's but x86-64's): they do not read the
// thread's first probe (mcount/first_probe.h), count only under the
// thread's guard, and patch no return address. Included by those machines'
// src/arch/<machine>/mcount_context.hpp.
#pragma once

#include <cstdint>

namespace framewalk::mcount::host {

// The entry stubs do not read the thread's first probe: every call goes
// through the C side, under the thread's guard.
inline constexpr bool kStubReadsFirstProbe = false;

// Adds n calls to a count of the calling thread's table (under the thread's
// guard: no stub adds without it; on a 32-bit machine a 64-bit count takes
// two instructions).
inline void add_count(uint64_t& count, uint64_t n) { count += n; }

// No stub patches return addresses (FRAMEWALK_MCOUNT_FENTRY_TIMES is
// ignored): -finstrument-functions gives exact times.
inline constexpr bool kStubPatchesReturns = false;
inline uintptr_t fentry_function_start(uintptr_t self_pc) { return self_pc; }  // not called here

}  // namespace framewalk::mcount::host

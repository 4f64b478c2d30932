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

// __fentry__ can patch the instrumented function's return address
// (FRAMEWALK_MCOUNT_FENTRY_TIMES=1): its stub and framewalk_mcount_return.
inline constexpr bool kStubPatchesReturns = true;

// The start of the function whose __fentry__ call returns to `self_pc`: gcc
// 12 calls it first thing with `call *__fentry__@GOTPCREL(%rip)` (ff 15,
// 6 bytes; `call __fentry__`, e8, 5 bytes, without -fno-plt or from other
// compilers), after an `endbr64` (f3 0f 1e fa) under -fcf-protection. The
// bytes read are the instrumented function's own, just executed.
inline uintptr_t fentry_function_start(uintptr_t self_pc) {
  const auto* code = reinterpret_cast<const unsigned char*>(self_pc);
  uintptr_t call = self_pc - 5;
  if (code[-6] == 0xff && code[-5] == 0x15) call = self_pc - 6;
  const auto* before = reinterpret_cast<const unsigned char*>(call);
  if (before[-4] == 0xf3 && before[-3] == 0x0f && before[-2] == 0x1e && before[-1] == 0xfa) return call - 4;
  return call;
}

}  // namespace framewalk::mcount::host

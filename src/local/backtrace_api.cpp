// The C API of <framewalk/backtrace.h>, but for framewalk_backtrace itself.
#include <ucontext.h>

#include "arch/x86_64/frames.hpp"
#include "framewalk/backtrace.h"
#include "local/fast_unwinder.hpp"


// framewalk_backtrace itself is in fast_unwinder.cpp, with the walk inlined.

extern "C" int framewalk_backtrace_ucontext(const void* context, void** buffer, int size) {
  if (!context) return 0;
  const auto* uc = static_cast<const ucontext_t*>(context);
  framewalk::arch::RegisterFile regs;
  for (unsigned i = 0; i < 17; ++i)
    regs.set(framewalk::arch::x86_64::kGregsToDwarf[i], static_cast<uint64_t>(uc->uc_mcontext.gregs[i]));
  return framewalk::local::fast_walk(regs, /*first_is_return_address=*/false, /*skip=*/0, buffer, size);
}

extern "C" void framewalk_backtrace_flush_cache(void) { framewalk::local::flush_rule_cache(); }

extern "C" __attribute__((noinline)) void framewalk_backtrace_prepare(void) {
  framewalk::local::prefault_rule_cache();
  // One walk binds what the unwinder calls and caches this stack's rules.
  void* frames[64];
  framewalk_backtrace(frames, 64);
  asm volatile("" ::: "memory");
}

extern "C" unsigned long framewalk_backtrace_cache_bytes(void) { return framewalk::local::rule_cache_bytes(); }

// The C API of <framewalk/backtrace.h>, but for framewalk_backtrace itself.
#include <ucontext.h>

#include "arch/machine.hpp"
#include "framewalk/backtrace.h"
#include "local/fast_unwinder.hpp"


// framewalk_backtrace itself is in fast_unwinder.cpp, with the walk inlined.

extern "C" int framewalk_backtrace_ucontext(const void* context, void** buffer, int size) {
  if (!context) return 0;
  const framewalk::arch::RegisterFile regs = framewalk::arch::host_machine().registers_from_ucontext(
      framewalk::Bytes(static_cast<const uint8_t*>(context), sizeof(ucontext_t)));
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

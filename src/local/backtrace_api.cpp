// The C API of <framewalk/backtrace.h>, but for framewalk_backtrace itself.
#include <ucontext.h>

#include "arch/machine.hpp"
#include "framewalk/backtrace.h"
#include "local/fast_unwinder.hpp"


// framewalk_backtrace and framewalk_backtrace_status are in fast_unwinder.cpp, with the walk inlined.

extern "C" int framewalk_backtrace_ucontext_status(const void* context, void** buffer, int size,
                                                  framewalk_backtrace_info* info) {
  if (!context) {
    if (info) *info = {FRAMEWALK_BT_NO_UNWIND_INFO, 0};
    return 0;
  }
  const framewalk::arch::RegisterFile regs = framewalk::arch::host_machine().registers_from_ucontext(
      framewalk::Bytes(static_cast<const uint8_t*>(context), sizeof(ucontext_t)));
  return framewalk::local::fast_walk(regs, /*first_is_return_address=*/false, /*skip=*/0, buffer, size, nullptr, info);
}

extern "C" int framewalk_backtrace_ucontext(const void* context, void** buffer, int size) {
  return framewalk_backtrace_ucontext_status(context, buffer, size, nullptr);
}

extern "C" const char* framewalk_backtrace_end_name(int end) {
  switch (end) {
    case FRAMEWALK_BT_OUTERMOST: return "outermost";
    case FRAMEWALK_BT_FULL: return "full";
    case FRAMEWALK_BT_NO_UNWIND_INFO: return "no-unwind-info";
    case FRAMEWALK_BT_BAD_MEMORY: return "bad-memory";
    case FRAMEWALK_BT_CFA_DID_NOT_ADVANCE: return "cfa-did-not-advance";
    case FRAMEWALK_BT_BAD_UNWIND_INFO: return "bad-unwind-info";
    default: return "unknown";
  }
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

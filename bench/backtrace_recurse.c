// Recursion for the backtrace benchmark. Built twice: -fomit-frame-pointer
// (what every method but the frame-pointer walk unwinds) and
// -fno-omit-frame-pointer (for the frame-pointer walk).
#include <stdint.h>

typedef int (*bt_method)(void** buffer, int size);

#ifndef RECURSE_NAME
#define RECURSE_NAME bench_recurse
#endif

__attribute__((noinline)) int RECURSE_NAME(int depth, bt_method method, void** buffer, int size) {
  if (depth <= 1) return method(buffer, size);
  int n = RECURSE_NAME(depth - 1, method, buffer, size);
  __asm__ volatile("" ::: "memory");  // not a tail call
  return n;
}

// The frame-pointer walk: rbp chain, bounded and checked for an upward-moving stack.
__attribute__((noinline)) int fp_walk(void** buffer, int size) {
  uintptr_t* fp = (uintptr_t*)__builtin_frame_address(0);
  int n = 0;
  while (fp && n < size) {
    uintptr_t ra = fp[1];
    if (!ra) break;
    buffer[n++] = (void*)ra;
    uintptr_t* next = (uintptr_t*)fp[0];
    if (next <= fp) break;
    fp = next;
  }
  return n;
}

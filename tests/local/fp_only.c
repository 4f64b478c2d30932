/* Code without unwind information, frame pointers only (built with
 * -fno-asynchronous-unwind-tables -fno-unwind-tables -fno-omit-frame-pointer),
 * for the in-process walks: fp_only_a -> fp_only_b -> fp_only_c -> `leaf`,
 * a function with CFI that does not mention the frame pointer. */
#include <stdint.h>

#include "local/fp_only.h"

__attribute__((noinline)) int fp_only_c(int (*leaf)(void*), void* arg) {
  int r = leaf(arg);
  __asm__ volatile("" ::: "memory");  /* no tail call */
  return r + 1;
}

__attribute__((noinline)) int fp_only_b(int (*leaf)(void*), void* arg) {
  int r = fp_only_c(leaf, arg);
  __asm__ volatile("" ::: "memory");
  return r + 1;
}

__attribute__((noinline)) int fp_only_a(int (*leaf)(void*), void* arg) {
  int r = fp_only_b(leaf, arg);
  __asm__ volatile("" ::: "memory");
  return r + 1;
}

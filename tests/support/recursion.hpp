// A stack of known depth for the in-process unwinding tests.
#pragma once

namespace framewalk::test {

// Calls itself `depth` times, then returns fn(arg) from the deepest frame.
__attribute__((noinline)) inline int recurse_then(int depth, int (*fn)(void*), void* arg) {
  if (depth <= 0) return fn(arg);
  const int r = recurse_then(depth - 1, fn, arg);
  asm volatile("" ::: "memory");  // a real call, not a tail call or a loop
  return r;
}

}  // namespace framewalk::test

// Exact times of a -pg -mfentry program by return-address patching
// (FRAMEWALK_MCOUNT_FENTRY_TIMES=1; tests/mcount/check_gmon.py times): the
// structure of timed_calls.c, plus a C++ exception thrown through patched
// frames and caught two frames up, a tail call, and return values in rax,
// rdx and xmm0 that must come through the trampoline. It prints `expect
// FUNCTION CALLS INCLUSIVE_MS SELF_MS` lines, the least each can be.
//
//   main -> outer, rec(3), jumper (timed_functions.h)
//        -> catcher -> middle -> thrower (5 ms, throws); catcher 5 ms after the catch
//           (the frames the exception unwinds end at the catch)
//        -> tail_from -> (tail call) tail_to, 5 ms
//        -> a thread: worker (timed_functions.h)
#include <pthread.h>
#include <stdio.h>

#include <stdexcept>

#include "timed_functions.h"

extern "C" {

NOINLINE int tail_to(int x) {
  pause_ms(5);
  return x + 1;
}
// Built with sibling calls allowed (below): a jmp to tail_to, whose
// __fentry__ finds the slot patched already.
__attribute__((noinline, noclone, optimize("optimize-sibling-calls"))) int tail_from(int x) { return tail_to(x * 2); }

struct Pair {
  long a, b;
};
NOINLINE Pair two_words(long x) { return Pair{x, x * 3}; }  // rax and rdx
NOINLINE double a_double(double x) { return x * 2.5; }      // xmm0

}  // extern "C"

extern "C" NOINLINE void thrower(void) {
  pause_ms(5);
  throw std::runtime_error("through patched frames");
}
extern "C" NOINLINE void middle(void) { thrower(); }
extern "C" NOINLINE int catcher(void) {
  int caught = 0;
  try {
    middle();
  } catch (const std::runtime_error&) {
    caught = 1;
  }
  pause_ms(5);
  return caught;
}

int main() {
  outer();
  rec(3);
  jumper();
  if (catcher() != 1) return 3;
  if (tail_from(20) != 41) return 4;
  const Pair p = two_words(7);
  if (p.a != 7 || p.b != 21 || a_double(2.0) != 5.0) return 5;
  pthread_t t;
  if (pthread_create(&t, nullptr, worker, nullptr) != 0) return 1;
  pthread_join(t, nullptr);
  expect_timed_functions();
  printf("expect catcher 1 10 5\n");
  printf("expect middle 1 5 0\n");
  printf("expect thrower 1 5 5\n");
  printf("expect tail_from 1 5 0\n");
  printf("expect tail_to 1 5 5\n");
  printf("expect main 1 115 0\n");
  return 0;
}

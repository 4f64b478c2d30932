// Exact per-function times under -finstrument-functions (tests/mcount/
// check_gmon.py times): functions that sleep known times in a known
// structure. It prints `expect FUNCTION CALLS INCLUSIVE_MS SELF_MS`, the
// least each function's times can be (a sleep lasts at least what it asks).
//
//   main -> outer -> inner_a (30 ms), inner_b twice (10 ms each); outer 10 ms itself
//        -> rec(3) -> rec(2) -> rec(1) -> rec(0): 5 ms in each
//        -> jumper -> deep(1), which longjmps back to jumper; deep(0), 5 ms
//        -> a thread: worker, 15 ms
//        -> lib_timed twice, in a shared library (timed_lib.c): 10 ms, lib_leaf 5 ms
#include <pthread.h>
#include <stdio.h>

#include "timed_functions.h"

void lib_timed(void);  // timed_lib.c

int main(void) {
  outer();
  rec(3);
  jumper();
  pthread_t t;
  if (pthread_create(&t, NULL, worker, NULL) != 0) return 1;
  pthread_join(t, NULL);
  lib_timed();
  lib_timed();
  expect_timed_functions();
  printf("expect lib_timed 2 30 20\n");
  printf("expect lib_leaf 2 10 10\n");
  printf("expect main 1 130 0\n");
  return 0;
}

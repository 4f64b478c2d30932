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
#include <setjmp.h>
#include <stdio.h>
#include <time.h>

#define NOINLINE __attribute__((noinline, noclone))
#define UNINSTRUMENTED __attribute__((noinline, noclone, no_instrument_function))

UNINSTRUMENTED static void pause_ms(int ms) {
  struct timespec t = {ms / 1000, (long)(ms % 1000) * 1000000L};
  while (nanosleep(&t, &t) != 0) {
  }
}

NOINLINE void inner_a(void) { pause_ms(30); }
NOINLINE void inner_b(void) { pause_ms(10); }

NOINLINE void outer(void) {
  pause_ms(10);
  inner_a();
  inner_b();
  inner_b();
}

NOINLINE int rec(int n) {
  pause_ms(5);
  return n == 0 ? 0 : 1 + rec(n - 1);
}

void lib_timed(void);  // timed_lib.c

static jmp_buf jump;

NOINLINE void deep(int leave) {
  if (leave) longjmp(jump, 1);
  pause_ms(5);
}

NOINLINE void jumper(void) {
  if (setjmp(jump) == 0) deep(1);
  deep(0);
}

NOINLINE void* worker(void* arg) {
  (void)arg;
  pause_ms(15);
  return NULL;
}

int main(void) {
  outer();
  rec(3);
  jumper();
  pthread_t t;
  if (pthread_create(&t, NULL, worker, NULL) != 0) return 1;
  pthread_join(t, NULL);
  lib_timed();
  lib_timed();
  printf("expect outer 1 60 10\n");
  printf("expect inner_a 1 30 30\n");
  printf("expect inner_b 2 20 20\n");
  printf("expect rec 4 20 20\n");
  printf("expect deep 2 5 5\n");
  printf("expect jumper 1 5 0\n");
  printf("expect worker 1 15 15\n");
  printf("expect lib_timed 2 30 20\n");
  printf("expect lib_leaf 2 10 10\n");
  printf("expect main 1 130 0\n");
  return 0;
}

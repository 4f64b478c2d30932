// The functions of known times that timed_calls.c (-finstrument-functions)
// and fentry_times.cpp (-pg -mfentry, return-address patching) both call,
// compiled into each with its own hooks:
//   outer -> inner_a (30 ms), inner_b twice (10 ms each); outer 10 ms itself
//   rec(3) -> rec(2) -> rec(1) -> rec(0): 5 ms in each
//   jumper -> deep(1), which longjmps back to jumper; deep(0), 5 ms
//   worker (a thread's start routine), 15 ms
#include <setjmp.h>
#include <stdio.h>
#include <time.h>

#define NOINLINE __attribute__((noinline, noclone))
#define UNINSTRUMENTED __attribute__((noinline, noclone, no_instrument_function))

#ifdef __cplusplus
extern "C" {
#endif

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

// Their `expect FUNCTION CALLS INCLUSIVE_MS SELF_MS` lines (check_gmon.py
// times): the least each can be (a sleep lasts at least what it asks).
UNINSTRUMENTED static void expect_timed_functions(void) {
  printf("expect outer 1 60 10\n");
  printf("expect inner_a 1 30 30\n");
  printf("expect inner_b 2 20 20\n");
  printf("expect rec 4 20 20\n");
  printf("expect deep 2 5 5\n");
  printf("expect jumper 1 5 0\n");
  printf("expect worker 1 15 15\n");
}

#ifdef __cplusplus
}
#endif

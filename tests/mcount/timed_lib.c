// The shared library of the exact-times program (tests/mcount/timed_calls.c),
// built with -finstrument-functions too: gmon.out.times lists its functions
// with the library's path, and framewalk report names them from its symbols.
//   lib_timed: 10 ms itself, then lib_leaf: 5 ms
#include <time.h>

#define NOINLINE __attribute__((noinline, noclone))
#define UNINSTRUMENTED __attribute__((noinline, noclone, no_instrument_function))

UNINSTRUMENTED static void lib_pause_ms(int ms) {
  struct timespec t = {0, (long)ms * 1000000L};
  while (nanosleep(&t, &t) != 0) {
  }
}

NOINLINE void lib_leaf(void) { lib_pause_ms(5); }

NOINLINE void lib_timed(void) {
  lib_pause_ms(10);
  lib_leaf();
}

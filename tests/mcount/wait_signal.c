// `framewalk profile` passes on the signals it is sent (tests/mcount/
// check_gmon.py profile): the program calls tick() until SIGTERM arrives,
// then exits normally, so that its gmon.out holds `expect main tick N`.
// It prints `ready` once it has called tick() and waits for the signal.
#include <signal.h>
#include <stdio.h>
#include <unistd.h>

#define NOINLINE __attribute__((noinline, noclone))

static volatile sig_atomic_t stop;
volatile int sink;

__attribute__((no_instrument_function)) static void on_term(int signo) {
  (void)signo;
  stop = 1;
}

NOINLINE void tick(void) { sink++; }

int main(void) {
  struct sigaction action = {0};
  action.sa_handler = on_term;
  sigaction(SIGTERM, &action, NULL);
  unsigned long calls = 0;
  tick();
  ++calls;
  printf("ready\n");
  fflush(stdout);
  while (!stop) {
    tick();
    ++calls;
    usleep(1000);
  }
  printf("expect main tick %lu\n", calls);
  return 0;
}

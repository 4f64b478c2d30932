// Benchmark target: N threads (argv[1]), each blocked DEPTH (argv[2]) frames
// deep in non-inlined recursion. Prints "ready" when every thread is in place.
// With "abort" as argv[3] it then aborts, for a core of that shape;
// argv[4] sets the threads' stack size in KiB (cores of qemu-user hold every
// byte of every stack).
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

// The recursion ends in a thread blocked for good, which gcc takes for endless recursion.
#pragma GCC diagnostic ignored "-Winfinite-recursion"

static int depth = 33;
static pthread_barrier_t barrier;

__attribute__((noinline)) static int descend(int n) {
  if (n <= 0) {
    pthread_barrier_wait(&barrier);
    for (;;) pause();
  }
  volatile int keep = n;
  return descend(n - 1) + keep;
}

static void* run(void* arg) {
  (void)arg;
  return (void*)(long)descend(depth - 4);
}

int main(int argc, char** argv) {
  const int threads = argc > 1 ? atoi(argv[1]) : 16;
  if (argc > 2) depth = atoi(argv[2]);
  const int abort_when_ready = argc > 3 && strcmp(argv[3], "abort") == 0;
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  if (argc > 4) pthread_attr_setstacksize(&attr, (size_t)atoi(argv[4]) * 1024);
  pthread_barrier_init(&barrier, NULL, (unsigned)threads + 1);
  for (int i = 1; i < threads; ++i) {
    pthread_t t;
    pthread_create(&t, &attr, run, NULL);
  }
  pthread_t t;
  pthread_create(&t, &attr, run, NULL);
  pthread_barrier_wait(&barrier);
  printf("ready\n");
  fflush(stdout);
  if (abort_when_ready) {
    usleep(200 * 1000);  // every thread into pause()
    abort();
  }
  for (;;) pause();
}

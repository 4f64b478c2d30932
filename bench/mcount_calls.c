// Cost of an instrumented call: THREADS threads (argv[1]) each make CALLS
// (argv[2]) calls of a tiny function, all starting together; prints the CPU
// time per call of the slowest thread's share (CLOCK_THREAD_CPUTIME_ID: the
// threads may outnumber the cores) as `ns_per_call N`, and `calls N` (the
// calls made, to set against the call counts a profiler reports).
// bench/mcount_vs_peers.sh builds it with -pg and without.
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define NOINLINE __attribute__((noinline, noclone))

static long calls_per_thread;
static pthread_barrier_t start;
static double thread_ns[64];

NOINLINE int tiny(int x) { return x + 1; }

NOINLINE long work(long n) {
  long s = 0;
  for (long i = 0; i < n; ++i) s += tiny((int)i);
  return s;
}

static double cpu_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return t.tv_sec * 1e9 + t.tv_nsec;
}

NOINLINE void* run(void* arg) {
  int index = (int)(long)arg;
  pthread_barrier_wait(&start);
  double t0 = cpu_ns();
  volatile long sink = work(calls_per_thread);
  (void)sink;
  thread_ns[index] = cpu_ns() - t0;
  return NULL;
}

int main(int argc, char** argv) {
  int threads = argc > 1 ? atoi(argv[1]) : 1;
  calls_per_thread = argc > 2 ? atol(argv[2]) : 10000000;
  if (threads < 1 || threads > 64) return 2;
  pthread_t tids[64];
  pthread_barrier_init(&start, NULL, (unsigned)threads);
  for (int t = 0; t < threads; ++t) pthread_create(&tids[t], NULL, run, (void*)(long)t);
  double total = 0;
  for (int t = 0; t < threads; ++t) {
    pthread_join(tids[t], NULL);
    total += thread_ns[t];
  }
  printf("ns_per_call %.2f\ncalls %ld\n", total / threads / calls_per_thread, calls_per_thread * threads);
  return 0;
}

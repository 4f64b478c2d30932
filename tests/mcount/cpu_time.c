// The histogram's samples against a known CPU time (tests/mcount/
// check_gmon.py histogram):
//   cpu_time busy MS     main calls busy(), which spins for MS ms of its
//                        thread's CPU time;
//   cpu_time thread MS   a thread whose code calls no hook (spin(), built
//                        without instrumentation) spins for MS ms of its CPU
//                        time while main waits for it: only a timer started
//                        when the thread starts can sample it.
//   cpu_time threads MS  the same with 8 such threads at once, each spinning
//                        MS / 8 ms: the samples add up to MS only when every
//                        thread has its timer.
// Then it prints `cpu_ns N`, the CPU time of the whole process.
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define NOINLINE __attribute__((noinline, noclone))
#define UNINSTRUMENTED __attribute__((noinline, noclone, no_instrument_function))

volatile unsigned long sink;

UNINSTRUMENTED static long long cpu_ns(clockid_t clock) {
  struct timespec t;
  clock_gettime(clock, &t);
  return (long long)t.tv_sec * 1000000000LL + t.tv_nsec;
}

// Mostly arithmetic: the clock (in the vDSO, outside the executable's
// histogram) is read once every few microseconds.
#define SPIN_BODY(ms)                                                    \
  long long end = cpu_ns(CLOCK_THREAD_CPUTIME_ID) + (long long)(ms) * 1000000LL; \
  do {                                                                   \
    for (unsigned i = 0; i < 20000; ++i) sink = sink * 31 + i;          \
  } while (cpu_ns(CLOCK_THREAD_CPUTIME_ID) < end)

NOINLINE void busy(int ms) { SPIN_BODY(ms); }

UNINSTRUMENTED static void spin(int ms) { SPIN_BODY(ms); }

UNINSTRUMENTED static void* spin_thread(void* arg) {
  spin(*(int*)arg);
  return NULL;
}

int main(int argc, char** argv) {
  if (argc != 3) return 2;
  int ms = atoi(argv[2]);
  if (strcmp(argv[1], "busy") == 0) {
    busy(ms);
  } else if (strcmp(argv[1], "thread") == 0 || strcmp(argv[1], "threads") == 0) {
    enum { kThreads = 8 };
    const int n = strcmp(argv[1], "thread") == 0 ? 1 : kThreads;
    int each = ms / n;
    pthread_t t[kThreads];
    for (int i = 0; i < n; ++i) {
      if (pthread_create(&t[i], NULL, spin_thread, &each) != 0) return 1;
    }
    for (int i = 0; i < n; ++i) pthread_join(t[i], NULL);
  } else {
    return 2;
  }
  printf("cpu_ns %lld\n", cpu_ns(CLOCK_PROCESS_CPUTIME_ID));
  return 0;
}

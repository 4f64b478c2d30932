/* A program whose time split is known by construction, for framewalk record:
 * the same leaf (spin) runs in four call paths for 40, 30, 20 and 10 units
 * of work in all:
 *   main_path -> spin                                    40 units
 *   deep_path (300 frames of recursion) -> spin          30 units
 *   lib_path -> lib_call (in libfw_split.so) -> spin     20 units
 *   signal_path -> raise -> [signal frame] -> on_signal -> spin   10 units
 * in two threads, each running all four paths in turn (20, 15, 10 and 5
 * units), so that whatever slows a thread (the other one beside it on the
 * machine, the recorder) slows its paths alike. Built -O2 without frame
 * pointers. A unit is the same loop everywhere, so a path's share of CPU
 * time is its share of units. */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <time.h>

extern double lib_call(double (*fn)(long), long n); /* libfw_split.so */

static long g_unit = 4000000; /* iterations a unit; argv[1] scales it */

__attribute__((noinline)) double spin(long n) {
  double x = 0;
  for (long i = 0; i < n; ++i) {
    x += (double)(i & 1023) * 1e-9;
    __asm__ volatile("" : "+x"(x));
  }
  return x;
}

__attribute__((noinline)) double main_path(long units) {
  double s = 0;
  for (long u = 0; u < units; ++u) s += spin(g_unit);
  return s;
}

__attribute__((noinline)) double deep_path(int depth, long units) {
  if (depth > 0) return deep_path(depth - 1, units) + 1;
  double s = 0;
  for (long u = 0; u < units; ++u) s += spin(g_unit);
  return s;
}

__attribute__((noinline)) double lib_path(long units) {
  double s = 0;
  for (long u = 0; u < units; ++u) s += lib_call(spin, g_unit);
  return s;
}

/* SIGUSR1's handler: the units signal_path asked for (per thread). */
static __thread long t_signal_units;
static __thread double t_signal_result;

__attribute__((noinline)) static void on_signal(int sig) {
  (void)sig;
  double s = 0;
  for (long u = 0; u < t_signal_units; ++u) s += spin(g_unit);
  t_signal_result += s;
}

__attribute__((noinline)) double signal_path(long units) {
  t_signal_units = units;
  raise(SIGUSR1); /* delivered to this thread, on its own stack */
  return t_signal_result;
}

static double g_result[2];

static void* worker(void* arg) {
  const int index = *(const int*)arg;
  double s = 0;
  for (int round = 0; round < 5; ++round) {
    s += main_path(4);
    s += deep_path(300, 3);
    s += lib_path(2);
    s += signal_path(1);
  }
  g_result[index] = s;
  return NULL;
}

int main(int argc, char** argv) {
  if (argc > 1) g_unit = atol(argv[1]);
  struct sigaction sa = {0};
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGUSR1, &sa, NULL);
  struct timespec t0, t1;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  pthread_t a, b;
  static const int first = 0, second = 1;
  pthread_create(&a, NULL, worker, (void*)&first);
  pthread_create(&b, NULL, worker, (void*)&second);
  pthread_join(a, NULL);
  pthread_join(b, NULL);
  clock_gettime(CLOCK_MONOTONIC, &t1);
  printf("%f\n", g_result[0] + g_result[1]);
  /* The program's own time, apart from a profiler's start and end (bench/record_overhead.sh). */
  /* and the CPU time it took, user and system (a sampling interrupt's work
     is the interrupted thread's system time) */
  if (getenv("FW_SPLIT_TIME")) {
    struct rusage u;
    getrusage(RUSAGE_SELF, &u);
    fprintf(stderr, "split_target: %.1f ms, cpu %.1f ms user %.1f ms sys\n",
            (t1.tv_sec - t0.tv_sec) * 1e3 + (t1.tv_nsec - t0.tv_nsec) / 1e6,
            u.ru_utime.tv_sec * 1e3 + u.ru_utime.tv_usec / 1e3, u.ru_stime.tv_sec * 1e3 + u.ru_stime.tv_usec / 1e3);
  }
  return 0;
}

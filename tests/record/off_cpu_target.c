/* A program whose time off the CPU is known by construction, for
 * framewalk record --off-cpu: a worker thread that, round after round,
 * spins for 30 ms of wall time (busy_path) and then sleeps for 70 ms
 * (sleep_path -> wait_here -> nanosleep), so that it is blocked in that
 * chain 70% of its life; the main thread waits for it in pthread_join all
 * along. It prints the worker's life in ms on stderr ("worker: N ms").
 * Built -O2 without frame pointers. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now_ms(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

__attribute__((noinline)) double busy_path(double ms) {
  double x = 0;
  const double end = now_ms() + ms;
  while (now_ms() < end)
    for (int i = 0; i < 1000; ++i) {
      x += i * 1e-9;
      __asm__ volatile("" : "+x"(x));
    }
  return x;
}

__attribute__((noinline)) void wait_here(double ms) {
  struct timespec t = {0, (long)(ms * 1e6)};
  while (nanosleep(&t, &t) != 0) {
  }
  __asm__ volatile("");
}

__attribute__((noinline)) void sleep_path(double ms) {
  wait_here(ms);
  __asm__ volatile("");
}

static int g_rounds = 15;
static double g_life_ms;

static void* worker(void* arg) {
  (void)arg;
  const double start = now_ms();
  double s = 0;
  for (int r = 0; r < g_rounds; ++r) {
    s += busy_path(30);
    sleep_path(70);
  }
  g_life_ms = now_ms() - start;
  return (void*)(long)(s > 1e30);
}

int main(int argc, char** argv) {
  if (argc > 1) g_rounds = atoi(argv[1]);
  pthread_t t;
  pthread_create(&t, NULL, worker, NULL);
  pthread_join(t, NULL);
  fprintf(stderr, "worker: %.1f ms\n", g_life_ms);
  return 0;
}

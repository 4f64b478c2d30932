/* The process the Python binding tests walk: two threads parked in pause()
 * under known functions.
 *   main thread:  main -> level1 -> level2 -> pause
 *   worker:       worker_main -> worker_level1 -> pause   (named "fw-worker")
 * It prints "ready PID WORKER_TID" once both are parked, and "pong N" at
 * each SIGUSR1 (the main thread takes them: the worker blocks it).
 * The comments L2_CALL, L1_CALL, MAIN_CALL, WORKER_CALL mark the lines of
 * the calls the tests expect in the frames' source locations. */
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <unistd.h>

static volatile sig_atomic_t pings;
static volatile int worker_tid;
static volatile int sink;

/* The answer is written by the handler itself: a loop that printed it after
 * pause() returned would miss a signal that came between its check and its
 * next pause() (a busy machine preempts it there), and wait for ever. */
static void on_usr1(int sig) {
  (void)sig;
  const int n = ++pings;
  char line[32] = "pong ";
  char digits[12];
  int len = 0, at = 5;
  for (int v = n; v > 0 || len == 0; v /= 10) digits[len++] = (char)('0' + v % 10);
  while (len) line[at++] = digits[--len];
  line[at++] = '\n';
  (void)!write(STDOUT_FILENO, line, (size_t)at);
}

__attribute__((noinline)) void level2(void) {
  for (;;) {
    pause(); /* L2_CALL */
    sink++;
  }
}

__attribute__((noinline)) void level1(void) {
  level2(); /* L1_CALL */
  sink++;
}

__attribute__((noinline)) void worker_level1(void) {
  for (;;) {
    pause(); /* WORKER_CALL */
    sink++;
  }
}

__attribute__((noinline)) void* worker_main(void* arg) {
  (void)arg;
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGUSR1);
  pthread_sigmask(SIG_BLOCK, &set, NULL);
  pthread_setname_np(pthread_self(), "fw-worker");
  worker_tid = (int)syscall(SYS_gettid);
  worker_level1(); /* WORKER_MAIN_CALL */
  return NULL;
}

int main(void) {
  struct sigaction sa = {0};
  sa.sa_handler = on_usr1;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGUSR1, &sa, NULL);
  pthread_t t;
  if (pthread_create(&t, NULL, worker_main, NULL) != 0) return 1;
  while (!worker_tid) usleep(1000);
  printf("ready %d %d\n", (int)getpid(), worker_tid);
  fflush(stdout);
  level1(); /* MAIN_CALL */
  return sink;
}

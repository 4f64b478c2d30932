// The demo process of run.sh: a few threads with stacks worth looking at.
//   main        waits in pthread_join
//   recurse     12 frames of recursion, then blocks
//   in-signal   blocks inside a SIGUSR1 handler (a signal frame on the stack)
//   altstack    the same on a sigaltstack
//   worker-N    block in a condition variable
// Prints "ready" once every thread is in place, then waits forever.
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

// The recursion ends in a thread blocked for good, which gcc takes for endless recursion.
#pragma GCC diagnostic ignored "-Winfinite-recursion"

static pthread_barrier_t ready;
static pthread_mutex_t mutexes[2] = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_MUTEX_INITIALIZER};
static pthread_cond_t never = PTHREAD_COND_INITIALIZER;

static void block_forever(void) {
  for (;;) pause();
}

__attribute__((noinline)) static int recurse(int n) {
  if (n == 0) {
    pthread_barrier_wait(&ready);
    block_forever();
  }
  int r = recurse(n - 1);
  __asm__ volatile("" ::: "memory");
  return r + 1;
}

static void* recurse_thread(void* arg) {
  (void)arg;
  pthread_setname_np(pthread_self(), "recurse");
  return (void*)(long)recurse(12);
}

static void handler(int sig) {
  (void)sig;
  pthread_barrier_wait(&ready);
  block_forever();
}

__attribute__((noinline)) static void wait_for_signal(void) {
  sigset_t set;
  sigemptyset(&set);
  sigsuspend(&set);
}

static void* signal_thread(void* arg) {
  const int use_altstack = arg != NULL;
  pthread_setname_np(pthread_self(), use_altstack ? "altstack" : "in-signal");
  if (use_altstack) {
    stack_t ss = {.ss_sp = malloc(1 << 16), .ss_size = 1 << 16, .ss_flags = 0};
    sigaltstack(&ss, NULL);
  }
  wait_for_signal();
  return NULL;
}

static void* worker(void* arg) {
  char name[16];
  snprintf(name, sizeof name, "worker-%ld", (long)arg);
  pthread_setname_np(pthread_self(), name);
  pthread_mutex_t* mutex = &mutexes[(long)arg - 1];
  pthread_mutex_lock(mutex);
  pthread_barrier_wait(&ready);
  for (;;) pthread_cond_wait(&never, mutex);
  return NULL;
}

int main(void) {
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = handler;
  sigaction(SIGUSR1, &sa, NULL);
  sa.sa_flags = SA_ONSTACK;
  sigaction(SIGUSR2, &sa, NULL);

  pthread_barrier_init(&ready, NULL, 6);
  pthread_t t[5];
  pthread_create(&t[0], NULL, recurse_thread, NULL);
  pthread_create(&t[1], NULL, signal_thread, NULL);
  pthread_create(&t[2], NULL, signal_thread, (void*)1);
  pthread_create(&t[3], NULL, worker, (void*)1);
  pthread_create(&t[4], NULL, worker, (void*)2);
  usleep(100000);  // let the signal threads reach sigsuspend
  pthread_kill(t[1], SIGUSR1);
  pthread_kill(t[2], SIGUSR2);
  pthread_barrier_wait(&ready);
  printf("ready %d\n", getpid());
  fflush(stdout);
  pthread_join(t[0], NULL);
  return 0;
}

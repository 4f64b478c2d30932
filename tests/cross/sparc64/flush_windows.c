// Preloaded into a multi-threaded sparc64 fixture run by qemu-user
// (tests/cross/stub_snapshots.py): makes its memory what a kernel's core
// of it holds, every thread's register windows flushed to their save areas
// on the stack. A kernel flushes them before it writes a core; qemu-user
// leaves them in each thread's CPU state, where gdb's stub cannot show
// them, and neither gdb (an inferior call in one of qemu's threads) nor a
// signal (qemu 7.2's stub reports one in another thread malformed) can
// have another thread flush them from outside.
//
// So each thread flushes its own where it stops: pause() is interposed by
// `flushw` and the system call itself, inline (no call below it that would
// leave a window unflushed); pthread_join() by a loop that tries the join
// and sleeps the same way, a second at a time, and once abort() has begun
// only sleeps; and abort() by `flushw` and an illtrap (SIGILL), which stops
// the program in a frame whose callers' windows are all in memory, once
// every other thread pthread_create started is in pause() and a thread in
// pthread_join sleeps (however loaded the machine, and however long that
// takes it).
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <time.h>
#include <unistd.h>

// Threads pthread_create started (their start routines unwrapped: their
// stacks as without the preload), and calls of pause() that flushed.
static volatile int g_created, g_paused;

int pthread_create(pthread_t* thread, const pthread_attr_t* attr, void* (*routine)(void*), void* arg) {
  int (*real)(pthread_t*, const pthread_attr_t*, void* (*)(void*), void*) = dlsym(RTLD_NEXT, "pthread_create");
  const int r = real(thread, attr, routine, arg);
  if (r == 0) __atomic_add_fetch(&g_created, 1, __ATOMIC_SEQ_CST);
  return r;
}

// Whether a thread has entered pthread_join, whether it sleeps there now,
// and whether abort() is stopping the program (a joining thread that wakes
// then makes no call again: it flushes and sleeps, so that its windows stay
// in memory wherever gdb stops it).
static volatile int g_joining, g_join_asleep, g_stopping;

static inline void flush_windows(void) { __asm__ volatile("flushw" ::: "memory"); }

// A system call with one or two arguments, inline (arch/sparc/kernel/syscalls/syscall.tbl).
static inline long system_call(long number, long a0, long a1) {
  register long g1 __asm__("g1") = number;
  register long o0 __asm__("o0") = a0;
  register long o1 __asm__("o1") = a1;
  __asm__ volatile("ta 0x6d" : "+r"(o0) : "r"(g1), "r"(o1) : "memory", "cc");
  return o0;
}
enum { kNrPause = 29, kNrGettid = 143, kNrNanosleep = 162 };

int pause(void) {
  flush_windows();
  __atomic_add_fetch(&g_paused, 1, __ATOMIC_SEQ_CST);  // flushed first: no call after this
  system_call(kNrPause, 0, 0);
  return -1;
}

int pthread_join(pthread_t thread, void** result) {
  g_joining = 1;
  for (;;) {
    if (!g_stopping) {
      const int r = pthread_tryjoin_np(thread, result);
      if (r != EBUSY) return r;
    }
    const struct timespec second = {1, 0};
    flush_windows();
    g_join_asleep = 1;
    system_call(kNrNanosleep, (long)&second, 0);
    g_join_asleep = 0;
  }
}

void abort(void) {
  const struct timespec ms = {0, 1000000};
  g_stopping = 1;  // before the wait: a joining thread that wakes now calls nothing
  // The other threads pthread_create started (this one among them, unless
  // it is the main thread, whose id is the process's).
  const int others = g_created - (system_call(kNrGettid, 0, 0) != getpid());
  for (int waited = 0; (g_paused < others || (g_joining && !g_join_asleep)) && waited < 60000; ++waited)
    system_call(kNrNanosleep, (long)&ms, 0);
  flush_windows();
  __asm__ volatile("illtrap 0");
  for (;;) pause();
}

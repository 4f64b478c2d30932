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
// leave a window unflushed), and abort() by `flushw` and an illtrap
// (SIGILL), which stops the program in a frame whose callers' windows are
// all in memory.
#include <unistd.h>

static inline void flush_windows(void) { __asm__ volatile("flushw" ::: "memory"); }

int pause(void) {
  flush_windows();
  register long number __asm__("g1") = 29;  // __NR_pause (arch/sparc/kernel/syscalls/syscall.tbl)
  register long result __asm__("o0");
  __asm__ volatile("ta 0x6d" : "=r"(result) : "r"(number) : "memory", "cc");
  return -1;
}

void abort(void) {
  flush_windows();
  __asm__ volatile("illtrap 0");
  for (;;) pause();
}

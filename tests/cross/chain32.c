// An x32 program without libc for tests/cross/x32/core.sh: _start (start.S)
// calls x32_entry, which tail-calls f1; f1, f2 and f3 call down to trap,
// whose ud2 ends the run. Its frames from the trap: trap, f3, f2, f1, _start
// (x32_entry leaves none: it jumps).
//
// make_core can then deliver a signal at that ud2 as an x32 kernel would
// (an rt_sigframe whose return address is __restore_rt, start.S):
// x32_handler calls h1 and h2 down to trap2, whose ud2 ends the run inside
// the handler: trap2, h2, h1, x32_handler, the trampoline, trap, f3, f2,
// f1, _start.
#define NOINLINE __attribute__((noinline))

NOINLINE void trap(void) { __asm__ volatile("ud2"); }
NOINLINE void trap2(void) { __asm__ volatile("ud2"); }

NOINLINE int f3(int n) {
  volatile int a[5];
  a[n & 3] = n;
  trap();
  return a[1];
}

NOINLINE int f2(int n) { return f3(n + 1) + 1; }

NOINLINE int f1(int n) { return f2(n * 2) * 3; }

void x32_entry(void) { f1(5); }

NOINLINE int h2(int n) {
  volatile int b[3];
  b[n & 1] = n;
  trap2();
  return b[0];
}

NOINLINE int h1(int n) { return h2(n - 1) * 7; }

void x32_handler(int sig, void* info, void* ucontext) {
  (void)info;
  (void)ucontext;
  volatile int r = h1(sig);  // a call, not a jump: the handler keeps its frame
  (void)r;
}

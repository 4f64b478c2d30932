// The program of the 32-bit cores made here (x32/core.py, s390/core.py,
// sparc32/core.py),
// without libc: _start (x32/start.S, s390/start.S) calls chain_entry,
// which with 0 tail-calls f1; f1, f2 and f3 call down to trap, whose invalid
// instruction (x32: ud2; s390: opcode 0) ends the run. Its frames from the
// trap: trap, f3, f2, f1, _start (chain_entry leaves none: it jumps).
//
// make_core (or qemu, for sparc32) can then deliver a signal at that trap
// as the machine's kernel would (a signal frame whose return address is a
// trampoline of start.S):
// chain_handler calls h1 and h2 down to trap2, whose invalid instruction
// ends the run inside the handler: trap2, h2, h1, chain_handler, the
// trampoline, trap, f3, f2, f1, _start.
//
// The process's other thread, the main thread waiting in a join (the shape
// of elfutils' backtrace test: the main thread in pthread_join), is the
// same program entered first, on a stack of its own, with chain_entry's
// argument (the first argument register, which _start leaves alone) 1:
// chain_entry tail-calls join_main, which waits through join_wait and
// join_block down to join_futex, whose invalid instruction stands for the
// futex wait the thread blocks in (no libc: no real pthread_join). The
// harness keeps that thread's registers and stack, then enters the program
// again with 0 for the crashing chain. Its frames: join_futex, join_block,
// join_wait, join_main, _start.
#define NOINLINE __attribute__((noinline))

#if defined(__x86_64__)
#define TRAP "ud2"
#elif defined(__s390__)
#define TRAP ".short 0"
#elif defined(__sparc__)
// Flush the register windows to their save areas (as a kernel does before
// it writes a core or a signal frame; qemu keeps them in the CPU), then trap.
#define TRAP "ta 3\n\tunimp 0"
#endif

NOINLINE void trap(void) { __asm__ volatile(TRAP); }
NOINLINE void trap2(void) { __asm__ volatile(TRAP); }

NOINLINE int f3(int n) {
  volatile int a[5];
  a[n & 3] = n;
  trap();
  return a[1];
}

NOINLINE int f2(int n) { return f3(n + 1) + 1; }

NOINLINE int f1(int n) { return f2(n * 2) * 3; }

NOINLINE void join_futex(void) { __asm__ volatile(TRAP); }

NOINLINE int join_block(int n) {
  // The futex word and its neighbours, indexed by the argument: gcc -m31
  // -mbackchain copies the argument into the saved r11 before its `ahi`.
  volatile int word[4] = {n, 0, n, 0};
  join_futex();
  return word[n & 3];
}

NOINLINE int join_wait(int n) { return join_block(n + 2) - 1; }

NOINLINE void join_main(void) {
  volatile int r = join_wait(1);  // a call, not a jump: main keeps its frame
  (void)r;
}

void chain_entry(int main_thread) {
  if (main_thread)
    join_main();
  else
    f1(5);
}

NOINLINE int h2(int n) {
  volatile int b[3];
  b[n & 1] = n;
  trap2();
  return b[0];
}

NOINLINE int h1(int n) { return h2(n - 1) * 7; }

// Any kind of handler: (sig, siginfo_t*, ucontext_t*), or s390's
// (sig, struct sigcontext*).
void chain_handler(int sig, void* info, void* ucontext) {
  (void)info;
  (void)ucontext;
  volatile int r = h1(sig);  // a call, not a jump: the handler keeps its frame
  (void)r;
}

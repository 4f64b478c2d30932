// The program of the 32-bit cores made here (x32/core.py, s390/core.py,
// sparc32/core.py),
// without libc: _start (x32/start.S, s390/start.S) calls chain_entry,
// which tail-calls f1; f1, f2 and f3 call down to trap, whose invalid
// instruction (x32: ud2; s390: opcode 0) ends the run. Its frames from the
// trap: trap, f3, f2, f1, _start (chain_entry leaves none: it jumps).
//
// make_core (or qemu, for sparc32) can then deliver a signal at that trap
// as the machine's kernel would (a signal frame whose return address is a
// trampoline of start.S):
// chain_handler calls h1 and h2 down to trap2, whose invalid instruction
// ends the run inside the handler: trap2, h2, h1, chain_handler, the
// trampoline, trap, f3, f2, f1, _start.
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

void chain_entry(void) { f1(5); }

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

// Recursion for the backtrace benchmark. Built twice: -fomit-frame-pointer
// (what every method but the frame-pointer walk unwinds) and
// -fno-omit-frame-pointer (for the frame-pointer walk).
#include <stdint.h>
#include <time.h>

typedef int (*bt_method)(void** buffer, int size);

#ifndef RECURSE_NAME
#define RECURSE_NAME bench_recurse
#endif

__attribute__((noinline)) int RECURSE_NAME(int depth, bt_method method, void** buffer, int size) {
  if (depth <= 1) return method(buffer, size);
  int n = RECURSE_NAME(depth - 1, method, buffer, size);
  __asm__ volatile("" ::: "memory");  // not a tail call
  return n;
}

// Where a frame record lies from the frame pointer, in words: the caller's
// frame pointer, then the return address. riscv's s0 points just above its
// record (the CFA: the caller's s0 at s0 - 16, ra at s0 - 8).
#if defined(__riscv)
enum { kRecordFp = -2, kRecordRa = -1 };
#else
enum { kRecordFp = 0, kRecordRa = 1 };
#endif

#if defined(__powerpc64__)
// ppc64's walk is its back chain: a frame's first word is its caller's
// stack pointer, and a function saves its return address in its caller's
// frame (the LR save word, 2 words up), not in its own; a leaf as this one
// keeps it in LR. Bounded and checked for an upward-moving stack.
__attribute__((noinline)) int fp_walk(void** buffer, int size) {
  int n = 0;
  if (n < size) buffer[n++] = __builtin_return_address(0);
  uintptr_t* frame = (uintptr_t*)*(uintptr_t*)__builtin_frame_address(0);  // our caller's
  while (frame && n < size) {
    uintptr_t* up = (uintptr_t*)frame[0];
    if (up <= frame) break;
    uintptr_t ra = up[2];  // frame's return address, in the frame above
    if (!ra) break;
    buffer[n++] = (void*)ra;
    frame = up;
  }
  return n;
}
#elif defined(__s390x__)
// s390x has no frame-pointer chain; its counterpart is the back chain
// (built with -mbackchain): a frame's first word is its caller's stack
// pointer, and a function saves its return address (r14) in its caller's
// register save area, 112 bytes above that. This leaf builds no frame: its
// frame address is its caller's stack pointer, and r14 its return address.
__attribute__((noinline)) int fp_walk(void** buffer, int size) {
  uintptr_t* sp = (uintptr_t*)__builtin_frame_address(0);
  int n = 0;
  if (size > 0) buffer[n++] = __builtin_return_address(0);
  while (sp && n < size) {
    uintptr_t* caller = (uintptr_t*)sp[0];
    if (caller <= sp) break;
    uintptr_t ra = caller[14];
    if (!ra) break;
    buffer[n++] = (void*)ra;
    sp = caller;
  }
  return n;
}
#else
// The frame-pointer walk: rbp chain, bounded and checked for an upward-moving stack.
__attribute__((noinline)) int fp_walk(void** buffer, int size) {
  uintptr_t* fp = (uintptr_t*)__builtin_frame_address(0);
  int n = 0;
  while (fp && n < size) {
    uintptr_t ra = fp[kRecordRa];
    if (!ra) break;
    buffer[n++] = (void*)ra;
    uintptr_t* next = (uintptr_t*)fp[kRecordFp];
    if (next <= fp) break;
    fp = next;
  }
  return n;
}
#endif

// A recursion through four functions with different frames, cycling
// a -> b -> c -> d -> a: no frame repeats its caller, some frames keep locals,
// one saves every callee-saved register (rbp included). The step-to-step rule
// changes every frame, as in a real program's stack.
#define FW_CAT2(a, b) a##b
#define FW_CAT(a, b) FW_CAT2(a, b)
#define MIXED_A FW_CAT(RECURSE_NAME, _mixed_a)
#define MIXED_B FW_CAT(RECURSE_NAME, _mixed_b)
#define MIXED_C FW_CAT(RECURSE_NAME, _mixed_c)
#define MIXED_D FW_CAT(RECURSE_NAME, _mixed_d)

int MIXED_B(int depth, bt_method method, void** buffer, int size);
int MIXED_C(int depth, bt_method method, void** buffer, int size);
int MIXED_D(int depth, bt_method method, void** buffer, int size);

__attribute__((noinline)) int MIXED_A(int depth, bt_method method, void** buffer, int size) {
  if (depth <= 1) return method(buffer, size);
  int n = MIXED_B(depth - 1, method, buffer, size);
  __asm__ volatile("" ::: "memory");
  return n;
}

__attribute__((noinline)) int MIXED_B(int depth, bt_method method, void** buffer, int size) {
  volatile char pad[40];
  pad[0] = (char)depth;
  if (depth <= 1) return method(buffer, size);
  int n = MIXED_C(depth - 1, method, buffer, size);
  return n + (pad[0] & 0);
}

__attribute__((noinline)) int MIXED_C(int depth, bt_method method, void** buffer, int size) {
  // Values live across the call: every callee-saved register is pushed.
  long a = depth * 3L, b = depth * 5L, c = depth * 7L, d = depth * 11L, e = depth * 13L, f = depth * 17L;
  __asm__ volatile("" : "+r"(a), "+r"(b), "+r"(c), "+r"(d), "+r"(e), "+r"(f));
  if (depth <= 1) return method(buffer, size);
  int n = MIXED_D(depth - 1, method, buffer, size);
  __asm__ volatile("" : "+r"(a), "+r"(b), "+r"(c), "+r"(d), "+r"(e), "+r"(f));
  return n + (int)((a ^ b ^ c ^ d ^ e ^ f) & 0);
}

__attribute__((noinline)) int MIXED_D(int depth, bt_method method, void** buffer, int size) {
  volatile char pad[200];
  pad[0] = (char)depth;
  if (depth <= 1) return method(buffer, size);
  int n = MIXED_A(depth - 1, method, buffer, size);
  return n + (pad[0] & 0);
}

// The walk alone, timed inside the innermost frame: the recursion calls this
// in place of the method, and it calls the method set in _timed_method. Built
// with the recursion's flags, so that the frame-pointer build keeps its rbp
// chain through it. Timing the walk where it runs leaves out what the
// program pays afterwards on the way back up (returns past the 32 the
// return-stack predictor holds mispredict more after any unwinder has run,
// by an amount that changes with code layout).
#define TIMED FW_CAT(RECURSE_NAME, _timed)
#define TIMED_METHOD FW_CAT(RECURSE_NAME, _timed_method)
#define TIMED_NS FW_CAT(RECURSE_NAME, _timed_ns)
bt_method TIMED_METHOD;
uint64_t TIMED_NS;  // accumulated

__attribute__((noinline)) int TIMED(void** buffer, int size) {
  struct timespec t0, t1;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  int n = TIMED_METHOD(buffer, size);
  clock_gettime(CLOCK_MONOTONIC, &t1);
  TIMED_NS += (uint64_t)((t1.tv_sec - t0.tv_sec) * 1000000000 + (t1.tv_nsec - t0.tv_nsec));
  __asm__ volatile("" ::: "memory");  // not a tail call
  return n;
}

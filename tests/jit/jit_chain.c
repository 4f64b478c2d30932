/* A program that calls through code it made at run time, for stacks through
 * jit frames: main -> run_jit -> jit_outer -> jit_middle -> jit_inner ->
 * c_block, where the three jit_ functions are machine code written into an
 * anonymous executable mapping. Each keeps a frame pointer (as V8's code
 * and HotSpot's with -XX:+PreserveFramePointer do) and has no unwind
 * information; /tmp/perf-PID.map names them.
 *
 *   jit_chain block   prints "ready PID CODE" and waits in c_block until
 *                     killed (for live dumps and cores)
 *   jit_chain spin S  spins in jit_inner for about S seconds (for samples)
 *   jit_chain abort   aborts in c_block (for cores of a machine run under
 *                     qemu-user, which dumps its guest's core itself)
 *   jit_chain self    built with -DJIT_CHAIN_SELF and libframewalk: c_block
 *                     walks its own stack through the C API
 *                     (fw_target_self), a function name a line, then
 *                     "stop: MESSAGE", and returns
 *
 * x86-64, AArch64 and 32-bit ARM. */
#define _GNU_SOURCE
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

static int g_abort;

#ifdef JIT_CHAIN_SELF
#include <framewalk/framewalk.h>
static fw_walk_action print_frame(const fw_frame* frame, void* arg) {
  (void)arg;
  const char* name = fw_frame_function(frame, NULL);
  printf("%s\n", name ? name : "??");
  return FW_CONTINUE;
}
static int g_self;
/* The calling thread's stack through the C API, from c_block's callee. */
static void walk_self(void) {
  fw_context* context = fw_context_new();
  fw_target* target = NULL;
  int tid = 0;
  if (fw_target_self(context, &target) != FW_OK || fw_next_thread(target, 0, &tid) != FW_OK) {
    printf("stop: %s\n", fw_last_error());
    return;
  }
  fw_walk_end end;
  if (fw_walk(target, tid, print_frame, NULL, NULL, &end) != FW_OK) printf("stop: %s\n", fw_last_error());
  else printf("stop: %s\n", end.message);
  fw_target_free(target);
  fw_context_free(context);
}
#endif

__attribute__((noinline)) long c_block(long x) {
#ifdef JIT_CHAIN_SELF
  if (g_self) {
    walk_self();
    fflush(stdout);
    return x;
  }
#endif
  printf("ready %d\n", (int)getpid());
  fflush(stdout);
  if (g_abort) abort();
  for (;;) pause();
  return x;
}

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + t.tv_nsec / 1e9;
}

static double g_end;

/* Called by jit_inner in spin mode: keep going until the time is up. */
__attribute__((noinline)) long c_more(long x) { return now() < g_end ? x + 1 : 0; }

enum { kSlot = 64 };

#if defined(__x86_64__)
/* push %rbp; mov %rsp,%rbp; movabs $next,%rax; call *%rax; pop %rbp; ret */
static size_t emit_call(uint8_t* p, uint64_t next) {
  size_t n = 0;
  p[n++] = 0x55;
  p[n++] = 0x48; p[n++] = 0x89; p[n++] = 0xe5;
  p[n++] = 0x48; p[n++] = 0xb8;
  memcpy(p + n, &next, 8); n += 8;
  p[n++] = 0xff; p[n++] = 0xd0;
  p[n++] = 0x5d;
  p[n++] = 0xc3;
  return n;
}
/* A loop that calls `next` until it returns 0:
 * push %rbp; mov %rsp,%rbp; 1: movabs $next,%rax; call *%rax; test %rax,%rax; jne 1b; pop %rbp; ret */
static size_t emit_loop(uint8_t* p, uint64_t next) {
  size_t n = 0;
  p[n++] = 0x55;
  p[n++] = 0x48; p[n++] = 0x89; p[n++] = 0xe5;
  const size_t top = n;
  p[n++] = 0x48; p[n++] = 0xb8;
  memcpy(p + n, &next, 8); n += 8;
  p[n++] = 0xff; p[n++] = 0xd0;
  p[n++] = 0x48; p[n++] = 0x85; p[n++] = 0xc0;
  p[n++] = 0x75; p[n] = (uint8_t)(top - (n + 1)); n++;
  p[n++] = 0x5d;
  p[n++] = 0xc3;
  return n;
}
#elif defined(__aarch64__)
static void put(uint8_t* p, size_t* n, uint32_t insn) { memcpy(p + *n, &insn, 4); *n += 4; }
/* x16 = next (movz/movk) */
static void load_x16(uint8_t* p, size_t* n, uint64_t v) {
  put(p, n, 0xd2800010u | (uint32_t)((v & 0xffff) << 5));
  for (int k = 1; k < 4; ++k) put(p, n, 0xf2800010u | (uint32_t)k << 21 | (uint32_t)(((v >> (16 * k)) & 0xffff) << 5));
}
/* stp x29,x30,[sp,#-16]!; mov x29,sp; x16=next; blr x16; ldp x29,x30,[sp],#16; ret */
static size_t emit_call(uint8_t* p, uint64_t next) {
  size_t n = 0;
  put(p, &n, 0xa9bf7bfdu);
  put(p, &n, 0x910003fdu);
  load_x16(p, &n, next);
  put(p, &n, 0xd63f0200u);
  put(p, &n, 0xa8c17bfdu);
  put(p, &n, 0xd65f03c0u);
  return n;
}
/* stp; mov x29,sp; 1: x16=next; blr x16; cbnz x0,1b; ldp; ret */
static size_t emit_loop(uint8_t* p, uint64_t next) {
  size_t n = 0;
  put(p, &n, 0xa9bf7bfdu);
  put(p, &n, 0x910003fdu);
  const size_t top = n;
  load_x16(p, &n, next);
  put(p, &n, 0xd63f0200u);
  const int32_t back = (int32_t)(top - n) / 4;
  put(p, &n, 0xb5000000u | ((uint32_t)back & 0x7ffff) << 5);
  put(p, &n, 0xa8c17bfdu);
  put(p, &n, 0xd65f03c0u);
  return n;
}
#elif defined(__arm__)
/* ARM state (the C code around is Thumb-2: blx and pop {..., pc} switch),
 * with the frame record GCC's ARM-state code keeps: fp points at the saved lr. */
static void put(uint8_t* p, size_t* n, uint32_t insn) { memcpy(p + *n, &insn, 4); *n += 4; }
/* push {fp, lr}; add fp, sp, #4; ldr ip, [pc, #4]; blx ip; pop {fp, pc}; .word next */
static size_t emit_call(uint8_t* p, uint64_t next) {
  size_t n = 0;
  put(p, &n, 0xe92d4800u);
  put(p, &n, 0xe28db004u);
  put(p, &n, 0xe59fc004u);
  put(p, &n, 0xe12fff3cu);
  put(p, &n, 0xe8bd8800u);
  put(p, &n, (uint32_t)next);
  return n;
}
/* push {fp, lr}; add fp, sp, #4; 1: ldr ip, [pc, #12]; blx ip; cmp r0, #0;
 * bne 1b; pop {fp, pc}; .word next */
static size_t emit_loop(uint8_t* p, uint64_t next) {
  size_t n = 0;
  put(p, &n, 0xe92d4800u);
  put(p, &n, 0xe28db004u);
  put(p, &n, 0xe59fc00cu);
  put(p, &n, 0xe12fff3cu);
  put(p, &n, 0xe3500000u);
  put(p, &n, 0x1afffffbu);
  put(p, &n, 0xe8bd8800u);
  put(p, &n, (uint32_t)next);
  return n;
}
#else
#error "jit_chain: x86-64, AArch64 and 32-bit ARM only"
#endif

__attribute__((noinline)) long run_jit(long (*entry)(long), long x) {
  long r = entry(x);
  __asm__ volatile("" ::: "memory");  /* not a tail call */
  return r + 1;
}

int main(int argc, char** argv) {
  const int spin = argc > 1 && strcmp(argv[1], "spin") == 0;
  if (spin) g_end = now() + (argc > 2 ? atof(argv[2]) : 1.0);
  g_abort = argc > 1 && strcmp(argv[1], "abort") == 0;
#ifdef JIT_CHAIN_SELF
  g_self = argc > 1 && strcmp(argv[1], "self") == 0;
#endif
  uint8_t* code = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (code == MAP_FAILED) return 1;
  uint8_t* outer = code;
  uint8_t* middle = code + kSlot;
  uint8_t* inner = code + 2 * kSlot;
  size_t sizes[3];
  sizes[0] = emit_call(outer, (uint64_t)(uintptr_t)middle);
  sizes[1] = emit_call(middle, (uint64_t)(uintptr_t)inner);
  sizes[2] = spin ? emit_loop(inner, (uint64_t)(uintptr_t)&c_more) : emit_call(inner, (uint64_t)(uintptr_t)&c_block);
  if (mprotect(code, 4096, PROT_READ | PROT_EXEC) != 0) return 1;
  __builtin___clear_cache((char*)code, (char*)code + 4096);
  char path[64];
  snprintf(path, sizeof path, "/tmp/perf-%d.map", (int)getpid());
  FILE* map = fopen(path, "w");
  if (!map) return 1;
  const char* names[3] = {"jit_outer", "jit_middle", "jit_inner"};
  for (int i = 0; i < 3; ++i) fprintf(map, "%lx %zx %s\n", (unsigned long)(uintptr_t)(code + i * kSlot), sizes[i], names[i]);
  fclose(map);
  long r = run_jit((long (*)(long))(void*)outer, 1);
  printf("%d %ld\n", (int)getpid(), r);
  return 0;
}

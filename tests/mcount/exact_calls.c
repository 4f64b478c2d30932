// A program with a known call graph, for the mcount runtime's tests
// (tests/mcount/check_gmon.py): recursion, mutual recursion, calls through
// function pointers and through the PLT into a shared library, and THREADS
// threads (argv[1], default 8) that all run the same work at once.
//
// It prints the arcs it makes, `expect CALLER CALLEE COUNT`, computed from
// its loop counts. When framewalk's runtime is in the process (preloaded or
// linked) it also prints every arc the runtime counted, named with dladdr,
// `counted CALLER CALLEE COUNT` (the program is linked with -rdynamic), so
// that the arcs into the library, which gmon.out cannot hold, are checked
// too.
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NOINLINE __attribute__((noinline, noclone))
#define ITERATIONS 2000
#define DEPTH 5
#define EVEN 6

int lib_entry(int x);

typedef void (*arc_fn)(uintptr_t from_pc, uintptr_t self_pc, uint64_t count, void* context);
typedef long (*for_each_arc_fn)(arc_fn fn, void* context);

volatile int sink;

NOINLINE int leaf(int x) { return x + 1; }

NOINLINE int rec(int n) { return n == 0 ? 0 : 1 + rec(n - 1); }

NOINLINE int is_odd(int n);
NOINLINE int is_even(int n) { return n == 0 ? 1 : is_odd(n - 1); }
NOINLINE int is_odd(int n) { return n == 0 ? 0 : is_even(n - 1); }

NOINLINE int op_add(int x) { return x + 7; }
NOINLINE int op_mul(int x) { return x * 7; }
int (*volatile ops[2])(int) = {op_add, op_mul};

NOINLINE int work(int iterations) {
  int sum = 0;
  for (int i = 0; i < iterations; ++i) {
    sum += leaf(i);
    sum += rec(DEPTH);
    sum += is_even(EVEN);
    sum += ops[i & 1](i);
    sum += lib_entry(i);
  }
  return sum;
}

NOINLINE void* thread_main(void* arg) {
  (void)arg;
  sink = work(ITERATIONS);
  return NULL;
}

struct named_arc {
  char caller[64];
  char callee[64];
  uint64_t count;
};

struct arc_list {
  struct named_arc arcs[256];
  int n;
};

__attribute__((no_instrument_function)) static const char* name_of(uintptr_t pc) {
  Dl_info info;
  if (dladdr((void*)pc, &info) == 0 || info.dli_sname == NULL) return "?";
  return info.dli_sname;
}

__attribute__((no_instrument_function)) static void collect(uintptr_t from_pc, uintptr_t self_pc, uint64_t count,
                                                            void* context) {
  struct arc_list* list = context;
  const char* caller = name_of(from_pc);
  // self_pc + 1: with -finstrument-functions self_pc is the function's
  // address, which in Thumb code is one below its symbol's (odd) value.
  const char* callee = name_of(self_pc + 1);
  for (int i = 0; i < list->n; ++i) {
    if (strcmp(list->arcs[i].caller, caller) == 0 && strcmp(list->arcs[i].callee, callee) == 0) {
      list->arcs[i].count += count;
      return;
    }
  }
  if (list->n == 256) return;
  struct named_arc* a = &list->arcs[list->n++];
  snprintf(a->caller, sizeof a->caller, "%s", caller);
  snprintf(a->callee, sizeof a->callee, "%s", callee);
  a->count = count;
}

int main(int argc, char** argv) {
  int threads = argc > 1 ? atoi(argv[1]) : 8;
  if (threads < 0 || threads > 64) return 2;
  pthread_t tids[64];
  sink = work(ITERATIONS);
  for (int t = 0; t < threads; ++t) pthread_create(&tids[t], NULL, thread_main, NULL);
  for (int t = 0; t < threads; ++t) pthread_join(tids[t], NULL);

  unsigned long runs = (unsigned long)threads + 1, n = runs * ITERATIONS;
  printf("expect main work 1\n");
  if (threads > 0) printf("expect thread_main work %d\n", threads);
  printf("expect work leaf %lu\n", n);
  printf("expect work rec %lu\n", n);
  printf("expect rec rec %lu\n", n * DEPTH);
  printf("expect work is_even %lu\n", n);
  printf("expect is_even is_odd %lu\n", n * (EVEN / 2));
  printf("expect is_odd is_even %lu\n", n * (EVEN / 2));
  printf("expect work op_add %lu\n", runs * ((ITERATIONS + 1) / 2));
  printf("expect work op_mul %lu\n", runs * (ITERATIONS / 2));
  printf("expect work lib_entry %lu\n", n);
  printf("expect lib_entry lib_inner %lu\n", n);
  // Looked up, not a weak reference: in a program that is not PIE the
  // linker would resolve that to 0 for good.
  for_each_arc_fn for_each_arc = (for_each_arc_fn)dlsym(RTLD_DEFAULT, "framewalk_mcount_for_each_arc");
  if (for_each_arc != NULL) {
    static struct arc_list list;
    for_each_arc(collect, &list);
    for (int i = 0; i < list.n; ++i) {
      printf("counted %s %s %llu\n", list.arcs[i].caller, list.arcs[i].callee,
             (unsigned long long)list.arcs[i].count);
    }
  }
  return 0;
}

// Register preservation around the mcount runtime's entry points
// (registers_<machine>.S): every hook variant the machine's file offers is
// called with patterns in the registers, on the main thread (a thread the
// runtime knows: its fast path) and on a new thread (its first call: the
// slow path that sets the thread up), and every register the machine's ABI
// for the hook keeps must come back unchanged.
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>

#include "framewalk/mcount.h"

extern uintptr_t fw_expect[], fw_after[];
extern unsigned fw_words, fw_hooks;
void fw_registers_run(int hook);
// Words the assembly sets itself before the call (a frame's sp, the
// flags), kept apart from the patterns; -1 ends the list.
extern int fw_runtime_words[];

static int failures;
static unsigned calls;
static uint64_t counted;

static void add_count(uintptr_t from_pc, uintptr_t self_pc, uint64_t count, void* context) {
  (void)from_pc, (void)self_pc, (void)context;
  counted += count;
}

static int set_at_run_time(unsigned w) {
  for (int i = 0; fw_runtime_words[i] >= 0; ++i) {
    if ((unsigned)fw_runtime_words[i] == w) return 1;
  }
  return 0;
}

static void check(int hook, const char* where, uint64_t seed) {
  for (unsigned w = 0; w < fw_words; ++w) {
    seed = seed * 6364136223846793005ull + 1442695040888963407ull;
    if (!set_at_run_time(w)) fw_expect[w] = (uintptr_t)(seed >> 16);
    fw_after[w] = 0;
  }
  fw_registers_run(hook);
  __atomic_fetch_add(&calls, 1, __ATOMIC_RELAXED);
  for (unsigned w = 0; w < fw_words; ++w) {
    if (fw_after[w] != fw_expect[w]) {
      printf("hook %d, %s: word %u is %#llx, expected %#llx\n", hook, where, w, (unsigned long long)fw_after[w],
             (unsigned long long)fw_expect[w]);
      ++failures;
    }
  }
}

static void* on_new_thread(void* arg) {
  check((int)(intptr_t)arg, "a new thread's first call", 99 + (uint64_t)(intptr_t)arg);
  return NULL;
}

int main(void) {
  for (unsigned hook = 0; hook < fw_hooks; ++hook) {
    pthread_t thread;
    pthread_create(&thread, NULL, on_new_thread, (void*)(intptr_t)hook);
    pthread_join(thread, NULL);
    for (uint64_t round = 0; round < 3; ++round) check((int)hook, "the main thread", round * 7 + hook);
  }
  // The hooks ran: every call is an arc (the runtime is linked in).
  framewalk_mcount_for_each_arc(add_count, NULL);
  if (counted != calls) {
    printf("the runtime counted %llu calls of %u\n", (unsigned long long)counted, calls);
    ++failures;
  }
  if (failures == 0) printf("ok: %u hooks, %u words each\n", fw_hooks, fw_words);
  return failures == 0 ? 0 : 1;
}

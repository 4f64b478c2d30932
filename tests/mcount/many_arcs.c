// More arcs than a thread's first table holds (kInitialArcCapacity / 2):
// 2048 call sites of one function, each run kRounds times, so the thread's
// table is retired twice while the first probe still points into the
// retired tables for the arcs counted before. Every arc must come out of
// framewalk_mcount_for_each_arc with exactly kRounds calls, and no call
// lost (CTest mcount.many_arcs; built -pg and linked with the runtime).
#include <stdint.h>
#include <stdio.h>

#include "framewalk/mcount.h"

#define NOINLINE __attribute__((noinline, noclone))
#define UNINSTRUMENTED __attribute__((noinline, noclone, no_instrument_function))

enum { kSites = 2048, kRounds = 5 };

static volatile int sink;
NOINLINE void leaf(void) { sink = sink + 1; }

#define C1 leaf();
#define C4 C1 C1 C1 C1
#define C16 C4 C4 C4 C4
#define C64 C16 C16 C16 C16
#define C256 C64 C64 C64 C64
#define C2048 C256 C256 C256 C256 C256 C256 C256 C256
NOINLINE void sites(void) { C2048 }

static uintptr_t leaf_pc_low, leaf_pc_high;
static unsigned arcs, wrong;
static uint64_t calls;

UNINSTRUMENTED static void each(uintptr_t from_pc, uintptr_t self_pc, uint64_t count, void* context) {
  (void)from_pc, (void)context;
  if (self_pc < leaf_pc_low || self_pc >= leaf_pc_high) return;  // main -> sites, the start's arcs
  ++arcs;
  calls += count;
  if (count != kRounds) ++wrong;
}

int main(void) {
  for (int round = 0; round < kRounds; ++round) sites();
  // self_pc is inside leaf, just after its call of the hook.
  leaf_pc_low = (uintptr_t)&leaf;
  leaf_pc_high = leaf_pc_low + 64;
  framewalk_mcount_for_each_arc(each, NULL);
  printf("%u arcs into leaf, %llu calls, %u with a count other than %d, %llu lost\n", arcs,
         (unsigned long long)calls, wrong, kRounds, (unsigned long long)framewalk_mcount_lost());
  return arcs == kSites && calls == (uint64_t)kSites * kRounds && wrong == 0 && framewalk_mcount_lost() == 0 ? 0 : 1;
}

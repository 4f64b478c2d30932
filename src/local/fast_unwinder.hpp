// The in-process fast path. Each step looks the PC up in a process-wide,
// direct-mapped cache of compact x86-64 rules ("CFA = rsp|rbp + n, RA at
// CFA-8, rbp saved at CFA-8k or unchanged"), packed with the PC in one 64-bit
// word so that threads can share it without locks. A miss finds the FDE
// through _dl_find_object (lock-free, async-signal-safe) and the module's
// .eh_frame_hdr, runs the full CFI executor, and caches the row if it fits;
// rows that do not fit (signal frames, expressions, PLT rules) are applied by
// the full executor every time. Stack reads are checked against a per-thread
// range of pages known to be readable, extended by probing pages
// (base/own_memory.hpp), so a bad pointer ends the walk instead of faulting.
#pragma once

#include <cstdint>

#include "arch/registers.hpp"

namespace framewalk::local {

// Whether the host has the compact-rule cache (fast_unwinder.cpp, x86-64);
// elsewhere the in-process path is portable_backtrace.cpp, which walks every
// frame through Unwinder::walk and caches nothing.
#if defined(__x86_64__)
inline constexpr bool kHasRuleCache = true;
#else
inline constexpr bool kHasRuleCache = false;
#endif

struct FastWalkStats {
  uint64_t cache_hits = 0;
  uint64_t cache_misses = 0;
  uint64_t general_rows = 0;  // rows applied by the full executor
};

// Walks from `regs` (which must know rip and rsp; rbp if the code uses it).
// `first_is_return_address`: the first PC is looked up at pc - 1.
// `skip`: frames walked but not stored. Returns the number stored.
int fast_walk(const arch::RegisterFile& regs, bool first_is_return_address, int skip, void** buffer, int size,
              FastWalkStats* stats = nullptr);

// framewalk_backtrace (<framewalk/backtrace.h>) is defined in
// fast_unwinder.cpp too: it starts from the registers framewalk_x86_64_capture
// stores, and builds no register file unless the first frame needs the full
// executor.

void flush_rule_cache();
// Drops the rules cached for return addresses in (start, end]: the range of
// a library dlclose unloaded (dlclose_hook.cpp). A lookup that began before
// and caches its row afterwards drops it again itself.
void forget_rules_between(uint64_t start, uint64_t end);
void keep_dlclose_hook();
// Faults in the cache's pages without changing them (MADV_POPULATE_WRITE, or
// an atomic no-op write per page on kernels before 5.14).
void prefault_rule_cache();
unsigned long rule_cache_bytes();
// Thread-local state each unwinding thread keeps (the known-readable stack
// range, its view of the cache's written pages).
unsigned long per_thread_bytes();
// How many rows were looked up the slow way (cache misses and rows the cache
// cannot hold), in every thread since the process started.
uint64_t slow_lookup_count();

}  // namespace framewalk::local

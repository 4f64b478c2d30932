// The in-process fast path. Each step looks the return address up in the
// process's rule cache (unwind/rule_cache: compact, machine-neutral rules
// such as "CFA = sp|fp + n, RA at CFA - a words, fp at CFA - k words or
// unchanged", shared by threads without locks) and applies the rule in a hot
// loop. Everything else (a miss, an exact PC, a row the cache cannot hold, a
// signal frame, code without unwind information) goes through the one step
// loop, Unwinder::walk, with its checks and fallbacks, whose rows come from
// _dl_find_object and .eh_frame_hdr, or PT_ARM_EXIDX on 32-bit ARM
// (local/eh_frame_lookup: lock-free, async-signal-safe) and are cached where
// compact; the hot loop resumes at the first return address the cache holds.
// Stack reads are checked against a per-thread range of pages known to be
// readable, extended by probing pages (base/own_memory.hpp), so a bad
// pointer ends the walk instead of faulting.
#pragma once

#include <cstdint>

#include "arch/registers.hpp"
#include "framewalk/backtrace.h"

namespace framewalk::local {

struct FastWalkStats {
  uint64_t cache_hits = 0;
  uint64_t cache_misses = 0;
  uint64_t general_rows = 0;  // rows applied by the full executor
};

// Walks from `regs` (which must know the PC and the SP; the frame pointer if
// the code uses it).
// `first_is_return_address`: the first PC is a return address, looked up inside the call before it.
// `skip`: frames walked but not stored. Returns the number stored; `info`,
// if given, tells why the walk ended.
int fast_walk(const arch::RegisterFile& regs, bool first_is_return_address, int skip, void** buffer, int size,
              FastWalkStats* stats = nullptr, framewalk_backtrace_info* info = nullptr);

// framewalk_backtrace and framewalk_backtrace_status (<framewalk/backtrace.h>)
// are defined in fast_unwinder.cpp too: it starts from the registers framewalk_capture
// stores, and builds no register file unless the first frame needs the step
// loop.

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
// range).
unsigned long per_thread_bytes();
// How many rows were looked up the slow way (cache misses and rows the cache
// cannot hold), in every thread since the process started.
uint64_t slow_lookup_count();

}  // namespace framewalk::local

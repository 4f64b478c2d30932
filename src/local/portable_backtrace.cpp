// The in-process path on host machines without a compact-rule fast path
// (every one but x86-64 today): each frame goes through the one step loop,
// Unwinder::walk, with its rows from the tables the dynamic linker finds
// (.eh_frame_hdr, or .ARM.exidx on 32-bit ARM: local/eh_frame_lookup) and its memory read without faulting
// (base/own_memory). The same step checks, signal frames and fallbacks as
// every other walk; nothing cached, nothing allocated, no lock: usable from
// a signal handler. Implements local/fast_unwinder.hpp and
// framewalk_backtrace.
#include <algorithm>
#include <atomic>
#include <cstring>

#include "arch/capture.hpp"
#include "arch/machine.hpp"
#include "base/own_memory.hpp"
#include "framewalk/backtrace.h"
#include "local/eh_frame_lookup.hpp"
#include "local/fast_unwinder.hpp"
#include "unwind/unwinder.hpp"

namespace framewalk::local {

namespace {

// This process's memory for one walk: pages are probed once (a probe is a
// system call) and the readable range found is trusted for the rest of the
// walk, as the x86-64 fast path does; nothing is trusted from walk to walk.
class WalkMemory final : public Memory {
 public:
  size_t read(uint64_t address, void* out, size_t size) override {
    if (size == 0 || address + size < address) return 0;
    if (address < lo_ || address + size > hi_) {
      constexpr uint64_t kPage = 4096;
      const uint64_t first = address & ~(kPage - 1);
      const uint64_t end = (address + size + kPage - 1) & ~(kPage - 1);
      const uint64_t until = readable_until(first, end);
      if (until <= address) return 0;
      // Grow the range where the new pages touch it (a stack is read upwards).
      if (first <= hi_ && until >= lo_ && hi_ > lo_) {
        lo_ = std::min(lo_, first);
        hi_ = std::max(hi_, until);
      } else {
        lo_ = first;
        hi_ = until;
      }
      if (address + size > until) size = static_cast<size_t>(until - address);
    }
    std::memcpy(out, reinterpret_cast<const void*>(address), size);
    return size;
  }

 private:
  uint64_t lo_ = 0, hi_ = 0;  // known readable: [lo_, hi_)
};

// The step loop's fallbacks look up no module: a global, so that no guard
// runs in a signal handler.
const ModuleMap g_no_modules;
std::atomic<uint64_t> g_rows_looked_up{0};

}  // namespace

int fast_walk(const arch::RegisterFile& regs, bool first_is_return_address, int skip, void** buffer, int size,
              FastWalkStats* stats) {
  if (size <= 0) return 0;
  WalkMemory memory;
  const OwnUnwindTables rows;
  const Unwinder unwinder(g_no_modules, memory, arch::host_machine().elf_machine());
  UnwindOptions o;
  o.first_is_return_address = first_is_return_address;
  o.max_frames = static_cast<size_t>(skip) + static_cast<size_t>(size);
  o.row_finder = &rows;
  int stored = 0, seen = 0;
  const WalkResult r = unwinder.walk(regs, [&](const Frame& f) {
    if (seen++ < skip) return true;
    buffer[stored++] = reinterpret_cast<void*>(f.pc);
    return stored < size;
  }, o);
  g_rows_looked_up.fetch_add(r.frames, std::memory_order_relaxed);
  if (stats) stats->general_rows += r.frames;
  return stored;
}

void flush_rule_cache() {}
void forget_rules_between(uint64_t, uint64_t) {}
void prefault_rule_cache() {}
unsigned long rule_cache_bytes() { return 0; }
unsigned long per_thread_bytes() { return 0; }
uint64_t slow_lookup_count() { return g_rows_looked_up.load(std::memory_order_relaxed); }

// Links dlclose_hook.cpp into every program that links this file.
[[gnu::used]] void (*const g_keep_dlclose_hook)() = keep_dlclose_hook;

}  // namespace framewalk::local

extern "C" __attribute__((noinline)) int framewalk_backtrace(void** buffer, int size) {
  uint64_t words[framewalk::arch::kCaptureWords];
  framewalk::arch::framewalk_capture(words);
  // The captured PC is inside this function: walk one frame out before storing.
  const int n = framewalk::local::fast_walk(framewalk::arch::from_host_capture(words),
                                            /*first_is_return_address=*/true, /*skip=*/1, buffer, size);
  asm volatile("" ::: "memory");  // keep this a real frame (no tail call)
  return n;
}

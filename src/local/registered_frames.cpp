#include "local/registered_frames.hpp"

#include <dlfcn.h>
#include <sched.h>

#include <atomic>
#include <cstring>

#include "arch/machine.hpp"
#include "dwarf/cfa_program.hpp"
#include "dwarf/cfi_section.hpp"
#include "framewalk/backtrace.h"
#include "local/fast_unwinder.hpp"

namespace framewalk::local {

namespace {

constexpr size_t kSlots = 4096;
// A registered sequence longer than this is taken for garbage.
constexpr uint64_t kMaxTableBytes = uint64_t{64} << 20;
constexpr int kRememberDepth = 2;

enum : int { kFree = 0, kWriting = 1, kPublished = 2, kRetiring = 3 };

struct Slot {
  std::atomic<int> state{kFree};
  std::atomic<uintptr_t> begin{0};      // what the program registered
  uintptr_t span_start = 0, span_end = 0;  // the bytes the table's records occupy (a lone FDE's CIE too)
  uint64_t pc_start = 0, pc_end = 0;    // what its FDEs cover
};

Slot g_slots[kSlots];
std::atomic<int> g_published{0};  // published tables: lookups return at once when 0
std::atomic<int> g_readers{0};    // lookups reading a table now

// A lookup's hold on the tables: a table is not retired while one is held.
class Reading {
 public:
  Reading() { g_readers.fetch_add(1, std::memory_order_seq_cst); }
  ~Reading() { g_readers.fetch_sub(1, std::memory_order_seq_cst); }
};

const arch::Machine& host() { return arch::host_machine(); }

uint32_t read32(uintptr_t at) {
  uint32_t v;
  std::memcpy(&v, reinterpret_cast<const void*>(at), sizeof v);
  return v;
}

dwarf::CfiSection section_of(uintptr_t start, uintptr_t end) {
  dwarf::CfiSectionInfo info;
  info.kind = dwarf::CfiKind::kEhFrame;
  info.endian = host().endian();
  info.address_size = host().address_size();
  info.arch = &host().info();
  info.bases.section_address = start;
  return dwarf::CfiSection(Bytes(reinterpret_cast<const uint8_t*>(start), end - start), info);
}

// The records of the table at `begin`: where they lie and what they cover.
// False when it holds no FDE that can be read.
bool measure(uintptr_t begin, Slot* slot) {
  if (!begin || read32(begin) == 0) return false;
  // One record at `begin` that is an FDE: LLVM libunwind's one FDE, whose
  // CIE lies before it. Else a sequence up to its zero length word.
  uintptr_t end = begin;
  bool lone_fde = false;
  for (;;) {
    const uint32_t length = read32(end);
    if (length == 0) break;
    if (length == 0xffffffff || length > kMaxTableBytes || end + 4 + length - begin > kMaxTableBytes) return false;
    const bool is_fde = read32(end + 4) != 0;
    end += 4 + length;
    if (end == begin + 4 + length && is_fde) {
      lone_fde = true;
      break;
    }
  }
  uintptr_t start = begin;
  if (lone_fde) {
    const uintptr_t cie = begin + 4 - read32(begin + 4);
    if (cie >= begin || begin - cie > kMaxTableBytes) return false;
    start = cie;
  }
  const dwarf::CfiSection section = section_of(start, end);
  uint64_t pc_start = UINT64_MAX, pc_end = 0;
  for (uintptr_t at = begin; at < end; at += 4 + read32(at)) {
    if (read32(at + 4) == 0) continue;  // a CIE
    dwarf::Cie cie;
    auto fde = section.fde_at_uncached(at - start, &cie);
    if (!fde || fde->pc_range == 0) continue;
    pc_start = std::min(pc_start, fde->pc_begin);
    pc_end = std::max(pc_end, fde->pc_end());
  }
  if (pc_start >= pc_end) return false;
  slot->begin.store(begin, std::memory_order_relaxed);
  slot->span_start = start;
  slot->span_end = end;
  slot->pc_start = pc_start;
  slot->pc_end = pc_end;
  return true;
}

}  // namespace

bool find_registered_row(uint64_t lookup_pc, UnwindRow* row) {
  if (g_published.load(std::memory_order_acquire) == 0) return false;
  Reading reading;
  for (Slot& slot : g_slots) {
    if (slot.state.load(std::memory_order_seq_cst) != kPublished) continue;
    if (lookup_pc < slot.pc_start || lookup_pc >= slot.pc_end) continue;
    const dwarf::CfiSection section = section_of(slot.span_start, slot.span_end);
    const uintptr_t first = slot.begin.load(std::memory_order_relaxed);
    for (uintptr_t at = first; at < slot.span_end; at += 4 + read32(at)) {
      if (read32(at + 4) == 0) continue;
      dwarf::Cie cie;
      auto fde = section.fde_at_uncached(at - slot.span_start, &cie);
      if (!fde || !fde->contains(lookup_pc)) continue;
      dwarf::RememberRoom<kRememberDepth> room;
      return dwarf::row_for_pc(section, cie, *fde, lookup_pc, *row, room.space()).ok();
    }
  }
  return false;
}

bool in_registered_code(uint64_t address) {
  if (g_published.load(std::memory_order_acquire) == 0) return false;
  Reading reading;
  for (const Slot& slot : g_slots)
    if (slot.state.load(std::memory_order_seq_cst) == kPublished && address >= slot.pc_start && address < slot.pc_end)
      return true;
  return false;
}

void keep_register_frame_hooks() {}

}  // namespace framewalk::local

using framewalk::local::g_published;
using framewalk::local::g_readers;
using framewalk::local::g_slots;
using framewalk::local::Slot;

extern "C" FRAMEWALK_API int framewalk_register_frame(const void* eh_frame) {
  Slot measured;
  if (!framewalk::local::measure(reinterpret_cast<uintptr_t>(eh_frame), &measured)) return -1;
  for (Slot& slot : g_slots) {
    int expected = framewalk::local::kFree;
    if (!slot.state.compare_exchange_strong(expected, framewalk::local::kWriting, std::memory_order_acquire)) continue;
    slot.begin.store(measured.begin.load(std::memory_order_relaxed), std::memory_order_relaxed);
    slot.span_start = measured.span_start;
    slot.span_end = measured.span_end;
    slot.pc_start = measured.pc_start;
    slot.pc_end = measured.pc_end;
    slot.state.store(framewalk::local::kPublished, std::memory_order_seq_cst);
    g_published.fetch_add(1, std::memory_order_release);
    // Rules cached for these addresses before (other code was there) go.
    framewalk::local::forget_rules_between(measured.pc_start - 1, measured.pc_end);
    return 0;
  }
  return -1;  // full
}

extern "C" FRAMEWALK_API int framewalk_deregister_frame(const void* eh_frame) {
  const auto begin = reinterpret_cast<uintptr_t>(eh_frame);
  for (Slot& slot : g_slots) {
    int expected = framewalk::local::kPublished;
    if (slot.begin.load(std::memory_order_relaxed) != begin ||
        !slot.state.compare_exchange_strong(expected, framewalk::local::kRetiring, std::memory_order_seq_cst))
      continue;
    // A lookup that saw it published may still read it: wait for those.
    while (g_readers.load(std::memory_order_seq_cst) != 0) sched_yield();
    g_published.fetch_sub(1, std::memory_order_release);
    framewalk::local::forget_rules_between(slot.pc_start - 1, slot.pc_end);
    slot.state.store(framewalk::local::kFree, std::memory_order_release);
    return 0;
  }
  return -1;
}

// libgcc's registry, interposed: noted, then passed on (C++ exceptions and
// libgcc's own unwinder go on seeing the code).
extern "C" __attribute__((visibility("default"))) void __register_frame(void* begin) {
  using Register = void (*)(void*);
  static const auto real = reinterpret_cast<Register>(dlsym(RTLD_NEXT, "__register_frame"));
  (void)framewalk_register_frame(begin);
  if (real) real(begin);
}

extern "C" __attribute__((visibility("default"))) void __deregister_frame(void* begin) {
  using Deregister = void (*)(void*);
  static const auto real = reinterpret_cast<Deregister>(dlsym(RTLD_NEXT, "__deregister_frame"));
  (void)framewalk_deregister_frame(begin);
  if (real) real(begin);
}

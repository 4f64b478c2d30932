// The arc table: an open-addressed hash (linear probing) from an arc
// (from_pc, self_pc) to its call count, in one anonymous mapping.
//
// Each thread counts into a table of its own, so the hot path takes no lock
// and writes no cache line another thread writes. A table that would pass
// half full is replaced by one twice as large (arc_table_grown): an arc is
// never refused for lack of room while the kernel gives memory.
//
// A slot is empty while its self_pc is 0 (a PC inside an instrumented
// function is never 0). A new slot is published by storing self_pc last,
// with release order, so that a dump reading another thread's live table
// (acquire) never sees half an arc; a count it reads may be a few calls
// behind, which only a dump of threads that are still running can see.
#pragma once

#include <cstddef>
#include <cstdint>

#include "mcount/first_probe.h"

namespace framewalk::mcount {

struct ArcSlot {
  uintptr_t self_pc;  // 0: empty
  uintptr_t from_pc;
  uint64_t count;
};
// The entry stubs that read the first probe (first_probe.h) address a slot's fields by these.
static_assert(offsetof(ArcSlot, self_pc) == FRAMEWALK_MCOUNT_SLOT_SELF_PC);
static_assert(offsetof(ArcSlot, from_pc) == FRAMEWALK_MCOUNT_SLOT_FROM_PC);
static_assert(offsetof(ArcSlot, count) == FRAMEWALK_MCOUNT_SLOT_COUNT);

struct ArcTable {
  std::size_t capacity;   // slots, a power of two
  std::size_t used;       // occupied slots
  std::size_t limit;      // capacity / 2: the table is replaced before it fills further
  std::size_t map_bytes;  // the size of the mapping (header and slots)
  unsigned shift;         // word bits - log2(capacity): the hash's top bits index the table
  // The table this one replaced, if any (set by its owner): a retired table
  // keeps its arcs and still counts (a first probe may still point into
  // it), so whoever sums a thread's arcs walks the chain.
  ArcTable* retired;
  ArcSlot slots[1];       // `capacity` of them
};

inline constexpr std::size_t kInitialArcCapacity = 1024;

// A zeroed table of `capacity` slots (a power of two, at least 2), or nullptr.
ArcTable* arc_table_create(std::size_t capacity);
void arc_table_destroy(ArcTable* table);
// A table twice as large holding the same arcs, or nullptr.
ArcTable* arc_table_grown(const ArcTable& table);

inline std::size_t arc_hash(unsigned shift, uintptr_t from_pc, uintptr_t self_pc) {
  // Fibonacci hashing: the top bits of the product mix every bit of both
  // PCs (the callee's rotated, so that arcs whose PCs differ by the same
  // amount do not meet), in one multiplication on the hot path.
  constexpr unsigned bits = sizeof(uintptr_t) * 8;
  uintptr_t mixed = from_pc ^ ((self_pc << (bits / 2 - 3)) | (self_pc >> (bits / 2 + 3)));
  if constexpr (sizeof(uintptr_t) == 8) {
    return static_cast<std::size_t>((static_cast<uint64_t>(mixed) * 0x9E3779B97F4A7C15ull) >> shift);
  } else {
    return static_cast<std::size_t>((static_cast<uint32_t>(mixed) * 0x9E3779B1u) >> shift);
  }
}
inline std::size_t arc_hash(const ArcTable& table, uintptr_t from_pc, uintptr_t self_pc) {
  return arc_hash(table.shift, from_pc, self_pc);
}

// The arc's slot: the one it has, or a new one published with a count of
// 0; nullptr, and nothing changed, when the arc is new and the table has
// reached its limit (the caller grows it). The caller adds the calls.
// `shift`: table.shift, which a caller may keep beside its table pointer so
// that the hash waits for no load through it.
inline ArcSlot* arc_table_slot(ArcTable& table, unsigned shift, uintptr_t from_pc, uintptr_t self_pc) {
  for (std::size_t i = arc_hash(shift, from_pc, self_pc);; i = (i + 1) & (table.capacity - 1)) {
    ArcSlot& slot = table.slots[i];
    if (slot.self_pc == self_pc && slot.from_pc == from_pc) return &slot;
    if (slot.self_pc == 0) {
      if (table.used >= table.limit) return nullptr;
      slot.from_pc = from_pc;
      slot.count = 0;
      __atomic_store_n(&slot.self_pc, self_pc, __ATOMIC_RELEASE);
      ++table.used;
      return &slot;
    }
  }
}

// Adds `count` calls to the arc. False, and nothing changed, when the arc is
// new and the table has reached its limit: the caller grows it and adds again.
inline bool arc_table_add(ArcTable& table, unsigned shift, uintptr_t from_pc, uintptr_t self_pc, uint64_t count) {
  ArcSlot* slot = arc_table_slot(table, shift, from_pc, self_pc);
  if (slot == nullptr) return false;
  slot->count += count;
  return true;
}
inline bool arc_table_add(ArcTable& table, uintptr_t from_pc, uintptr_t self_pc, uint64_t count) {
  return arc_table_add(table, table.shift, from_pc, self_pc, count);
}

// The arc's index in a thread's first probe (first_probe.h), the same
// computation as the stubs'.
inline std::size_t first_probe_index(uintptr_t from_pc, uintptr_t self_pc) {
  const uintptr_t product = (from_pc ^ self_pc) * static_cast<uintptr_t>(FRAMEWALK_MCOUNT_PROBE_MULTIPLIER);
  return static_cast<std::size_t>(product >> FRAMEWALK_MCOUNT_PROBE_SHIFT) &
         ((std::size_t{1} << FRAMEWALK_MCOUNT_PROBE_BITS) - 1);
}
inline constexpr std::size_t kFirstProbeEntries = std::size_t{1} << FRAMEWALK_MCOUNT_PROBE_BITS;

// Calls fn(from_pc, self_pc, count) for every arc published so far (a
// count may be 0: a slot published before its first call was added).
template <typename Fn>
void arc_table_for_each(const ArcTable& table, Fn&& fn) {
  for (std::size_t i = 0; i < table.capacity; ++i) {
    const ArcSlot& slot = table.slots[i];
    uintptr_t self_pc = __atomic_load_n(&slot.self_pc, __ATOMIC_ACQUIRE);
    if (self_pc != 0) fn(slot.from_pc, self_pc, slot.count);
  }
}

}  // namespace framewalk::mcount


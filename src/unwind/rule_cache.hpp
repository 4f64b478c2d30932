// A lock-free cache of compact rules (unwind/compact_rule) keyed by return
// address: what the in-process fast path steps with, and what a profiler or
// an mcount runtime that unwinds its own process can share with it. Threads
// read and fill it without a lock, from signal handlers too; nothing in it
// allocates.
//
// Layout. Two-way set-associative, the set chosen by the low 12 bits of the
// key (its home set). A slot is two words, each read and written alone with
// relaxed atomics, so a torn pair is harmless:
//   word: bits 0-47 the key (a return address: user addresses of x86-64
//         and AArch64 fit in 48 bits; a larger one is never cached, and is
//         stepped by the full executor), bits 48-63 its rule bits: where
//         its rule is in the rule table, as a byte offset (8 times the
//         index), which a hot loop adds to an address unscaled. Zero is
//         empty. One comparison tells whether a slot holds a key, wherever
//         the slot is.
//   next: a prediction for the hot loop: bits 0-31 the byte offset of the
//         slot of the caller seen the last time this frame was stepped,
//         bits 48-63 the rule bits that slot's word had then, so that the
//         hot loop loads the caller's word and rule at once, while the
//         return address is still coming off the stack, and checks both
//         with one comparison (predicts()). Only ever written with the
//         offset of a slot (bits 32-47 are 0).
// The rule table interns the distinct rules (a process has a few hundred),
// each an encoded CompactRule written once and never changed, so that a slot
// needs only 16 bits for its rule and the key keeps 48. A rule is written
// before any slot names it; a reader that still sees it as 0 treats the
// slot as a miss. The commonest rules have their place by their kind
// (hint()): the hot loop knows them by the rule bits alone, and does not
// read them.
//
// While a home set's page has never been written, a rule goes to the first
// page instead (the set of the key's low 6 bits there), which the cache's
// bookkeeping shares: a process's first walks then fault in one page, not
// one per frame (a page read before it is written maps the zero page, and
// the write after it faults again).
//
// The in-process cache is one static instance (own_rule_cache()); the class
// has no constructor to run, so a zeroed, page-aligned block of memory (BSS,
// an anonymous mapping) is an empty cache.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "unwind/compact_rule.hpp"

namespace framewalk {

class RuleCache {
 public:
  static constexpr unsigned kKeyBits = 48;
  static constexpr uint64_t kKeyMask = (uint64_t{1} << kKeyBits) - 1;
  static constexpr unsigned kSetBits = 12;
  static constexpr size_t kSets = size_t{1} << kSetBits;
  static constexpr size_t kSlots = 2 * kSets;  // two ways
  static constexpr size_t kSlotBytes = 16;
  static constexpr size_t kNoSlot = kSlots * kSlotBytes;
  static constexpr size_t kRules = 4096;  // index 0 is never used
  static constexpr size_t kSlotsStart = 128;  // the slots' offset in the object

  struct alignas(16) Slot {
    std::atomic<uint64_t> word;
    std::atomic<uint64_t> next;
  };

  // Slots are named by their byte offset, which the hot loops add to
  // slot_base() without scaling.
  char* slot_base() { return reinterpret_cast<char*>(slots_); }
  // The cache whose slot_base() this is (a hot loop keeps only that).
  static RuleCache& of_slot_base(char* base) { return *reinterpret_cast<RuleCache*>(base - kSlotsStart); }
  static Slot& slot_at(char* base, size_t offset) { return *reinterpret_cast<Slot*>(base + offset); }
  static bool holds(uint64_t word, uint64_t key) { return (word & kKeyMask) == key; }
  // A `next` word: the slot at `offset`, whose word is `word`.
  static uint64_t prediction(size_t offset, uint64_t word) { return offset | (word & ~kKeyMask); }
  static size_t predicted_offset(uint64_t prediction) { return static_cast<uint32_t>(prediction); }
  // Whether the predicted slot's word (`word`, loaded from it) holds `key`
  // with the rule the prediction names.
  static bool predicts(uint64_t prediction, uint64_t word, uint64_t key) {
    return word == (key | (prediction & ~kKeyMask));
  }
  // The same, for a hot loop that has the prediction's offset at hand: the
  // prediction less its offset is its rule bits (bits 32-47 are 0), so two
  // additions and a comparison, and no 64-bit mask to keep in a register.
  // Exact for keys below 2^48, as a return address the cache may hold is.
  static bool predicts(uint64_t prediction, size_t offset, uint64_t word, uint64_t key) {
    return key + prediction == word + offset;
  }
  // The encoded rule a slot's word names (0: not yet visible). The rule
  // table follows the slots: from slot_base() alone, so that a hot loop
  // keeps one base register.
  static constexpr size_t kRulesFromSlots = kSlots * kSlotBytes;
  static uint64_t rule_at(char* base, uint64_t word) {
    return reinterpret_cast<std::atomic<uint64_t>*>(base + kRulesFromSlots + (word >> kKeyBits))
        ->load(std::memory_order_relaxed);
  }
  uint64_t rule_of(uint64_t word) const {
    return reinterpret_cast<const std::atomic<uint64_t>*>(reinterpret_cast<const char*>(rules_) + (word >> kKeyBits))
        ->load(std::memory_order_relaxed);
  }
  // The bits 48-63 of a slot's word for the rule at `index` of the table.
  static uint64_t rule_bits(uint64_t index) { return index * sizeof(uint64_t) << kKeyBits; }

  // Where the rules most frames have are in the table, so that a hot loop
  // tells them from a slot's word, or a prediction, without reading the
  // table: a kSimple rule (CFA = sp + n, the return address just below the
  // slot origin, the frame pointers unchanged) whose offset n is under 8 KiB at index n / 4,
  // the host's frame record rule (compact::frame_record_rule) at
  // kFrameRecordIndex; every other after it. hint() of such a word is then n
  // for a kSimple rule, kFrameRecordHint for the frame record, and more for
  // any other.
  static constexpr size_t kFrameRecordIndex = 2048;
  static constexpr uint64_t kFrameRecordHint = kFrameRecordIndex * sizeof(uint64_t) / 2;
  static uint64_t hint(uint64_t word) { return word >> (kKeyBits + 1); }

  // The offset of the slot holding `key`'s rule, or kNoSlot; `rule` gets
  // the encoded rule, `word` (if not null) the slot's word.
  size_t find(uint64_t key, uint64_t* rule, uint64_t* word = nullptr) {
    if (key == 0 || key > kKeyMask) return kNoSlot;
    const size_t home = find_in_set(home_set(key), key, rule, word);
    return home != kNoSlot ? home : find_in_set(first_page_set(key), key, rule, word);
  }
  bool contains(uint64_t key) {
    uint64_t rule;
    return find(key, &rule) != kNoSlot;
  }

  // How many libraries were unloaded (forget_between calls): read before a
  // row is looked up, and handed to remember().
  uint64_t generation() const { return state_.unloads.load(std::memory_order_seq_cst); }
  // Caches `rule` for `key`: in the way that has it or is empty, else in
  // the way a shared counter picks. `generation`: generation() before the
  // row was looked up; a rule from a library unloaded since is dropped.
  // False when the key or the rule cannot be held (the rule table is full).
  bool remember(uint64_t key, const CompactRule& rule, uint64_t generation);
  // Drops the rules of keys in (start, end]: the range of an unloaded library.
  void forget_between(uint64_t start, uint64_t end);
  // Drops every key (the rule table stays: rules are not tied to addresses).
  void flush();
  // Faults in every page without changing the contents.
  void prefault();

  // For benchmarks and tests: rows looked up the slow way by its users.
  void count_slow_lookup() { counters_.slow_lookups.fetch_add(1, std::memory_order_relaxed); }
  uint64_t slow_lookups() const { return counters_.slow_lookups.load(std::memory_order_relaxed); }
  uint64_t rules_held() const { return counters_.rules_interned.load(std::memory_order_relaxed); }

 private:
  static constexpr size_t kPage = 4096;
  static constexpr size_t kFirstPageSets = 64;
  static_assert(kSlotsStart + kFirstPageSets * 2 * kSlotBytes <= kPage);

  static size_t home_set(uint64_t key) { return (key & (kSets - 1)) * 2 * kSlotBytes; }
  static size_t first_page_set(uint64_t key) { return (key & (kFirstPageSets - 1)) * 2 * kSlotBytes; }
  static unsigned page_of(size_t offset) { return static_cast<unsigned>((kSlotsStart + offset) / kPage); }
  bool page_written(size_t offset) const {
    return (state_.written_pages.load(std::memory_order_relaxed) >> page_of(offset)) & 1;
  }
  size_t find_in_set(size_t set, uint64_t key, uint64_t* rule, uint64_t* word_out) {
    if (!page_written(set)) return kNoSlot;
    char* const base = slot_base();
    for (size_t offset = set; offset < set + 2 * kSlotBytes; offset += kSlotBytes) {
      const uint64_t word = slot_at(base, offset).word.load(std::memory_order_relaxed);
      if (holds(word, key)) {
        *rule = rule_of(word);
        if (word_out) *word_out = word;
        return *rule ? offset : kNoSlot;
      }
    }
    return kNoSlot;
  }
  // The rule table index of `encoded`, added if new; 0 when the table is full.
  uint64_t intern(uint64_t encoded);
  // The index a rule has by its kind (see hint()), or 0.
  static uint64_t fixed_index(uint64_t encoded);

  // Read on every lookup, written when a page is first used: its own line.
  struct State {
    std::atomic<uint64_t> written_pages;  // one bit per page of this object
    std::atomic<uint64_t> unloads;
    std::atomic<uint32_t> evictions;      // picks the way a new rule evicts
  };
  // Written on slow paths: a line of their own.
  struct alignas(64) Counters {
    std::atomic<uint64_t> slow_lookups;
    std::atomic<uint64_t> rules_interned;
  };
  alignas(64) State state_;
  Counters counters_;
  alignas(64) Slot slots_[kSlots];
  std::atomic<uint64_t> rules_[kRules];

  friend struct RuleCacheLayout;
};

struct RuleCacheLayout;

// The cache of this process's own code, shared by every in-process walk.
RuleCache& own_rule_cache();
size_t own_rule_cache_bytes();

}  // namespace framewalk

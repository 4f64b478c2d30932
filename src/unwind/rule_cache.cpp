#include "unwind/rule_cache.hpp"

#include <sys/mman.h>

namespace framewalk {

struct RuleCacheLayout {
  static_assert(offsetof(RuleCache, slots_) == RuleCache::kSlotsStart);
  static_assert(offsetof(RuleCache, rules_) - offsetof(RuleCache, slots_) == RuleCache::kRulesFromSlots);
  static_assert(sizeof(RuleCache) / RuleCache::kPage < 64, "one bit per page in State::written_pages");
  static_assert(RuleCache::kFrameRecordIndex < RuleCache::kRules);
  static_assert(RuleCache::kRules * sizeof(uint64_t) <= (uint64_t{1} << (64 - RuleCache::kKeyBits)),
                "a rule's byte offset in the table fits in a slot word's top bits");
};

static_assert(std::atomic<uint64_t>::is_always_lock_free, "the cache is read in signal handlers");

uint64_t RuleCache::fixed_index(uint64_t encoded) {
  if (encoded == compact::frame_record_rule(sizeof(uintptr_t))) return kFrameRecordIndex;
  const uint64_t offset = encoded - (compact::kSimple << compact::kOffsetBits);
  if (offset != 0 && offset % 4 == 0 && offset / 4 < kFrameRecordIndex) return offset / 4;
  return 0;
}

uint64_t RuleCache::intern(uint64_t encoded) {
  auto take = [&](uint64_t index) {
    uint64_t current = 0;
    if (rules_[index].compare_exchange_strong(current, encoded, std::memory_order_relaxed)) {
      counters_.rules_interned.fetch_add(1, std::memory_order_relaxed);
      return true;
    }
    return current == encoded;  // another thread interned it first
  };
  if (const uint64_t index = fixed_index(encoded)) {
    // Its place holds it, or nothing yet: no other rule goes there.
    if (rules_[index].load(std::memory_order_relaxed) == encoded) return index;
    return take(index) ? index : 0;
  }
  // The others: open addressing from a hash of the rule, after the fixed
  // places; a slot, once set, never changes.
  constexpr uint64_t kFirst = kFrameRecordIndex + 1, kCount = kRules - kFirst;
  constexpr unsigned kProbes = 32;
  uint64_t index = kFirst + ((encoded * 0x9E3779B97F4A7C15ull) >> 32) % kCount;
  for (unsigned probe = 0; probe < kProbes; ++probe, index = index + 1 == kRules ? kFirst : index + 1) {
    const uint64_t current = rules_[index].load(std::memory_order_relaxed);
    if (current == encoded) return index;
    if (current == 0 && take(index)) return index;
  }
  return 0;
}

bool RuleCache::remember(uint64_t key, const CompactRule& rule, uint64_t generation) {
  if (key == 0 || key > kKeyMask) return false;
  const uint64_t index = intern(encode(rule));
  if (index == 0) return false;
  const uint64_t word = key | rule_bits(index);
  char* const base = slot_base();
  const size_t home = home_set(key);
  const size_t first = page_written(home) ? home : first_page_set(key);
  size_t target = first + kSlotBytes * (state_.evictions.fetch_add(1, std::memory_order_relaxed) & 1);
  if (page_written(first)) {
    for (size_t offset = first; offset < first + 2 * kSlotBytes; offset += kSlotBytes) {
      const uint64_t old = slot_at(base, offset).word.load(std::memory_order_relaxed);
      if (old == 0 || holds(old, key)) {
        target = offset;
        break;
      }
    }
  } else {
    target = first;  // a fresh page: both ways are empty
  }
  slot_at(base, target).word.store(word, std::memory_order_relaxed);
  // No prediction yet: point it at this slot (its page is written); the
  // check against the real return address tells whether that is right.
  slot_at(base, target).next.store(prediction(target, word), std::memory_order_relaxed);
  state_.written_pages.fetch_or(uint64_t{1} << page_of(first), std::memory_order_relaxed);
  // A library unloaded since the lookup began may be where this rule came
  // from. Either forget_between sees the store above, or this sees its
  // count (both sides fence between their store and their load).
  std::atomic_thread_fence(std::memory_order_seq_cst);
  if (state_.unloads.load(std::memory_order_relaxed) != generation) {
    uint64_t expected = word;
    slot_at(base, target).word.compare_exchange_strong(expected, 0, std::memory_order_relaxed);
    return false;
  }
  return true;
}

void RuleCache::forget_between(uint64_t start, uint64_t end) {
  state_.unloads.fetch_add(1, std::memory_order_relaxed);
  std::atomic_thread_fence(std::memory_order_seq_cst);
  const uint64_t written = state_.written_pages.load(std::memory_order_relaxed);
  char* const base = slot_base();
  for (size_t offset = 0; offset < kNoSlot; offset += kSlotBytes) {
    if (!((written >> page_of(offset)) & 1)) continue;  // never written: nothing to forget
    uint64_t word = slot_at(base, offset).word.load(std::memory_order_relaxed);
    const uint64_t key = word & kKeyMask;
    if (word != 0 && key > start && key <= end)
      slot_at(base, offset).word.compare_exchange_strong(word, 0, std::memory_order_relaxed);
  }
}

void RuleCache::flush() {
  for (auto& slot : slots_) {
    slot.word.store(0, std::memory_order_relaxed);
    slot.next.store(0, std::memory_order_relaxed);
  }
  state_.written_pages.store(~uint64_t{0}, std::memory_order_relaxed);
}

void RuleCache::prefault() {
#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif
  if (madvise(this, sizeof *this, MADV_POPULATE_WRITE) != 0)
    for (size_t offset = 0; offset < sizeof *this; offset += kPage)
      reinterpret_cast<std::atomic<uint64_t>*>(reinterpret_cast<char*>(this) + offset)
          ->fetch_or(0, std::memory_order_relaxed);
  state_.written_pages.store(~uint64_t{0}, std::memory_order_relaxed);
}

namespace {
// Page-aligned for madvise; zero-initialized: an empty cache.
alignas(4096) constinit RuleCache g_own_rule_cache{};
}  // namespace

RuleCache& own_rule_cache() { return g_own_rule_cache; }
size_t own_rule_cache_bytes() { return sizeof g_own_rule_cache; }

}  // namespace framewalk

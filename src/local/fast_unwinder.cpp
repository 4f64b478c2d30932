#include "local/fast_unwinder.hpp"

#include "framewalk/backtrace.h"

#include <dlfcn.h>
#include <link.h>
#include <sys/mman.h>
#include <unistd.h>

#include <atomic>
#include <cstddef>
#include <cstring>

#include "arch/x86_64/frames.hpp"
#include "arch/x86_64/registers.hpp"
#include "dwarf/cfa_program.hpp"
#include "local/eh_frame_lookup.hpp"
#include "dwarf/expression.hpp"
#include "base/memory.hpp"
#include "base/own_memory.hpp"
#include "unwind/unwinder.hpp"

namespace framewalk::local {

namespace {

namespace x = arch::x86_64;

// ---- the rule cache ----------------------------------------------------------
// Two-way set-associative, the set chosen by the low 12 bits of a return
// address (its home set); a slot holds the rule for the call site (return
// address - 1). Frames looked up at their exact PC (the first frame of a
// ucontext walk, frames a signal interrupted) are not cached. Two ways, so
// that two return addresses of one stack that share their low bits do not
// evict each other on every walk. While a home set's page has never been
// written, the rule goes to the first page instead (the set of the address's
// low 6 bits there), which the cache's bookkeeping shares: a process's first
// walks then fault in one page, not one per frame. A slot is two words, each
// read and written alone with relaxed atomics, so threads share the cache
// without a lock and a torn pair is harmless:
//   rule: bits 0-46 the whole return address (user addresses fit in 47
//         bits), so that one comparison tells whether a slot holds a given
//         address, wherever the slot is; bits 47-63 the rule, read as
//         `rule >> 47`: bits 0-3 k where rbp is saved at CFA - 8k (0: rbp
//         unchanged), bit 4 the CFA base (0 rsp, 1 rbp; set for the outermost
//         frame too, so the common case is one test), bits 5-16 the CFA
//         offset in words (0 marks the outermost frame: return address
//         undefined). Zero is empty.
//   next: a prediction: the byte offset of the slot of the caller seen the
//         last time this frame was stepped. The hot loop loads the predicted
//         caller's rule while the return address is still coming off the
//         stack, and the next prediction from that slot in turn, so that
//         consecutive steps overlap and the only chain from step to step is
//         one load. The caller's rule word is then checked against the real
//         return address, and the prediction corrected when wrong. It is
//         only ever written with the offset of a slot, so it is used unmasked.
// Slots are named by their byte offset in the cache, which the hot loop adds
// to the cache's address without scaling.
constexpr unsigned kSetBits = 12;
constexpr size_t kSets = size_t{1} << kSetBits;
constexpr size_t kSlots = 2 * kSets;  // two ways
constexpr size_t kNoSlot = kSlots * 16;
constexpr unsigned kRuleShift = 47;
constexpr uint64_t kAddressMask = (uint64_t{1} << kRuleShift) - 1;
// In `rule >> kRuleShift`:
constexpr uint64_t kRbpSlotMask = 15;
constexpr uint64_t kRbpBased = 16;
constexpr uint64_t kSimpleMask = kRbpBased | kRbpSlotMask;  // zero: CFA = rsp + n, rbp unchanged
constexpr unsigned kOffsetShift = 5;
constexpr uint64_t kMaxOffsetWords = (uint64_t{1} << (64 - kRuleShift - kOffsetShift)) - 1;

struct alignas(16) CacheSlot {
  std::atomic<uint64_t> rule;
  std::atomic<uint64_t> next;
};
static_assert(sizeof(CacheSlot) == 16);

// Process-wide bookkeeping. A page of the cache is never read before it is
// first written: reading an untouched page maps the zero page, and the write
// after it faults a second time. So pages written are marked here, and each
// thread reads its own copy of the marks (its TLS page is long written),
// refreshed whenever it takes the slow path; the slow path writes this
// bookkeeping before it reads it, for the same reason.
struct CacheState {
  std::atomic<uint64_t> checked_steps{0};  // steps the checked path took
  std::atomic<uint64_t> slow_lookups{0};   // rows looked up the slow way (benchmarks, tests)
  std::atomic<uint64_t> written_pages{0};  // one bit per page of RuleCache
  std::atomic<uint32_t> evictions{0};      // picks the way a new rule evicts when both are taken
  std::atomic<uint64_t> unloads{0};        // libraries dlclose unloaded (forget_rules_between)
};

// The bookkeeping and the slots, on the same first page: the first walk of
// a process writes both, and faults once for them.
struct alignas(4096) RuleCache {  // page-aligned for madvise
  CacheState state;
  alignas(64) CacheSlot slots[kSlots];
};
constexpr size_t kSlotsStart = 64;
static_assert(offsetof(RuleCache, slots) == kSlotsStart);
RuleCache g_rule_cache;
CacheState& g_state = g_rule_cache.state;
// The first page's sets, after the bookkeeping.
constexpr size_t kFirstPageSets = 64;
static_assert(kSlotsStart + kFirstPageSets * 32 <= 4096);
static_assert(sizeof(RuleCache) / 4096 <= 64, "one bit per page in CacheState::written_pages");
__attribute__((tls_model("initial-exec"))) thread_local uint64_t t_written_pages = 0;

inline CacheSlot& slot_at(char* cache, size_t offset) { return *reinterpret_cast<CacheSlot*>(cache + offset); }
inline char* cache_base() { return reinterpret_cast<char*>(g_rule_cache.slots); }
// The page of RuleCache a slot offset lies in.
inline unsigned page_of(size_t offset) { return static_cast<unsigned>((kSlotsStart + offset) / 4096); }

// The offset of the first of the two slots of a return address's home set,
// and of its set in the first page.
inline size_t set_of(uint64_t return_address) { return (return_address & (kSets - 1)) * 32; }
inline size_t first_page_set_of(uint64_t return_address) { return (return_address & (kFirstPageSets - 1)) * 32; }
// Whether `rule` is the rule cached for `return_address`. A return address
// is never 0, so an empty word never matches.
inline bool holds(uint64_t rule, uint64_t return_address) { return (rule & kAddressMask) == return_address; }
inline bool page_written(size_t offset) { return (t_written_pages >> page_of(offset)) & 1; }

// The offset of the slot holding `return_address`'s rule, or kNoSlot; `rule`
// gets the rule.
inline size_t find_in_set(char* cache, size_t set, uint64_t return_address, uint64_t* rule) {
  if (!page_written(set)) return kNoSlot;
  for (size_t offset = set; offset < set + 32; offset += 16) {
    *rule = slot_at(cache, offset).rule.load(std::memory_order_relaxed);
    if (holds(*rule, return_address)) return offset;
  }
  return kNoSlot;
}
inline size_t find_slot(char* cache, uint64_t return_address, uint64_t* rule) {
  if (return_address == 0) return kNoSlot;
  const size_t home = find_in_set(cache, set_of(return_address), return_address, rule);
  return home != kNoSlot ? home : find_in_set(cache, first_page_set_of(return_address), return_address, rule);
}

struct CompactRule {
  bool rbp_based;
  uint64_t cfa_offset;  // 0: the outermost frame
  uint64_t rbp_slot;    // 0, or k: rbp saved at CFA - 8k
};

inline uint64_t pack(uint64_t return_address, const CompactRule& r) {
  const uint64_t rule = (r.cfa_offset / 8) << kOffsetShift | (r.rbp_based || r.cfa_offset == 0 ? kRbpBased : 0) |
                        r.rbp_slot;
  return rule << kRuleShift | return_address;
}

inline CompactRule unpack(uint64_t word) {
  const uint64_t rule = word >> kRuleShift;
  return CompactRule{(rule & kRbpBased) != 0, (rule >> kOffsetShift) * 8, rule & kRbpSlotMask};
}

// Caches `rule` for `return_address`: in the way that has it or is empty,
// else in the way a process-wide counter picks (two return addresses that
// keep meeting in one set end up in different ways).
// `unloads`: the count read before the row was looked up.
void remember(uint64_t return_address, const CompactRule& rule, uint64_t unloads) {
  if (return_address == 0 || return_address > kAddressMask) return;  // not a user address: never looked up
  char* const cache = cache_base();
  const size_t home = set_of(return_address);
  const size_t first = page_written(home) ? home : first_page_set_of(return_address);
  size_t target = first + 16 * (g_state.evictions.fetch_add(1, std::memory_order_relaxed) & 1);
  if (page_written(first)) {
    for (size_t offset = first; offset < first + 32; offset += 16) {
      const uint64_t old = slot_at(cache, offset).rule.load(std::memory_order_relaxed);
      if (old == 0 || holds(old, return_address)) {
        target = offset;
        break;
      }
    }
  } else {
    target = first;  // a fresh page: both ways are empty
  }
  slot_at(cache, target).rule.store(pack(return_address, rule), std::memory_order_relaxed);
  // No prediction yet: point it at this slot (its page is written); the
  // check against the real return address tells whether that is right.
  slot_at(cache, target).next.store(target, std::memory_order_relaxed);
  const uint64_t page = uint64_t{1} << page_of(first);
  t_written_pages = g_state.written_pages.fetch_or(page, std::memory_order_relaxed) | page;
  // A library unloaded since the lookup began may be where this rule came
  // from. Either forget_rules_between sees the store above, or this sees its
  // count (both sides fence between their store and their load).
  std::atomic_thread_fence(std::memory_order_seq_cst);
  if (g_state.unloads.load(std::memory_order_relaxed) != unloads) {
    uint64_t packed = pack(return_address, rule);
    slot_at(cache, target).rule.compare_exchange_strong(packed, 0, std::memory_order_relaxed);
  }
}

// Whether a row fits the compact form; fills `out` if so.
bool compact(const UnwindRow& row, CompactRule* out) {
  if (row.signal_frame) return false;
  const RegisterRule* ra_rule = row.find(x::kRip);
  if (row.return_address_register == x::kRip && (!ra_rule || ra_rule->kind == RuleKind::kUndefined)) {
    *out = CompactRule{false, 0, 0};  // the outermost frame: nothing to step to
    return true;
  }
  if (row.cfa.kind != CfaKind::kRegisterOffset) return false;
  if (row.cfa.reg != x::kRsp && row.cfa.reg != x::kRbp) return false;
  if (row.cfa.offset < 8 || row.cfa.offset % 8 != 0 || static_cast<uint64_t>(row.cfa.offset) / 8 > kMaxOffsetWords)
    return false;
  if (row.return_address_register != x::kRip) return false;
  const RegisterRule* ra = row.find(x::kRip);
  if (!ra || ra->kind != RuleKind::kOffset || ra->value != -8) return false;
  if (row.find(x::kRsp)) return false;
  uint64_t k = 0;
  if (const RegisterRule* bp = row.find(x::kRbp)) {
    if (bp->kind == RuleKind::kOffset && bp->value < 0 && bp->value % 8 == 0 && -bp->value / 8 <= static_cast<int64_t>(kRbpSlotMask))
      k = static_cast<uint64_t>(-bp->value / 8);
    else if (bp->kind != RuleKind::kSameValue)
      return false;
  }
  out->rbp_based = row.cfa.reg == x::kRbp;
  // An rsp-based frame holds the words the step reads (CFA - 8, CFA - 8k):
  // the hot loop relies on it instead of checking every step.
  if (!out->rbp_based && 8 * (k > 1 ? k : 1) > static_cast<uint64_t>(row.cfa.offset)) return false;
  out->cfa_offset = static_cast<uint64_t>(row.cfa.offset);
  out->rbp_slot = k;
  return true;
}

// ---- memory that never faults ---------------------------------------------------
// Within one walk, a range of pages probed readable, grown as the walk reads
// (with pages probed ahead and gaps probed and joined). From walk to walk, a
// per-thread range is kept that holds only pages of the stack a walk ran on:
// from its first frame's page up to the last stack word read for a frame
// whose PC then had a rule (a corrupt frame's words elsewhere are not kept),
// never past a signal frame. A later walk trusts it only if it starts inside
// it: then it runs on that stack, whose pages stay mapped. Pages probed ahead
// or joined may belong to a neighbouring mapping, unmapped since; a walk on
// another stack (a coroutine's, a sigaltstack) starts afresh, so pages of a
// stack freed since are never read unchecked either.
struct ReadableRange {
  uint64_t lo = 0, hi = 0;
};
__attribute__((tls_model("initial-exec"))) thread_local ReadableRange t_readable;

constexpr uint64_t kPage = 4096;
inline uint64_t page_of_address(uint64_t address) { return address & ~(kPage - 1); }

inline bool inside(const ReadableRange& r, uint64_t address) { return address >= r.lo && address < r.hi; }

// What a walk leaves to the next: `before` (if the walk started inside it)
// or its first frame's page, up to the page of the highest word read for a
// frame whose PC had a rule (`confirmed_sp`, 0 if none); only pages this walk
// found readable (`probed`).
ReadableRange range_to_keep(const ReadableRange& before, uint64_t start_sp, uint64_t confirmed_sp,
                            const ReadableRange& probed) {
  const bool started_inside = inside(before, start_sp);
  ReadableRange kept = started_inside ? before : ReadableRange{page_of_address(start_sp), page_of_address(start_sp) + kPage};
  if (confirmed_sp > start_sp) {
    const uint64_t end = page_of_address(confirmed_sp - 1) + kPage;
    if (end > kept.hi) kept.hi = end;
  }
  if (kept.lo >= probed.lo && kept.hi <= probed.hi) return kept;
  return started_inside ? before : ReadableRange{};
}

bool pages_readable(uint64_t first, uint64_t end) { return readable_until(first, end) >= end; }

// Makes [address, address + n) part of the known-readable range, probing the
// pages that are not yet in it. The range stays one interval: a stack is
// contiguous, so the pages between a new read and the range are probed too
// (up to a bound; farther reads start a new range).
bool validate(uint64_t address, size_t n, ReadableRange& r) {
  if (n == 0 || address + n < address) return false;
  const uint64_t first = address & ~uint64_t{4095};
  const uint64_t end = ((address + n - 1) & ~uint64_t{4095}) + 4096;
  constexpr uint64_t kMaxGap = 1024 * 4096;
  const bool joinable = r.hi > r.lo && first <= r.hi + kMaxGap && end + kMaxGap >= r.lo;
  // Reads go up the stack: probing some pages past the one asked for, while
  // probing anyway, saves the probes the next reads would start (the pages
  // that turn out unreadable are simply left out).
  constexpr uint64_t kAhead = 4 * 4096;
  if (!joinable) {
    const uint64_t readable = readable_until(first, end + kAhead);
    if (readable < end) return false;
    r.lo = first;
    r.hi = readable;
    return true;
  }
  const uint64_t lo = first < r.lo ? first : r.lo;
  if (lo < r.lo && !pages_readable(lo, r.lo)) return false;
  if (end > r.hi) {
    const uint64_t readable = readable_until(r.hi, end + kAhead);
    if (readable < end) return false;
    r.hi = readable;
  }
  r.lo = lo;
  return true;
}

inline bool read_word(uint64_t address, uint64_t* out, ReadableRange& r) {
  if (!(address >= r.lo && address + 8 <= r.hi) && !validate(address, 8, r)) return false;
  std::memcpy(out, reinterpret_cast<const void*>(address), 8);
  return true;
}

class CheckedMemory final : public Memory {
 public:
  explicit CheckedMemory(ReadableRange& r) : r_(r) {}
  size_t read(uint64_t address, void* out, size_t size) override {
    if (size == 0) return 0;
    if (!(address >= r_.lo && address + size <= r_.hi && address + size > address) && !validate(address, size, r_))
      return 0;
    std::memcpy(out, reinterpret_cast<const void*>(address), size);
    return size;
  }

 private:
  ReadableRange& r_;
};

// The general executor needs a module map only for its own fallbacks, which
// the fast path does itself. A global, so no guard runs in a signal handler.
const ModuleMap g_no_modules;

// ---- the slow path -----------------------------------------------------------------
enum class Lookup { kCompact, kGeneral, kNone };

// Finds the row for `lookup_pc` (local/eh_frame_lookup) and whether the
// cache can hold it.
Lookup find_row(uint64_t lookup_pc, UnwindRow* row, CompactRule* rule) {
  if (!find_own_eh_frame_row(lookup_pc, row)) return Lookup::kNone;
  return compact(*row, rule) ? Lookup::kCompact : Lookup::kGeneral;
}

enum class HotExit { kEnd, kSlowStep };

// What the hot loop reads and advances: the frame still to be stepped, where
// its caller's PC goes, and the stack range known readable.
struct HotState {
  uint64_t pc, sp, fp;
  bool fp_known;
  void** out;
  void** end;
  uint64_t readable_lo, readable_hi;
  uint64_t confirmed_sp;  // out: the highest sp of a frame whose PC had a rule (0: none)
};

// The hot loop: return-address frames whose rule is cached and whose stack
// words lie in the range already known readable. A function of its own, over
// local copies, so that its few variables live in registers (the general
// path's locals would push them to the stack, putting a store and a load on
// every step). Returns kSlowStep with the frame still to be stepped when the
// checked path must take over.
__attribute__((noinline)) HotExit hot_walk(HotState& state) {
  uint64_t pc = state.pc, sp = state.sp, fp = state.fp;
  bool fp_known = state.fp_known;
  void** out = state.out;
  void** const end = state.end;
  const uint64_t hi = state.readable_hi;
  HotExit exit = HotExit::kSlowStep;
  char* const cache = cache_base();
  uint64_t word = 0;
  size_t current = find_slot(cache, pc, &word);
  // Every word read lies in [sp, hi): sp only grows, so one check covers the low end.
  if (current != kNoSlot && sp >= state.readable_lo) {
    // confirmed_sp is set where the loop ends, not on every step: the
    // frame being stepped has a cached rule; the one stepped to, not yet.
    for (;;) {
      // The predicted caller's slot and rule, loaded before the return address is known.
      const size_t predicted_slot = slot_at(cache, current).next.load(std::memory_order_relaxed);
      const uint64_t predicted_word = slot_at(cache, predicted_slot).rule.load(std::memory_order_relaxed);
      const uint64_t rule = word >> kRuleShift;
      uint64_t cfa;
      if ((rule & kSimpleMask) == 0) [[likely]] {
        // CFA = rsp + n, rbp unchanged. CFA > sp, and the return address is
        // inside the frame (compact() checked).
        cfa = sp + (rule >> kOffsetShift) * 8;
        if (cfa > hi) {  // let the checked path read
          state.confirmed_sp = sp;
          break;
        }
      } else {
        const uint64_t k = rule & kRbpSlotMask;
        const uint64_t cfa_offset = (rule >> kOffsetShift) * 8;
        if (rule & kRbpBased) {
          if (cfa_offset == 0 || !fp_known) {  // the outermost frame, or no rbp to use
            state.confirmed_sp = sp;
            exit = HotExit::kEnd;
            break;
          }
          cfa = fp + cfa_offset;
          if (cfa <= sp) {  // the stack grows down: the caller's frame is above
            state.confirmed_sp = sp;
            exit = HotExit::kEnd;
            break;
          }
          if (cfa > hi || sp + 8 * (k > 1 ? k : 1) > cfa) {  // let the checked path read
            state.confirmed_sp = sp;
            break;
          }
        } else {
          cfa = sp + cfa_offset;
          if (cfa > hi) {
            state.confirmed_sp = sp;
            break;
          }
        }
        if (k) {
          std::memcpy(&fp, reinterpret_cast<const void*>(cfa - 8 * k), 8);
          fp_known = true;
        }
      }
      uint64_t next_pc;
      std::memcpy(&next_pc, reinterpret_cast<const void*>(cfa - 8), 8);
      const uint64_t stepped_from = sp;
      sp = cfa;
      pc = next_pc;
      if (pc == 0) {
        state.confirmed_sp = stepped_from;
        exit = HotExit::kEnd;
        break;
      }
      *out++ = reinterpret_cast<void*>(pc);
      if (out == end) {
        state.confirmed_sp = stepped_from;
        exit = HotExit::kEnd;
        break;
      }
      size_t next_slot = predicted_slot;
      uint64_t next_word = predicted_word;
      if (!holds(predicted_word, pc)) [[unlikely]] {
        next_slot = find_slot(cache, pc, &next_word);
        if (next_slot == kNoSlot) {  // a miss: the checked path finds the row
          state.confirmed_sp = stepped_from;
          break;
        }
        // Addressed afresh: otherwise the compiler keeps the slot's address
        // in a register for this store, an extra instruction on every step.
        size_t learning = current;
        asm("" : "+r"(learning));
        slot_at(cache, learning).next.store(next_slot, std::memory_order_relaxed);
      }
      current = next_slot;
      word = next_word;
    }
  }
  state.pc = pc;
  state.sp = sp;
  state.fp = fp;
  state.fp_known = fp_known;
  state.out = out;
  return exit;
}

}  // namespace

namespace {

// Where a walk starts: rip, rsp and rbp, and every register (as a register
// file, or as the 17 words framewalk_x86_64_capture stores), needed only if
// the first frame's row is one the cache cannot hold.
struct WalkStart {
  uint64_t pc, sp, fp;
  bool fp_known;
  const arch::RegisterFile* registers;
  const uint64_t* captured;
};

// A frame's registers as far as the fast path tracks them.
struct FramePosition {
  uint64_t pc, sp, fp;
  bool fp_known;
  bool activation;  // the PC is exact (not a return address)
};

enum class SlowStep { kCompact, kStepped, kEnd };

// A frame whose rule is not cached: finds its row; a compact one is cached
// and returned in *rule (kCompact) for the caller to apply; any other is
// applied here by the full executor, `frame` becoming the caller (kStepped).
// A function of its own, so that its rows and register file take stack only
// while a miss is handled.
__attribute__((noinline)) SlowStep slow_step(const WalkStart& start, bool first_frame, FramePosition& frame,
                                             CompactRule* rule, Memory& memory, FastWalkStats* stats) {
  UnwindRow row;
  const uint64_t unloads = g_state.unloads.load(std::memory_order_seq_cst);
  Lookup how = find_row(frame.activation ? frame.pc : frame.pc - 1, &row, rule);
  if (how == Lookup::kNone) {
    // No CFI: the signal trampoline is recognised by its code.
    uint8_t code[sizeof x::kSigreturnCode];
    if (memory.read(frame.pc, code, sizeof code) != sizeof code ||
        std::memcmp(code, x::kSigreturnCode, sizeof code) != 0)
      return SlowStep::kEnd;
    row = x::signal_frame_row();
    how = Lookup::kGeneral;
  }
  if (how == Lookup::kCompact) {
    // Cached under return-address lookups only: an exact PC's row may
    // differ from the row at the same address looked up as pc - 1.
    if (!frame.activation) remember(frame.pc, *rule, unloads);
    return SlowStep::kCompact;
  }
  if (stats) ++stats->general_rows;
  arch::RegisterFile regs;
  // Registers beyond rip/rsp/rbp are known only in the first frame.
  if (first_frame && start.registers) regs = *start.registers;
  if (first_frame && start.captured) regs = x::from_capture(start.captured);
  regs.set(x::kRip, frame.pc);
  regs.set(x::kRsp, frame.sp);
  if (frame.fp_known) regs.set(x::kRbp, frame.fp); else regs.forget(x::kRbp);
  const Unwinder general(g_no_modules, memory, elf::kEmX86_64);
  auto caller = general.apply_row(row, regs);
  if (!caller || !caller->known(x::kRip) || !caller->known(x::kRsp)) return SlowStep::kEnd;
  const uint64_t old_sp = frame.sp;
  frame.pc = *caller->get(x::kRip);
  frame.sp = *caller->get(x::kRsp);
  frame.fp_known = caller->known(x::kRbp);
  frame.fp = caller->value_or(x::kRbp, 0);
  frame.activation = row.signal_frame;
  // Across a signal frame the interrupted stack may be elsewhere (sigaltstack).
  if (!row.signal_frame && frame.sp <= old_sp) return SlowStep::kEnd;
  return SlowStep::kStepped;
}

// Inlined into its callers, so that framewalk_backtrace nests no call
// deeper than hot_walk: each nested call overwrites a return-stack predictor
// entry above the caller's, which the caller's own returns reach once its
// stack is deeper than the predictor holds.
__attribute__((always_inline)) inline int walk(const WalkStart& start, bool first_is_return_address, int skip,
                                               void** buffer, int size, FastWalkStats* stats) {
  if (size <= 0) return 0;
  ReadableRange range = t_readable;
  if (!inside(range, start.sp)) {
    // Another stack, or deeper in this one: start from sp's own page, so
    // that the next walk from here finds sp inside the range.
    range = {};
    validate(start.sp, 8, range);
  }
  CheckedMemory memory(range);
  // For the range kept for the next walk: the highest sp of a frame whose PC
  // had a rule, on the stack the walk started on. Past a signal frame the
  // top bit is set (no user address has it), so that no sp is above it.
  constexpr uint64_t kLeftStartStack = uint64_t{1} << 63;
  uint64_t confirmed_sp = 0;
  auto confirm = [&](uint64_t frame_sp) {
    if (frame_sp > confirmed_sp) confirmed_sp = frame_sp;
  };

  uint64_t pc = start.pc, sp = start.sp, fp = start.fp;
  bool fp_known = start.fp_known;
  bool activation = !first_is_return_address;
  // Registers beyond rip/rsp/rbp are known only until the first step.
  bool first_frame = true;
  int stored = 0;
  int to_skip = skip;
  // Stores a frame's PC; false when the walk is over (PC 0, or the buffer full).
  auto record = [&](uint64_t v) {
    if (v == 0) return false;
    if (to_skip > 0) {
      --to_skip;
      return true;
    }
    buffer[stored++] = reinterpret_cast<void*>(v);
    return stored < size;
  };
  if (!record(pc)) goto done;
  for (;;) {
    if (!activation && to_skip == 0) {
      HotState hot{pc, sp, fp, fp_known, buffer + stored, buffer + size, range.lo, range.hi, 0};
      const HotExit exit = hot_walk(hot);
      confirm(hot.confirmed_sp);
      const int steps = static_cast<int>(hot.out - (buffer + stored));
      if (stats) stats->cache_hits += steps;
      if (hot.sp != sp) first_frame = false;  // it stepped: every step moves sp up
      pc = hot.pc;
      sp = hot.sp;
      fp = hot.fp;
      fp_known = hot.fp_known;
      stored += steps;
      if (exit == HotExit::kEnd) goto done;
    }

    // The checked path: a cache miss, a read outside the known range, or an
    // exact PC (the first frame, or one a signal interrupted).
    uint64_t entry = 0;
    bool cached = !activation && find_slot(cache_base(), pc, &entry) != kNoSlot;
    if (!cached && !activation) {
      // This thread's marks of written pages may be behind: refresh them and
      // look again. The page is written before it is read (a count), so that
      // if it is still untouched it faults once, not twice.
      g_state.checked_steps.fetch_add(1, std::memory_order_relaxed);
      t_written_pages = g_state.written_pages.load(std::memory_order_relaxed);
      cached = find_slot(cache_base(), pc, &entry) != kNoSlot;
    }
    uint64_t next_pc = 0, next_sp = 0, next_fp = fp;
    bool next_fp_known = fp_known;
    bool next_activation = false;
    CompactRule rule;
    bool have_rule = false;
    if (cached) {
      rule = unpack(entry);
      have_rule = true;
      confirm(sp);
      if (stats) ++stats->cache_hits;
    } else {
      if (stats) ++stats->cache_misses;
      g_state.slow_lookups.fetch_add(1, std::memory_order_relaxed);
      FramePosition next{pc, sp, fp, fp_known, activation};
      switch (slow_step(start, first_frame, next, &rule, memory, stats)) {
        case SlowStep::kEnd:
          goto done;
        case SlowStep::kCompact:
          have_rule = true;
          confirm(sp);
          break;
        case SlowStep::kStepped:
          confirm(sp);
          // A signal frame: the interrupted stack may be another one.
          if (next.activation) confirmed_sp |= kLeftStartStack;
          next_pc = next.pc;
          next_sp = next.sp;
          next_fp = next.fp;
          next_fp_known = next.fp_known;
          next_activation = next.activation;
          break;
      }
    }
    if (have_rule) {
      if (rule.cfa_offset == 0 || (rule.rbp_based && !fp_known)) goto done;
      const uint64_t cfa = (rule.rbp_based ? fp : sp) + rule.cfa_offset;
      if (cfa <= sp || !read_word(cfa - 8, &next_pc, range)) goto done;
      if (rule.rbp_slot) {
        if (!read_word(cfa - 8 * rule.rbp_slot, &next_fp, range)) goto done;
        next_fp_known = true;
      }
      next_sp = cfa;
    }
    pc = next_pc;
    sp = next_sp;
    fp = next_fp;
    fp_known = next_fp_known;
    activation = next_activation;
    first_frame = false;
    if (!record(pc)) goto done;
  }
done:
  t_readable = range_to_keep(t_readable, start.sp, confirmed_sp & ~kLeftStartStack, range);
  return stored;
}

}  // namespace

int fast_walk(const arch::RegisterFile& regs, bool first_is_return_address, int skip, void** buffer, int size,
              FastWalkStats* stats) {
  const WalkStart start{regs.value_or(x::kRip, 0), regs.value_or(x::kRsp, 0), regs.value_or(x::kRbp, 0),
                        regs.known(x::kRbp), &regs, nullptr};
  return walk(start, first_is_return_address, skip, buffer, size, stats);
}

}  // namespace framewalk::local

// Defined here rather than with the rest of the C API (backtrace_api.cpp), so
// that the walk is inlined into it.
extern "C" __attribute__((noinline)) int framewalk_backtrace(void** buffer, int size) {
  namespace x = framewalk::arch::x86_64;
  uint64_t raw[x::kCapturedRegisters];
  x::framewalk_x86_64_capture(raw);
  const framewalk::local::WalkStart start{raw[x::kRip], raw[x::kRsp], raw[x::kRbp], true, nullptr, raw};
  // The captured PC is inside this function: walk one frame out before storing.
  const int n = framewalk::local::walk(start, /*first_is_return_address=*/true, /*skip=*/1, buffer, size, nullptr);
  asm volatile("" ::: "memory");  // keep this a real frame (no tail call)
  return n;
}

namespace framewalk::local {

void flush_rule_cache() {
  for (auto& e : g_rule_cache.slots) {
    e.rule.store(0, std::memory_order_relaxed);
    e.next.store(0, std::memory_order_relaxed);
  }
  g_state.written_pages.store(~uint64_t{0}, std::memory_order_relaxed);
}

void forget_rules_between(uint64_t start, uint64_t end) {
  g_state.unloads.fetch_add(1, std::memory_order_relaxed);
  std::atomic_thread_fence(std::memory_order_seq_cst);
  const uint64_t written = g_state.written_pages.load(std::memory_order_relaxed);
  char* const cache = cache_base();
  for (size_t offset = 0; offset < kSlots * 16; offset += 16) {
    if (!((written >> page_of(offset)) & 1)) continue;  // never written: nothing to forget
    uint64_t word = slot_at(cache, offset).rule.load(std::memory_order_relaxed);
    const uint64_t return_address = word & kAddressMask;
    if (word != 0 && return_address > start && return_address <= end)
      slot_at(cache, offset).rule.compare_exchange_strong(word, 0, std::memory_order_relaxed);
  }
}

// Links dlclose_hook.cpp into every program that links this file.
[[gnu::used]] void (*const g_keep_dlclose_hook)() = keep_dlclose_hook;

void prefault_rule_cache() {
#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif
  if (madvise(&g_rule_cache, sizeof g_rule_cache, MADV_POPULATE_WRITE) != 0)
    for (size_t offset = 0; offset < sizeof g_rule_cache; offset += 4096)
      reinterpret_cast<std::atomic<uint64_t>*>(reinterpret_cast<char*>(&g_rule_cache) + offset)
          ->fetch_or(0, std::memory_order_relaxed);
  g_state.written_pages.store(~uint64_t{0}, std::memory_order_relaxed);
  t_written_pages = ~uint64_t{0};
}

uint64_t slow_lookup_count() { return g_state.slow_lookups.load(std::memory_order_relaxed); }

unsigned long per_thread_bytes() { return sizeof t_readable + sizeof t_written_pages; }

unsigned long rule_cache_bytes() { return sizeof g_rule_cache; }

}  // namespace framewalk::local

#include "local/fast_unwinder.hpp"
#include "local/registered_frames.hpp"

#include "framewalk/backtrace.h"

#include <atomic>
#include <cstddef>
#include <cstring>

#include "arch/capture.hpp"
#include "arch/machine.hpp"
#include "base/memory.hpp"
#include "base/own_memory.hpp"
#include "local/eh_frame_lookup.hpp"
#include "unwind/compact_rule.hpp"
#include "unwind/rule_cache.hpp"
#include "unwind/unwinder.hpp"

namespace framewalk::local {

namespace {

// A stack word of the host (8 bytes on x86-64 and AArch64, 4 on 32-bit ARM),
// read as it is and widened.
constexpr uint64_t kWord = sizeof(uintptr_t);
// The caller's stack pointer lies this far below the CFA (s390x: 160).
constexpr uint64_t kCfaAbove = arch::kHostCfaAboveStackPointer;
// How far above the CFA a compact rule's slots start (unwind/compact_rule:
// ppc64's LR lies in the caller's frame, at CFA + 16): the words a step
// reads lie below cfa + kAbove.
constexpr uint64_t kAbove = arch::kHostSavedAboveCfa;
// Whether cfa + kAbove is at most `hi`, the end of the range known readable
// (a CFA from a corrupt frame pointer may lie just below 2^64).
inline bool slots_below(uint64_t cfa, uint64_t hi) { return cfa <= hi && hi - cfa >= kAbove; }
inline uint64_t load_word(uint64_t address) {
  uintptr_t word;
  std::memcpy(&word, reinterpret_cast<const void*>(static_cast<uintptr_t>(address)), sizeof word);
  return word;
}
// Where the host has a second frame pointer (arch/capture.hpp), its DWARF
// number; unused elsewhere.
inline uint16_t host_fp2() { return arch::host_machine().second_frame_pointer(); }

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

class CheckedMemory final : public Memory {
 public:
  explicit CheckedMemory(ReadableRange& r) : r_(r) {}
  size_t read(uint64_t address, void* out, size_t size) override {
    if (size == 0) return 0;
    if (!(address >= r_.lo && address + size <= r_.hi && address + size > address) && !validate(address, size, r_))
      return 0;
    std::memcpy(out, reinterpret_cast<const void*>(static_cast<uintptr_t>(address)), size);
    return size;
  }

 private:
  ReadableRange& r_;
};

// The step loop takes rows and code ranges from the dynamic linker
// (CachedOwnTables), not from a module map: an empty one, a global, so that
// no guard runs in a signal handler.
const ModuleMap g_no_modules;

// How the hot loop ended: at the stack's declared end, with the buffer
// full, or with a frame for the checked path (everything else, including
// every end that needs the step loop's checks to be told).
enum class HotExit { kOutermost, kFull, kSlowStep };

// What the hot loop reads and advances: the frame still to be stepped, where
// its caller's PC goes, and the stack range known readable.
struct HotState {
  uint64_t pc, sp, fp;
  bool fp_known;
  uint64_t fp2;  // the second frame pointer (hosts with one: arch::kHostHasSecondFramePointer)
  bool fp2_known;
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
//
// Each step loads the predicted caller's slot and rule bits (RuleCache's
// `next`) while the return address is still coming off the stack, so that
// consecutive steps overlap and the only chain from step to step is one
// load; the prediction is then checked against the real return address, and
// corrected when wrong. The frame's rule bits, from the prediction that named
// it, tell a kSimple rule and its CFA offset at once (RuleCache::hint): its
// step reads no rule, and its CFA is known a load earlier than the table
// could give it. (Telling the frame record by the hint too made its steps
// slower, 2.23 against 1.94 ns a frame on this machine's x86-64: its rule is
// read from the table.)
__attribute__((noinline)) HotExit hot_walk(char* const cache, HotState& state) {
  // An unknown frame pointer is 0 here (one register fewer): a CFA based on
  // it is then at or below sp, which ends the walk, as an unknown one must.
  uint64_t sp = state.sp, fp = state.fp_known ? state.fp : 0;
  uint64_t fp2 = arch::kHostHasSecondFramePointer && state.fp2_known ? state.fp2 : 0;
  void** out = state.out;
  void** const end = state.end;
  const uint64_t hi = state.readable_hi;
  uint64_t first_rule = 0, first_word = 0;
  size_t current = RuleCache::of_slot_base(cache).find(state.pc, &first_rule, &first_word);
  // Every word read lies in [sp, hi): sp only grows, so one check covers the low end.
  if (current == RuleCache::kNoSlot || sp < state.readable_lo) return HotExit::kSlowStep;
  // The prediction that named the frame being stepped (checked against its
  // slot's word): the frame's rule bits.
  uint64_t taken = RuleCache::prediction(current, first_word);
  HotExit exit;
  uint64_t pc;  // where the loop ends: the PC of the frame still to be stepped
  // The PC of the frame being stepped is not kept in a register: it is the
  // last one stored, or the first frame's.
  auto unstepped_pc = [&] { return out != state.out ? reinterpret_cast<uintptr_t>(out[-1]) : state.pc; };
  // confirmed_sp is set where the loop ends, not on every step: the frame
  // being stepped has a cached rule; the one stepped to, not yet.
  for (;;) {
    const uint64_t prediction = RuleCache::slot_at(cache, current).next.load(std::memory_order_relaxed);
    const size_t predicted_slot = RuleCache::predicted_offset(prediction);
    const uint64_t predicted_word = RuleCache::slot_at(cache, predicted_slot).word.load(std::memory_order_relaxed);
    uint64_t cfa, next_pc;
    const uint64_t hint = RuleCache::hint(taken);
    // Rule bits 0 (index 0, never a rule's) are not a kSimple rule's
    // either: a `next` never written is 0, and a return address above 2^48
    // equal to its slot's whole word would pass the check; the table's 0
    // then sends it to the checked path (below), as it always did.
    if (hint - 1 < RuleCache::kFrameRecordHint - 1) [[likely]] {
      // A kSimple rule (its place in the table says so; it is not read):
      // CFA = sp + hint, the return address just below the slots' origin,
      // fp unchanged; inside the frame (compact_rule_from_row checked).
      cfa = sp + hint;
      if (!slots_below(cfa, hi)) goto slow_before_step;  // let the checked path read
      next_pc = load_word(cfa + kAbove - kWord);
    } else if (RuleCache::rule_at(cache, taken) == compact::frame_record_rule(kWord)) {
      // A frame record: the caller's fp and the return address are the record fp points at.
      // The stack grows down: the caller's frame is above. Otherwise (fp
      // unknown is 0) the step loop tells why the walk ends, as it does
      // for an fp past the readable range (fp + 16 could wrap).
      if (fp < sp || fp > hi) goto slow_before_step;
      cfa = fp + 2 * kWord;
      if (!slots_below(cfa, hi)) goto slow_before_step;
      next_pc = load_word(fp + kAbove + kWord);
      fp = load_word(fp + kAbove);
    } else {
      const uint64_t rule = RuleCache::rule_at(cache, taken);
      if ((rule & (compact::kFpBased | compact::kFp2Based | compact::kOutermost)) == 0) {
        // CFA = sp + n, with fp saved: the slots lie inside the frame
        // (compact_rule_from_row checked). A rule not yet visible (0) has
        // no return-address slot.
        const uint64_t ra_slot = compact::ra_slot(rule), fp_slot = compact::fp_slot(rule);
        cfa = sp + compact::cfa_offset(rule);
        if (!slots_below(cfa, hi) || ra_slot == 0) goto slow_before_step;  // let the checked path read
        const uint64_t top = cfa + kAbove;
        if constexpr (arch::kHostHasSecondFramePointer) {
          // Checked with the other slots too (compact_rule_from_row).
          if (const uint64_t fp2_slot = compact::fp2_slot(rule)) fp2 = load_word(top - kWord * fp2_slot);
        }
        if (fp_slot) fp = load_word(top - kWord * fp_slot);
        next_pc = load_word(top - kWord * ra_slot);
      } else {
        if (rule & compact::kOutermost) goto outermost_before_step;
        // CFA = fp + n (or the second frame pointer + n).
        uint64_t base = fp;
        if constexpr (arch::kHostHasSecondFramePointer) {
          if (rule & compact::kFp2Based) base = fp2;
        }
        cfa = base + compact::cfa_offset(rule);
        // The caller's sp not above: the step loop's checks end the walk.
        if (cfa <= sp + kCfaAbove) goto slow_before_step;
        const uint64_t ra_slot = compact::ra_slot(rule), fp_slot = compact::fp_slot(rule);
        uint64_t deepest = ra_slot > fp_slot ? ra_slot : fp_slot;
        uint64_t fp2_slot = 0;
        if constexpr (arch::kHostHasSecondFramePointer) {
          fp2_slot = compact::fp2_slot(rule);
          if (fp2_slot > deepest) deepest = fp2_slot;
        }
        // The words read must lie between sp and the slots' origin.
        const uint64_t top = cfa + kAbove;
        if (!slots_below(cfa, hi) || top - sp < kWord * deepest) goto slow_before_step;  // let the checked path read
        if constexpr (arch::kHostHasSecondFramePointer) {
          if (fp2_slot) fp2 = load_word(top - kWord * fp2_slot);
        }
        if (fp_slot) fp = load_word(top - kWord * fp_slot);
        next_pc = load_word(top - kWord * ra_slot);
      }
    }
    {
      const uint64_t stepped_from = sp;
      sp = cfa - kCfaAbove;  // above sp: an sp-based rule's offset is larger (compact_rule_from_row)
      pc = next_pc & arch::kHostCodeAddressMask;
      if (pc == 0) {  // a zero return address: the stack's end
        state.confirmed_sp = stepped_from;
        exit = HotExit::kOutermost;
        break;
      }
      *out++ = reinterpret_cast<void*>(static_cast<uintptr_t>(pc));
      if (out == end) {
        state.confirmed_sp = stepped_from;
        exit = HotExit::kFull;
        break;
      }
      size_t next_slot = predicted_slot;
      uint64_t next_taken = prediction;
      if (!RuleCache::predicts(prediction, predicted_slot, predicted_word, pc)) [[unlikely]] {
        uint64_t next_word = 0, next_rule;
        next_slot = RuleCache::of_slot_base(cache).find(pc, &next_rule, &next_word);
        if (next_slot == RuleCache::kNoSlot) {  // a miss: the checked path finds the row
          state.confirmed_sp = stepped_from;
          exit = HotExit::kSlowStep;
          break;
        }
        next_taken = RuleCache::prediction(next_slot, next_word);
        // Addressed afresh: otherwise the compiler keeps the slot's address
        // in a register for this store, an extra instruction on every step.
        size_t learning = current;
        asm("" : "+r"(learning));
        RuleCache::slot_at(cache, learning).next.store(next_taken, std::memory_order_relaxed);
      }
      current = next_slot;
      taken = next_taken;
      continue;
    }
  slow_before_step:
    exit = HotExit::kSlowStep;
    state.confirmed_sp = sp;
    pc = unstepped_pc();
    break;
  outermost_before_step:
    exit = HotExit::kOutermost;
    state.confirmed_sp = sp;
    pc = unstepped_pc();
    break;
  }
  state.pc = pc;
  state.sp = sp;
  // Known if it was, or if a step loaded it (a loaded 0 is as good as unknown).
  state.fp_known = state.fp_known || fp != 0;
  state.fp = fp;
  state.fp2_known = arch::kHostHasSecondFramePointer && (state.fp2_known || fp2 != 0);
  state.fp2 = fp2;
  state.out = out;
  return exit;
}

// The host's own tables behind the rule cache, for the walks of the step
// loop: a return address the cache holds gets its row from the cached rule
// (no lookup); any other is looked up (local/eh_frame_lookup) and, where the
// row is compact, cached.
class CachedOwnTables final : public RowFinder {
 public:
  CachedOwnTables(RuleCache& rules, FastWalkStats* stats) : rules_(rules), stats_(stats) {}

  bool find(const Frame& frame, UnwindRow* row) const override {
    const arch::Machine& host = arch::host_machine();
    uint64_t encoded = 0;
    // Cached under return-address lookups only: an exact PC's row may
    // differ from the row at the same address looked up as a return address.
    if (!frame.activation && rules_.find(frame.pc, &encoded) != RuleCache::kNoSlot) {
      row_from_compact_rule(host, decode(encoded), row);
      return true;
    }
    const uint64_t generation = rules_.generation();
    rules_.count_slow_lookup();
    if (!tables_.find(frame, row)) return false;
    CompactRule rule;
    if (!frame.activation && compact_rule_from_row(host, *row, &rule) && rules_.remember(frame.pc, rule, generation))
      return true;
    if (stats_) ++stats_->general_rows;
    return true;
  }
  FrameSource source() const override { return tables_.source(); }
  bool in_code(uint64_t address) const override { return tables_.in_code(address); }

 private:
  RuleCache& rules_;
  FastWalkStats* stats_;
  OwnUnwindTables tables_;
};

// Where a walk starts: the PC, SP and FP, and every register (as a register
// file, or as the words framewalk_capture stores), needed only if the first
// frame's row is one the cache cannot hold.
struct WalkStart {
  uint64_t pc, sp, fp;
  bool fp_known;
  uint64_t fp2;  // hosts with a second frame pointer
  bool fp2_known;
  const arch::RegisterFile* registers;
  const uint64_t* captured;
};

// For the range kept for the next walk: past a signal frame the top bit of
// the confirmed sp is set (no user address has it), so that no sp is above it.
constexpr uint64_t kLeftStartStack = uint64_t{1} << 63;

// A walk in progress: the frame still to be stepped, and what is stored.
struct WalkState {
  uint64_t pc, sp, fp;
  bool fp_known;
  uint64_t fp2;
  bool fp2_known;
  bool activation;   // the PC is exact (not a return address)
  bool first_frame;  // registers beyond the PC, SP and FP are known only until the first step
  int stored;
  int to_skip;
  // The highest sp of a frame whose PC had a rule, on the stack the walk
  // started on (kLeftStartStack once it left it).
  uint64_t confirmed_sp;
  // Why the walk ended, once it has.
  int end;
  uint64_t end_address;

  void confirm(uint64_t frame_sp) {
    if (frame_sp > confirmed_sp) confirmed_sp = frame_sp;
  }
  // Stores a frame's PC; false when the walk is over (PC 0, or the buffer full).
  bool record(uint64_t v, void** buffer, int size) {
    if (v == 0) return false;
    if (to_skip > 0) {
      --to_skip;
      return true;
    }
    buffer[stored++] = reinterpret_cast<void*>(static_cast<uintptr_t>(v));
    return stored < size;
  }
};

// The step loop's stop reasons as <framewalk/backtrace.h> tells them.
int public_end(StopReason reason) {
  switch (reason) {
    case StopReason::kOutermost:
    case StopReason::kCannotUnwind:
      return FRAMEWALK_BT_OUTERMOST;
    case StopReason::kMaxFrames:
    case StopReason::kCallback:
      return FRAMEWALK_BT_FULL;
    case StopReason::kBadMemory:
      return FRAMEWALK_BT_BAD_MEMORY;
    case StopReason::kCfaDidNotAdvance:
      return FRAMEWALK_BT_CFA_DID_NOT_ADVANCE;
    case StopReason::kBadUnwindInfo:
      return FRAMEWALK_BT_BAD_UNWIND_INFO;
    case StopReason::kNoUnwindInfo:
    case StopReason::kNoRegisters:
    case StopReason::kUnsupportedMachine:
      break;
  }
  return FRAMEWALK_BT_NO_UNWIND_INFO;
}

// Everything the cache does not hold (a miss, an exact PC, a row the cache
// cannot hold, a signal frame, code without unwind information) goes
// through the one step loop, with its checks and fallbacks, until it
// reaches a return address the cache holds (true: the hot loop resumes
// there) or the walk ends (false); the compact rows it finds on the way are
// cached. A function of its own, so that its register files, rows and
// closures take stack and registers only on this path.
__attribute__((noinline)) bool general_steps(const WalkStart& start, WalkState& w, ReadableRange& range,
                                             RuleCache& rules, void** buffer, int size, FastWalkStats* stats) {
  if (stats) ++stats->cache_misses;
  const arch::Machine& host = arch::host_machine();
  arch::RegisterFile regs;
  if (w.first_frame && start.registers) regs = *start.registers;
  if (w.first_frame && start.captured) regs = arch::from_host_capture(start.captured);
  regs.set(host.program_counter(), w.pc);
  regs.set(host.stack_pointer(), w.sp);
  if (w.fp_known) regs.set(host.frame_pointer(), w.fp); else regs.forget(host.frame_pointer());
  if constexpr (arch::kHostHasSecondFramePointer) {
    if (w.fp2_known) regs.set(host_fp2(), w.fp2); else regs.forget(host_fp2());
  }
  CheckedMemory memory(range);
  // Instructions (prologues, the call before a guessed return address) are
  // read through a range of their own, so that the stack's stays whole.
  ReadableRange code_range;
  CheckedMemory code(code_range);
  const CachedOwnTables tables(rules, stats);
  const Unwinder unwinder(g_no_modules, memory, code, host.key());
  UnwindOptions options;
  options.first_is_return_address = !w.activation;
  options.row_finder = &tables;
  options.max_frames = static_cast<size_t>(w.to_skip) + static_cast<size_t>(size - w.stored) + 1;
  bool resume = false, full = false, first_reported = true;
  uint64_t callee_sp = w.sp;
  const WalkResult result = unwinder.walk_in_place(regs, [&](const Frame& frame) {
    if (first_reported) {  // the frame this step starts from, already stored
      first_reported = false;
      return true;
    }
    // Frames whose callee had a row from the tables confirm the stack the
    // callee's step read; a signal frame may lead to another stack.
    if (frame.activation) w.confirmed_sp |= kLeftStartStack;
    else if (frame.source == tables.source()) w.confirm(callee_sp);
    callee_sp = frame.sp;
    if (!w.record(frame.pc, buffer, size)) {
      full = true;
      return false;
    }
    w.pc = frame.pc;
    w.sp = frame.sp;
    w.fp_known = frame.registers->known(host.frame_pointer());
    w.fp = frame.registers->value_or(host.frame_pointer(), 0);
    if constexpr (arch::kHostHasSecondFramePointer) {
      w.fp2_known = frame.registers->known(host_fp2());
      w.fp2 = frame.registers->value_or(host_fp2(), 0);
    }
    w.activation = frame.activation;
    w.first_frame = false;
    // Back to the hot loop where the cache holds this return address.
    if (!frame.activation && w.to_skip == 0 && rules.contains(frame.pc)) {
      resume = true;
      return false;
    }
    return true;
  }, options);
  if (resume && !full) return true;
  if (full) {
    w.end = FRAMEWALK_BT_FULL;
    w.end_address = 0;
  } else {
    w.end = public_end(result.reason);
    w.end_address = result.address;
  }
  return false;
}

// Inlined into its callers, so that framewalk_backtrace nests no call
// deeper than hot_walk: each nested call overwrites a return-stack predictor
// entry above the caller's, which the caller's own returns reach once its
// stack is deeper than the predictor holds.
__attribute__((always_inline)) inline int walk(const WalkStart& start, bool first_is_return_address, int skip,
                                               void** buffer, int size, FastWalkStats* stats,
                                               framewalk_backtrace_info* info) {
  if (size <= 0) {
    if (info) *info = {FRAMEWALK_BT_FULL, 0};
    return 0;
  }
  RuleCache& rules = own_rule_cache();
  ReadableRange range = t_readable;
  if (!inside(range, start.sp)) {
    // Another stack, or deeper in this one: start from sp's own page, so
    // that the next walk from here finds sp inside the range.
    range = {};
    validate(start.sp, 8, range);
  }
  WalkState w{start.pc, start.sp, start.fp, start.fp_known, start.fp2, start.fp2_known, !first_is_return_address,
              true,     0,        skip,     0,        FRAMEWALK_BT_FULL, 0};
  if (!w.record(w.pc, buffer, size)) {
    if (w.pc == 0) w.end = FRAMEWALK_BT_NO_UNWIND_INFO;  // no PC to start from
    goto done;
  }
  for (;;) {
    if (!w.activation && w.to_skip == 0) {
      HotState hot{w.pc,  w.sp,  w.fp, w.fp_known, w.fp2, w.fp2_known, buffer + w.stored, buffer + size,
                   range.lo, range.hi, 0};
      const HotExit exit = hot_walk(rules.slot_base(), hot);
      w.confirm(hot.confirmed_sp);
      const int steps = static_cast<int>(hot.out - (buffer + w.stored));
      if (stats) stats->cache_hits += steps;
      if (hot.sp != w.sp) w.first_frame = false;  // it stepped: every step moves sp up
      w.pc = hot.pc;
      w.sp = hot.sp;
      w.fp = hot.fp;
      w.fp_known = hot.fp_known;
      w.fp2 = hot.fp2;
      w.fp2_known = hot.fp2_known;
      w.stored += steps;
      if (exit == HotExit::kFull) goto done;  // w.end is already FRAMEWALK_BT_FULL
      if (exit == HotExit::kOutermost) {
        w.end = FRAMEWALK_BT_OUTERMOST;
        w.end_address = w.pc;
        goto done;
      }
    }
    // Everything else, a cached rule whose words lie outside the known
    // range included, is the step loop's: the one place that applies rows
    // (a cached rule's too, as row_from_compact_rule makes it) with their
    // checks, and tells why a walk ends.
    {
      WalkState slow = w;  // a copy, so that w's address is never taken
      const bool resume = general_steps(start, slow, range, rules, buffer, size, stats);
      w = slow;
      if (!resume) goto done;
    }
  }
done:
  t_readable = range_to_keep(t_readable, start.sp, w.confirmed_sp & ~kLeftStartStack, range);
  if (info) *info = {w.end, w.end_address};
  return w.stored;
}

}  // namespace

int fast_walk(const arch::RegisterFile& regs, bool first_is_return_address, int skip, void** buffer, int size,
              FastWalkStats* stats, framewalk_backtrace_info* info) {
  const arch::Machine& host = arch::host_machine();
  uint64_t fp2 = 0;
  bool fp2_known = false;
  if constexpr (arch::kHostHasSecondFramePointer) {
    fp2 = regs.value_or(host_fp2(), 0);
    fp2_known = regs.known(host_fp2());
  }
  const WalkStart start{regs.value_or(host.program_counter(), 0),
                        regs.value_or(host.stack_pointer(), 0),
                        regs.value_or(host.frame_pointer(), 0),
                        regs.known(host.frame_pointer()),
                        fp2,
                        fp2_known,
                        &regs,
                        nullptr};
  return walk(start, first_is_return_address, skip, buffer, size, stats, info);
}

}  // namespace framewalk::local

// Defined here rather than with the rest of the C API (backtrace_api.cpp), so
// that the walk is inlined into them. Each captures its own registers (a
// shared helper would be one more frame to step out of).
#define FRAMEWALK_CAPTURED_START(words)                                                                   \
  const framewalk::local::WalkStart start {                                                              \
    words[framewalk::arch::captured_word(host.program_counter())], words[host.stack_pointer()],          \
        words[host.frame_pointer()], true,                                                                \
        framewalk::arch::kHostHasSecondFramePointer ? words[host.second_frame_pointer()] : 0,             \
        framewalk::arch::kHostHasSecondFramePointer, nullptr, words                                       \
  }

extern "C" __attribute__((noinline)) int framewalk_backtrace(void** buffer, int size) {
  uint64_t words[framewalk::arch::kCaptureWords];
  framewalk::arch::framewalk_capture(words);
  const framewalk::arch::Machine& host = framewalk::arch::host_machine();
  FRAMEWALK_CAPTURED_START(words);
  // The captured PC is inside this function: walk one frame out before storing.
  const int n =
      framewalk::local::walk(start, /*first_is_return_address=*/true, /*skip=*/1, buffer, size, nullptr, nullptr);
  asm volatile("" ::: "memory");  // keep this a real frame (no tail call)
  return n;
}

extern "C" __attribute__((noinline)) int framewalk_backtrace_status(void** buffer, int size,
                                                                    framewalk_backtrace_info* info) {
  uint64_t words[framewalk::arch::kCaptureWords];
  framewalk::arch::framewalk_capture(words);
  const framewalk::arch::Machine& host = framewalk::arch::host_machine();
  FRAMEWALK_CAPTURED_START(words);
  framewalk_backtrace_info ignored;
  const int n = framewalk::local::walk(start, /*first_is_return_address=*/true, /*skip=*/1, buffer, size, nullptr,
                                       info ? info : &ignored);
  asm volatile("" ::: "memory");
  return n;
}

#undef FRAMEWALK_CAPTURED_START

namespace framewalk::local {

void flush_rule_cache() { own_rule_cache().flush(); }

void forget_rules_between(uint64_t start, uint64_t end) { own_rule_cache().forget_between(start, end); }

// Links dlclose_hook.cpp into every program that links this file.
[[gnu::used]] void (*const g_keep_dlclose_hook)() = keep_dlclose_hook;
[[gnu::used]] void (*const g_keep_register_frame_hooks)() = keep_register_frame_hooks;

void prefault_rule_cache() { own_rule_cache().prefault(); }

uint64_t slow_lookup_count() { return own_rule_cache().slow_lookups(); }

unsigned long per_thread_bytes() { return sizeof t_readable; }

unsigned long rule_cache_bytes() { return own_rule_cache_bytes(); }

}  // namespace framewalk::local

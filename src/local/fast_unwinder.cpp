#include "local/fast_unwinder.hpp"

#include <dlfcn.h>
#include <link.h>
#include <sys/uio.h>
#include <unistd.h>

#include <atomic>
#include <cstring>

#include "arch/x86_64/frames.hpp"
#include "arch/x86_64/registers.hpp"
#include "dwarf/cfa_program.hpp"
#include "dwarf/eh_frame_hdr.hpp"
#include "dwarf/expression.hpp"
#include "base/memory.hpp"
#include "unwind/unwinder.hpp"

namespace framewalk::local {

namespace {

namespace x = arch::x86_64;

// ---- the rule cache ----------------------------------------------------------
// Direct-mapped by the low bits of the lookup PC. One word per entry: the
// rest of the PC (bits 31-63; user addresses fit in 47 bits) and the rule:
// bit 0 the CFA base (0 rsp, 1 rbp), bits 1-24 the CFA offset / 8 (0 marks
// the outermost frame: return address undefined), bits 25-30 k where rbp is
// saved at CFA - 8k (0: rbp unchanged). Zero is empty. One word, so threads
// share the cache with relaxed atomics and no lock.
constexpr unsigned kCacheBits = 14;
constexpr size_t kCacheEntries = size_t{1} << kCacheBits;

std::atomic<uint64_t> g_cache[kCacheEntries];

inline size_t slot(uint64_t pc) { return static_cast<size_t>(pc & (kCacheEntries - 1)); }
inline uint64_t tag(uint64_t pc) { return pc >> kCacheBits; }

struct CompactRule {
  bool rbp_based;
  uint64_t cfa_offset;  // 0: the outermost frame
  uint64_t rbp_slot;    // 0, or k: rbp saved at CFA - 8k
};

inline uint64_t pack(uint64_t pc, const CompactRule& r) {
  return (tag(pc) << 31) | uint64_t{r.rbp_based} | ((r.cfa_offset / 8) << 1) | (r.rbp_slot << 25);
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
  if (row.cfa.offset < 8 || row.cfa.offset % 8 != 0 || row.cfa.offset / 8 >= (1 << 24)) return false;
  if (row.return_address_register != x::kRip) return false;
  const RegisterRule* ra = row.find(x::kRip);
  if (!ra || ra->kind != RuleKind::kOffset || ra->value != -8) return false;
  if (row.find(x::kRsp)) return false;
  uint64_t k = 0;
  if (const RegisterRule* bp = row.find(x::kRbp)) {
    if (bp->kind == RuleKind::kOffset && bp->value < 0 && bp->value % 8 == 0 && -bp->value / 8 <= 63)
      k = static_cast<uint64_t>(-bp->value / 8);
    else if (bp->kind != RuleKind::kSameValue)
      return false;
  }
  out->rbp_based = row.cfa.reg == x::kRbp;
  out->cfa_offset = static_cast<uint64_t>(row.cfa.offset);
  out->rbp_slot = k;
  return true;
}

// ---- memory that never faults ---------------------------------------------------
// A per-thread range of pages known readable. Pages at or above a walk's
// starting stack pointer belong to live frames and stay mapped.
struct ReadableRange {
  uint64_t lo = 0, hi = 0;
};
__attribute__((tls_model("initial-exec"))) thread_local ReadableRange t_readable;

// Whether every page in [first, end) is readable: one process_vm_readv
// reading a byte of each page (batched, so a stack range costs one call).
bool pages_readable(uint64_t first, uint64_t end) {
  constexpr size_t kBatch = 64;
  char sink[kBatch];
  iovec local[kBatch];
  iovec remote[kBatch];
  while (first < end) {
    size_t n = 0;
    for (; n < kBatch && first + n * 4096 < end; ++n) {
      local[n] = iovec{sink + n, 1};
      remote[n] = iovec{reinterpret_cast<void*>(first + n * 4096), 1};
    }
    if (process_vm_readv(getpid(), local, n, remote, n, 0) != static_cast<ssize_t>(n)) return false;
    first += n * 4096;
  }
  return true;
}

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
  if (!joinable) {
    if (!pages_readable(first, end)) return false;
    r.lo = first;
    r.hi = end;
    return true;
  }
  const uint64_t lo = first < r.lo ? first : r.lo;
  const uint64_t hi = end > r.hi ? end : r.hi;
  if (lo < r.lo && !pages_readable(lo, r.lo)) return false;
  if (hi > r.hi && !pages_readable(r.hi, hi)) return false;
  r.lo = lo;
  r.hi = hi;
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

// Finds the row for `lookup_pc` through _dl_find_object and .eh_frame_hdr.
Lookup find_row(uint64_t lookup_pc, UnwindRow* row, CompactRule* rule) {
  dl_find_object dlfo;
  if (_dl_find_object(reinterpret_cast<void*>(lookup_pc), &dlfo) != 0 || !dlfo.dlfo_eh_frame) return Lookup::kNone;
  const auto map_end = reinterpret_cast<uint64_t>(dlfo.dlfo_map_end);
  const auto hdr_address = reinterpret_cast<uint64_t>(dlfo.dlfo_eh_frame);
  if (hdr_address >= map_end) return Lookup::kNone;
  const Bytes hdr_bytes(reinterpret_cast<const uint8_t*>(hdr_address), map_end - hdr_address);
  auto hdr = dwarf::EhFrameHdr::parse(hdr_bytes, Endian::kLittle, 8, hdr_address);
  if (!hdr) return Lookup::kNone;
  auto hit = hdr->lookup(lookup_pc);
  if (!hit) return Lookup::kNone;
  const uint64_t eh_frame = hdr->eh_frame_address();
  if (eh_frame >= map_end || hit->fde_address < eh_frame || hit->fde_address >= map_end) return Lookup::kNone;
  dwarf::CfiSectionInfo info;
  info.kind = dwarf::CfiKind::kEhFrame;
  info.address_size = 8;
  info.bases.section_address = eh_frame;
  const dwarf::CfiSection section(Bytes(reinterpret_cast<const uint8_t*>(eh_frame), map_end - eh_frame), info);
  dwarf::Cie cie;
  auto fde = section.fde_at_uncached(hit->fde_address - eh_frame, &cie);
  if (!fde || !fde->contains(lookup_pc)) return Lookup::kNone;
  auto found = dwarf::row_for_pc(section, cie, *fde, lookup_pc);
  if (!found) return Lookup::kNone;
  *row = *found;
  return compact(*row, rule) ? Lookup::kCompact : Lookup::kGeneral;
}

}  // namespace

int fast_walk(const arch::RegisterFile& start, bool first_is_return_address, int skip, void** buffer, int size,
              FastWalkStats* stats) {
  if (size <= 0) return 0;
  ReadableRange range = t_readable;
  CheckedMemory memory(range);
  const Unwinder general(g_no_modules, memory, elf::kEmX86_64);

  uint64_t pc = start.value_or(x::kRip, 0), sp = start.value_or(x::kRsp, 0), fp = start.value_or(x::kRbp, 0);
  bool fp_known = start.known(x::kRbp);
  bool activation = !first_is_return_address;
  // Registers beyond rip/rsp/rbp are known only until the first step.
  const arch::RegisterFile* full = &start;
  int stored = 0;
  int visited = 0;
  const int limit = size + skip;
  // Stores a frame's PC; false when the buffer is full.
  auto record = [&](uint64_t v) {
    if (visited++ >= skip) {
      buffer[stored++] = reinterpret_cast<void*>(v);
      if (stored >= size) return false;
    }
    return visited < limit;
  };
  if (pc == 0 || !record(pc)) goto done;
  for (;;) {
    // The hot loop: return-address frames whose rule is cached and whose
    // stack words lie in the range already known readable.
    while (!activation) {
      const uint64_t lookup = pc - 1;
      const uint64_t entry = g_cache[slot(lookup)].load(std::memory_order_relaxed);
      if (entry == 0 || (entry >> 31) != tag(lookup)) break;
      const uint64_t cfa_offset = ((entry >> 1) & ((uint64_t{1} << 24) - 1)) * 8;
      if (cfa_offset == 0) goto done;  // the outermost frame
      if ((entry & 1) && !fp_known) goto done;
      const uint64_t cfa = ((entry & 1) ? fp : sp) + cfa_offset;
      const uint64_t k = (entry >> 25) & 63;
      const uint64_t lowest = cfa - 8 * (k > 1 ? k : 1);
      if (lowest < range.lo || cfa > range.hi || lowest > cfa) break;  // let the checked path read
      if (cfa <= sp) goto done;  // the stack grows down: the caller's frame is above
      if (stats) ++stats->cache_hits;
      uint64_t next_pc;
      std::memcpy(&next_pc, reinterpret_cast<const void*>(cfa - 8), 8);
      if (k) {
        std::memcpy(&fp, reinterpret_cast<const void*>(cfa - 8 * k), 8);
        fp_known = true;
      }
      sp = cfa;
      pc = next_pc;
      full = nullptr;
      if (pc == 0 || !record(pc)) goto done;
    }

    // The checked path: a cache miss, a read outside the known range, or an
    // exact PC (the first frame, or one a signal interrupted).
    const uint64_t lookup = activation ? pc : pc - 1;
    const uint64_t entry = g_cache[slot(lookup)].load(std::memory_order_relaxed);
    uint64_t next_pc, next_sp, next_fp = fp;
    bool next_fp_known = fp_known;
    bool next_activation = false;
    CompactRule rule;
    bool have_rule = false;
    if (entry != 0 && (entry >> 31) == tag(lookup)) {
      rule = CompactRule{(entry & 1) != 0, ((entry >> 1) & ((uint64_t{1} << 24) - 1)) * 8, (entry >> 25) & 63};
      have_rule = true;
      if (stats) ++stats->cache_hits;
    } else {
      if (stats) ++stats->cache_misses;
      UnwindRow row;
      Lookup how = find_row(lookup, &row, &rule);
      if (how == Lookup::kNone) {
        // No CFI: the signal trampoline is recognised by its code.
        uint8_t code[sizeof x::kSigreturnCode];
        if (memory.read(pc, code, sizeof code) != sizeof code ||
            std::memcmp(code, x::kSigreturnCode, sizeof code) != 0)
          goto done;
        row = x::signal_frame_row();
        how = Lookup::kGeneral;
      }
      if (how == Lookup::kCompact) {
        g_cache[slot(lookup)].store(pack(lookup, rule), std::memory_order_relaxed);
        have_rule = true;
      } else {
        if (stats) ++stats->general_rows;
        arch::RegisterFile regs;
        if (full) regs = *full;
        regs.set(x::kRip, pc);
        regs.set(x::kRsp, sp);
        if (fp_known) regs.set(x::kRbp, fp); else regs.forget(x::kRbp);
        auto caller = general.apply_row(row, regs);
        if (!caller || !caller->known(x::kRip) || !caller->known(x::kRsp)) goto done;
        next_pc = *caller->get(x::kRip);
        next_sp = *caller->get(x::kRsp);
        next_fp_known = caller->known(x::kRbp);
        next_fp = caller->value_or(x::kRbp, 0);
        next_activation = row.signal_frame;
        // Across a signal frame the interrupted stack may be elsewhere (sigaltstack).
        if (!row.signal_frame && next_sp <= sp) goto done;
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
    full = nullptr;
    if (pc == 0 || !record(pc)) goto done;
  }
done:
  t_readable = range;
  return stored;
}

void flush_rule_cache() {
  for (auto& e : g_cache) e.store(0, std::memory_order_relaxed);
}

unsigned long rule_cache_bytes() { return sizeof g_cache; }

}  // namespace framewalk::local

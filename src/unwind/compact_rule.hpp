// The rows most frames of compiled code have, in one word: the CFA is the
// stack pointer or the frame pointer plus an offset, the return address is
// saved a few words below the CFA, and the frame pointer is saved below it
// too or left alone. Machine-neutral: the codec reads the row through the
// machine's register roles (arch::Machine), so that x86-64's "CFA = rsp + 8,
// RA at CFA - 8" and AArch64's "CFA = x29 + 32, x29 at CFA - 32, x30 at
// CFA - 24" are the same kind of rule. A machine with a second frame
// pointer (arch::Machine::second_frame_pointer: 32-bit ARM's Thumb r7
// beside ARM state's r11) has both tracked: either may be the CFA's base,
// either may be saved (EHABI's "CFA = r7 + 8, r7 at CFA - 8, lr at
// CFA - 4"). Slots are counted in words down from the slot origin: the CFA,
// but where a machine's frames save words above it
// (arch::Machine::saved_above_cfa: ppc64's LR, at CFA + 16, in the caller's
// frame) the end of those, so that ppc64's "CFA = r1 + n, LR at CFA + 16"
// is x86-64's "RA just below the CFA". The rule caches (unwind/rule_cache)
// hold these words; the hot loops that apply them read the fields directly.
#pragma once

#include <cstdint>

#include "arch/machine.hpp"
#include "model/unwind_row.hpp"

namespace framewalk {

struct CompactRule {
  uint32_t cfa_offset = 0;  // bytes above the base register
  uint32_t ra_slot = 0;     // the return address is at the slot origin - ra_slot words (1 or more)
  uint32_t fp_slot = 0;     // the frame pointer is at the slot origin - fp_slot words, 0: unchanged
  bool fp_based = false;    // the CFA is the frame pointer plus the offset (else the stack pointer)
  bool outermost = false;   // the stack ends here
  // The second frame pointer (machines that have one): saved at the slot
  // origin - fp2_slot words (0: unchanged), or the CFA's base.
  uint32_t fp2_slot = 0;
  bool fp2_based = false;
  bool operator==(const CompactRule&) const = default;
};

// The encoded word, never 0 (a valid rule has a return-address slot or is
// the outermost one):
//   bits 0-20   cfa_offset (up to kMaxCompactCfaOffset)
//   bits 21-37  ra_slot
//   bits 38-54  fp_slot (an AArch64 frame record sits at the bottom of a
//               large frame: its slot is the frame's size in words)
//   bit  55     fp_based
//   bit  56     outermost
//   bits 57-62  fp2_slot (the second frame pointer is pushed with the
//               return address: a few words below the CFA)
//   bit  63     fp2_based
// `word >> 21 == 1` is the common case the hot loops test first: CFA =
// sp + n, the return address just below the slot origin, the frame pointer
// unchanged.
namespace compact {
inline constexpr unsigned kOffsetBits = 21, kSlotBits = 17;
inline constexpr uint64_t kSlotMask = (uint64_t{1} << kSlotBits) - 1;
inline constexpr uint64_t kFpBased = uint64_t{1} << 55;
inline constexpr uint64_t kOutermost = uint64_t{1} << 56;
inline constexpr unsigned kFp2SlotShift = 57, kFp2SlotBits = 6;
inline constexpr uint64_t kFp2SlotMask = (uint64_t{1} << kFp2SlotBits) - 1;
inline constexpr uint64_t kFp2Based = uint64_t{1} << 63;
inline constexpr uint64_t kSimple = 1;  // word >> kOffsetBits for "CFA = sp + n, RA at CFA - 1 word"
// The whole word of a frame record's rule, the other case tested first:
// CFA = fp + 2 words, fp saved at CFA - 2 words, RA at CFA - 1 word
// (x86-64's rbp frames, AArch64's x29/x30 pair).
inline constexpr uint64_t frame_record_rule(unsigned word_size) {
  return uint64_t{2} * word_size | uint64_t{1} << kOffsetBits | uint64_t{2} << (kOffsetBits + kSlotBits) | kFpBased;
}
inline uint32_t cfa_offset(uint64_t word) { return static_cast<uint32_t>(word & ((uint64_t{1} << kOffsetBits) - 1)); }
inline uint64_t ra_slot(uint64_t word) { return (word >> kOffsetBits) & kSlotMask; }
inline uint64_t fp_slot(uint64_t word) { return (word >> (kOffsetBits + kSlotBits)) & kSlotMask; }
inline uint64_t fp2_slot(uint64_t word) { return (word >> kFp2SlotShift) & kFp2SlotMask; }
}  // namespace compact

uint64_t encode(const CompactRule& rule);
CompactRule decode(uint64_t word);

// The largest CFA offset a compact rule holds (1 MiB; slots of 8-byte
// words below it then fit in 17 bits): a larger frame is
// rare, its step reads pages the walk has to probe anyway, and a CFA that
// far up is more often a corrupt frame pointer than a frame; the step loop
// takes it, with its checks.
inline constexpr uint32_t kMaxCompactCfaOffset = uint32_t{1} << 20;

// Whether `row` is one a compact rule expresses for a frame stepped through
// its return address (never an activation: its row may differ at the same
// address, and a link-register leaf has no saved return address); fills
// `out` if so. Signal frames, expressions, registers other than the stack
// pointer and the frame pointers as the CFA's base, and rules that restore
// the stack pointer are not.
bool compact_rule_from_row(const arch::Machine& machine, const UnwindRow& row, CompactRule* out);

// The row a compact rule stands for (compact_rule_from_row's inverse, up to
// the rules for registers the compact form does not track), so that a walk
// through the full step loop can use a cached rule too.
void row_from_compact_rule(const arch::Machine& machine, const CompactRule& rule, UnwindRow* row);

}  // namespace framewalk

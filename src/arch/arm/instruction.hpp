// The one 32-bit ARM instruction decoder: what the call check and the
// prologue analysis need, in both instruction sets (ARM, and Thumb with its
// 32-bit Thumb-2 forms), nothing more. Little-endian code (armhf): ARM
// instructions are words, Thumb instructions one or two halfwords.
#pragma once

#include <cstdint>
#include <optional>

#include "base/byte_reader.hpp"

namespace framewalk::arch::arm {

// Whether `word`, the ARM instruction just before a return address, is a
// call: BL <imm> (condition not 0xf), BLX <imm> (0xfa/0xfb), BLX <reg>.
bool is_arm_call(uint32_t word);
// Whether the Thumb code just before a return address ends with a call:
// `before2` is the halfword at ra-2 (16-bit BLX <reg>), `before4` the pair
// at ra-4, ra-2 (32-bit BL <imm> / BLX <imm>).
bool is_thumb_call(uint16_t first_of_before4, uint16_t before2);

// What a prologue instruction does to the stack and the frame pointer.
enum class PrologueOp : uint8_t {
  kPush,             // stores `registers` (bit n = rn) below sp, lowest at the lowest address
  kVfpPush,          // vpush (vstmdb sp!): `vfp_count` registers of `vfp_bytes` from DWARF `vfp_first` up
  kSubSp,            // sp -= amount
  kSetFramePointer,  // frame_pointer = sp + amount, or ip - amount (`from_ip`)
  kCopySpToIp,       // ip = sp + amount (ARM `mov ip, sp`, `-mapcs-frame`)
  // An instruction compilers schedule among the pushes (loads, stores,
  // moves, arithmetic, mrc, VFP arithmetic and moves) that writes neither
  // sp, pc nor the frame pointer (r7 in Thumb, r11 in ARM code) and does not
  // branch; the analysis steps over it. `clobbers_ip` when it may write ip.
  kNeutral,
  // A conditional branch (b<c>, cbz, cbnz) to `branch_offset` bytes from
  // itself: shrink-wrapping's test for an early exit before the prologue.
  kConditionalBranch,
  kOther,            // anything else: the prologue has ended
};
struct PrologueInstruction {
  PrologueOp op = PrologueOp::kOther;
  uint8_t size = 0;          // bytes
  uint16_t registers = 0;    // kPush
  uint32_t amount = 0;       // kSubSp, kSetFramePointer, kCopySpToIp; kVfpPush: the bytes stored
  uint8_t frame_pointer = 0; // kSetFramePointer: 7 (Thumb) or 11 (ARM)
  bool from_ip = false;      // kSetFramePointer: `sub fp, ip, #amount`
  bool clobbers_ip = false;  // kNeutral
  uint16_t vfp_first = 0;    // kVfpPush: DWARF 256 + n for dn, 64 + n for sn
  uint8_t vfp_count = 0;
  uint8_t vfp_bytes = 0;     // 8 (D registers) or 4 (S registers)
  int32_t branch_offset = 0; // kConditionalBranch: the target's offset from the branch
};

// Immediates: an ARM data-processing one (imm8 rotated right by twice the
// rotation field), a 32-bit Thumb one's i:imm3:imm8 field (plain, as addw
// and subw use it) and Thumb-2's modified immediate of that field.
uint32_t arm_immediate(uint32_t word);
uint32_t thumb_imm12(uint16_t h1, uint16_t h2);
uint32_t thumb_modified_immediate(uint16_t h1, uint16_t h2);

// A vpush/vpop (vstmdb sp! / vldmia sp!) from its fields: D:Vd (or Vd:D for
// S registers), the 64-bit form's bit, imm8. False for a register range the
// machine does not have.
bool vfp_transfer(unsigned d_bit, unsigned vd, bool doubles, unsigned imm8, PrologueInstruction* in);

// The ARM instruction at the start of `code`: `push {...}` (stmdb sp!),
// `str rN, [sp, #-4]!`, `vpush {...}`, `sub sp, sp, #imm`, `add fp, sp,
// #imm` (and `mov fp, sp`), `-mapcs-frame`'s `mov ip, sp` and `sub fp, ip,
// #imm`; kNeutral for unconditional data processing, single loads and
// stores, mrc and VFP data processing and vldr/vstr whose destination (and
// written-back base) is not r11, sp or pc; kConditionalBranch for b<c>;
// kOther for any other; nullopt when fewer than 4 bytes remain.
std::optional<PrologueInstruction> decode_arm_prologue(Bytes code);
// The Thumb instruction at the start of `code`: `push {...}` (16-bit and
// push.w), `vpush {...}`, `sub sp, #imm` (16-bit, `sub.w sp, sp, #imm`,
// `subw sp, sp, #imm`), `add r7, sp, #imm`, `mov r7, sp`; kNeutral for the
// forms whose destination it knows (16-bit data processing, loads and
// stores, adr, nop; 32-bit data processing, single loads and stores,
// multiplies, mrc, VFP arithmetic and moves, vldr/vstr) when that is not sp, pc or r7 and the base is
// not written back into one of those, and for the compares and tests
// (cmp.w, tst.w...); kConditionalBranch for b<c> (16- and 32-bit), cbz
// and cbnz; kOther for any other (with its size: 2, or 4 for a 32-bit
// encoding); nullopt when the instruction is cut off.
std::optional<PrologueInstruction> decode_thumb_prologue(Bytes code);

// Whether the instruction at the start of `code` returns through lr
// without touching the stack: `bx lr` (ARM or Thumb).
bool is_arm_return(Bytes code);
bool is_thumb_return(Bytes code);

// A little-endian halfword / word at `at`; the caller has checked the size.
inline uint16_t halfword_at(Bytes code, size_t at) {
  return static_cast<uint16_t>(code[at] | code[at + 1] << 8);
}
inline uint32_t word_at(Bytes code, size_t at) {
  return uint32_t{code[at]} | uint32_t{code[at + 1]} << 8 | uint32_t{code[at + 2]} << 16 |
         uint32_t{code[at + 3]} << 24;
}

}  // namespace framewalk::arch::arm

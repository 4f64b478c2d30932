#include "arch/arm/instruction.hpp"

namespace framewalk::arch::arm {

namespace {

// An ARM data-processing immediate: imm8 rotated right by twice the rotation field.
uint32_t arm_immediate(uint32_t word) {
  const uint32_t imm8 = word & 0xff;
  const unsigned rotate = 2 * ((word >> 8) & 0xf);
  return rotate ? (imm8 >> rotate) | (imm8 << (32 - rotate)) : imm8;
}

// A 32-bit Thumb instruction starts with a halfword whose top five bits are 0b11101, 0b11110 or 0b11111.
bool is_thumb32_prefix(uint16_t h) { return (h & 0xe000) == 0xe000 && (h & 0x1800) != 0; }

// Registers a scheduled instruction must not write: the frame pointer (r7
// in Thumb code, r11 in ARM code), sp, pc.
bool forbidden(unsigned reg) { return reg == 7 || reg == 13 || reg == 15; }
bool arm_forbidden(unsigned reg) { return reg == 11 || reg == 13 || reg == 15; }

// What an ARM instruction that is not a prologue form does.
PrologueOp arm_kind(uint32_t w) {
  if ((w >> 28) != 0xe) return PrologueOp::kOther;  // conditional, or the unconditional space
  const unsigned rn = (w >> 16) & 0xf, rd = (w >> 12) & 0xf;
  if ((w & 0x0c000000u) == 0) {
    if ((w & 0x0e000090u) == 0x00000090u) return PrologueOp::kOther;  // multiplies, extra loads and stores
    const unsigned opcode = (w >> 21) & 0xf;
    if (opcode >= 8 && opcode <= 11)  // tst/teq/cmp/cmn write nothing; without S, bx, msr and kin
      return (w & 0x00100000u) ? PrologueOp::kNeutral : PrologueOp::kOther;
    return arm_forbidden(rd) ? PrologueOp::kOther : PrologueOp::kNeutral;  // data processing
  }
  if ((w & 0x0c000000u) == 0x04000000u) {  // single loads and stores
    if ((w & 0x0e000010u) == 0x06000010u) return PrologueOp::kOther;  // media instructions
    const bool load = w & 0x00100000u;
    const bool writeback = !(w & 0x01000000u) || (w & 0x00200000u);
    if ((load && arm_forbidden(rd)) || (writeback && arm_forbidden(rn))) return PrologueOp::kOther;
    return PrologueOp::kNeutral;
  }
  if ((w & 0x0f000010u) == 0x0e000000u) return PrologueOp::kNeutral;  // VFP data processing (vmov #imm ...)
  if ((w & 0x0f100010u) == 0x0e100010u) return arm_forbidden(rd) ? PrologueOp::kOther : PrologueOp::kNeutral;  // mrc
  if ((w & 0x0f200000u) == 0x0d000000u) return PrologueOp::kNeutral;  // vldr, vstr: offset, no writeback
  return PrologueOp::kOther;
}

// What a 16-bit Thumb instruction that is not a prologue form does.
PrologueOp thumb16_kind(uint16_t h) {
  unsigned dest;
  if (h < 0x2000) dest = h & 7;                                   // shifts, add/sub reg or imm3
  else if (h < 0x4000) dest = (h >> 8) & 7;                       // mov/cmp/add/sub imm8
  else if (h < 0x4400) dest = h & 7;                              // data processing
  else if (h < 0x4700) dest = ((h >> 4) & 8) | (h & 7);           // add/cmp/mov with high registers
  else if (h < 0x4800) return PrologueOp::kOther;                 // bx, blx
  else if (h < 0x5000) dest = (h >> 8) & 7;                       // ldr literal
  else if (h < 0x9000) dest = h & 7;                              // loads and stores, register or imm
  else if (h < 0xb000) dest = (h >> 8) & 7;                       // sp-relative ldr/str, adr, add Rd, sp
  else if ((h & 0xff00) == 0xb200 || (h & 0xff00) == 0xba00) dest = h & 7;  // extend, reverse
  else if (h == 0xbf00) return PrologueOp::kNeutral;              // nop
  else return PrologueOp::kOther;                                 // sp changes, pops, IT, branches, svc
  return forbidden(dest) ? PrologueOp::kOther : PrologueOp::kNeutral;
}

// What a 32-bit Thumb instruction that is not a prologue form does.
PrologueOp thumb32_kind(uint16_t h1, uint16_t h2) {
  const unsigned rn = h1 & 0xf, rt = h2 >> 12, rd = (h2 >> 8) & 0xf;
  if ((h1 & 0xf800) == 0xf000) {
    if (h2 & 0x8000) return PrologueOp::kOther;  // branches and miscellaneous control
    return forbidden(rd) ? PrologueOp::kOther : PrologueOp::kNeutral;  // data processing (immediate)
  }
  if ((h1 & 0xfe00) == 0xea00)  // data processing (shifted register)
    return forbidden(rd) ? PrologueOp::kOther : PrologueOp::kNeutral;
  if ((h1 & 0xfe00) == 0xf800) {  // single loads and stores
    const bool load = h1 & 0x0010;
    const bool writeback = !(h1 & 0x0080) && (h2 & 0x0900) == 0x0900;
    if ((load && forbidden(rt)) || (writeback && forbidden(rn))) return PrologueOp::kOther;
    return PrologueOp::kNeutral;
  }
  if ((h1 & 0xff80) == 0xfb00) return forbidden(rd) ? PrologueOp::kOther : PrologueOp::kNeutral;  // mul, mla
  if ((h1 & 0xff80) == 0xfb80)  // long multiplies and divides: RdLo and RdHi
    return forbidden(rd) || forbidden(rt) ? PrologueOp::kOther : PrologueOp::kNeutral;
  if ((h1 & 0xff10) == 0xee10 && (h2 & 0x0010)) return forbidden(rt) ? PrologueOp::kOther : PrologueOp::kNeutral;  // mrc
  if ((h1 & 0xff20) == 0xed00) return PrologueOp::kNeutral;  // vstr, vldr: offset, no writeback
  return PrologueOp::kOther;
}

}  // namespace

bool is_arm_call(uint32_t w) {
  if ((w & 0xfe000000u) == 0xfa000000u) return true;                          // BLX <imm>
  if ((w >> 28) == 0xf) return false;                                          // unconditional space
  if ((w & 0x0f000000u) == 0x0b000000u) return true;                          // BL<c> <imm>
  return (w & 0x0ffffff0u) == 0x012fff30u;                                     // BLX<c> <reg>
}

bool is_thumb_call(uint16_t h1, uint16_t h2_or_before2) {
  // 16-bit BLX <reg>: 0100 0111 1 mmmm 000.
  if ((h2_or_before2 & 0xff87) == 0x4780) return true;
  // 32-bit BL / BLX <imm>: 11110 S imm10, then 11 J1 1 J2 imm11 (BL) or 11 J1 0 J2 imm10 0 (BLX).
  if ((h1 & 0xf800) != 0xf000) return false;
  const uint16_t h2 = h2_or_before2;
  return (h2 & 0xd000) == 0xd000 || (h2 & 0xd001) == 0xc000;
}

std::optional<PrologueInstruction> decode_arm_prologue(Bytes code) {
  if (code.size() < 4) return std::nullopt;
  const uint32_t w = word_at(code, 0);
  PrologueInstruction in;
  in.size = 4;
  if ((w & 0xffff0000u) == 0xe92d0000u && (w & 0xffff) != 0) {  // stmdb sp!, {...} (push)
    in.op = PrologueOp::kPush;
    in.registers = static_cast<uint16_t>(w & 0xffff);
  } else if ((w & 0xffff0fffu) == 0xe52d0004u) {  // str rN, [sp, #-4]! (push of one)
    in.op = PrologueOp::kPush;
    in.registers = static_cast<uint16_t>(1u << ((w >> 12) & 0xf));
  } else if ((w & 0xfffff000u) == 0xe24dd000u) {  // sub sp, sp, #imm
    in.op = PrologueOp::kSubSp;
    in.amount = arm_immediate(w);
  } else if ((w & 0xfffff000u) == 0xe28db000u) {  // add fp, sp, #imm
    in.op = PrologueOp::kSetFramePointer;
    in.amount = arm_immediate(w);
    in.frame_pointer = 11;
  } else if (w == 0xe1a0b00du) {  // mov fp, sp
    in.op = PrologueOp::kSetFramePointer;
    in.frame_pointer = 11;
  } else {
    in.op = arm_kind(w);
  }
  return in;
}

std::optional<PrologueInstruction> decode_thumb_prologue(Bytes code) {
  if (code.size() < 2) return std::nullopt;
  const uint16_t h = halfword_at(code, 0);
  PrologueInstruction in;
  if (is_thumb32_prefix(h)) {
    if (code.size() < 4) return std::nullopt;
    in.size = 4;
    const uint16_t h2 = halfword_at(code, 2);
    // push.w {...}: stmdb sp!, with neither sp nor pc in the list.
    if (h == 0xe92d && (h2 & 0xa000) == 0 && h2 != 0) {
      in.op = PrologueOp::kPush;
      in.registers = h2;
    } else if (h == 0xf84d && (h2 & 0x0fff) == 0x0d04) {
      in.op = PrologueOp::kPush;  // str.w rN, [sp, #-4]!
      in.registers = static_cast<uint16_t>(1u << (h2 >> 12));
    } else {
      in.op = thumb32_kind(h, h2);
    }
    return in;
  }
  in.size = 2;
  if ((h & 0xfe00) == 0xb400) {  // push {r0-r7[, lr]}: 1011 010M rrrrrrrr
    in.op = PrologueOp::kPush;
    in.registers = static_cast<uint16_t>((h & 0xff) | ((h & 0x100) ? 1u << 14 : 0));
    if (!in.registers) in.op = PrologueOp::kOther;
  } else if ((h & 0xff80) == 0xb080) {  // sub sp, #imm7 * 4
    in.op = PrologueOp::kSubSp;
    in.amount = (h & 0x7fu) * 4;
  } else if ((h & 0xff00) == 0xaf00) {  // add r7, sp, #imm8 * 4
    in.op = PrologueOp::kSetFramePointer;
    in.amount = (h & 0xffu) * 4;
    in.frame_pointer = 7;
  } else if (h == 0x466f) {  // mov r7, sp
    in.op = PrologueOp::kSetFramePointer;
    in.frame_pointer = 7;
  } else {
    in.op = thumb16_kind(h);
  }
  return in;
}

bool is_arm_return(Bytes code) { return code.size() >= 4 && word_at(code, 0) == 0xe12fff1eu; }
bool is_thumb_return(Bytes code) { return code.size() >= 2 && halfword_at(code, 0) == 0x4770; }

}  // namespace framewalk::arch::arm

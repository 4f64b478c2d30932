#include "arch/arm/instruction.hpp"

namespace framewalk::arch::arm {

namespace {

// Thumb-2's modified immediate (ThumbExpandImm) of i:imm3:imm8.
uint32_t thumb_expand(uint32_t imm12) {
  const uint32_t imm8 = imm12 & 0xff;
  if ((imm12 >> 10) == 0) {
    switch ((imm12 >> 8) & 3) {
      case 0: return imm8;
      case 1: return imm8 << 16 | imm8;
      case 2: return imm8 << 24 | imm8 << 8;
      default: return imm8 * 0x01010101u;
    }
  }
  const uint32_t unrotated = 0x80 | (imm12 & 0x7f);
  const unsigned rotate = imm12 >> 7;  // 8..31
  return unrotated >> rotate | unrotated << (32 - rotate);
}

// A 32-bit Thumb instruction starts with a halfword whose top five bits are 0b11101, 0b11110 or 0b11111.
bool is_thumb32_prefix(uint16_t h) { return (h & 0xe000) == 0xe000 && (h & 0x1800) != 0; }

// Registers a scheduled instruction must not write: the frame pointer (r7
// in Thumb code, r11 in ARM code), sp, pc.
bool forbidden(unsigned reg) { return reg == 7 || reg == 13 || reg == 15; }
bool arm_forbidden(unsigned reg) { return reg == 11 || reg == 13 || reg == 15; }

// Whether the ARM instruction arm_kind calls neutral may write ip: its
// destination (data processing, loads, mrc) or a written-back base.
bool arm_writes_ip(uint32_t w) {
  const unsigned rn = (w >> 16) & 0xf, rd = (w >> 12) & 0xf;
  if ((w & 0x0c000000u) == 0x04000000u) {
    const bool writeback = !(w & 0x01000000u) || (w & 0x00200000u);
    return ((w & 0x00100000u) && rd == 12) || (writeback && rn == 12);
  }
  if ((w & 0x0c000000u) == 0) return rd == 12;
  if ((w & 0x0f100010u) == 0x0e100010u) return rd == 12;  // mrc, vmov to a core register
  return false;
}

// What an ARM instruction that is not a prologue form does
// (`branch_offset`: a conditional branch's target, from the branch).
PrologueOp arm_kind(uint32_t w, int32_t* branch_offset) {
  if ((w & 0x0f000000u) == 0x0a000000u && (w >> 28) < 0xe) {  // b<c>
    *branch_offset = 8 + (static_cast<int32_t>(w << 8) >> 6);
    return PrologueOp::kConditionalBranch;
  }
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
  if ((w & 0x0f100e10u) == 0x0e000a10u) return PrologueOp::kNeutral;  // vmov sn, rt (into VFP registers)
  if ((w & 0x0f200000u) == 0x0d000000u) return PrologueOp::kNeutral;  // vldr, vstr: offset, no writeback
  return PrologueOp::kOther;
}

// What a 16-bit Thumb instruction that is not a prologue form does
// (`branch_offset`: a conditional branch's target, from the branch).
PrologueOp thumb16_kind(uint16_t h, int32_t* branch_offset) {
  if ((h & 0xf000) == 0xd000 && ((h >> 8) & 0xf) < 0xe) {  // b<c> with imm8 (0xe: udf, 0xf: svc)
    *branch_offset = 4 + 2 * static_cast<int8_t>(h & 0xff);
    return PrologueOp::kConditionalBranch;
  }
  if ((h & 0xf500) == 0xb100) {  // cbz, cbnz: forward only, i:imm5 halfwords
    *branch_offset = static_cast<int32_t>(4 + (((h >> 9) & 1) << 6 | ((h >> 3) & 0x1f) << 1));
    return PrologueOp::kConditionalBranch;
  }
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
PrologueOp thumb32_kind(uint16_t h1, uint16_t h2, int32_t* branch_offset) {
  const unsigned rn = h1 & 0xf, rt = h2 >> 12, rd = (h2 >> 8) & 0xf;
  // tst, teq, cmn, cmp (.w): the flag-setting forms whose rd field is pc write no register.
  const bool compare = (h1 & 0x0010) && rd == 15;
  if ((h1 & 0xf800) == 0xf000) {
    if ((h2 & 0xd000) == 0x8000 && ((h1 >> 6) & 0xe) != 0xe) {  // b<c>.w: S:J2:J1:imm6:imm11 halfwords
      const uint32_t s = (h1 >> 10) & 1, j1 = (h2 >> 13) & 1, j2 = (h2 >> 11) & 1;
      const uint32_t imm = s << 20 | j2 << 19 | j1 << 18 | (h1 & 0x3fu) << 12 | (h2 & 0x7ffu) << 1;
      *branch_offset = 4 + (static_cast<int32_t>(imm << 11) >> 11);
      return PrologueOp::kConditionalBranch;
    }
    if (h2 & 0x8000) return PrologueOp::kOther;  // branches and miscellaneous control
    if (compare && !(h1 & 0x0200)) return PrologueOp::kNeutral;  // modified immediate
    return forbidden(rd) ? PrologueOp::kOther : PrologueOp::kNeutral;  // data processing (immediate)
  }
  if ((h1 & 0xfe00) == 0xea00)  // data processing (shifted register)
    return forbidden(rd) && !compare ? PrologueOp::kOther : PrologueOp::kNeutral;
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
  // VFP arithmetic (vmul, vcvt, vmov #imm ...) and moves into VFP registers
  // (vmov sn, rt; mcr): coprocessor 10/11, nothing core written.
  if ((h1 & 0xff00) == 0xee00 && (h2 & 0x0e00) == 0x0a00) return PrologueOp::kNeutral;
  if ((h1 & 0xff20) == 0xed00) return PrologueOp::kNeutral;  // vstr, vldr: offset, no writeback
  return PrologueOp::kOther;
}

}  // namespace

uint32_t arm_immediate(uint32_t word) {
  const uint32_t imm8 = word & 0xff;
  const unsigned rotate = 2 * ((word >> 8) & 0xf);
  return rotate ? (imm8 >> rotate) | (imm8 << (32 - rotate)) : imm8;
}

uint32_t thumb_imm12(uint16_t h1, uint16_t h2) {
  return (uint32_t{h1} & 0x0400u) << 1 | (uint32_t{h2} & 0x7000u) >> 4 | (h2 & 0xffu);
}

uint32_t thumb_modified_immediate(uint16_t h1, uint16_t h2) { return thumb_expand(thumb_imm12(h1, h2)); }

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

bool vfp_transfer(unsigned d_bit, unsigned vd, bool doubles, unsigned imm8, PrologueInstruction* in) {
  // D registers: D:Vd, imm8 = 2 * count (an odd imm8 is the old FSTMX form,
  // with a pad word: not a compiler's prologue); S registers: Vd:D, imm8 = count.
  const unsigned first = doubles ? (d_bit << 4 | vd) : (vd << 1 | d_bit);
  const unsigned count = doubles ? imm8 / 2 : imm8;
  if (count == 0 || (doubles && (imm8 & 1)) || (doubles && count > 16) || first + count > 32) return false;
  in->op = PrologueOp::kVfpPush;
  in->vfp_first = static_cast<uint16_t>((doubles ? 256 : 64) + first);
  in->vfp_count = static_cast<uint8_t>(count);
  in->vfp_bytes = doubles ? 8 : 4;
  in->amount = count * in->vfp_bytes;
  return true;
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
  } else if (w == 0xe1a0c00du) {  // mov ip, sp
    in.op = PrologueOp::kCopySpToIp;
  } else if ((w & 0xfffff000u) == 0xe28dc000u) {  // add ip, sp, #imm
    in.op = PrologueOp::kCopySpToIp;
    in.amount = arm_immediate(w);
  } else if ((w & 0xfffff000u) == 0xe24cb000u) {  // sub fp, ip, #imm
    in.op = PrologueOp::kSetFramePointer;
    in.amount = arm_immediate(w);
    in.frame_pointer = 11;
    in.from_ip = true;
  } else if ((w & 0xffbf0e00u) == 0xed2d0a00u) {  // vpush {...} (vstmdb sp!)
    if (!vfp_transfer((w >> 22) & 1, (w >> 12) & 0xf, w & 0x100, w & 0xff, &in)) in.op = PrologueOp::kOther;
  } else {
    in.op = arm_kind(w, &in.branch_offset);
    in.clobbers_ip = in.op == PrologueOp::kNeutral && arm_writes_ip(w);
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
    } else if ((h & 0xfbff) == 0xf1ad && (h2 & 0x8f00) == 0x0d00) {
      in.op = PrologueOp::kSubSp;  // sub.w sp, sp, #imm (T3: a modified immediate)
      in.amount = thumb_modified_immediate(h, h2);
    } else if ((h & 0xfbff) == 0xf2ad && (h2 & 0x8f00) == 0x0d00) {
      in.op = PrologueOp::kSubSp;  // subw sp, sp, #imm12 (T4)
      in.amount = thumb_imm12(h, h2);
    } else if ((h & 0xffbf) == 0xed2d && (h2 & 0x0e00) == 0x0a00) {  // vpush {...}
      if (!vfp_transfer((h >> 6) & 1, h2 >> 12, h2 & 0x100, h2 & 0xff, &in)) in.op = PrologueOp::kOther;
    } else {
      in.op = thumb32_kind(h, h2, &in.branch_offset);
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
    in.op = thumb16_kind(h, &in.branch_offset);
  }
  return in;
}

bool is_arm_return(Bytes code) { return code.size() >= 4 && word_at(code, 0) == 0xe12fff1eu; }
bool is_thumb_return(Bytes code) { return code.size() >= 2 && halfword_at(code, 0) == 0x4770; }

}  // namespace framewalk::arch::arm

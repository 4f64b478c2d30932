#include "arch/aarch64/frames.hpp"

#include <cstring>

namespace framewalk::arch::aarch64 {

namespace {

uint32_t load_insn(Bytes code, size_t offset) {
  // Instructions are little-endian also on big-endian AArch64 (BE8).
  return uint32_t{code[offset]} | uint32_t{code[offset + 1]} << 8 | uint32_t{code[offset + 2]} << 16 |
         uint32_t{code[offset + 3]} << 24;
}

RegisterRule offset_rule(uint16_t reg, int64_t offset) { return RegisterRule{reg, RuleKind::kOffset, offset, {}, 0}; }

constexpr unsigned kRt(uint32_t i) { return i & 31; }
constexpr unsigned kRn(uint32_t i) { return (i >> 5) & 31; }
constexpr unsigned kRt2(uint32_t i) { return (i >> 10) & 31; }
// A signed 7-bit immediate at bit 15, scaled by 8 (64-bit pairs).
constexpr int64_t pair_offset(uint32_t i) { return static_cast<int64_t>(static_cast<int32_t>(i << 10) >> 25) * 8; }
// A signed 9-bit immediate at bit 12 (unscaled).
constexpr int64_t imm9(uint32_t i) { return static_cast<int64_t>(static_cast<int32_t>(i << 11) >> 23); }
// ADD/SUB (immediate): imm12, shifted by 12 when sh is set.
constexpr uint64_t add_imm(uint32_t i) { return uint64_t{(i >> 10) & 0xfff} << ((i >> 22) & 1 ? 12 : 0); }

constexpr bool is_hint(uint32_t i) { return (i & 0xfffff01f) == 0xd503201f; }  // paciasp, bti, nop...

// What the prologue has done so far, relative to the entry stack pointer.
struct PrologueState {
  int64_t sp_below = 0;       // entry sp - current sp
  bool fp_set = false;        // x29 = entry sp - fp_below
  int64_t fp_below = 0;
  // Where registers were saved: entry sp - saved_below[reg], for x19-x30.
  int64_t saved_below[32] = {};
  bool saved[32] = {};
  // Registers x0-x28 holding a constant of `mov`/`movk` (bit n: xn), for a
  // frame too large for an immediate: `mov x12, #n; sub sp, sp, x12`.
  uint32_t constant_known = 0;
  uint64_t constant[29] = {};

  void save(unsigned reg, int64_t at_below) {
    if (reg >= 19 && reg <= 30 && !saved[reg]) {
      saved[reg] = true;
      saved_below[reg] = at_below;
    }
  }
};

// What an instruction that is not one of the prologue's own does, as far
// as prologue analysis cares.
struct Effect {
  enum Kind : uint8_t {
    kNeutral,     // writes neither sp, x29 nor x30 and does not branch (`writes`: what it may write)
    kCondBranch,  // b.cond, cbz, cbnz, tbz, tbnz to `offset` bytes from itself
    kEnd,         // a call, branch or return, a write to sp, x29 or x30, an encoding not known here
  } kind = kEnd;
  int64_t offset = 0;
  uint32_t writes = 0;  // general registers x0-x30, bit n: xn
};

constexpr uint32_t reg_bit(unsigned r) { return r < 31 ? 1u << r : 0; }  // 31: xzr, or sp (checked apart)

// A signed field of `bits` bits at bit `lsb`, scaled by 4 (branch offsets).
constexpr int64_t branch_field(uint32_t i, unsigned lsb, unsigned bits) {
  return static_cast<int64_t>(static_cast<int32_t>(i << (32 - lsb - bits)) >> (32 - bits)) * 4;
}

Effect effect_of(uint32_t i) {
  Effect e;
  const unsigned rd = i & 31, rn = (i >> 5) & 31, rt2 = (i >> 10) & 31;
  // An instruction that writes `mask` (and sp, if `sp`): neutral unless that is sp, x29 or x30.
  auto writes = [&e](uint32_t mask, bool sp) {
    if (!sp && !(mask & (reg_bit(29) | reg_bit(30)))) {
      e.kind = Effect::kNeutral;
      e.writes = mask;
    }
    return e;
  };
  const unsigned op0 = (i >> 25) & 0xf;
  if ((op0 & 0xe) == 0x8) {  // data processing, immediate
    const bool flags = (i >> 29) & 1;
    switch ((i >> 23) & 7) {
      case 2: case 3: return writes(reg_bit(rd), rd == 31 && !flags);  // add/sub: rd 31 is sp unless flags are set
      case 4: return writes(reg_bit(rd), rd == 31 && ((i >> 29) & 3) != 3);  // logical: sp unless ands
      default: return writes(reg_bit(rd), false);  // adr, adrp, move wide, bitfield, extract: 31 is xzr
    }
  }
  if ((op0 & 0x7) == 0x5) {  // data processing, register: rd 31 is xzr but for add/sub (extended register)
    const bool extended = (i & 0x1f200000) == 0x0b200000;
    return writes(reg_bit(rd), extended && rd == 31 && !((i >> 29) & 1));
  }
  if ((op0 & 0x7) == 0x7) {  // SIMD and floating point: conversions and umov/smov write a general rd
    if (rd >= 29) return e;
    return writes(reg_bit(rd), false);
  }
  if ((op0 & 0x5) == 0x4) {  // loads and stores
    const bool simd = (i >> 26) & 1;
    const unsigned group = (i >> 27) & 7;
    if (group == 5) {  // pairs: no-allocate, post-index, offset, pre-index
      const unsigned index = (i >> 23) & 3;
      const bool writeback = index == 1 || index == 3;
      const bool load = (i >> 22) & 1;
      if (writeback && rn >= 29) return e;  // moves sp as step() does not follow, or writes x29/x30
      return writes((writeback ? reg_bit(rn) : 0) | (load && !simd ? reg_bit(rd) | reg_bit(rt2) : 0), false);
    }
    if (group == 7) {  // single registers
      const unsigned opc = (i >> 22) & 3;
      bool load = opc != 0 && !simd && !((i >> 30) == 3 && opc == 2);  // not a prfm
      bool writeback = false;
      if (!((i >> 24) & 1)) {  // not an unsigned offset
        const unsigned form = (i >> 10) & 3;
        if ((i >> 21) & 1) {
          if (form == 0) load = !simd;  // atomic memory operations load into rt
          else if (form != 2) {         // ldraa, ldrab (with writeback when bit 11 is set)
            load = true;
            writeback = (i >> 11) & 1;
          }
        } else {
          writeback = form == 1 || form == 3;  // post-index, pre-index
        }
      }
      if (writeback && rn >= 29) return e;
      return writes((writeback ? reg_bit(rn) : 0) | (load ? reg_bit(rd) : 0), false);
    }
    if (group == 3 && !((i >> 24) & 1)) return writes(simd ? 0 : reg_bit(rd), false);  // load literal
    if ((i & 0x3f000000) == 0x08000000) {  // exclusive and ordered: a load writes rt, rt2; a store rs
      const bool load = (i >> 22) & 1;
      return writes(load ? reg_bit(rd) | reg_bit(rt2) : reg_bit((i >> 16) & 31), false);
    }
    return e;
  }
  if ((op0 & 0xe) == 0xa) {  // branches, exception generation, system
    if ((i & 0xff000010) == 0x54000000 || (i & 0x7c000000) == 0x34000000) {  // b.cond; cbz, cbnz, tbz, tbnz
      e.kind = Effect::kCondBranch;
      e.offset = (i & 0x7e000000) == 0x36000000 ? branch_field(i, 5, 14) : branch_field(i, 5, 19);
      return e;
    }
    if ((i & 0xffc00000) == 0xd5000000)  // hints, barriers, msr; mrs and sysl (L set) write rt
      return writes((i >> 21) & 1 ? reg_bit(rd) : 0, false);
    return e;  // b, bl, br, blr, ret, svc...
  }
  return e;  // SVE, SME, unallocated
}

// Follows one prologue instruction; false if `insn` is not one.
bool step(uint32_t insn, PrologueState& s) {
  if (is_hint(insn)) return true;
  // stp Xt1, Xt2, [sp, #imm]! (pre-index) and [sp, #imm] (signed offset).
  if ((insn & 0xffc00000) == 0xa9800000 || (insn & 0xffc00000) == 0xa9000000) {
    if (kRn(insn) != kSp) return false;
    const bool writeback = (insn & 0xffc00000) == 0xa9800000;
    const int64_t off = pair_offset(insn);
    const int64_t at = s.sp_below - off;  // entry sp - address of the first register
    if (writeback && off > 0) return false;  // a prologue only grows the frame
    s.save(kRt(insn), at);
    s.save(kRt2(insn), at - 8);
    if (writeback) s.sp_below -= off;
    return true;
  }
  // str Xt, [sp, #imm]! (pre-index), str Xt, [sp, #imm] (unsigned offset).
  if ((insn & 0xffe00c00) == 0xf8000c00 && kRn(insn) == kSp) {
    const int64_t off = imm9(insn);
    if (off > 0) return false;
    s.save(kRt(insn), s.sp_below - off);
    s.sp_below -= off;
    return true;
  }
  if ((insn & 0xffc00000) == 0xf9000000 && kRn(insn) == kSp) {
    s.save(kRt(insn), s.sp_below - static_cast<int64_t>(((insn >> 10) & 0xfff) * 8));
    return true;
  }
  // sub sp, sp, #imm
  if ((insn & 0xff800000) == 0xd1000000 && kRn(insn) == kSp && kRt(insn) == kSp) {
    s.sp_below += static_cast<int64_t>(add_imm(insn));
    return true;
  }
  // sub sp, sp, xm[, uxtx/sxtx #0-4], xm a constant set before
  if ((insn & 0xffe003ff) == 0xcb2003ff && ((insn >> 13) & 3) == 3 && ((insn >> 10) & 7) <= 4) {
    const unsigned rm = (insn >> 16) & 31;
    if (rm > 28 || !((s.constant_known >> rm) & 1)) return false;
    s.sp_below += static_cast<int64_t>(s.constant[rm] << ((insn >> 10) & 7));
    return true;
  }
  // mov xd, #imm16 << 16*hw (movz), and movk into a constant: 64-bit and 32-bit forms
  if ((insn & 0x7f800000) == 0x52800000 || (insn & 0x7f800000) == 0x72800000) {
    const unsigned rd = kRt(insn);
    if (rd > 28) return false;
    const unsigned shift = ((insn >> 21) & 3) * 16;
    const uint64_t imm = uint64_t{(insn >> 5) & 0xffff} << shift;
    const bool keep = (insn & 0x7f800000) == 0x72800000;  // movk
    const bool wide = insn >> 31;
    if (!wide && shift > 16) return false;
    if (keep && !((s.constant_known >> rd) & 1)) return true;  // a value not known stays unknown
    uint64_t v = keep ? (s.constant[rd] & ~(uint64_t{0xffff} << shift)) | imm : imm;
    s.constant[rd] = wide ? v : v & 0xffffffff;
    s.constant_known |= 1u << rd;
    return true;
  }
  // mov x29, sp (add x29, sp, #0) and add x29, sp, #imm
  if ((insn & 0xff800000) == 0x91000000 && kRn(insn) == kSp && kRt(insn) == kX29) {
    s.fp_set = true;
    s.fp_below = s.sp_below - static_cast<int64_t>(add_imm(insn));
    return true;
  }
  // Moves between other registers and stores of them through x29 move
  // nothing the row needs; anything that writes sp, x29 or x30 otherwise ends it.
  return false;
}

UnwindRow row_from(const PrologueState& s) {
  UnwindRow row;
  row.cfa.kind = CfaKind::kRegisterOffset;
  if (s.fp_set) {
    row.cfa.reg = kX29;
    row.cfa.offset = s.fp_below;
  } else {
    row.cfa.reg = kSp;
    row.cfa.offset = s.sp_below;
  }
  row.return_address_register = kX30;
  for (unsigned reg = 19; reg <= 30; ++reg)
    if (s.saved[reg]) (void)row.set(offset_rule(static_cast<uint16_t>(reg), -s.saved_below[reg]));
  return row;
}

}  // namespace

RegisterFile from_user_regs_bytes(Bytes bytes, Endian endian) {
  RegisterFile regs;
  for (unsigned i = 0; i < 33; ++i)
    if (auto v = ByteReader::unsigned_at(bytes, i * 8, 8, endian)) regs.set(i, *v);
  return regs;  // x0-x30 are DWARF 0-30, sp 31, pc 32: the gregset's own order
}

RegisterFile from_capture(const uint64_t* captured) {
  RegisterFile r;
  for (uint16_t reg : kCapturedKnown) r.set(reg, captured[reg]);
  return r;
}

RegisterFile from_ucontext_bytes(Bytes bytes, Endian endian) {
  if (bytes.size() <= kUcontextMcontextOffset + kSigcontextRegsOffset) return {};
  return from_user_regs_bytes(bytes.subspan(kUcontextMcontextOffset + kSigcontextRegsOffset), endian);
}

UnwindRow signal_frame_row() {
  UnwindRow row;
  row.cfa.kind = CfaKind::kRegisterOffset;
  row.cfa.reg = kSp;
  row.cfa.offset = 0;
  row.return_address_register = kPc;
  row.signal_frame = true;
  constexpr int64_t regs = kSiginfoSize + kUcontextMcontextOffset + kSigcontextRegsOffset;
  for (uint16_t i = 0; i <= kPc; ++i) (void)row.set(offset_rule(i, regs + 8 * i));
  return row;
}

UnwindRow entry_row() {
  PrologueState s;
  return row_from(s);
}

UnwindRow frame_record_row(int64_t record_to_cfa) {
  UnwindRow row;
  row.cfa.kind = CfaKind::kRegisterOffset;
  row.cfa.reg = kX29;
  row.cfa.offset = record_to_cfa;
  row.return_address_register = kX30;
  (void)row.set(offset_rule(kX29, -record_to_cfa));
  (void)row.set(offset_rule(kX30, -record_to_cfa + 8));
  return row;
}

UnwindRow chain_end_row() {
  UnwindRow row;
  row.cfa.kind = CfaKind::kRegisterOffset;
  row.cfa.reg = kSp;
  row.cfa.offset = 0;
  row.return_address_register = kX30;
  (void)row.set(RegisterRule{kX30, RuleKind::kUndefined, 0, {}, 0});
  return row;
}

bool prologue_row(Bytes code, uint64_t pc_offset, UnwindRow* row) {
  PrologueState s;
  const bool activation = pc_offset != kReturnAddressFrame;
  size_t at = 0;
  bool ended = false;  // at the PC, or at an instruction that ends the prologue
  bool past_prologue_step = false;  // the last instruction was not one of the prologue's own
  for (; at + 4 <= code.size(); at += 4) {
    if (activation && at >= pc_offset) break;
    const uint32_t insn = load_insn(code, at);
    past_prologue_step = false;
    if (step(insn, s)) continue;
    past_prologue_step = true;
    // Compilers schedule other instructions into the prologue (`stp x29,
    // x30, [sp, #-32]!; adrp x1, ...; mov x29, sp`): step over those that
    // leave sp, x29, x30 and the flow alone. Shrink-wrapping puts a test and
    // a branch to an early exit before the prologue (`cmp w0, #n; b.eq
    // 1f; stp ...`): a frame at a return address has run the prologue, on
    // the straight path past a forward branch; an activation has where the
    // branch goes past its PC.
    const Effect e = effect_of(insn);
    if (e.kind == Effect::kNeutral) {
      s.constant_known &= ~e.writes;
      continue;
    }
    if (e.kind == Effect::kCondBranch && e.offset > 0 &&
        (!activation || static_cast<int64_t>(at) + e.offset > static_cast<int64_t>(pc_offset)))
      continue;
    ended = true;
    break;
  }
  if (activation && at >= pc_offset) ended = true;
  // The bytes ran out after an instruction that is not the prologue's own:
  // the prologue had ended there, as the analysis took it before it looked
  // past such instructions. Inside the prologue, only a frame pointer set
  // up (at a return address) still says where the frame is.
  if (!ended && !past_prologue_step && (activation || !s.fp_set)) return false;
  if (!activation && !s.saved[kX30]) return false;
  // A frame record whose x29 is not set up yet is read through sp.
  *row = row_from(s);
  return true;
}

bool is_call(uint32_t insn) {
  if ((insn & 0xfc000000) == 0x94000000) return true;            // bl
  if ((insn & 0xfffffc1f) == 0xd63f0000) return true;            // blr
  if ((insn & 0xfffff81f) == 0xd63f081f) return true;            // blraaz, blrabz
  if ((insn & 0xfffff800) == 0xd73f0800) return true;            // blraa, blrab
  return false;
}

}  // namespace framewalk::arch::aarch64

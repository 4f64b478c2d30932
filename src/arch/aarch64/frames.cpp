#include "arch/aarch64/frames.hpp"

#include <cstring>

namespace framewalk::arch::aarch64 {

namespace {

uint64_t load_u64(Bytes bytes, size_t offset, Endian endian) {
  uint8_t b[8];
  std::memcpy(b, bytes.data() + offset, 8);
  uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v |= uint64_t{b[endian == Endian::kLittle ? i : 7 - i]} << (8 * i);
  return v;
}

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

  void save(unsigned reg, int64_t at_below) {
    if (reg >= 19 && reg <= 30 && !saved[reg]) {
      saved[reg] = true;
      saved_below[reg] = at_below;
    }
  }
};

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
  for (unsigned i = 0; i < 33 && (i + 1) * 8 <= bytes.size(); ++i) regs.set(i, load_u64(bytes, i * 8, endian));
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

bool prologue_row(Bytes code, uint64_t pc_offset, UnwindRow* row) {
  PrologueState s;
  const bool activation = pc_offset != kReturnAddressFrame;
  size_t at = 0;
  for (; at + 4 <= code.size(); at += 4) {
    if (activation && at >= pc_offset) break;
    if (!step(load_insn(code, at), s)) break;
  }
  const bool ended = at + 4 <= code.size() || (activation && at >= pc_offset);
  if (!ended) return false;  // the bytes ran out inside the prologue
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

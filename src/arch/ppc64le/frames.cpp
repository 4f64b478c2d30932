#include "arch/ppc64le/frames.hpp"

namespace framewalk::arch::ppc64le {

namespace {

// Word `index` of `bytes`, little-endian; nullopt past the end.
std::optional<uint64_t> word_at(Bytes bytes, size_t index) {
  if ((index + 1) * 8 > bytes.size()) return std::nullopt;
  ByteReader r(bytes.subspan(index * 8, 8), Endian::kLittle);
  auto v = r.u64();
  return v ? std::optional<uint64_t>(*v) : std::nullopt;
}

uint32_t insn_at(Bytes code, size_t offset) {
  ByteReader r(code.subspan(offset, 4), Endian::kLittle);
  return *r.u32();  // callers check the size
}

RegisterRule offset_rule(uint16_t reg, int64_t offset) { return RegisterRule{reg, RuleKind::kOffset, offset, {}, 0}; }

// The gregset's words the unwinder uses, by DWARF number.
struct GregSlot {
  unsigned index;
  uint16_t reg;
};
constexpr GregSlot kSpecialGregs[] = {{kGregNip, kNip}, {kGregCtr, kCtr}, {kGregLink, kLr}, {kGregXer, kXer}};

// Instruction fields (Power ISA numbering: the primary opcode in the top 6 bits).
constexpr unsigned opcode(uint32_t i) { return i >> 26; }
constexpr unsigned rt(uint32_t i) { return (i >> 21) & 31; }
constexpr unsigned ra(uint32_t i) { return (i >> 16) & 31; }
constexpr int64_t ds(uint32_t i) { return static_cast<int16_t>(i & 0xfffc); }  // DS-form displacement
constexpr uint32_t kMflrR0 = 0x7c0802a6;
constexpr uint32_t kNop = 0x60000000;
constexpr uint32_t kMrR31R1 = 0x7c3f0b78;  // or r31,r1,r1

// What the prologue has done so far.
struct PrologueState {
  int64_t frame = 0;         // bytes stdu has taken below the entry r1
  bool lr_in_r0 = false;     // mflr r0 has run
  bool lr_saved = false;     // std r0,16(r1) has run (before stdu: the caller's LR save slot)
};

// Whether an instruction that is not the prologue's own leaves what the
// row needs alone: not a branch, a system call or mtlr, and no write to r1
// (addi/addis, ld, mr, stdux), nor to r0 while it holds the return address.
bool neutral(uint32_t insn, const PrologueState& s) {
  const unsigned op = opcode(insn);
  if (op == 16 || op == 17 || op == 18 || op == 19) return false;
  if ((op == 14 || op == 15 || op == 58) && rt(insn) == kR1) return false;
  if (op == 31) {
    const unsigned xo = (insn >> 1) & 0x3ff;
    if ((insn & 0xfc1fffff) == 0x7c0803a6) return false;                       // mtlr
    if ((xo == 444 || xo == 181) && ra(insn) == kR1) return false;            // mr r1; stdux r1
  }
  if (s.lr_in_r0 && !s.lr_saved) return false;  // r0 could be written: not followed
  return true;
}

// Follows one prologue instruction; false if `insn` is not one.
bool step(uint32_t insn, PrologueState& s) {
  if (insn == kNop || insn == kMrR31R1) return true;
  if (insn == kMflrR0) {
    s.lr_in_r0 = true;
    return true;
  }
  // addis r2,r12,n (lis r2,n); addi r2,r2,n: the global entry point's TOC pointer.
  if ((insn & 0xfffe0000) == 0x3c4c0000 || (insn & 0xffff0000) == 0x3c400000 || (insn & 0xffff0000) == 0x38420000)
    return true;
  const bool std_form = opcode(insn) == 62 && ra(insn) == kR1;
  if (std_form && (insn & 3) == 1) {  // stdu rS,-n(r1)
    if (rt(insn) != kR1 || ds(insn) >= 0 || s.frame) return false;
    s.frame = -ds(insn);
    return true;
  }
  if (std_form && (insn & 3) == 0) {  // std rS,d(r1)
    if (rt(insn) == kR0 && s.lr_in_r0 && ds(insn) == 16 + s.frame) s.lr_saved = true;
    return rt(insn) != kR1;
  }
  return false;
}

}  // namespace

RegisterFile from_gregs_bytes(Bytes bytes) {
  RegisterFile regs;
  for (unsigned i = 0; i < 32; ++i)
    if (auto v = word_at(bytes, i)) regs.set(kR0 + i, *v);
  for (const GregSlot& s : kSpecialGregs)
    if (auto v = word_at(bytes, s.index)) regs.set(s.reg, *v);
  return regs;
}

void add_fpregs_bytes(Bytes bytes, RegisterFile& registers) {
  for (unsigned i = 0; i < 32; ++i)
    if (auto v = word_at(bytes, i)) registers.set(kF0 + i, *v);
}

RegisterFile from_ucontext_bytes(Bytes bytes) {
  if (bytes.size() <= kUcontextGregsOffset) return {};
  RegisterFile regs = from_gregs_bytes(bytes.subspan(kUcontextGregsOffset));
  if (bytes.size() > kUcontextFpregsOffset) add_fpregs_bytes(bytes.subspan(kUcontextFpregsOffset), regs);
  return regs;
}

bool is_trampoline(Bytes code) {
  size_t at = 0;
  if (code.size() >= 4 && insn_at(code, 0) == kAddiR1R1FrameSize) at = 4;
  return code.size() >= at + 8 && insn_at(code, at) == kLiR0RtSigreturn && insn_at(code, at + 4) == kSc;
}

UnwindRow signal_frame_row() {
  // The CFA is the ucontext's gp_regs: the kernel's frame puts the
  // ucontext 128 bytes above r1, qemu-user 7.2's 144 (32-bit PowerPC's
  // 16-byte gap, which later qemu keeps to 32-bit frames). The sigcontext's `regs`,
  // 8 bytes before gp_regs, points at gp_regs: where it does 128 bytes up,
  // the kernel's layout, else qemu's.
  static constexpr uint8_t kGregs[] = {
      0x71, 0xe0, 0x02,  // DW_OP_breg1 352: the kernel's `regs`
      0x06,              // DW_OP_deref
      0x71, 0xe8, 0x02,  // DW_OP_breg1 360: the kernel's gp_regs
      0x29,              // DW_OP_eq
      0x28, 0x06, 0x00,  // DW_OP_bra +6
      0x71, 0xf8, 0x02,  // DW_OP_breg1 376: qemu's gp_regs
      0x2f, 0x03, 0x00,  // DW_OP_skip +3
      0x71, 0xe8, 0x02,  // DW_OP_breg1 360
  };
  static_assert(kSignalFrameSize + kUcontextGregsOffset == 360);
  UnwindRow row;
  row.cfa.kind = CfaKind::kExpression;
  row.cfa.expression = Bytes(kGregs, sizeof kGregs);
  row.return_address_register = kNip;
  row.signal_frame = true;
  constexpr int64_t fpregs = kUcontextFpregsOffset - kUcontextGregsOffset;
  for (uint16_t i = 0; i < 32; ++i) {
    (void)row.set(offset_rule(kR0 + i, 8 * i));
    (void)row.set(offset_rule(kF0 + i, fpregs + 8 * i));
  }
  for (const GregSlot& s : kSpecialGregs) (void)row.set(offset_rule(s.reg, 8 * s.index));
  return row;
}

UnwindRow entry_row() {
  UnwindRow row;
  row.cfa.kind = CfaKind::kRegisterOffset;
  row.cfa.reg = kR1;
  row.cfa.offset = 0;
  row.return_address_register = kLr;
  return row;
}

UnwindRow back_chain_row() {
  static constexpr uint8_t kDerefR1[] = {0x71, 0x00, 0x06};  // DW_OP_breg1 0; DW_OP_deref
  // The return address at the CFA + 16; a null back chain (a thread's
  // first frame, as glibc's clone and _start make it) has none: 0, the end.
  static constexpr uint8_t kSavedLr[] = {
      0x12,              // DW_OP_dup (the CFA)
      0x28, 0x03, 0x00,  // DW_OP_bra +3
      0x2f, 0x03, 0x00,  // DW_OP_skip +3: the CFA, 0
      0x23, 0x10,        // DW_OP_plus_uconst 16
      0x06,              // DW_OP_deref
  };
  UnwindRow row = entry_row();
  row.cfa.kind = CfaKind::kExpression;
  row.cfa.expression = Bytes(kDerefR1, sizeof kDerefR1);
  (void)row.set(RegisterRule{kLr, RuleKind::kValExpression, 0, Bytes(kSavedLr, sizeof kSavedLr), 0});
  return row;
}

UnwindRow chain_end_row() {
  UnwindRow row = entry_row();
  (void)row.set(RegisterRule{kLr, RuleKind::kUndefined, 0, {}, 0});
  return row;
}

bool prologue_row(Bytes code, uint64_t pc_offset, UnwindRow* row) {
  PrologueState s;
  for (size_t at = 0; at < pc_offset; at += 4) {
    if (at + 4 > code.size()) return false;
    const uint32_t insn = insn_at(code, at);
    if (!step(insn, s) && !neutral(insn, s)) return false;
  }
  *row = entry_row();
  row->cfa.offset = s.frame;
  if (s.lr_saved)
    (void)row->set(offset_rule(kLr, 16));
  else if (s.lr_in_r0)
    (void)row->set(RegisterRule{kLr, RuleKind::kRegister, kR0, {}, 0});
  return true;
}

bool is_call(uint32_t insn) {
  if ((insn & 0xfc000001) == 0x48000001) return true;  // bl, bla
  if (opcode(insn) != 19 || !(insn & 1)) return false;
  const unsigned xo = (insn >> 1) & 0x3ff;
  return xo == 16 || xo == 528 || xo == 560;  // bclrl, bcctrl, bctarl
}

}  // namespace framewalk::arch::ppc64le

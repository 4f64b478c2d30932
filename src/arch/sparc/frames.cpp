#include "arch/sparc/frames.hpp"

#include <array>

namespace framewalk::arch::sparc {

namespace {

std::optional<uint64_t> word_at(Bytes bytes, size_t offset, unsigned size) {
  return ByteReader::unsigned_at(bytes, offset, size, Endian::kBig);
}

RegisterRule offset_rule(uint16_t reg, int64_t offset) { return RegisterRule{reg, RuleKind::kOffset, offset, {}, 0}; }

UnwindRow biased_row(uint16_t cfa_register) {
  UnwindRow row;
  row.cfa.kind = CfaKind::kRegisterOffset;
  row.cfa.reg = cfa_register;
  row.cfa.offset = kStackBias64;
  row.return_address_register = kO7;
  return row;
}

// The signal row's PC: pt_regs.tpc, as the executor pushes the CFA first.
constexpr int64_t kSavedTpc = kSignalRegsOffset + 16 * 8 + 8;
constexpr uint8_t kPlusUconst = 0x23, kDeref = 0x06, kLit8 = 0x38, kMinus = 0x1c;
static_assert(kSavedTpc < (1 << 14), "a two-byte ULEB128 operand");

// DW_OP_plus_uconst kSavedTpc; DW_OP_deref; DW_OP_lit8; DW_OP_minus: the
// interrupted PC less 8, as a return address column holds a call's own
// address (the Machine adds the 8 back to every return address).
constexpr std::array<uint8_t, 6> kTpcLessEight = {kPlusUconst, static_cast<uint8_t>(0x80 | (kSavedTpc & 0x7f)),
                                                   static_cast<uint8_t>(kSavedTpc >> 7), kDeref, kLit8, kMinus};

constexpr uint32_t op(uint32_t insn) { return insn >> 30; }
constexpr uint32_t op3(uint32_t insn) { return (insn >> 19) & 0x3f; }
constexpr uint32_t rd(uint32_t insn) { return (insn >> 25) & 31; }

}  // namespace

RegisterFile from_gregs_bytes(Bytes bytes) {
  RegisterFile r;
  for (uint16_t i = 0; i < 32; ++i)
    if (auto v = word_at(bytes, 8 * i, 8)) r.set(i, *v);
  if (auto pc = word_at(bytes, 8 * kGregsTpc, 8)) r.set(kPc, *pc);
  return r;
}

RegisterFile from_ucontext_bytes(Bytes bytes) {
  // mc_gregs: REG_PSR, REG_PC, REG_nPC, REG_Y, REG_G1..REG_G7, REG_O0..REG_O7.
  constexpr size_t g = kUcontextGregsOffset;
  RegisterFile r;
  if (auto pc = word_at(bytes, g + 8, 8)) r.set(kPc, *pc);
  if (word_at(bytes, g + 8 * 4, 8)) r.set(kG0, 0);
  for (uint16_t i = 1; i < 16; ++i)
    if (auto v = word_at(bytes, g + 8 * (3 + i), 8)) r.set(i, *v);
  if (auto fp = word_at(bytes, g + 8 * 19, 8)) r.set(kI6, *fp);
  if (auto i7 = word_at(bytes, g + 8 * 20, 8)) r.set(kI7, *i7);
  return r;
}

bool is_trampoline(Bytes code) { return word_at(code, 0, 4) == kMovRtSigreturnG1 && word_at(code, 4, 4) == kTa6d; }

UnwindRow signal_frame_row() {
  UnwindRow row = biased_row(kO6);
  row.signal_frame = true;
  row.return_address_register = kPc;
  (void)row.set(RegisterRule{kPc, RuleKind::kValExpression, 0, Bytes(kTpcLessEight.data(), kTpcLessEight.size())});
  for (uint16_t i = 1; i < 16; ++i) (void)row.set(offset_rule(i, kSignalRegsOffset + 8 * i));
  row.window_saved = true;  // %l0-%i7: the copy in ss, at the CFA
  return row;
}

UnwindRow leaf_row() { return biased_row(kO6); }

UnwindRow window_row() {
  UnwindRow row = biased_row(kI6);
  row.window_saved = true;
  (void)row.set(RegisterRule{kO7, RuleKind::kRegister, kI7});
  return row;
}

UnwindRow chain_end_row() {
  UnwindRow row = window_row();
  (void)row.set(RegisterRule{kO7, RuleKind::kUndefined, 0});
  return row;
}

bool saved_before(Bytes code, uint64_t pc_offset) {
  // `save rs1, rs2|imm, rd` (op 2, op3 0x3c): gcc puts it first, or after
  // a few instructions that set up a large frame's size (sethi/or/xor).
  constexpr uint64_t kScan = 8;
  for (uint64_t at = 0; at < pc_offset && at / 4 < kScan; at += 4) {
    auto insn = word_at(code, at, 4);
    if (!insn) return false;
    const auto i = static_cast<uint32_t>(*insn);
    if (op(i) == 2 && op3(i) == 0x3c) return true;
    if (op(i) == 1 || (op(i) == 2 && (op3(i) == 0x38 || op3(i) == 0x39))) return false;  // call, jmpl, return
    if (op(i) == 0 && ((i >> 22) & 7) != 4) return false;  // branches (not sethi)
  }
  return false;
}

bool is_call(uint32_t insn) { return op(insn) == 1 || (op(insn) == 2 && op3(insn) == 0x38 && rd(insn) == kO7); }

}  // namespace framewalk::arch::sparc

#include "arch/sparc/frames.hpp"

namespace framewalk::arch::sparc {

namespace {

std::optional<uint64_t> word_at(Bytes bytes, size_t offset, unsigned size) {
  return ByteReader::unsigned_at(bytes, offset, size, Endian::kBig);
}

RegisterRule offset_rule(uint16_t reg, int64_t offset) { return RegisterRule{reg, RuleKind::kOffset, offset, {}, 0}; }

UnwindRow biased_row(uint16_t cfa_register, int64_t stack_bias) {
  UnwindRow row;
  row.cfa.kind = CfaKind::kRegisterOffset;
  row.cfa.reg = cfa_register;
  row.cfa.offset = stack_bias;
  row.return_address_register = kO7;
  return row;
}

// signal_layout's PC offsets, the largest sparc64's: two-byte ULEB128 operands.
static_assert(kSignalRegsOffset + 16 * 8 + 8 < (1 << 14));

// %g0-%i7 as words 0-31 and the PC as word `pc`, each `word` bytes.
RegisterFile from_gregs(Bytes bytes, unsigned word, unsigned pc) {
  RegisterFile r;
  for (uint16_t i = 0; i < 32; ++i)
    if (auto v = word_at(bytes, word * i, word)) r.set(i, *v);
  if (auto v = word_at(bytes, word * pc, word)) r.set(kPc, *v);
  return r;
}

// mc_gregs at `at`, words of `word` bytes: REG_PSR (sparc64: tstate),
// REG_PC, REG_nPC, REG_Y, REG_G1..REG_G7, REG_O0..REG_O7.
RegisterFile from_mc_gregs(Bytes bytes, size_t at, unsigned word) {
  RegisterFile r;
  if (auto pc = word_at(bytes, at + word, word)) r.set(kPc, *pc);
  if (word_at(bytes, at + word * 4, word)) r.set(kG0, 0);
  for (uint16_t i = 1; i < 16; ++i)
    if (auto v = word_at(bytes, at + word * (3 + i), word)) r.set(i, *v);
  return r;
}

constexpr uint32_t op(uint32_t insn) { return insn >> 30; }
constexpr uint32_t op3(uint32_t insn) { return (insn >> 19) & 0x3f; }
constexpr uint32_t rd(uint32_t insn) { return (insn >> 25) & 31; }

}  // namespace

RegisterFile from_gregs_bytes(Bytes bytes) { return from_gregs(bytes, 8, kGregsTpc); }

RegisterFile from_ucontext_bytes(Bytes bytes) {
  constexpr size_t g = kUcontextGregsOffset;
  RegisterFile r = from_mc_gregs(bytes, g, 8);
  if (auto fp = word_at(bytes, g + 8 * 19, 8)) r.set(kI6, *fp);
  if (auto i7 = word_at(bytes, g + 8 * 20, 8)) r.set(kI7, *i7);
  return r;
}

RegisterFile from_gregs32_bytes(Bytes bytes) { return from_gregs(bytes, 4, kGregs32Pc); }

RegisterFile from_ucontext32_bytes(Bytes bytes) { return from_mc_gregs(bytes, kUcontext32GregsOffset, 4); }

bool is_trampoline(Bytes code) { return word_at(code, 0, 4) == kMovRtSigreturnG1 && word_at(code, 4, 4) == kTa6d; }

const SignalLayout* signal32_layout(Bytes code) {
  if (word_at(code, 4, 4) != kTa10) return nullptr;
  const auto mov = word_at(code, 0, 4);
  if (mov == kMovSigreturn32G1) return &kSignal32;
  if (mov == kMovRtSigreturnG1) return &kRtSignal32;
  return nullptr;
}

UnwindRow signal_frame_row(const SignalLayout& layout) {
  UnwindRow row = biased_row(kO6, layout.stack_bias);
  row.signal_frame = true;
  row.return_address_register = kPc;
  (void)row.set(RegisterRule{kPc, RuleKind::kValExpression, 0,
                             Bytes(layout.pc_less_eight.data(), layout.pc_less_eight.size())});
  for (uint16_t i = 1; i < 16; ++i) (void)row.set(offset_rule(i, layout.u_regs + layout.word * i));
  row.window_saved = true;  // %l0-%i7: the copy in ss, at the CFA
  return row;
}

UnwindRow leaf_row(int64_t stack_bias) { return biased_row(kO6, stack_bias); }

UnwindRow window_row(int64_t stack_bias) {
  UnwindRow row = biased_row(kI6, stack_bias);
  row.window_saved = true;
  (void)row.set(RegisterRule{kO7, RuleKind::kRegister, kI7});
  return row;
}

UnwindRow chain_end_row(int64_t stack_bias) {
  UnwindRow row = window_row(stack_bias);
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

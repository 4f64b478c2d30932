#include "arch/s390x/frames.hpp"

#include <cstring>

namespace framewalk::arch::s390x {

namespace {

// DWARF numbers of f0..f15 (the hardware order).
constexpr uint16_t kFprDwarf[16] = {16, 20, 17, 21, 18, 22, 19, 23, 24, 28, 25, 29, 26, 30, 27, 31};

// The big-endian word of `size` bytes at `offset` in `bytes`, when it is all there.
std::optional<uint64_t> word_at(Bytes bytes, size_t offset, unsigned size) {
  if (offset > bytes.size() || bytes.size() - offset < size) return std::nullopt;
  ByteReader r(bytes.subspan(offset, size), Endian::kBig);
  auto v = r.unsigned_of_size(size);
  return v ? std::optional<uint64_t>(*v) : std::nullopt;
}

void set_from(Bytes bytes, size_t offset, unsigned size, uint16_t reg, RegisterFile* r) {
  if (auto v = word_at(bytes, offset, size)) r->set(reg, *v);
}

// psw, gprs[16], acrs[16] at `offset`: the start of elf_gregset_t and of
// _sigregs. The PSW address without a 31-bit program's addressing-mode bit.
RegisterFile from_psw_and_gprs(Bytes bytes, size_t offset, const Abi& abi) {
  RegisterFile r;
  const unsigned w = abi.word;
  const size_t gprs = offset + abi.sigregs_gprs();
  set_from(bytes, offset, w, kPswMask, &r);
  if (auto address = word_at(bytes, offset + w, w)) r.set(kPswAddress, *address & abi.address_mask);
  for (uint16_t i = 0; i < 16; ++i) set_from(bytes, gprs + w * i, w, i, &r);
  for (uint16_t i = 0; i < 16; ++i) set_from(bytes, gprs + 16 * w + 4 * i, 4, kA0 + i, &r);
  return r;
}

void add_fprs(Bytes bytes, size_t offset, RegisterFile* r) {
  for (unsigned i = 0; i < 16; ++i) set_from(bytes, offset + 8 * i, 8, kFprDwarf[i], r);
}

RegisterRule offset_rule(uint16_t reg, int64_t offset) { return RegisterRule{reg, RuleKind::kOffset, offset, {}, 0}; }

// DW_OP_breg15 168 (104); DW_OP_deref: where sigcontext.sregs points
// (static: a row only points at it).
constexpr uint8_t kSregsPointer[] = {0x7f, 0xa8, 0x01, 0x06};
constexpr uint8_t kSregsPointer31[] = {0x7f, 0xe8, 0x00, 0x06};
static_assert(kS390xAbi.sigcontext_sregs == 168 && kS390Abi.sigcontext_sregs == 104);

}  // namespace

uint16_t fpr_dwarf(unsigned n) { return kFprDwarf[n & 15]; }

RegisterFile from_user_regs_bytes(Bytes bytes, const Abi& abi) { return from_psw_and_gprs(bytes, 0, abi); }

RegisterFile from_capture(const uint64_t* captured) {
  RegisterFile r;
  for (uint16_t reg = 6; reg <= kR15; ++reg) r.set(reg, captured[reg]);
  r.set(kPswAddress, captured[kCapturedPcWord]);
  return r;
}

void add_fpregs_bytes(Bytes bytes, RegisterFile* registers) { add_fprs(bytes, kFpregsFprsOffset, registers); }

RegisterFile from_ucontext_bytes(Bytes bytes, const Abi& abi) {
  RegisterFile r = from_psw_and_gprs(bytes, abi.ucontext_mcontext, abi);
  add_fprs(bytes, abi.ucontext_mcontext + abi.sigregs_fprs(), &r);
  return r;
}

std::optional<Trampoline> trampoline_at(Bytes code) {
  if (code.size() < 2) return std::nullopt;
  if (std::memcmp(code.data(), kSigreturnCode, 2) == 0) return Trampoline::kSigreturn;
  if (std::memcmp(code.data(), kRtSigreturnCode, 2) == 0) return Trampoline::kRtSigreturn;
  return std::nullopt;
}

UnwindRow signal_frame_row(Trampoline kind, const Abi& abi) {
  UnwindRow row;
  if (kind == Trampoline::kRtSigreturn) {
    row.cfa.kind = CfaKind::kRegisterOffset;
    row.cfa.reg = kR15;
    row.cfa.offset = abi.rt_sigframe_mcontext;
  } else {
    row.cfa.kind = CfaKind::kExpression;
    row.cfa.expression = abi.word == 8 ? Bytes(kSregsPointer, sizeof kSregsPointer)
                                       : Bytes(kSregsPointer31, sizeof kSregsPointer31);
  }
  row.return_address_register = kPswAddress;
  row.signal_frame = true;
  // The PSW address (31-bit: with the addressing-mode bit, which the
  // machine's clean_return_address strips), the words of the general
  // registers, the floating-point registers of 8 bytes.
  (void)row.set(offset_rule(kPswAddress, abi.word));
  for (uint16_t i = 0; i < 16; ++i) (void)row.set(offset_rule(i, abi.sigregs_gprs() + abi.word * i));
  for (unsigned i = 0; i < 16; ++i) (void)row.set(offset_rule(kFprDwarf[i], abi.sigregs_fprs() + 8 * i));
  return row;
}

UnwindRow entry_row(const Abi& abi) {
  UnwindRow row;
  row.cfa.kind = CfaKind::kRegisterOffset;
  row.cfa.reg = kR15;
  row.cfa.offset = abi.register_save_area;
  row.return_address_register = kR14;
  return row;
}

namespace {

// A signed 20-bit displacement of an RSY/RXY instruction (DL at bytes 2-3, DH at byte 4).
int64_t long_displacement(Bytes insn) {
  const int32_t d = (int32_t{insn[2] & 0x0f} << 8) | insn[3] | (int32_t{insn[4]} << 12);
  return (d ^ 0x80000) - 0x80000;
}

// An s390x instruction's length, from its first two bits.
size_t length_of(uint8_t first) { return first < 0x40 ? 2 : first < 0xc0 ? 4 : 6; }

// What a prologue has done so far, relative to the entry stack pointer.
struct PrologueState {
  int64_t sp_below = 0;  // entry r15 - r15
  bool fp_set = false;   // r11 = entry r15 - fp_below
  int64_t fp_below = 0;
  uint16_t saved = 0;          // bit n: rn saved, at entry r15 + saved_at[n]
  int64_t saved_at[16] = {};
};

enum class Step : uint8_t { kPrologue, kNeutral, kEnd };

// Registers an instruction of the forms stepped over must not write: the
// frame's (r10 too: an even-odd pair instruction on it writes r11). Once
// saved, r14 is a scratch register (-mbackchain's `lr %r14,%r15` keeps the
// entry r15 in it for the back chain), and so is r11 until it becomes the
// frame pointer (gcc may copy an argument into it before its `ahi %r15`).
bool frame_register(unsigned reg, const PrologueState& s) {
  const bool r11_scratch = ((s.saved >> kR11) & 1) && !s.fp_set;
  if (reg == 10 || reg == kR11) return !r11_scratch;
  return reg == kR15 || (reg == kR14 && !((s.saved >> kR14) & 1));
}

Step unless_frame_register(unsigned reg, const PrologueState& s) {
  return frame_register(reg, s) ? Step::kEnd : Step::kNeutral;
}

// An instruction that is not the prologue's own but may sit among its
// instructions (at `at` in the function; `pc_offset` as for prologue_row):
// register-to-register operations, shifts, `la` and immediates into other
// registers, stores, compares, a conditional return and,
// shrink-wrapping's test for an early exit, a forward conditional branch
// (for an activation only one whose target lies past its PC).
Step other_instruction(Bytes insn, size_t at, uint64_t pc_offset, const PrologueState& s) {
  const uint8_t op = insn[0], r1 = insn[1] >> 4, low = insn[1] & 15;
  if (op == 0x50 || op == 0x60) return Step::kNeutral;                                          // st, std
  if (op == 0x07 && low == kR14 && r1 != 0 && r1 != 15) return Step::kNeutral;  // b<cond>r %r14 (r1: the mask)
  // RR (lpr .. slr), RS shifts (srl .. slda; the double ones on a pair) and la: write r1.
  if ((op >= 0x10 && op <= 0x1f) || (op >= 0x88 && op <= 0x8f) || op == 0x41) return unless_frame_register(r1, s);
  if (op == 0xb9) return unless_frame_register(insn[3] >> 4, s);                               // RRE: writes r1
  if (op == 0xc0 && low == 0x0) return unless_frame_register(r1, s);                           // larl
  // Shifts (sllg .. srlk) and ahik/aghik: r1 from r3 or an immediate.
  const bool shift = op == 0xeb && ((insn[5] >= 0x0a && insn[5] <= 0x0d) || (insn[5] >= 0xdc && insn[5] <= 0xdf));
  if (shift || (op == 0xec && (insn[5] == 0xd8 || insn[5] == 0xd9))) return unless_frame_register(r1, s);
  if (op != 0xa7) return Step::kEnd;
  if (low == 0xe || low == 0xf) return Step::kNeutral;                                        // chi, cghi
  if (low >= 0x8 && low <= 0xd) return unless_frame_register(r1, s);                          // lhi .. mghi
  if (low != 0x4 || r1 == 0 || r1 == 15) return Step::kEnd;  // not brc, or an unconditional one
  const int64_t offset = 2 * int64_t{static_cast<int16_t>((insn[2] << 8) | insn[3])};
  const bool return_address = pc_offset == kReturnAddressFrame;
  if (offset <= 0 || (!return_address && at + static_cast<uint64_t>(offset) <= pc_offset)) return Step::kEnd;
  return Step::kNeutral;
}

// The prologue's own instructions in the ABI's forms (s390x's, 31-bit's):
// a store of r1..r3 into the register save area (stmg; stm, stmy), an
// immediate added to r15 (aghi, agfi; ahi, afi), the copy of r15 into
// r11 (lgr; lr).
bool store_multiple(Bytes insn, const Abi& abi, int64_t* displacement) {
  if (abi.word == 8 && insn[0] == 0xeb && insn[5] == 0x24) return *displacement = long_displacement(insn), true;
  if (abi.word == 4 && insn[0] == 0xeb && insn[5] == 0x90) return *displacement = long_displacement(insn), true;
  if (abi.word == 4 && insn[0] == 0x90) return *displacement = ((insn[2] & 15) << 8) | insn[3], true;
  return false;
}

bool add_to_stack_pointer(Bytes insn, const Abi& abi, int64_t* added) {
  if (insn[0] == 0xa7 && insn[1] == (kR15 << 4 | (abi.word == 8 ? 0xb : 0xa))) {
    *added = static_cast<int16_t>((insn[2] << 8) | insn[3]);
    return true;
  }
  if (insn[0] == 0xc2 && insn[1] == (kR15 << 4 | (abi.word == 8 ? 0x8 : 0x9))) {
    *added = static_cast<int32_t>((uint32_t{insn[2]} << 24) | (uint32_t{insn[3]} << 16) | (uint32_t{insn[4]} << 8) |
                                  insn[5]);
    return true;
  }
  if (insn[0] == 0xe3 && insn[5] == 0x71 && insn[1] == kR15 << 4 && (insn[2] >> 4) == kR15) {  // lay %r15,d(%r15)
    *added = long_displacement(insn);
    return true;
  }
  return false;
}

// A register copy: its target and source.
bool register_copy(Bytes insn, const Abi& abi, unsigned* to, unsigned* from) {
  uint8_t operands = 0;
  if (abi.word == 8 && insn[0] == 0xb9 && insn[1] == 0x04) operands = insn[3];  // lgr
  else if (abi.word == 4 && insn[0] == 0x18) operands = insn[1];                // lr
  else return false;
  *to = operands >> 4;
  *from = operands & 15;
  return true;
}

// One instruction of `insn` (all its bytes there, at `at`), applied to `s`.
Step step(Bytes insn, size_t at, uint64_t pc_offset, const Abi& abi, PrologueState* s) {
  const uint8_t r1 = insn[1] >> 4, r3 = insn[1] & 15;
  int64_t value = 0;
  if (store_multiple(insn, abi, &value) && (insn[2] >> 4) == kR15) {  // r1..r3 at d(%r15)
    const int64_t first = value - s->sp_below;                      // r1's slot, from the entry r15
    for (unsigned k = 0, reg = r1;; ++k, reg = (reg + 1) & 15) {
      if (!((s->saved >> reg) & 1)) s->saved_at[reg] = first + int64_t{abi.word} * k;
      s->saved |= static_cast<uint16_t>(1u << reg);
      if (reg == r3) break;
    }
    return Step::kPrologue;
  }
  if (add_to_stack_pointer(insn, abi, &value)) {
    s->sp_below -= value;
    return Step::kPrologue;
  }
  unsigned to = 0, from = 0;
  if (register_copy(insn, abi, &to, &from)) {
    if (to == kR11 && from == kR15 && !s->fp_set) {
      s->fp_set = true;
      s->fp_below = s->sp_below;
      return Step::kPrologue;
    }
    return to == 10 ? Step::kNeutral : unless_frame_register(to, *s);  // a copy writes r10 alone, not r11
  }
  return other_instruction(insn, at, pc_offset, *s);
}

}  // namespace

bool prologue_row(Bytes code, uint64_t pc_offset, UnwindRow* row, const Abi& abi) {
  const bool return_address = pc_offset == kReturnAddressFrame;
  PrologueState s;
  size_t at = 0;
  bool at_pc = false, ended = false;
  while (!ended) {
    if (at >= pc_offset) {
      at_pc = true;
      break;
    }
    if (at >= code.size() || code.size() - at < length_of(code[at])) break;
    const Bytes insn = code.subspan(at, length_of(code[at]));
    ended = step(insn, at, pc_offset, abi, &s) == Step::kEnd;
    if (!ended) at += insn.size();
  }
  if (!at_pc && !ended) return false;  // the code ran out inside the prologue
  if (return_address && !((s.saved >> kR14) & 1)) return false;
  *row = entry_row(abi);
  row->cfa.reg = s.fp_set ? kR11 : kR15;
  row->cfa.offset = abi.register_save_area + (s.fp_set ? s.fp_below : s.sp_below);
  for (uint16_t reg = 0; reg < kR15; ++reg)
    if ((s.saved >> reg) & 1) (void)row->set(offset_rule(reg, s.saved_at[reg] - abi.register_save_area));
  return true;
}

bool at_return(Bytes code) { return code.size() >= 2 && code[0] == 0x07 && code[1] == 0xfe; }

bool ends_with_call(Bytes before) {
  const size_t n = before.size();
  if (n >= 6 && before[n - 6] == 0xc0 && (before[n - 5] & 15) == 5) return true;  // brasl
  if (n >= 4 && ((before[n - 4] == 0xa7 && (before[n - 3] & 15) == 5) ||          // bras
                 before[n - 4] == 0x45 || before[n - 4] == 0x4d))                  // bal, bas
    return true;
  // basr, balr; with r2 = 0 they do not branch (`basr %r13,0` loads an address).
  return n >= 2 && (before[n - 2] == 0x0d || before[n - 2] == 0x05) && (before[n - 1] & 15) != 0;
}

}  // namespace framewalk::arch::s390x

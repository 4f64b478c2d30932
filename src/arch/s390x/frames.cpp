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

// psw, gprs[16], acrs[16] at `offset`: the start of elf_gregset_t and of _sigregs.
RegisterFile from_psw_and_gprs(Bytes bytes, size_t offset) {
  RegisterFile r;
  set_from(bytes, offset, 8, kPswMask, &r);
  set_from(bytes, offset + 8, 8, kPswAddress, &r);
  for (uint16_t i = 0; i < 16; ++i) set_from(bytes, offset + kSigregsGprsOffset + 8 * i, 8, i, &r);
  for (uint16_t i = 0; i < 16; ++i) set_from(bytes, offset + kSigregsGprsOffset + 128 + 4 * i, 4, kA0 + i, &r);
  return r;
}

RegisterRule offset_rule(uint16_t reg, int64_t offset) { return RegisterRule{reg, RuleKind::kOffset, offset, {}, 0}; }

// DW_OP_breg15 168; DW_OP_deref: where sigcontext.sregs points (static: a row only points at it).
constexpr uint8_t kSregsPointer[] = {0x7f, 0xa8, 0x01, 0x06};
static_assert(kSigcontextSregsOffset == 168);

}  // namespace

uint16_t fpr_dwarf(unsigned n) { return kFprDwarf[n & 15]; }

RegisterFile from_user_regs_bytes(Bytes bytes) { return from_psw_and_gprs(bytes, 0); }

RegisterFile from_capture(const uint64_t* captured) {
  RegisterFile r;
  for (uint16_t reg = 6; reg <= kR15; ++reg) r.set(reg, captured[reg]);
  r.set(kPswAddress, captured[kCapturedPcWord]);
  return r;
}

void add_fpregs_bytes(Bytes bytes, RegisterFile* registers) {
  for (unsigned i = 0; i < 16; ++i) set_from(bytes, kFpregsFprsOffset + 8 * i, 8, kFprDwarf[i], registers);
}

RegisterFile from_ucontext_bytes(Bytes bytes) {
  RegisterFile r = from_psw_and_gprs(bytes, kUcontextMcontextOffset);
  for (unsigned i = 0; i < 16; ++i)
    set_from(bytes, kUcontextMcontextOffset + kSigregsFprsOffset + 8 * i, 8, kFprDwarf[i], &r);
  return r;
}

std::optional<Trampoline> trampoline_at(Bytes code) {
  if (code.size() < 2) return std::nullopt;
  if (std::memcmp(code.data(), kSigreturnCode, 2) == 0) return Trampoline::kSigreturn;
  if (std::memcmp(code.data(), kRtSigreturnCode, 2) == 0) return Trampoline::kRtSigreturn;
  return std::nullopt;
}

UnwindRow signal_frame_row(Trampoline kind) {
  UnwindRow row;
  if (kind == Trampoline::kRtSigreturn) {
    row.cfa.kind = CfaKind::kRegisterOffset;
    row.cfa.reg = kR15;
    row.cfa.offset = kRtSigframeMcontextOffset;
  } else {
    row.cfa.kind = CfaKind::kExpression;
    row.cfa.expression = Bytes(kSregsPointer, sizeof kSregsPointer);
  }
  row.return_address_register = kPswAddress;
  row.signal_frame = true;
  (void)row.set(offset_rule(kPswAddress, 8));
  for (uint16_t i = 0; i < 16; ++i) (void)row.set(offset_rule(i, kSigregsGprsOffset + 8 * i));
  for (unsigned i = 0; i < 16; ++i) (void)row.set(offset_rule(kFprDwarf[i], kSigregsFprsOffset + 8 * i));
  return row;
}

UnwindRow entry_row() {
  UnwindRow row;
  row.cfa.kind = CfaKind::kRegisterOffset;
  row.cfa.reg = kR15;
  row.cfa.offset = kRegisterSaveArea;
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
// frame's (r10 too: an even-odd pair instruction on it writes r11).
bool frame_register(unsigned reg) { return reg == 10 || reg == kR11 || reg == kR14 || reg == kR15; }

// An instruction that is not the prologue's own but may sit among its
// instructions (at `at` in the function; `pc_offset` as for prologue_row):
// register-to-register operations and immediates into other registers,
// stores of floating-point registers, compares, a conditional return and,
// shrink-wrapping's test for an early exit, a forward conditional branch
// (for an activation only one whose target lies past its PC).
Step other_instruction(Bytes insn, size_t at, uint64_t pc_offset) {
  const uint8_t op = insn[0], r1 = insn[1] >> 4, low = insn[1] & 15;
  if (op == 0x60) return Step::kNeutral;                                                        // std
  if (op == 0x07 && low == kR14 && r1 != 0 && r1 != 15) return Step::kNeutral;  // b<cond>r %r14 (r1: the mask)
  if (op == 0xb9) return frame_register(insn[3] >> 4) ? Step::kEnd : Step::kNeutral;          // RRE: writes r1
  if (op == 0xc0 && low == 0x0) return frame_register(r1) ? Step::kEnd : Step::kNeutral;     // larl
  // Shifts (sllg .. srlk) and ahik/aghik: r1 from r3 or an immediate.
  const bool shift = op == 0xeb && ((insn[5] >= 0x0a && insn[5] <= 0x0d) || (insn[5] >= 0xdc && insn[5] <= 0xdf));
  if (shift || (op == 0xec && (insn[5] == 0xd8 || insn[5] == 0xd9)))
    return frame_register(r1) ? Step::kEnd : Step::kNeutral;
  if (op != 0xa7) return Step::kEnd;
  if (low == 0xe || low == 0xf) return Step::kNeutral;                                        // chi, cghi
  if (low >= 0x8 && low <= 0xd) return frame_register(r1) ? Step::kEnd : Step::kNeutral;    // lhi .. mghi
  if (low != 0x4 || r1 == 0 || r1 == 15) return Step::kEnd;  // not brc, or an unconditional one
  const int64_t offset = 2 * int64_t{static_cast<int16_t>((insn[2] << 8) | insn[3])};
  const bool return_address = pc_offset == kReturnAddressFrame;
  if (offset <= 0 || (!return_address && at + static_cast<uint64_t>(offset) <= pc_offset)) return Step::kEnd;
  return Step::kNeutral;
}

// One instruction of `insn` (all its bytes there, at `at`), applied to `s`.
Step step(Bytes insn, size_t at, uint64_t pc_offset, PrologueState* s) {
  const uint8_t op = insn[0], r1 = insn[1] >> 4, low = insn[1] & 15;
  if (op == 0xeb && insn[5] == 0x24 && (insn[2] >> 4) == kR15) {  // stmg r1,r3,d(%r15)
    const int64_t first = long_displacement(insn) - s->sp_below;  // r1's slot, from the entry r15
    for (unsigned k = 0, reg = r1;; ++k, reg = (reg + 1) & 15) {
      if (!((s->saved >> reg) & 1)) s->saved_at[reg] = first + 8 * int64_t{k};
      s->saved |= static_cast<uint16_t>(1u << reg);
      if (reg == low) break;
    }
    return Step::kPrologue;
  }
  if (op == 0xa7 && r1 == kR15 && low == 0xb) {  // aghi %r15,i16
    s->sp_below -= static_cast<int16_t>((insn[2] << 8) | insn[3]);
    return Step::kPrologue;
  }
  if (op == 0xc2 && r1 == kR15 && low == 0x8) {  // agfi %r15,i32
    s->sp_below -= static_cast<int32_t>((uint32_t{insn[2]} << 24) | (uint32_t{insn[3]} << 16) |
                                        (uint32_t{insn[4]} << 8) | insn[5]);
    return Step::kPrologue;
  }
  if (op == 0xe3 && insn[5] == 0x71 && r1 == kR15 && low == 0 && (insn[2] >> 4) == kR15) {  // lay %r15,d(%r15)
    s->sp_below -= long_displacement(insn);
    return Step::kPrologue;
  }
  if (op == 0xb9 && insn[1] == 0x04) {  // lgr r1,r2
    const unsigned to = insn[3] >> 4, from = insn[3] & 15;
    if (to == kR11 && from == kR15 && !s->fp_set) {
      s->fp_set = true;
      s->fp_below = s->sp_below;
      return Step::kPrologue;
    }
    return to == kR11 || to == kR14 || to == kR15 ? Step::kEnd : Step::kNeutral;
  }
  return other_instruction(insn, at, pc_offset);
}

}  // namespace

bool prologue_row(Bytes code, uint64_t pc_offset, UnwindRow* row) {
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
    ended = step(insn, at, pc_offset, &s) == Step::kEnd;
    if (!ended) at += insn.size();
  }
  if (!at_pc && !ended) return false;  // the code ran out inside the prologue
  if (return_address && !((s.saved >> kR14) & 1)) return false;
  *row = entry_row();
  row->cfa.reg = s.fp_set ? kR11 : kR15;
  row->cfa.offset = kRegisterSaveArea + (s.fp_set ? s.fp_below : s.sp_below);
  for (uint16_t reg = 0; reg < kR15; ++reg)
    if ((s.saved >> reg) & 1) (void)row->set(offset_rule(reg, s.saved_at[reg] - kRegisterSaveArea));
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

#include "arch/power/frames.hpp"

#include <algorithm>
#include <array>

namespace framewalk::arch::power {

namespace {

RegisterRule offset_rule(uint16_t reg, int64_t offset) { return RegisterRule{reg, RuleKind::kOffset, offset, {}, 0}; }

// The gregset's words the unwinder uses besides r0-r31, by DWARF number.
struct GregSlot {
  unsigned index;
  uint16_t reg;
};
constexpr GregSlot kSpecialGregs[] = {{kGregNip, kNip}, {kGregCtr, kCtr}, {kGregLink, kLr}, {kGregXer, kXer}};

// Instruction fields (Power ISA numbering: the primary opcode in the top 6 bits).
constexpr unsigned opcode(uint32_t i) { return i >> 26; }
constexpr unsigned rt(uint32_t i) { return (i >> 21) & 31; }
constexpr unsigned ra(uint32_t i) { return (i >> 16) & 31; }
constexpr int64_t d16(uint32_t i) { return static_cast<int16_t>(i & 0xffff); }   // D-form displacement
constexpr int64_t ds(uint32_t i) { return static_cast<int16_t>(i & 0xfffc); }    // DS-form displacement
constexpr uint32_t kMflrR0 = 0x7c0802a6;
constexpr uint32_t kNop = 0x60000000;
constexpr uint32_t kMrR31R1 = 0x7c3f0b78;  // or r31,r1,r1
constexpr uint32_t kSc = 0x44000002;
constexpr uint32_t kBclNext = 0x429f0005;
constexpr unsigned kFirstNonvolatile = 14;  // r14-r31 survive calls in both ABIs

// A store of a whole word through r1: stw/stwu (ppc32), std/stdu (ppc64).
struct WordStore {
  unsigned source;
  int64_t displacement;
  bool update;  // stwu/stdu: r1 becomes the address
};
std::optional<WordStore> word_store_via_r1(const Abi& abi, uint32_t insn) {
  if (ra(insn) != kR1) return std::nullopt;
  const unsigned op = opcode(insn);
  if (abi.word == 4 && (op == 36 || op == 37)) return WordStore{rt(insn), d16(insn), op == 37};
  if (abi.word == 8 && op == 62 && (insn & 3) <= 1) return WordStore{rt(insn), ds(insn), (insn & 3) == 1};
  return std::nullopt;
}

// What the prologue has done so far.
struct PrologueState {
  int64_t frame = 0;         // bytes stwu/stdu has taken below the entry r1
  bool lr_in_r0 = false;     // mflr r0 has run
  bool lr_saved = false;     // r0 stored to the caller's LR save word
};

// Whether `insn` (not a branch) may write r0: stores write no register
// but the base of an update form (never r0); the logical immediates write
// RA; X-forms are taken to write either field; the rest write RT.
bool may_write_r0(uint32_t insn) {
  const unsigned op = opcode(insn);
  if ((op >= 36 && op <= 39) || (op >= 44 && op <= 45) || op == 47 || (op >= 52 && op <= 55) || op == 62)
    return false;
  if (op >= 24 && op <= 29) return ra(insn) == kR0;
  if (op == 31) return rt(insn) == kR0 || ra(insn) == kR0;
  return rt(insn) == kR0;
}

// Whether an instruction that is not the prologue's own leaves what the
// row needs alone: not a branch, a system call or mtlr, and no write to r1
// (addi/addis, lwz/lwzu, ld, mr, stwux/stdux), nor to r0 while it holds the
// return address.
bool neutral(uint32_t insn, const PrologueState& s) {
  const unsigned op = opcode(insn);
  if (op == 16 || op == 17 || op == 18 || op == 19) return false;
  if ((op == 14 || op == 15 || op == 32 || op == 33 || op == 58) && rt(insn) == kR1) return false;
  if (op == 31) {
    const unsigned xo = (insn >> 1) & 0x3ff;
    if ((insn & 0xfc1fffff) == 0x7c0803a6) return false;                                  // mtlr
    if ((xo == 444 || xo == 181 || xo == 183) && ra(insn) == kR1) return false;          // mr r1; stdux, stwux r1
  }
  return !(s.lr_in_r0 && !s.lr_saved && may_write_r0(insn));
}

// Follows one prologue instruction; false if `insn` is not one.
bool step(const Abi& abi, uint32_t insn, PrologueState& s) {
  if (insn == kNop || insn == kMrR31R1) return true;
  if (insn == kMflrR0) {
    s.lr_in_r0 = true;
    return true;
  }
  // bcl 20,31,.+4 (then mflr rN): 32-bit PIC code's own address, once the
  // return address is safe in r0.
  if (insn == kBclNext) return s.lr_in_r0;
  // addis r2,r12,n (lis r2,n); addi r2,r2,n: ELFv2's global entry point's TOC pointer.
  if ((insn & 0xfffe0000) == 0x3c4c0000 || (insn & 0xffff0000) == 0x3c400000 || (insn & 0xffff0000) == 0x38420000)
    return true;
  const std::optional<WordStore> store = word_store_via_r1(abi, insn);
  if (!store) return false;
  if (store->update) {  // stwu/stdu r1,-n(r1)
    if (store->source != kR1 || store->displacement >= 0 || s.frame) return false;
    s.frame = -store->displacement;
    return true;
  }
  if (store->source == kR0 && s.lr_in_r0 && store->displacement == abi.lr_save + s.frame) s.lr_saved = true;
  return store->source != kR1;
}

// The return address at the CFA + `Offset`; a null back chain (a thread's
// first frame, as glibc's clone and _start make it) has none: 0, the end.
// The branches' 2-byte operands are in the machine's byte order.
template <uint8_t Offset, Endian E>
constexpr std::array<uint8_t, 10> kSavedLr = {
    0x12,                                                   // DW_OP_dup (the CFA)
    0x28, E == Endian::kBig ? 0 : 3, E == Endian::kBig ? 3 : 0,  // DW_OP_bra +3
    0x2f, E == Endian::kBig ? 0 : 3, E == Endian::kBig ? 3 : 0,  // DW_OP_skip +3: the CFA, 0
    0x23, Offset,                                           // DW_OP_plus_uconst Offset
    0x06,                                                   // DW_OP_deref
};

}  // namespace

uint32_t insn_at(const Abi& abi, Bytes code, size_t offset) {
  return static_cast<uint32_t>(ByteReader::unsigned_at(code, offset, 4, abi.endian).value_or(0));
}

RegisterFile from_gregs_bytes(const Abi& abi, Bytes bytes) {
  RegisterFile regs;
  for (unsigned i = 0; i < 32; ++i)
    if (auto v = ByteReader::unsigned_at(bytes, i * abi.word, abi.word, abi.endian)) regs.set(kR0 + i, *v);
  for (const GregSlot& s : kSpecialGregs)
    if (auto v = ByteReader::unsigned_at(bytes, s.index * abi.word, abi.word, abi.endian)) regs.set(s.reg, *v);
  return regs;
}

void add_fpregs_bytes(const Abi& abi, Bytes bytes, RegisterFile& registers) {
  for (unsigned i = 0; i < 32; ++i)
    if (auto v = ByteReader::unsigned_at(bytes, i * 8, 8, abi.endian)) registers.set(kF0 + i, *v);
}

bool is_sigreturn_at(const Abi& abi, Bytes code, size_t offset, uint16_t syscall) {
  return code.size() >= offset + 8 && insn_at(abi, code, offset) == (0x38000000u | syscall) &&
         insn_at(abi, code, offset + 4) == kSc;
}

void add_gregs_rules(const Abi& abi, int64_t fpregs, UnwindRow& row) {
  for (uint16_t i = 0; i < 32; ++i) {
    (void)row.set(offset_rule(kR0 + i, abi.word * i));
    (void)row.set(offset_rule(kF0 + i, fpregs + 8 * i));
  }
  for (const GregSlot& s : kSpecialGregs) (void)row.set(offset_rule(s.reg, abi.word * s.index));
}

UnwindRow entry_row() {
  UnwindRow row;
  row.cfa.kind = CfaKind::kRegisterOffset;
  row.cfa.reg = kR1;
  row.cfa.offset = 0;
  row.return_address_register = kLr;
  return row;
}

UnwindRow back_chain_row(const Abi& abi) {
  static constexpr uint8_t kDerefR1[] = {0x71, 0x00, 0x06};  // DW_OP_breg1 0; DW_OP_deref
  const bool big = abi.endian == Endian::kBig;
  const Bytes saved_lr = abi.lr_save == 4 ? (big ? Bytes(kSavedLr<4, Endian::kBig>) : Bytes(kSavedLr<4, Endian::kLittle>))
                                          : (big ? Bytes(kSavedLr<16, Endian::kBig>) : Bytes(kSavedLr<16, Endian::kLittle>));
  UnwindRow row = entry_row();
  row.cfa.kind = CfaKind::kExpression;
  row.cfa.expression = Bytes(kDerefR1, sizeof kDerefR1);
  (void)row.set(RegisterRule{kLr, RuleKind::kValExpression, 0, saved_lr, 0});
  return row;
}

UnwindRow chain_end_row() {
  UnwindRow row = entry_row();
  (void)row.set(RegisterRule{kLr, RuleKind::kUndefined, 0, {}, 0});
  return row;
}

bool prologue_row(const Abi& abi, Bytes code, uint64_t pc_offset, UnwindRow* row) {
  PrologueState s;
  for (size_t at = 0; at < pc_offset; at += 4) {
    if (at + 4 > code.size()) return false;
    const uint32_t insn = insn_at(abi, code, at);
    if (!step(abi, insn, s) && !neutral(insn, s)) return false;
  }
  *row = entry_row();
  row->cfa.offset = s.frame;
  if (s.lr_saved)
    (void)row->set(offset_rule(kLr, abi.lr_save));
  else if (s.lr_in_r0)
    (void)row->set(RegisterRule{kLr, RuleKind::kRegister, kR0, {}, 0});
  return true;
}

void add_prologue_saves(const Abi& abi, Bytes code, UnwindRow& row) {
  PrologueState s;
  for (size_t at = 0; at + 4 <= code.size(); at += 4) {
    const uint32_t insn = insn_at(abi, code, at);
    const std::optional<WordStore> store = word_store_via_r1(abi, insn);
    if (store && !store->update && store->source >= kFirstNonvolatile)
      (void)row.set(offset_rule(kR0 + store->source, store->displacement - s.frame));
    if (abi.word == 4 && opcode(insn) == 47 && ra(insn) == kR1)  // stmw rS,d(r1): rS-r31
      for (unsigned r = std::max(rt(insn), kFirstNonvolatile); r < 32; ++r)
        (void)row.set(offset_rule(kR0 + r, d16(insn) + 4 * (r - rt(insn)) - s.frame));
    if (!step(abi, insn, s) && !neutral(insn, s)) return;
  }
}

bool is_call(uint32_t insn) {
  if ((insn & 0xfc000001) == 0x48000001) return true;  // bl, bla
  if (opcode(insn) != 19 || !(insn & 1)) return false;
  const unsigned xo = (insn >> 1) & 0x3ff;
  return xo == 16 || xo == 528 || xo == 560;  // bclrl, bcctrl, bctarl
}

bool follows_call(const Abi& abi, Memory& memory, uint64_t return_address) {
  uint8_t insn[4];
  if (return_address < 4 || (return_address & 3) || memory.read(return_address - 4, insn, 4) != 4) return false;
  return is_call(insn_at(abi, Bytes(insn, 4), 0));
}

}  // namespace framewalk::arch::power

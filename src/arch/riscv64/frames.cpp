#include "arch/riscv64/frames.hpp"

#include "arch/capture.hpp"

namespace framewalk::arch::riscv64 {

namespace {

std::optional<uint64_t> word_at(Bytes bytes, size_t offset, unsigned size) {
  return ByteReader::unsigned_at(bytes, offset, size, Endian::kLittle);
}

RegisterFile from_gregs_at(Bytes bytes, size_t offset) {
  RegisterFile r;
  if (auto pc = word_at(bytes, offset, 8)) {
    r.set(kPc, *pc);
    r.set(0, 0);  // x0 is hard-wired
  }
  for (uint16_t i = 1; i < kGregsCount; ++i)
    if (auto v = word_at(bytes, offset + 8 * i, 8)) r.set(i, *v);
  return r;
}

void add_fpregs_at(Bytes bytes, size_t offset, RegisterFile& registers) {
  for (uint16_t i = 0; i < 32; ++i)
    if (auto v = word_at(bytes, offset + 8 * i, 8)) registers.set(kF0 + i, *v);
}

RegisterRule offset_rule(uint16_t reg, int64_t offset) { return RegisterRule{reg, RuleKind::kOffset, offset, {}, 0}; }

UnwindRow sp_row() {
  UnwindRow row;
  row.cfa.kind = CfaKind::kRegisterOffset;
  row.cfa.reg = kSp;
  row.cfa.offset = 0;
  row.return_address_register = kRa;
  return row;
}

constexpr unsigned opcode(uint32_t i) { return i & 0x7f; }
constexpr unsigned rd(uint32_t i) { return (i >> 7) & 31; }
constexpr unsigned funct3(uint32_t i) { return (i >> 12) & 7; }

constexpr int64_t sign_extend(uint64_t value, unsigned bits) {
  return static_cast<int64_t>(value << (64 - bits)) >> (64 - bits);
}

// What the prologue has done so far, relative to the entry stack pointer (the CFA).
struct PrologueState {
  int64_t frame = 0;  // bytes taken below the entry sp
  bool ra_saved = false, s0_saved = false;
  int64_t ra_at = 0, s0_at = 0;  // CFA offsets of the saves

  void save(unsigned reg, int64_t sp_offset) {
    if (reg == kRa && !ra_saved) {
      ra_saved = true;
      ra_at = sp_offset - frame;
    } else if (reg == kFp && !s0_saved) {
      s0_saved = true;
      s0_at = sp_offset - frame;
    }
  }
  // sp += delta: only a decrement is the prologue's.
  bool adjust(int64_t delta) {
    if (delta >= 0) return false;
    frame -= delta;
    return true;
  }
  // An instruction writing integer register `rd`, not the prologue's own.
  bool writes(unsigned reg) const { return reg != kSp && (reg != kRa || ra_saved); }
};

// Follows one 32-bit instruction; false where the prologue ends.
bool step32(uint32_t i, PrologueState& s) {
  const unsigned rs1 = (i >> 15) & 31, rs2 = (i >> 20) & 31;
  switch (opcode(i)) {
    case 0x13:  // op-imm: addi sp,sp,imm
      if (rd(i) == kSp && rs1 == kSp && funct3(i) == 0) return s.adjust(sign_extend(i >> 20, 12));
      return s.writes(rd(i));
    case 0x23:  // stores: sd rs2,imm(sp)
      if (funct3(i) == 3 && rs1 == kSp) s.save(rs2, sign_extend(((i >> 25) << 5) | ((i >> 7) & 31), 12));
      return true;
    case 0x27: case 0x0f: return true;  // fp stores, fences
    case 0x03: case 0x17: case 0x1b: case 0x2f: case 0x33: case 0x37: case 0x3b: case 0x53:
      return s.writes(rd(i));  // loads, auipc, op, lui, amo, fp ops (conservatively: writes rd)
    case 0x07: return true;  // fp loads
    default: return false;  // branches, jal, jalr, system, unknown
  }
}

// Follows one compressed instruction; false where the prologue ends.
bool step16(uint16_t i, PrologueState& s) {
  const unsigned f3 = i >> 13, r = (i >> 7) & 31, r2 = (i >> 2) & 31;
  const uint64_t bit12 = (i >> 12) & 1;
  switch (i & 3) {
    case 0: return true;  // c.addi4spn, loads and stores through x8-x15
    case 1:
      if (f3 == 0 && r == kSp) return s.adjust(sign_extend(bit12 << 5 | r2, 6));  // c.addi sp
      if (f3 == 3 && r == kSp) {  // c.addi16sp
        const uint64_t imm = bit12 << 9 | ((i >> 3) & 3) << 7 | ((i >> 5) & 1) << 6 | ((i >> 2) & 1) << 5 |
                             ((i >> 6) & 1) << 4;
        return s.adjust(sign_extend(imm, 10));
      }
      if (f3 <= 3) return s.writes(r);  // c.addi, c.addiw, c.li, c.lui
      return f3 == 4;                    // arithmetic on x8-x15; not c.j, c.beqz, c.bnez
    default:
      if (f3 == 7) {  // c.sdsp
        s.save(r2, static_cast<int64_t>(((i >> 10) & 7) << 3 | ((i >> 7) & 7) << 6));
        return true;
      }
      if (f3 == 5 || f3 == 6) return true;  // c.fsdsp, c.swsp
      if (f3 == 4 && r2 == 0) return false;  // c.jr, c.jalr, c.ebreak
      return s.writes(r);  // c.slli, c.fldsp (conservative), c.lwsp, c.ldsp, c.mv, c.add
  }
}

// The offset of a conditional branch (beq.. bgeu; c.beqz, c.bnez), if `insn` (of `size` bytes) is one.
std::optional<int64_t> conditional_branch(uint32_t i, size_t size) {
  if (size == 4) {
    if (opcode(i) != 0x63) return std::nullopt;
    return sign_extend(uint64_t{i >> 31} << 12 | uint64_t{(i >> 7) & 1} << 11 | uint64_t{(i >> 25) & 0x3f} << 5 |
                           uint64_t{(i >> 8) & 0xf} << 1,
                       13);
  }
  if ((i & 3) != 1 || (i >> 13) < 6) return std::nullopt;
  return sign_extend(uint64_t{(i >> 12) & 1} << 8 | uint64_t{(i >> 10) & 3} << 3 | uint64_t{(i >> 5) & 3} << 6 |
                         uint64_t{(i >> 3) & 3} << 1 | uint64_t{(i >> 2) & 1} << 5,
                     9);
}

// Whether `insn` leaves without linking: a return or a jump (c.j, c.jr, jal x0, jalr x0).
bool leaves(uint32_t i, size_t size) {
  if (size == 4) return (opcode(i) == 0x6f || opcode(i) == 0x67) && rd(i) == 0;
  return (i & 0xe003) == 0xa001 || ((i & 0xf07f) == 0x8002 && ((i >> 7) & 31) != 0);
}

}  // namespace

RegisterFile from_capture(const uint64_t* captured) {
  RegisterFile r;
  for (uint16_t reg : kCapturedKnown) r.set(reg, captured[captured_word(reg)]);
  return r;
}

RegisterFile from_gregs_bytes(Bytes bytes) { return from_gregs_at(bytes, 0); }

void add_fpregs_bytes(Bytes bytes, RegisterFile& registers) { add_fpregs_at(bytes, 0, registers); }

RegisterFile from_ucontext_bytes(Bytes bytes) {
  RegisterFile r = from_gregs_at(bytes, kUcontextMcontextOffset);
  add_fpregs_at(bytes, kUcontextFpregsOffset, r);
  return r;
}

bool is_trampoline(Bytes code) {
  return word_at(code, 0, 4) == kLiA7RtSigreturn && word_at(code, 4, 4) == kEcall;
}

UnwindRow signal_frame_row() {
  UnwindRow row = sp_row();
  row.return_address_register = kPc;
  row.signal_frame = true;
  constexpr int64_t gregs = kSiginfoSize + kUcontextMcontextOffset;
  constexpr int64_t fpregs = kSiginfoSize + kUcontextFpregsOffset;
  (void)row.set(offset_rule(kPc, gregs));
  for (uint16_t i = 1; i < kGregsCount; ++i) (void)row.set(offset_rule(i, gregs + 8 * i));
  for (uint16_t i = 0; i < 32; ++i) (void)row.set(offset_rule(kF0 + i, fpregs + 8 * i));
  return row;
}

UnwindRow entry_row() { return sp_row(); }

UnwindRow frame_pointer_row() {
  UnwindRow row = sp_row();
  row.cfa.reg = kFp;
  (void)row.set(offset_rule(kRa, -8));
  (void)row.set(offset_rule(kFp, -16));
  return row;
}

UnwindRow chain_end_row() {
  UnwindRow row = sp_row();
  (void)row.set(RegisterRule{kRa, RuleKind::kUndefined, 0, {}, 0});
  return row;
}

bool prologue_row(Bytes code, uint64_t pc_offset, UnwindRow* row) {
  PrologueState s;
  // Shrink-wrapping tests first (`beqz a0,1f; ret; 1: addi sp,sp,-16`):
  // past a forward conditional branch the scan goes on in line, and at a
  // return or jump (the early exit) on at that branch's target.
  uint64_t pending = 0;
  for (uint64_t at = 0; at < pc_offset && at + 2 <= code.size();) {
    const auto low = *word_at(code, at, 2);
    const size_t size = (low & 3) == 3 ? 4 : 2;
    const auto insn = word_at(code, at, static_cast<unsigned>(size));
    if (!insn) break;
    const auto i = static_cast<uint32_t>(*insn);
    if (auto offset = conditional_branch(i, size); offset && *offset > 0) {
      pending = at + static_cast<uint64_t>(*offset);
      at += size;
      continue;
    }
    if (leaves(i, size) && pending > at && pending <= pc_offset) {
      at = pending;
      pending = 0;
      continue;
    }
    if (!(size == 2 ? step16(static_cast<uint16_t>(i), s) : step32(i, s))) break;
    at += size;
  }
  if (pc_offset == kReturnAddressFrame && !s.ra_saved) return false;
  *row = sp_row();
  row->cfa.offset = s.frame;
  if (s.ra_saved) (void)row->set(offset_rule(kRa, s.ra_at));
  if (s.s0_saved) (void)row->set(offset_rule(kFp, s.s0_at));
  return true;
}

bool is_call(uint32_t insn) {
  if (rd(insn) != kRa) return false;
  return opcode(insn) == 0x6f || (opcode(insn) == 0x67 && funct3(insn) == 0);  // jal; jalr
}

bool is_compressed_call(uint16_t insn) {
  // c.jalr rs1: funct4 1001, rs1 != 0, rs2 = 0, op 10 (rs1 0 is c.ebreak).
  return (insn & 0xf07f) == 0x9002 && ((insn >> 7) & 31) != 0;
}

bool at_return(Bytes code) {
  constexpr uint16_t kCJrRa = 0x8082;
  constexpr uint32_t kRet = 0x00008067;
  return word_at(code, 0, 2) == kCJrRa || word_at(code, 0, 4) == kRet;
}

}  // namespace framewalk::arch::riscv64

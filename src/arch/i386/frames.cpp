#include "arch/i386/frames.hpp"

#include <cstring>

#include "arch/x86_64/instruction.hpp"

namespace framewalk::arch::i386 {

namespace {

// The 4-byte little-endian word at `offset` in `bytes`, when it is all there.
std::optional<uint64_t> slot(Bytes bytes, size_t offset) {
  return ByteReader::unsigned_at(bytes, offset, 4, Endian::kLittle);
}

// The DWARF number of each user_regs_struct slot (-1: not a register the unwinder uses).
constexpr int16_t kUserRegsToDwarf[kUserRegsCount] = {kEbx, kEcx, kEdx, kEsi, kEdi, kEbp, kEax, kDs, kEs,
                                                      kFs,  kGs,  -1,   kEip, kCs,  kEflags, kEsp, kSs};

RegisterFile from_slots(Bytes bytes, size_t offset, const int16_t* dwarf, unsigned count) {
  RegisterFile r;
  for (unsigned i = 0; i < count; ++i)
    if (dwarf[i] >= 0)
      if (auto v = slot(bytes, offset + 4 * i)) r.set(static_cast<unsigned>(dwarf[i]), *v);
  return r;
}

UnwindRow base_row(uint16_t cfa_reg, int64_t cfa_offset) {
  UnwindRow row;
  row.cfa.kind = CfaKind::kRegisterOffset;
  row.cfa.reg = cfa_reg;
  row.cfa.offset = cfa_offset;
  row.return_address_register = kEip;
  (void)row.set(RegisterRule{kEip, RuleKind::kOffset, -4, {}, 0});
  return row;
}

}  // namespace

RegisterFile from_capture(const uint64_t* captured) {
  RegisterFile r;
  for (uint16_t reg : kCapturedKnown) r.set(reg, captured[reg]);
  return r;
}

RegisterFile from_user_regs_bytes(Bytes bytes) { return from_slots(bytes, 0, kUserRegsToDwarf, kUserRegsCount); }

RegisterFile from_ucontext_bytes(Bytes bytes) {
  return from_slots(bytes, kUcontextMcontextOffset, kSigcontextToDwarf, kSigcontextSlots);
}

std::optional<Trampoline> trampoline_at(Bytes code) {
  if (code.size() >= sizeof kSigreturnCode && std::memcmp(code.data(), kSigreturnCode, sizeof kSigreturnCode) == 0)
    return Trampoline::kSigreturn;
  if (code.size() >= sizeof kRtSigreturnCode &&
      std::memcmp(code.data(), kRtSigreturnCode, sizeof kRtSigreturnCode) == 0)
    return Trampoline::kRtSigreturn;
  return std::nullopt;
}

UnwindRow signal_frame_row(Trampoline kind) {
  const int64_t context = kind == Trampoline::kSigreturn ? kSigframeContextOffset : kRtSigframeContextOffset;
  UnwindRow row;
  row.cfa.kind = CfaKind::kRegisterOffset;
  row.cfa.reg = kEsp;
  row.cfa.offset = 0;
  row.return_address_register = kEip;
  row.signal_frame = true;
  for (unsigned i = 0; i < kSigcontextSlots; ++i) {
    const int16_t reg = kSigcontextToDwarf[i];
    // The general registers and eip; the segment registers and eflags stay
    // as they are (no CFI of user code reads them).
    if (reg < 0 || reg > kEip) continue;
    (void)row.set(RegisterRule{static_cast<uint16_t>(reg), RuleKind::kOffset, context + 4 * int64_t{i}, {}, 0});
  }
  return row;
}

UnwindRow frame_pointer_row() {
  UnwindRow row = base_row(kEbp, 8);
  (void)row.set(RegisterRule{kEbp, RuleKind::kOffset, -8, {}, 0});
  return row;
}

UnwindRow entry_row() { return base_row(kEsp, 4); }

UnwindRow chain_end_row() {
  UnwindRow row = base_row(kEsp, 4);
  (void)row.set(RegisterRule{kEip, RuleKind::kUndefined, 0, {}, 0});
  return row;
}

namespace {

constexpr uint8_t kPushEbp = 0x55;

// `sub $imm,%esp` or `add $imm,%esp` (imm8 or imm32): the bytes it takes
// off the stack pointer (negative for add), or nullopt.
std::optional<int64_t> esp_adjustment(Bytes code, size_t at, size_t* len) {
  if (at + 3 > code.size() || (code[at] != 0x83 && code[at] != 0x81)) return std::nullopt;
  const uint8_t modrm = code[at + 1];
  if (modrm != 0xec && modrm != 0xc4) return std::nullopt;  // /5 (sub) or /0 (add), register esp
  int64_t imm;
  if (code[at] == 0x83) {
    imm = static_cast<int8_t>(code[at + 2]);
    *len = 3;
  } else {
    if (at + 6 > code.size()) return std::nullopt;
    int32_t imm32;
    std::memcpy(&imm32, code.data() + at + 2, 4);
    imm = imm32;
    *len = 6;
  }
  return modrm == 0xec ? imm : -imm;
}

// An instruction of 32-bit code, for stepping over it: x86-64's decoder,
// but for what 32-bit mode reads otherwise (40-4f are inc/dec, not REX; 67
// selects 16-bit addressing).
std::optional<x86_64::Instruction> decode(Bytes code) {
  size_t at = 0;
  while (at < code.size() && at < 4 &&
         (code[at] == 0x66 || code[at] == 0xf2 || code[at] == 0xf3 || code[at] == 0x2e || code[at] == 0x3e ||
          code[at] == 0x26 || code[at] == 0x64 || code[at] == 0x65 || code[at] == 0x36))
    ++at;
  if (at >= code.size() || code[at] == 0x67) return std::nullopt;
  if (code[at] >= 0x40 && code[at] <= 0x4f) {
    x86_64::Instruction insn;
    insn.length = static_cast<uint8_t>(at + 1);
    insn.writes = static_cast<uint16_t>(1u << (code[at] & 7));
    return insn;
  }
  return x86_64::decode_instruction(code);
}

enum class PrologueEnd { kAtPc, kBody, kUnknown, kCodeEnd };

// DW_OP_breg5 (ebp) -4*i, and the same followed by DW_OP_deref, i = 0..8:
// the expressions of a realigned frame's rows (static: a row only points at them).
constexpr uint8_t kEbpSlot[9][2] = {{0x75, 0x00}, {0x75, 0x7c}, {0x75, 0x78}, {0x75, 0x74}, {0x75, 0x70},
                                    {0x75, 0x6c}, {0x75, 0x68}, {0x75, 0x64}, {0x75, 0x60}};
constexpr uint8_t kEbpSlotDeref[9][3] = {{0x75, 0x00, 0x06}, {0x75, 0x7c, 0x06}, {0x75, 0x78, 0x06},
                                         {0x75, 0x74, 0x06}, {0x75, 0x70, 0x06}, {0x75, 0x6c, 0x06},
                                         {0x75, 0x68, 0x06}, {0x75, 0x64, 0x06}, {0x75, 0x60, 0x06}};

// gcc's prologue for a function that realigns its stack (i386's main):
//   lea 0x4(%esp),%ecx; and $-N,%esp; push -0x4(%ecx); push %ebp; mov %esp,%ebp;
//   push %edi/%esi/%ebx ...; [call __x86.get_pc_thunk.bx; add $imm32,%ebx;] push %ecx
// The CFA (the entry esp + 4) is the saved ecx, at ebp - 4 * (pushes + 1);
// ebp and the pushed registers are at fixed distances below ebp. Only once
// `push %ecx` has run (a return-address frame, or an activation past it);
// else nullopt, also for any other code.
std::optional<bool> realigned_prologue_row(Bytes code, uint64_t pc_offset, UnwindRow* row) {
  static constexpr uint8_t kStart[] = {0x8d, 0x4c, 0x24, 0x04, 0x83, 0xe4};
  static constexpr uint8_t kPushReturn[] = {0xff, 0x71, 0xfc, 0x55};
  if (code.size() < 14 || std::memcmp(code.data(), kStart, sizeof kStart) != 0 ||
      std::memcmp(code.data() + 7, kPushReturn, sizeof kPushReturn) != 0)
    return std::nullopt;
  size_t at = 11;
  if (!((code[at] == 0x89 && code[at + 1] == 0xe5) || (code[at] == 0x8b && code[at + 1] == 0xec))) return false;
  at += 2;
  uint16_t pushed[7];
  unsigned count = 0;
  while (at < code.size()) {
    const uint8_t b = code[at];
    if (b == 0x51) break;  // push %ecx: the CFA saved
    if (b >= 0x50 && b <= 0x57 && b != 0x54 && b != 0x55 && count < 7) {
      pushed[count++] = static_cast<uint16_t>(b - 0x50);
      at += 1;
    } else if (b == 0xe8 && at + 5 <= code.size()) {
      at += 5;  // the PC thunk: a call that returns at once
    } else if (b == 0x81 && at + 6 <= code.size() && (code[at + 1] & 0xf8) == 0xc0) {
      at += 6;  // add $imm32,%reg (the GOT address)
    } else {
      return false;
    }
  }
  if (at >= code.size() || (pc_offset != kReturnAddressFrame && pc_offset <= at)) return false;
  *row = UnwindRow{};
  row->return_address_register = kEip;
  row->cfa.kind = CfaKind::kExpression;
  row->cfa.expression = Bytes(kEbpSlotDeref[count + 1], 3);
  (void)row->set(RegisterRule{kEip, RuleKind::kOffset, -4, {}, 0});
  (void)row->set(RegisterRule{kEbp, RuleKind::kExpression, 0, Bytes(kEbpSlot[0], 2), 0});
  for (unsigned i = 0; i < count; ++i)
    (void)row->set(RegisterRule{pushed[i], RuleKind::kExpression, 0, Bytes(kEbpSlot[i + 1], 2), 0});
  return true;
}

}  // namespace

bool prologue_row(Bytes code, uint64_t pc_offset, UnwindRow* row) {
  if (auto realigned = realigned_prologue_row(code, pc_offset, row)) return *realigned;
  // push %eax..%edi: opcode 0x50 + n, n in hardware order = DWARF order on i386.
  const bool return_address = pc_offset == kReturnAddressFrame;
  int64_t delta = 0;  // bytes below the entry's esp
  bool recognised = false, ebp_pushed = false, fp_set = false;
  int64_t fp_delta = 0;
  struct Saved { uint16_t reg; int64_t delta; };
  Saved saved[8];
  int saved_count = 0;
  size_t at = 0;
  PrologueEnd end = PrologueEnd::kCodeEnd;
  while (true) {
    if (at >= pc_offset) {
      end = PrologueEnd::kAtPc;
      break;
    }
    if (at >= code.size()) break;
    const uint8_t b = code[at];
    size_t len = 0;
    if (b == 0xf3 && at + 4 <= code.size() && code[at + 1] == 0x0f && code[at + 2] == 0x1e && code[at + 3] == 0xfb) {
      len = 4;  // endbr32
    } else if (b >= 0x50 && b <= 0x57) {
      delta += 4;
      if (saved_count < 8) saved[saved_count++] = {static_cast<uint16_t>(b - 0x50), delta};
      ebp_pushed |= b == kPushEbp;
      recognised = true;
      len = 1;
    } else if (at + 2 <= code.size() && ((b == 0x89 && code[at + 1] == 0xe5) || (b == 0x8b && code[at + 1] == 0xec))) {
      fp_set = true;
      fp_delta = delta;
      recognised = true;
      len = 2;
    } else if (auto adjust = esp_adjustment(code, at, &len)) {
      delta += *adjust;
      recognised = true;
    } else if (ebp_pushed && !fp_set) {
      const auto insn = decode(code.subspan(at));
      if (!insn) {
        end = PrologueEnd::kUnknown;
        break;
      }
      if (insn->branch || insn->writes_register(x86_64::kHwRsp) || insn->writes_register(x86_64::kHwRbp)) {
        end = PrologueEnd::kBody;
        break;
      }
      len = insn->length;
    } else {
      end = PrologueEnd::kBody;
      break;
    }
    at += len;
  }
  if (end == PrologueEnd::kUnknown) return false;
  if (return_address && !fp_set && (end == PrologueEnd::kCodeEnd || !recognised)) return false;
  if (!return_address && end == PrologueEnd::kCodeEnd) return false;
  // ebp = entry esp - fp_delta, so CFA (entry esp + 4) = ebp + 4 + fp_delta.
  *row = fp_set ? base_row(kEbp, 4 + fp_delta) : base_row(kEsp, 4 + delta);
  for (int i = 0; i < saved_count; ++i)
    if (saved[i].reg != kEsp) (void)row->set(RegisterRule{saved[i].reg, RuleKind::kOffset, -(4 + saved[i].delta), {}, 0});
  return true;
}

bool at_epilogue_tail(Bytes code) {
  size_t at = 0;
  while (at < code.size()) {
    const uint8_t b = code[at];
    if (b == 0xc3) return true;                                                   // ret
    if (b == 0xf3 && at + 1 < code.size() && code[at + 1] == 0xc3) return true;  // rep ret
    // xor r, r/m with a register operand: no memory, no stack.
    if (at + 1 < code.size() && (b == 0x31 || b == 0x33) && (code[at + 1] & 0xc0) == 0xc0) {
      at += 2;
      continue;
    }
    return false;
  }
  return false;
}

}  // namespace framewalk::arch::i386

#include "arch/i386/frames.hpp"

#include <cstring>

#include "arch/x86_64/frames.hpp"
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

// i386's frames: 4-byte pushes, no REX (0x48 is dec), endbr32, its own
// register numbers and decoder.
const x86_64::X86Abi kI386Abi = {.word = 4,
                                 .rex_w = x86_64::X86Abi::RexW::kNever,
                                 .endbr_last = 0xfb,
                                 .sp = kEsp,
                                 .fp = kEbp,
                                 .pc = kEip,
                                 .push_reg = {0, 1, 2, 3, 4, 5, 6, 7},  // eax..edi: DWARF order is hardware order
                                 .rex_pushes = false,
                                 .decode = decode};
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

UnwindRow frame_pointer_row() { return x86_64::frame_pointer_row(kI386Abi); }

UnwindRow entry_row() { return x86_64::entry_row(kI386Abi); }

UnwindRow chain_end_row() { return x86_64::chain_end_row(kI386Abi); }

namespace {


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
  return x86_64::prologue_row(code, pc_offset, row, kI386Abi);
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

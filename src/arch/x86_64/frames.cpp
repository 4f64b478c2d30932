#include "arch/x86_64/frames.hpp"

#include <cstring>
#include <optional>

#include "arch/x86_64/instruction.hpp"

namespace framewalk::arch::x86_64 {

namespace {
// user_regs_struct order.
enum UserReg : unsigned {
  kUR15, kUR14, kUR13, kUR12, kURbp, kURbx, kUR11, kUR10, kUR9, kUR8, kURax, kURcx, kURdx,
  kURsi, kURdi, kUOrigRax, kURip, kUCs, kUEflags, kURsp, kUSs, kUFsBase, kUGsBase, kUDs, kUEs, kUFs, kUGs
};
}  // namespace

RegisterFile from_capture(const uint64_t* captured) {
  RegisterFile r;
  for (uint16_t reg : kCapturedKnown) r.set(reg, captured[reg]);
  return r;
}

namespace {
// The 8-byte little-endian word at `offset` in `bytes`, when it is all there.
std::optional<uint64_t> slot(Bytes bytes, size_t offset) {
  return ByteReader::unsigned_at(bytes, offset, 8, Endian::kLittle);
}

// The user_regs_struct slot of each DWARF register rax..r15, rip.
constexpr unsigned kUserRegsSlot[17] = {kURax, kURdx, kURcx, kURbx, kURsi, kURdi, kURbp, kURsp, kUR8,
                                        kUR9,  kUR10, kUR11, kUR12, kUR13, kUR14, kUR15, kURip};
}  // namespace

RegisterFile from_user_regs_bytes(Bytes bytes) {
  RegisterFile r;
  for (uint16_t reg = 0; reg < 17; ++reg)
    if (auto v = slot(bytes, 8 * kUserRegsSlot[reg])) r.set(reg, *v);
  return r;
}

RegisterFile from_ucontext_bytes(Bytes bytes, unsigned gregs_offset) {
  RegisterFile r;
  for (unsigned i = 0; i < 17; ++i)
    if (auto v = slot(bytes, gregs_offset + 8 * i)) r.set(kGregsToDwarf[i], *v);
  return r;
}

}  // namespace framewalk::arch::x86_64

namespace framewalk::arch::x86_64 {

namespace {
// x86-64 and x32 differ only in whether their code needs REX.W on rsp and rbp.
constexpr X86Abi x86_64_abi(X86Abi::RexW rex_w) {
  return {.word = 8,
          .rex_w = rex_w,
          .endbr_last = 0xfa,
          .sp = kRsp,
          .fp = kRbp,
          .pc = kRip,
          .push_reg = {kRax, kRcx, kRdx, kRbx, kRsp, kRbp, kRsi, kRdi},
          .rex_pushes = true,
          .decode = decode_instruction};
}
}  // namespace

const X86Abi kLp64Abi = x86_64_abi(X86Abi::RexW::kRequired);
const X86Abi kX32Abi = x86_64_abi(X86Abi::RexW::kOptional);

namespace {
UnwindRow base_row(const X86Abi& abi, uint16_t cfa_reg, int64_t cfa_offset) {
  UnwindRow row;
  row.cfa.kind = CfaKind::kRegisterOffset;
  row.cfa.reg = cfa_reg;
  row.cfa.offset = cfa_offset;
  row.return_address_register = abi.pc;
  (void)row.set(RegisterRule{abi.pc, RuleKind::kOffset, -abi.word, {}, 0});
  return row;
}
}  // namespace

UnwindRow signal_frame_row(unsigned gregs_offset) {
  UnwindRow row;
  row.cfa.kind = CfaKind::kRegisterOffset;
  row.cfa.reg = kRsp;
  row.cfa.offset = 0;
  row.return_address_register = kRip;
  row.signal_frame = true;
  for (unsigned i = 0; i < 17; ++i)
    (void)row.set(RegisterRule{kGregsToDwarf[i], RuleKind::kOffset,
                               static_cast<int64_t>(gregs_offset + 8 * i), {}, 0});
  return row;
}

UnwindRow frame_pointer_row(const X86Abi& abi) {
  UnwindRow row = base_row(abi, abi.fp, 2 * abi.word);
  (void)row.set(RegisterRule{abi.fp, RuleKind::kOffset, -2 * abi.word, {}, 0});
  return row;
}

UnwindRow entry_row(const X86Abi& abi) { return base_row(abi, abi.sp, abi.word); }

UnwindRow chain_end_row(const X86Abi& abi) {
  UnwindRow row = base_row(abi, abi.sp, abi.word);
  (void)row.set(RegisterRule{abi.pc, RuleKind::kUndefined, 0, {}, 0});
  return row;
}

namespace {
// How the analysis of a prologue ended.
enum class PrologueEnd {
  kAtPc,      // it reached the activation's PC: every instruction before it was followed
  kBody,      // at the first instruction that is not part of the prologue
  kUnknown,   // after `push %rbp`, at an instruction it cannot decode: a `mov %rsp,%rbp` may follow
  kCodeEnd,   // the bytes read end before either
};

// The length of the REX.W prefix of a 64-bit operation on the stack or
// frame pointer at `at` (1, or 0 where the ABI's code does without it), or
// nullopt where the ABI needs one and the code has none.
std::optional<size_t> rex_w(Bytes code, size_t at, const X86Abi& abi) {
  const bool has = at < code.size() && code[at] == 0x48;
  switch (abi.rex_w) {
    case X86Abi::RexW::kRequired: return has ? std::optional<size_t>(1) : std::nullopt;
    case X86Abi::RexW::kOptional: return has ? 1 : 0;
    case X86Abi::RexW::kNever: return 0;
  }
  return std::nullopt;
}

// `sub $imm,%rsp` or `add $imm,%rsp`, imm8 or imm32, sign-extended (gcc
// reserves 128 bytes with `add $-128,%rsp`): the bytes it takes off the
// stack pointer (negative for add), or nullopt for any other instruction.
std::optional<int64_t> sp_adjustment(Bytes code, size_t at, const X86Abi& abi, size_t* len) {
  const auto rex = rex_w(code, at, abi);
  if (!rex) return std::nullopt;
  const size_t op = at + *rex;
  if (op + 3 > code.size() || (code[op] != 0x83 && code[op] != 0x81)) return std::nullopt;
  const uint8_t modrm = code[op + 1];
  if (modrm != 0xec && modrm != 0xc4) return std::nullopt;  // /5 (sub) or /0 (add), register rsp
  int64_t imm;
  if (code[op] == 0x83) {
    imm = static_cast<int8_t>(code[op + 2]);
    *len = *rex + 3;
  } else {
    if (op + 6 > code.size()) return std::nullopt;
    int32_t imm32;
    std::memcpy(&imm32, code.data() + op + 2, 4);
    imm = imm32;
    *len = *rex + 6;
  }
  return modrm == 0xec ? imm : -imm;
}

// `mov %rsp,%rbp`, either encoding: its length, or 0.
size_t mov_sp_fp(Bytes code, size_t at, const X86Abi& abi) {
  const auto rex = rex_w(code, at, abi);
  if (!rex) return 0;
  const size_t op = at + *rex;
  if (op + 2 > code.size()) return 0;
  const bool mov = (code[op] == 0x89 && code[op + 1] == 0xe5) || (code[op] == 0x8b && code[op + 1] == 0xec);
  return mov ? *rex + 2 : 0;
}
}  // namespace

bool prologue_row(Bytes code, uint64_t pc_offset, UnwindRow* row, const X86Abi& abi) {
  const bool return_address = pc_offset == kReturnAddressFrame;
  int64_t delta = 0;             // bytes below the entry's stack pointer
  bool recognised = false;       // some instruction changed the stack or set the frame pointer
  bool fp_pushed = false;
  bool fp_set = false;
  int64_t fp_delta = 0;          // delta when the frame pointer was set
  struct Saved { uint16_t reg; int64_t delta; };
  Saved saved[16];
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
    if (b == 0xf3 && at + 4 <= code.size() && code[at + 1] == 0x0f && code[at + 2] == 0x1e &&
        code[at + 3] == abi.endbr_last) {
      len = 4;  // endbr64 / endbr32
    } else if (b >= 0x50 && b <= 0x57) {
      delta += abi.word;
      if (saved_count < 16) saved[saved_count++] = {abi.push_reg[b - 0x50], delta};
      fp_pushed |= b == kPushRbp;
      recognised = true;
      len = 1;
    } else if (abi.rex_pushes && b == 0x41 && at + 2 <= code.size() && code[at + 1] >= 0x50 && code[at + 1] <= 0x57) {
      delta += abi.word;
      if (saved_count < 16) saved[saved_count++] = {static_cast<uint16_t>(kR8 + (code[at + 1] - 0x50)), delta};
      recognised = true;
      len = 2;
    } else if (const size_t mov = mov_sp_fp(code, at, abi)) {
      fp_set = true;
      fp_delta = delta;
      recognised = true;
      len = mov;
    } else if (auto adjust = sp_adjustment(code, at, abi, &len)) {
      delta += *adjust;
      recognised = true;
    } else if (fp_pushed && !fp_set) {
      // Compilers schedule other instructions between `push %rbp` and
      // `mov %rsp,%rbp`: step over those that leave rsp, rbp and the flow alone.
      const auto insn = abi.decode(code.subspan(at));
      if (!insn) {
        end = PrologueEnd::kUnknown;
        break;
      }
      if (insn->branch || insn->writes_register(kHwRsp) || insn->writes_register(kHwRbp)) {
        end = PrologueEnd::kBody;  // rbp is an ordinary register here, or the code leaves the sequence
        break;
      }
      len = insn->length;
    } else {
      end = PrologueEnd::kBody;
      break;
    }
    at += len;
  }
  // Where the code leaves the frame in doubt, say so rather than guess.
  if (end == PrologueEnd::kUnknown) return false;
  if (return_address && !fp_set && (end == PrologueEnd::kCodeEnd || !recognised)) return false;
  if (!return_address && end == PrologueEnd::kCodeEnd) return false;
  // fp = entry sp - fp_delta, so CFA (entry sp + word) = fp + word + fp_delta.
  *row = fp_set ? base_row(abi, abi.fp, abi.word + fp_delta) : base_row(abi, abi.sp, abi.word + delta);
  for (int i = 0; i < saved_count; ++i)
    if (saved[i].reg != abi.sp)
      (void)row->set(RegisterRule{saved[i].reg, RuleKind::kOffset, -(abi.word + saved[i].delta), {}, 0});
  return true;
}

namespace {
template <size_t N>
bool starts_with(Bytes code, const uint8_t (&expected)[N]) {
  return code.size() >= N && std::memcmp(code.data(), expected, N) == 0;
}
}  // namespace

bool is_sigreturn_trampoline(Bytes code) { return starts_with(code, kSigreturnCode); }

bool is_x32_sigreturn_trampoline(Bytes code) {
  return starts_with(code, kX32SigreturnCode) || starts_with(code, kX32SigreturnCodeShort);
}

bool at_epilogue_tail(Bytes code) {
  size_t at = 0;
  while (at < code.size()) {
    const uint8_t b = code[at];
    if (b == 0xc3) return true;                                          // ret
    if (b == 0xf3 && at + 1 < code.size() && code[at + 1] == 0xc3) return true;  // rep ret
    if (b == 0xc5 && at + 2 < code.size() && code[at + 1] == 0xf8 && code[at + 2] == 0x77) {
      at += 3;  // vzeroupper
      continue;
    }
    const size_t op = (b & 0xf0) == 0x40 ? at + 1 : at;  // REX prefix
    // xor r, r/m with a register operand (ModRM mod 11): no memory, no stack.
    if (op + 1 < code.size() && (code[op] == 0x31 || code[op] == 0x33) && (code[op + 1] & 0xc0) == 0xc0) {
      at = op + 2;
      continue;
    }
    return false;
  }
  return false;
}

UnwindRow after_push_rbp_row() {
  UnwindRow row = base_row(kLp64Abi, kRsp, 16);
  (void)row.set(RegisterRule{kRbp, RuleKind::kOffset, -16, {}, 0});
  return row;
}

}  // namespace framewalk::arch::x86_64

#include "arch/x86_64/instruction.hpp"

namespace framewalk::arch::x86_64 {

namespace {

constexpr size_t kMaxInstructionLength = 15;  // the architecture's limit

// Which operand an instruction writes.
enum class Writes : uint8_t { kNothing, kReg, kRm, kRegAndRm };

struct Form {
  bool modrm = false;
  uint8_t imm = 0;             // immediate bytes after ModRM/SIB/displacement
  Writes writes = Writes::kNothing;
  bool byte_operands = false;  // 8-bit registers: 4..7 without REX are ah, ch, dh, bh
  uint16_t implicit = 0;       // registers written without being named by an operand
  bool branch = false;
};

constexpr uint16_t bit(unsigned hw) { return static_cast<uint16_t>(1u << hw); }
constexpr unsigned kHwRax = 0, kHwRdx = 2;

// Bytes taken by ModRM, SIB and displacement at `at`; 0 when cut off.
size_t modrm_length(Bytes code, size_t at) {
  if (at >= code.size()) return 0;
  const unsigned mod = code[at] >> 6, rm = code[at] & 7;
  size_t len = 1;
  if (mod == 3) return len;
  if (rm == 4) {  // SIB follows
    if (at + 1 >= code.size()) return 0;
    ++len;
    if (mod == 0 && (code[at + 1] & 7) == 5) len += 4;  // no base: disp32
  } else if (mod == 0 && rm == 5) {
    len += 4;  // rip-relative
  }
  if (mod == 1) len += 1;
  if (mod == 2) len += 4;
  return at + len <= code.size() ? len : 0;
}

// The form of the two-byte opcode 0f `op` (prefix f3 changes only 0f 7e).
std::optional<Form> two_byte_form(uint8_t op, bool rep) {
  Form f;
  f.modrm = true;
  if (op >= 0x80 && op <= 0x8f) return Form{false, 4, Writes::kNothing, false, 0, true};  // jcc rel32
  if (op >= 0x18 && op <= 0x1f) return f;                                              // hint nops, endbr64
  if (op >= 0x40 && op <= 0x4f) { f.writes = Writes::kReg; return f; }                 // cmovcc
  if (op >= 0x90 && op <= 0x9f) { f.writes = Writes::kRm; f.byte_operands = true; return f; }  // setcc
  switch (op) {
    case 0xaf: case 0xb6: case 0xb7: case 0xbe: case 0xbf:  // imul, movzx, movsx
    case 0x2c: case 0x2d: case 0x50: case 0xd7:             // SSE results in a general register
      f.writes = Writes::kReg;
      return f;
    case 0x7e:  // f3: movq xmm, xmm/m64; else movd/movq r/m, xmm
      if (!rep) f.writes = Writes::kRm;
      return f;
    case 0x70: case 0x71: case 0x72: case 0x73: case 0xc2: case 0xc6:  // SSE with imm8
      f.imm = 1;
      return f;
    // SSE moves and arithmetic whose destination is an xmm register or memory.
    case 0x10: case 0x11: case 0x12: case 0x13: case 0x14: case 0x15: case 0x16: case 0x17:
    case 0x28: case 0x29: case 0x2a: case 0x2e: case 0x2f: case 0x51: case 0x54: case 0x55:
    case 0x56: case 0x57: case 0x58: case 0x59: case 0x5a: case 0x5b: case 0x5c: case 0x5d:
    case 0x5e: case 0x5f: case 0x74: case 0x75: case 0x76: case 0x7f: case 0xd4: case 0xd6:
    case 0xdb: case 0xdf: case 0xeb: case 0xef: case 0xfa: case 0xfb: case 0xfe:
      return f;
    default:
      if (op >= 0x60 && op <= 0x6f) return f;  // punpck*, pack*, movd/movq/movdq* into xmm
      return std::nullopt;
  }
}

// The form of the one-byte opcode `op`; for the groups (80-83, c6/c7, f6/f7,
// fe/ff) `reg` is ModRM's reg field, which selects the operation.
std::optional<Form> one_byte_form(uint8_t op, unsigned reg, unsigned operand_bytes) {
  const uint8_t imm_operand = static_cast<uint8_t>(operand_bytes);
  if (op < 0x40 && (op & 7) < 6) {  // add, or, adc, sbb, and, sub, xor, cmp
    const bool cmp = (op >> 3) == 7;
    switch (op & 7) {
      case 0: return Form{true, 0, cmp ? Writes::kNothing : Writes::kRm, true, 0, false};
      case 1: return Form{true, 0, cmp ? Writes::kNothing : Writes::kRm, false, 0, false};
      case 2: return Form{true, 0, cmp ? Writes::kNothing : Writes::kReg, true, 0, false};
      case 3: return Form{true, 0, cmp ? Writes::kNothing : Writes::kReg, false, 0, false};
      case 4: return Form{false, 1, Writes::kNothing, false, cmp ? uint16_t{0} : bit(kHwRax), false};
      default: return Form{false, imm_operand, Writes::kNothing, false, cmp ? uint16_t{0} : bit(kHwRax), false};
    }
  }
  if (op >= 0x50 && op <= 0x5f) return Form{false, 0, Writes::kNothing, false, bit(kHwRsp), false};  // push, pop
  if (op >= 0x70 && op <= 0x7f) return Form{false, 1, Writes::kNothing, false, 0, true};             // jcc rel8
  if (op >= 0xb0 && op <= 0xb7) return Form{false, 1, Writes::kNothing, true, 0, false};  // mov r8, imm8
  if (op >= 0xb8 && op <= 0xbf) return Form{false, imm_operand, Writes::kNothing, false, 0, false};
  if (op >= 0x90 && op <= 0x97) return Form{};  // nop, xchg with rax: the registers are added by the caller
  switch (op) {
    case 0x63: return Form{true, 0, Writes::kReg, false, 0, false};            // movsxd
    case 0x68: return Form{false, imm_operand, Writes::kNothing, false, bit(kHwRsp), false};  // push $imm
    case 0x6a: return Form{false, 1, Writes::kNothing, false, bit(kHwRsp), false};
    case 0x69: return Form{true, imm_operand, Writes::kReg, false, 0, false};  // imul r, r/m, imm
    case 0x6b: return Form{true, 1, Writes::kReg, false, 0, false};
    case 0x80: return Form{true, 1, reg == 7 ? Writes::kNothing : Writes::kRm, true, 0, false};
    case 0x81: return Form{true, imm_operand, reg == 7 ? Writes::kNothing : Writes::kRm, false, 0, false};
    case 0x83: return Form{true, 1, reg == 7 ? Writes::kNothing : Writes::kRm, false, 0, false};
    case 0x84: return Form{true, 0, Writes::kNothing, true, 0, false};  // test
    case 0x85: return Form{true, 0, Writes::kNothing, false, 0, false};
    case 0x86: return Form{true, 0, Writes::kRegAndRm, true, 0, false};  // xchg
    case 0x87: return Form{true, 0, Writes::kRegAndRm, false, 0, false};
    case 0x88: return Form{true, 0, Writes::kRm, true, 0, false};  // mov
    case 0x89: return Form{true, 0, Writes::kRm, false, 0, false};
    case 0x8a: return Form{true, 0, Writes::kReg, true, 0, false};
    case 0x8b: return Form{true, 0, Writes::kReg, false, 0, false};
    case 0x8d: return Form{true, 0, Writes::kReg, false, 0, false};  // lea
    case 0x98: return Form{false, 0, Writes::kNothing, false, bit(kHwRax), false};  // cltq
    case 0x99: return Form{false, 0, Writes::kNothing, false, bit(kHwRdx), false};  // cqto
    case 0xa8: return Form{false, 1, Writes::kNothing, false, 0, false};            // test al, imm8
    case 0xa9: return Form{false, imm_operand, Writes::kNothing, false, 0, false};
    case 0xc0: return Form{true, 1, Writes::kRm, true, 0, false};  // shifts and rotates
    case 0xc1: return Form{true, 1, Writes::kRm, false, 0, false};
    case 0xd0: case 0xd2: return Form{true, 0, Writes::kRm, true, 0, false};
    case 0xd1: case 0xd3: return Form{true, 0, Writes::kRm, false, 0, false};
    case 0xc2: return Form{false, 2, Writes::kNothing, false, 0, true};  // ret imm16
    case 0xc3: return Form{false, 0, Writes::kNothing, false, 0, true};
    case 0xc6: if (reg != 0) return std::nullopt;  // c6 f8 is xabort
               return Form{true, 1, Writes::kRm, true, 0, false};
    case 0xc7: if (reg != 0) return std::nullopt;  // c7 f8 is xbegin
               return Form{true, imm_operand, Writes::kRm, false, 0, false};
    case 0xc9: return Form{false, 0, Writes::kNothing, false, bit(kHwRsp) | bit(kHwRbp), false};  // leave
    case 0xe0: case 0xe1: case 0xe2: case 0xe3: case 0xeb:  // loop*, jrcxz, jmp rel8
      return Form{false, 1, Writes::kNothing, false, 0, true};
    case 0xe8: case 0xe9: return Form{false, 4, Writes::kNothing, false, 0, true};  // call, jmp rel32
    case 0xf6: case 0xf7: {
      const bool byte = op == 0xf6;
      if (reg <= 1) return Form{true, byte ? uint8_t{1} : imm_operand, Writes::kNothing, byte, 0, false};  // test
      if (reg <= 3) return Form{true, 0, Writes::kRm, byte, 0, false};  // not, neg
      return Form{true, 0, Writes::kNothing, byte, bit(kHwRax) | bit(kHwRdx), false};  // mul, imul, div, idiv
    }
    case 0xfe: if (reg > 1) return std::nullopt;
               return Form{true, 0, Writes::kRm, true, 0, false};  // inc, dec
    case 0xff:
      if (reg <= 1) return Form{true, 0, Writes::kRm, false, 0, false};  // inc, dec
      if (reg <= 5) return Form{true, 0, Writes::kNothing, false, 0, true};  // call, jmp (near, far)
      if (reg == 6) return Form{true, 0, Writes::kNothing, false, bit(kHwRsp), false};  // push r/m
      return std::nullopt;
    default: return std::nullopt;
  }
}

}  // namespace

std::optional<Instruction> decode_instruction(Bytes code) {
  size_t at = 0;
  bool operand16 = false, rep = false;
  for (; at < code.size() && at < kMaxInstructionLength; ++at) {
    const uint8_t b = code[at];
    if (b == 0x66) operand16 = true;
    else if (b == 0xf3) rep = true;
    else if (b != 0xf2 && b != 0xf0 && b != 0x67 && b != 0x26 && b != 0x2e && b != 0x36 && b != 0x3e &&
             b != 0x64 && b != 0x65)
      break;
  }
  uint8_t rex = 0;
  if (at < code.size() && (code[at] & 0xf0) == 0x40) rex = code[at++];
  if (at >= code.size()) return std::nullopt;
  const bool rex_w = rex & 8;
  const unsigned rex_r = (rex >> 2) & 1, rex_b = rex & 1;
  uint8_t op = code[at++];
  const bool two_byte = op == 0x0f;
  if (two_byte) {
    if (at >= code.size()) return std::nullopt;
    op = code[at++];
  }
  // ModRM's reg field selects the operation in the groups: peek at it.
  const unsigned reg_field = at < code.size() ? (code[at] >> 3) & 7 : 0;
  const unsigned operand_bytes = rex_w || !operand16 ? 4 : 2;  // immediates: imm32 even for 64-bit operands
  std::optional<Form> form = two_byte ? two_byte_form(op, rep) : one_byte_form(op, reg_field, operand_bytes);
  if (!form) return std::nullopt;
  if (!two_byte && op >= 0xb8 && op <= 0xbf && rex_w) form->imm = 8;  // movabs $imm64, %r64

  Instruction insn;
  insn.branch = form->branch;
  insn.writes = form->implicit;
  const auto named = [&](unsigned number) {
    // Without REX, byte registers 4..7 are ah..bh, the high bytes of rax..rbx.
    if (form->byte_operands && !rex && number >= 4 && number < 8) number -= 4;
    insn.writes |= bit(number);
  };
  if (form->modrm) {
    const size_t len = modrm_length(code, at);
    if (len == 0) return std::nullopt;
    const uint8_t modrm = code[at];
    const bool register_operand = (modrm >> 6) == 3;
    if (!two_byte && op == 0x8d && register_operand) return std::nullopt;  // lea needs memory
    if (form->writes == Writes::kReg || form->writes == Writes::kRegAndRm) named(((modrm >> 3) & 7) | rex_r << 3);
    if ((form->writes == Writes::kRm || form->writes == Writes::kRegAndRm) && register_operand)
      named((modrm & 7) | rex_b << 3);
    at += len;
  } else if (!two_byte && ((op >= 0xb0 && op <= 0xbf) || (op >= 0x58 && op <= 0x5f) || (op >= 0x91 && op <= 0x97) ||
                           (op == 0x90 && rex_b))) {
    named((op & 7) | rex_b << 3);  // the register in the opcode: mov $imm, pop, xchg with rax
    if (op >= 0x90 && op <= 0x97) insn.writes |= bit(kHwRax);
  }
  at += form->imm;
  if (at > code.size() || at > kMaxInstructionLength) return std::nullopt;
  insn.length = static_cast<uint8_t>(at);
  return insn;
}

bool ends_with_call(Bytes code) {
  const size_t n = code.size();
  if (n >= 5 && code[n - 5] == 0xe8) return true;  // call rel32
  for (size_t len = 2; len <= 7 && len <= n; ++len) {
    const uint8_t opcode = code[n - len];
    const uint8_t modrm = code[n - len + 1];
    if (opcode == 0xff && ((modrm >> 3) & 7) == 2) return true;  // call r/m64
  }
  return false;
}

}  // namespace framewalk::arch::x86_64

// Decoding of call frame instructions (DWARF 5 section 6.4.2 plus GNU
// extensions), table-driven and shared by the executor and the dumpers.
#pragma once

#include <cstdint>

#include "base/byte_reader.hpp"
#include "base/result.hpp"

namespace framewalk::dwarf {

namespace cfa {
inline constexpr uint8_t kAdvanceLoc = 0x40, kOffset = 0x80, kRestore = 0xc0;
inline constexpr uint8_t kNop = 0x00, kSetLoc = 0x01, kAdvanceLoc1 = 0x02, kAdvanceLoc2 = 0x03,
    kAdvanceLoc4 = 0x04, kOffsetExtended = 0x05, kRestoreExtended = 0x06, kUndefined = 0x07,
    kSameValue = 0x08, kRegister = 0x09, kRememberState = 0x0a, kRestoreState = 0x0b,
    kDefCfa = 0x0c, kDefCfaRegister = 0x0d, kDefCfaOffset = 0x0e, kDefCfaExpression = 0x0f,
    kExpression = 0x10, kOffsetExtendedSf = 0x11, kDefCfaSf = 0x12, kDefCfaOffsetSf = 0x13,
    kValOffset = 0x14, kValOffsetSf = 0x15, kValExpression = 0x16,
    kMipsAdvanceLoc8 = 0x1d, kGnuWindowSave = 0x2d /* also AARCH64_negate_ra_state */,
    kGnuArgsSize = 0x2e, kGnuNegativeOffsetExtended = 0x2f;
}  // namespace cfa

enum class OperandKind : uint8_t {
  kNone,
  kUleb,       // unsigned LEB128
  kSleb,       // signed LEB128
  kU8, kU16, kU32, kU64,
  kAddress,    // DW_CFA_set_loc: encoded with the FDE's pointer encoding
  kBlock,      // ULEB128 length followed by that many bytes
};

struct CfaOpcodeInfo {
  const char* name;  // nullptr: not a known opcode
  OperandKind operands[2];
};

// Info for a primary opcode (the low 6 bits for 0x00..0x3f; the three
// high-bit forms are looked up as 0x40, 0x80 and 0xc0).
const CfaOpcodeInfo& cfa_opcode_info(uint8_t opcode);
// Name for an opcode, "DW_CFA_AARCH64_negate_ra_state" for 0x2d when `aarch64`.
const char* cfa_opcode_name(uint8_t opcode, bool aarch64 = false);

struct CfaInstruction {
  uint8_t opcode = 0;   // normalised: 0x40/0x80/0xc0 for the high-bit forms
  uint64_t operand1 = 0;  // register, delta, address or (for one-operand) value
  uint64_t operand2 = 0;  // raw second operand (sign-extended for SLEB)
  Bytes block;            // the expression for the block-carrying opcodes
  uint64_t offset = 0;    // section offset of the opcode byte
  uint64_t block_offset = 0;
};

struct DecodeContext {
  uint8_t address_size = 8;
  uint8_t pointer_encoding = 0;  // the FDE encoding, for DW_CFA_set_loc
  PointerBases bases;
};

// Decodes one instruction at the reader's cursor.
Result<CfaInstruction> decode_cfa_instruction(ByteReader& reader, const DecodeContext& context);

}  // namespace framewalk::dwarf

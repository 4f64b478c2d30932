#include "dwarf/cfa_instructions.hpp"

#include <array>

namespace framewalk::dwarf {

namespace {

using K = OperandKind;

constexpr std::array<CfaOpcodeInfo, 256> make_table() {
  std::array<CfaOpcodeInfo, 256> t{};
  for (auto& e : t) e = {nullptr, {K::kNone, K::kNone}};
  t[cfa::kNop] = {"DW_CFA_nop", {K::kNone, K::kNone}};
  t[cfa::kSetLoc] = {"DW_CFA_set_loc", {K::kAddress, K::kNone}};
  t[cfa::kAdvanceLoc1] = {"DW_CFA_advance_loc1", {K::kU8, K::kNone}};
  t[cfa::kAdvanceLoc2] = {"DW_CFA_advance_loc2", {K::kU16, K::kNone}};
  t[cfa::kAdvanceLoc4] = {"DW_CFA_advance_loc4", {K::kU32, K::kNone}};
  t[cfa::kOffsetExtended] = {"DW_CFA_offset_extended", {K::kUleb, K::kUleb}};
  t[cfa::kRestoreExtended] = {"DW_CFA_restore_extended", {K::kUleb, K::kNone}};
  t[cfa::kUndefined] = {"DW_CFA_undefined", {K::kUleb, K::kNone}};
  t[cfa::kSameValue] = {"DW_CFA_same_value", {K::kUleb, K::kNone}};
  t[cfa::kRegister] = {"DW_CFA_register", {K::kUleb, K::kUleb}};
  t[cfa::kRememberState] = {"DW_CFA_remember_state", {K::kNone, K::kNone}};
  t[cfa::kRestoreState] = {"DW_CFA_restore_state", {K::kNone, K::kNone}};
  t[cfa::kDefCfa] = {"DW_CFA_def_cfa", {K::kUleb, K::kUleb}};
  t[cfa::kDefCfaRegister] = {"DW_CFA_def_cfa_register", {K::kUleb, K::kNone}};
  t[cfa::kDefCfaOffset] = {"DW_CFA_def_cfa_offset", {K::kUleb, K::kNone}};
  t[cfa::kDefCfaExpression] = {"DW_CFA_def_cfa_expression", {K::kBlock, K::kNone}};
  t[cfa::kExpression] = {"DW_CFA_expression", {K::kUleb, K::kBlock}};
  t[cfa::kOffsetExtendedSf] = {"DW_CFA_offset_extended_sf", {K::kUleb, K::kSleb}};
  t[cfa::kDefCfaSf] = {"DW_CFA_def_cfa_sf", {K::kUleb, K::kSleb}};
  t[cfa::kDefCfaOffsetSf] = {"DW_CFA_def_cfa_offset_sf", {K::kSleb, K::kNone}};
  t[cfa::kValOffset] = {"DW_CFA_val_offset", {K::kUleb, K::kUleb}};
  t[cfa::kValOffsetSf] = {"DW_CFA_val_offset_sf", {K::kUleb, K::kSleb}};
  t[cfa::kValExpression] = {"DW_CFA_val_expression", {K::kUleb, K::kBlock}};
  t[cfa::kMipsAdvanceLoc8] = {"DW_CFA_MIPS_advance_loc8", {K::kU64, K::kNone}};
  t[cfa::kGnuWindowSave] = {"DW_CFA_GNU_window_save", {K::kNone, K::kNone}};
  t[cfa::kGnuArgsSize] = {"DW_CFA_GNU_args_size", {K::kUleb, K::kNone}};
  t[cfa::kGnuNegativeOffsetExtended] = {"DW_CFA_GNU_negative_offset_extended", {K::kUleb, K::kUleb}};
  // The high-bit forms carry their first operand in the low 6 bits.
  t[cfa::kAdvanceLoc] = {"DW_CFA_advance_loc", {K::kNone, K::kNone}};
  t[cfa::kOffset] = {"DW_CFA_offset", {K::kUleb, K::kNone}};
  t[cfa::kRestore] = {"DW_CFA_restore", {K::kNone, K::kNone}};
  return t;
}

constexpr std::array<CfaOpcodeInfo, 256> kTable = make_table();

}  // namespace

const CfaOpcodeInfo& cfa_opcode_info(uint8_t opcode) { return kTable[opcode]; }

const char* cfa_opcode_name(uint8_t opcode, bool aarch64) {
  if (opcode == cfa::kGnuWindowSave && aarch64) return "DW_CFA_AARCH64_negate_ra_state";
  return kTable[opcode].name;
}

Result<CfaInstruction> decode_cfa_instruction(ByteReader& reader, const DecodeContext& context) {
  CfaInstruction insn;
  insn.offset = reader.absolute_offset();
  FW_TRY(uint8_t byte, reader.u8());
  const uint8_t high = byte & 0xc0;
  const CfaOpcodeInfo* info;
  int first_operand = 0;
  if (high != 0) {
    insn.opcode = high;
    insn.operand1 = byte & 0x3f;
    info = &kTable[high];
    // DW_CFA_offset's ULEB is its second operand.
    if (high == cfa::kOffset) {
      FW_TRY(insn.operand2, reader.uleb128());
    }
    return insn;
  }
  insn.opcode = byte;
  info = &kTable[byte];
  if (!info->name) return Error{ErrorCode::kUnknownCfaOpcode, insn.offset};
  for (int i = first_operand; i < 2; ++i) {
    uint64_t value = 0;
    switch (info->operands[i]) {
      case K::kNone: break;
      case K::kUleb: { FW_TRY(value, reader.uleb128()); break; }
      case K::kSleb: { FW_TRY(int64_t v, reader.sleb128()); value = static_cast<uint64_t>(v); break; }
      case K::kU8: { FW_TRY(uint8_t v, reader.u8()); value = v; break; }
      case K::kU16: { FW_TRY(uint16_t v, reader.u16()); value = v; break; }
      case K::kU32: { FW_TRY(uint32_t v, reader.u32()); value = v; break; }
      case K::kU64: { FW_TRY(value, reader.u64()); break; }
      case K::kAddress: {
        FW_TRY(value, reader.encoded_pointer(context.pointer_encoding, context.address_size,
                                             context.bases));
        break;
      }
      case K::kBlock: {
        FW_TRY(uint64_t len, reader.uleb128());
        insn.block_offset = reader.absolute_offset();
        FW_TRY(insn.block, reader.bytes(len));
        value = len;
        break;
      }
    }
    if (i == 0) insn.operand1 = value; else insn.operand2 = value;
  }
  return insn;
}

}  // namespace framewalk::dwarf

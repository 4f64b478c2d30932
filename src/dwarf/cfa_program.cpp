#include "dwarf/cfa_program.hpp"

#include <new>

namespace framewalk::dwarf {

namespace detail {

DecodeContext decode_context(const CfiSection& section, const Cie& cie) {
  DecodeContext ctx;
  ctx.address_size = cie.address_size;
  ctx.pointer_encoding = cie.fde_encoding;
  ctx.bases = section.info().bases;
  return ctx;
}

namespace {

Result<uint16_t> checked_register(uint64_t reg, uint64_t offset) {
  if (reg > 0xffff) return Error{ErrorCode::kBadRegister, offset};
  return static_cast<uint16_t>(reg);
}

Result<void> set_rule(UnwindRow& row, uint64_t reg, RuleKind kind, int64_t value, uint64_t offset,
                      Bytes expression = {}, uint64_t expression_offset = 0) {
  FW_TRY(uint16_t r, checked_register(reg, offset));
  auto result = row.set(RegisterRule{r, kind, value, expression, expression_offset});
  if (!result) return Error{result.error().code, offset};
  return ok();
}

Result<void> restore_rule(ProgramState& state, uint64_t reg, uint64_t offset) {
  FW_TRY(uint16_t r, checked_register(reg, offset));
  if (const RegisterRule* rule = state.initial ? state.initial->find(r) : nullptr) {
    auto result = state.row.set(*rule);
    if (!result) return Error{result.error().code, offset};
  } else {
    state.row.erase(r);
  }
  return ok();
}

}  // namespace

Result<void> apply_instruction(ProgramState& state, const CfaInstruction& insn, const Cie& cie,
                               uint64_t location, bool* moves, uint64_t* new_location) {
  UnwindRow& row = state.row;
  const int64_t daf = cie.data_alignment;
  const uint64_t caf = cie.code_alignment;
  // Multiplications wrap like the unsigned arithmetic of the target.
  auto factored = [&](int64_t v) { return static_cast<int64_t>(static_cast<uint64_t>(v) * static_cast<uint64_t>(daf)); };
  auto advance = [&](uint64_t delta) {
    *moves = true;
    *new_location = location + delta * caf;
  };
  switch (insn.opcode) {
    case cfa::kAdvanceLoc:
    case cfa::kAdvanceLoc1:
    case cfa::kAdvanceLoc2:
    case cfa::kAdvanceLoc4:
    case cfa::kMipsAdvanceLoc8:
      advance(insn.operand1);
      return ok();
    case cfa::kSetLoc:
      *moves = true;
      *new_location = insn.operand1;
      return ok();
    case cfa::kOffset:
    case cfa::kOffsetExtended:
      return set_rule(row, insn.operand1, RuleKind::kOffset, factored(static_cast<int64_t>(insn.operand2)), insn.offset);
    case cfa::kOffsetExtendedSf:
      return set_rule(row, insn.operand1, RuleKind::kOffset, factored(static_cast<int64_t>(insn.operand2)), insn.offset);
    case cfa::kGnuNegativeOffsetExtended:
      return set_rule(row, insn.operand1, RuleKind::kOffset, factored(-static_cast<int64_t>(insn.operand2)), insn.offset);
    case cfa::kValOffset:
    case cfa::kValOffsetSf:
      return set_rule(row, insn.operand1, RuleKind::kValOffset, factored(static_cast<int64_t>(insn.operand2)), insn.offset);
    case cfa::kRestore:
    case cfa::kRestoreExtended:
      return restore_rule(state, insn.operand1, insn.offset);
    case cfa::kUndefined:
      return set_rule(row, insn.operand1, RuleKind::kUndefined, 0, insn.offset);
    case cfa::kSameValue:
      return set_rule(row, insn.operand1, RuleKind::kSameValue, 0, insn.offset);
    case cfa::kRegister: {
      FW_TRY(uint16_t target, checked_register(insn.operand2, insn.offset));
      return set_rule(row, insn.operand1, RuleKind::kRegister, target, insn.offset);
    }
    case cfa::kExpression:
      return set_rule(row, insn.operand1, RuleKind::kExpression, 0, insn.offset, insn.block, insn.block_offset);
    case cfa::kValExpression:
      return set_rule(row, insn.operand1, RuleKind::kValExpression, 0, insn.offset, insn.block, insn.block_offset);
    case cfa::kRememberState: {
      if (state.remembered_count >= state.max_remember)
        return Error{ErrorCode::kRememberStackOverflow, insn.offset};
      new (&state.remembered[state.remembered_count]) UnwindRow(row);
      ++state.remembered_count;
      return ok();
    }
    case cfa::kRestoreState: {
      if (state.remembered_count == 0) return Error{ErrorCode::kRestoreWithoutRemember, insn.offset};
      --state.remembered_count;
      const UnwindRow& saved = state.remembered[state.remembered_count];
      // The location is not part of the remembered state.
      const uint64_t begin = row.pc_begin;
      row = saved;
      row.pc_begin = begin;
      return ok();
    }
    case cfa::kDefCfa: {
      FW_TRY(uint16_t r, checked_register(insn.operand1, insn.offset));
      row.cfa.kind = CfaKind::kRegisterOffset;
      row.cfa.reg = r;
      row.cfa.offset = static_cast<int64_t>(insn.operand2);
      return ok();
    }
    case cfa::kDefCfaSf: {
      FW_TRY(uint16_t r, checked_register(insn.operand1, insn.offset));
      row.cfa.kind = CfaKind::kRegisterOffset;
      row.cfa.reg = r;
      row.cfa.offset = factored(static_cast<int64_t>(insn.operand2));
      return ok();
    }
    case cfa::kDefCfaRegister: {
      // Keeps the offset; also leaves an expression CFA (as GDB and readelf do).
      FW_TRY(uint16_t r, checked_register(insn.operand1, insn.offset));
      row.cfa.kind = CfaKind::kRegisterOffset;
      row.cfa.reg = r;
      return ok();
    }
    case cfa::kDefCfaOffset:
      // DWARF allows this only for a register CFA; an expression CFA keeps its
      // expression and the offset is remembered for a later def_cfa_register.
      row.cfa.offset = static_cast<int64_t>(insn.operand1);
      if (row.cfa.kind == CfaKind::kUndefined) row.cfa.kind = CfaKind::kRegisterOffset;
      return ok();
    case cfa::kDefCfaOffsetSf:
      row.cfa.offset = factored(static_cast<int64_t>(insn.operand1));
      if (row.cfa.kind == CfaKind::kUndefined) row.cfa.kind = CfaKind::kRegisterOffset;
      return ok();
    case cfa::kDefCfaExpression:
      row.cfa.kind = CfaKind::kExpression;
      row.cfa.expression = insn.block;
      row.cfa.expression_offset = insn.block_offset;
      return ok();
    case cfa::kNop:
      return ok();
    case cfa::kGnuWindowSave:
      // One number, two machines' meanings: AArch64's negate_ra_state,
      // SPARC's window save; unknown elsewhere.
      switch (state.opcode_2d) {
        case arch::CfaOpcode2d::kNegateRaState: row.negate_ra_state = !row.negate_ra_state; return ok();
        case arch::CfaOpcode2d::kGnuWindowSave: row.window_saved = true; return ok();
        case arch::CfaOpcode2d::kUnassigned: break;
      }
      return Error{ErrorCode::kUnknownCfaOpcode, insn.offset};
    case cfa::kGnuArgsSize:
      row.args_size = insn.operand1;
      return ok();
    default:
      return Error{ErrorCode::kUnknownCfaOpcode, insn.offset};
  }
}

}  // namespace detail

Result<UnwindRow> run_cie(const CfiSection& section, const Cie& cie, const CfaLimits& limits) {
  if (cie.return_address_register > 0xffff) return Error{ErrorCode::kBadRegister, cie.offset};
  UnwindRow start{};
  start.return_address_register = static_cast<uint16_t>(cie.return_address_register);
  start.signal_frame = cie.signal_frame;
  UnwindRow result;
  FW_CHECK(run_instructions(section, cie, cie.instructions, cie.instructions_offset, start, nullptr, 0,
                            [&](const UnwindRow& row, bool last) {
                              if (last) result = row;
                              return true;
                            },
                            limits));
  result.pc_begin = result.pc_end = 0;
  return result;
}

Result<UnwindRow> row_for_pc(const CfiSection& section, const Cie& cie, const Fde& fde, uint64_t pc,
                             const CfaLimits& limits) {
  RememberRoom<CfaLimits::kMaxRememberDepth> room;
  UnwindRow out;
  FW_CHECK(row_for_pc(section, cie, fde, pc, out, room.space(), limits));
  return out;
}

Result<void> row_for_pc(const CfiSection& section, const Cie& cie, const Fde& fde, uint64_t pc, UnwindRow& out,
                        RememberSpace space, const CfaLimits& limits) {
  if (cie.return_address_register > 0xffff) return Error{ErrorCode::kBadRegister, cie.offset};
  // `out` holds the CIE's row while the FDE's instructions run (their
  // DW_CFA_restore base) and then the row found: one row fewer on the stack
  // of a walk in a signal handler. The program copies its start row before
  // running, so each program's final row can land in `out`.
  out = UnwindRow{};
  out.return_address_register = static_cast<uint16_t>(cie.return_address_register);
  out.signal_frame = cie.signal_frame;
  FW_CHECK(run_instructions_in(space, section, cie, cie.instructions, cie.instructions_offset, out, 0, nullptr,
                               0, [&](const UnwindRow& row, bool last) {
                                 if (last) out = row;
                                 return true;
                               },
                               limits));
  out.pc_begin = out.pc_end = 0;
  bool have = false;
  // Once the row is found, the program stops: `out`, its restore base, is
  // not read again.
  FW_CHECK(run_instructions_in(space, section, cie, fde.instructions, fde.instructions_offset, out,
                               fde.pc_begin, &out, fde.pc_end(), [&](const UnwindRow& row, bool) {
                                 if (pc >= row.pc_begin && pc < row.pc_end) {
                                   out = row;
                                   have = true;
                                   return false;
                                 }
                                 return row.pc_begin <= pc;
                               },
                               limits));
  if (!have) return Error{ErrorCode::kNotFound, fde.offset};
  return ok();
}

}  // namespace framewalk::dwarf

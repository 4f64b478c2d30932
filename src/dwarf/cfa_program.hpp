// Executes CIE and FDE call frame instructions into UnwindRows.
#pragma once

#include <algorithm>
#include <cstdint>

#include "dwarf/cfa_instructions.hpp"
#include "dwarf/cfi_section.hpp"
#include "model/unwind_row.hpp"

namespace framewalk::dwarf {

struct CfaLimits {
  static constexpr int kMaxRememberDepth = 8;
  int max_remember_depth = kMaxRememberDepth;  // clamped to kMaxRememberDepth
};

// Room for the rows DW_CFA_remember_state saves. The functions below that
// take none keep CfaLimits::kMaxRememberDepth rows on their own stack; a
// caller short of stack (a signal handler) passes a smaller room instead, and
// deeper nesting is then kRememberStackOverflow.
struct RememberSpace {
  UnwindRow* rows = nullptr;
  int capacity = 0;
};
template <int Capacity>
struct RememberRoom {
  alignas(UnwindRow) unsigned char bytes[Capacity * sizeof(UnwindRow)];  // constructed only when used
  RememberSpace space() { return {reinterpret_cast<UnwindRow*>(bytes), Capacity}; }
};

// Runs a CIE's initial instructions. The result is the state every FDE of the
// CIE starts from.
Result<UnwindRow> run_cie(const CfiSection& section, const Cie& cie, const CfaLimits& limits = {});

// Runs call frame instructions from `start` (whose pc_begin is the first
// location) and calls `on_row(const UnwindRow&, bool last)` for every row, in
// order: at each location change (rows may be empty when an advance is zero)
// and once at the end for the last row, which reaches `pc_end`. `restore_base`
// is the CIE's row for DW_CFA_restore (null inside a CIE). `on_row` returns
// false to stop early.
template <typename OnRow>
Result<void> run_instructions(const CfiSection& section, const Cie& cie, Bytes instructions,
                              uint64_t instructions_offset, const UnwindRow& start,
                              const UnwindRow* restore_base, uint64_t pc_end, OnRow&& on_row,
                              const CfaLimits& limits = {});

// run_instructions with the remembered rows in `space`, starting from `start`
// moved to `start_pc` (so callers need no copy of their start row to move it).
template <typename OnRow>
Result<void> run_instructions_in(RememberSpace space, const CfiSection& section, const Cie& cie,
                                 Bytes instructions, uint64_t instructions_offset, const UnwindRow& start,
                                 uint64_t start_pc, const UnwindRow* restore_base, uint64_t pc_end,
                                 OnRow&& on_row, const CfaLimits& limits);

// An FDE's rows, starting from its CIE's row `initial`.
template <typename OnRow>
Result<void> run_fde(const CfiSection& section, const Cie& cie, const Fde& fde,
                     const UnwindRow& initial, OnRow&& on_row, const CfaLimits& limits = {}) {
  RememberRoom<CfaLimits::kMaxRememberDepth> room;
  return run_instructions_in(room.space(), section, cie, fde.instructions, fde.instructions_offset, initial,
                             fde.pc_begin, &initial, fde.pc_end(), std::forward<OnRow>(on_row), limits);
}

// The row in force at `pc` (which must lie inside the FDE).
Result<UnwindRow> row_for_pc(const CfiSection& section, const Cie& cie, const Fde& fde, uint64_t pc,
                             const CfaLimits& limits = {});
// The same into `out`, the CIE's and the FDE's instructions sharing `space`.
Result<void> row_for_pc(const CfiSection& section, const Cie& cie, const Fde& fde, uint64_t pc, UnwindRow& out,
                        RememberSpace space, const CfaLimits& limits = {});


// ---- implementation -------------------------------------------------------

namespace detail {

struct ProgramState {
  UnwindRow row;
  const UnwindRow* initial = nullptr;  // the CIE's row, for DW_CFA_restore
  UnwindRow* remembered = nullptr;     // caller-provided stack of max_remember_depth rows
  int remembered_count = 0;
  int max_remember = 0;
  arch::CfaOpcode2d opcode_2d = arch::CfaOpcode2d::kUnassigned;
};

// Applies one non-location instruction to the state. Location instructions
// (advance/set_loc) are handled by the caller and return their new location
// through `*new_location`.
Result<void> apply_instruction(ProgramState& state, const CfaInstruction& insn, const Cie& cie,
                               uint64_t location, bool* moves, uint64_t* new_location);

DecodeContext decode_context(const CfiSection& section, const Cie& cie);

// DW_CFA_offset's effect, shared by the decoder path and the short path.
inline Result<void> set_offset_rule(UnwindRow& row, uint16_t reg, int64_t offset, uint64_t at) {
  auto result = row.set(RegisterRule{reg, RuleKind::kOffset, offset, {}, 0});
  if (!result) return Error{result.error().code, at};
  return ok();
}

}  // namespace detail

template <typename OnRow>
Result<void> run_instructions(const CfiSection& section, const Cie& cie, Bytes instructions,
                              uint64_t instructions_offset, const UnwindRow& start,
                              const UnwindRow* restore_base, uint64_t pc_end, OnRow&& on_row,
                              const CfaLimits& limits) {
  RememberRoom<CfaLimits::kMaxRememberDepth> room;
  return run_instructions_in(room.space(), section, cie, instructions, instructions_offset, start, start.pc_begin,
                             restore_base, pc_end, std::forward<OnRow>(on_row), limits);
}

template <typename OnRow>
Result<void> run_instructions_in(RememberSpace space, const CfiSection& section, const Cie& cie,
                                 Bytes instructions, uint64_t instructions_offset, const UnwindRow& start,
                                 uint64_t start_pc, const UnwindRow* restore_base, uint64_t pc_end,
                                 OnRow&& on_row, const CfaLimits& limits) {
  detail::ProgramState state;
  state.row = start;
  state.row.pc_begin = start_pc;
  state.initial = restore_base;
  state.remembered = space.rows;
  state.max_remember = std::min({limits.max_remember_depth, CfaLimits::kMaxRememberDepth, space.capacity});
  state.opcode_2d = arch::cfa_opcode_2d(section.info().arch);
  const DecodeContext ctx = detail::decode_context(section, cie);
  ByteReader r(instructions, section.info().endian, instructions_offset);
  while (!r.at_end()) {
    // The three most frequent instructions take a short path; everything else
    // goes through the table-driven decoder.
    const uint8_t byte = r.peek_unchecked();
    const uint8_t high = byte & 0xc0;
    if (high == cfa::kAdvanceLoc) {
      r.advance_unchecked(1);
      const uint64_t next_location = state.row.pc_begin + uint64_t{byte & 0x3fu} * cie.code_alignment;
      state.row.pc_end = next_location;
      if (!on_row(static_cast<const UnwindRow&>(state.row), false)) return ok();
      state.row.pc_begin = next_location;
      continue;
    }
    if (high == cfa::kOffset) {
      const uint64_t at = r.absolute_offset();
      r.advance_unchecked(1);
      FW_TRY(uint64_t factored, r.uleb128());
      FW_CHECK(detail::set_offset_rule(state.row, byte & 0x3fu,
                                       static_cast<int64_t>(factored * static_cast<uint64_t>(cie.data_alignment)), at));
      continue;
    }
    if (byte == cfa::kDefCfaOffset) {
      r.advance_unchecked(1);
      FW_TRY(uint64_t offset, r.uleb128());
      state.row.cfa.offset = static_cast<int64_t>(offset);
      if (state.row.cfa.kind == CfaKind::kUndefined) state.row.cfa.kind = CfaKind::kRegisterOffset;
      continue;
    }
    FW_TRY(CfaInstruction insn, decode_cfa_instruction(r, ctx));
    bool moves = false;
    uint64_t next_location = 0;
    FW_CHECK(detail::apply_instruction(state, insn, cie, state.row.pc_begin, &moves, &next_location));
    if (moves) {
      state.row.pc_end = next_location;
      if (!on_row(static_cast<const UnwindRow&>(state.row), false)) return ok();
      state.row.pc_begin = next_location;
    }
  }
  state.row.pc_end = pc_end;
  on_row(static_cast<const UnwindRow&>(state.row), true);
  return ok();
}

}  // namespace framewalk::dwarf

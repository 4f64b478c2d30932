// SFrame FREs as framewalk::UnwindRow values, the row model every unwind
// source produces (src/model/unwind_row.hpp).
//
// How SFrame rules map onto the model (DWARF register numbers: AMD64 rsp 7,
// rbp 6, rip 16; AArch64 sp 31, fp 29, lr 30; s390x r15, r11, r14):
//   CFA = SP/FP/reg + off             -> CfaKind::kRegisterOffset
//   CFA = *(reg + off)   (FLEX)       -> CfaKind::kExpression "DW_OP_breg<reg> off; DW_OP_deref"
//   RA/FP saved at CFA + off          -> RuleKind::kOffset off
//   RA/FP = CFA + off    (FLEX)       -> RuleKind::kValOffset off (only reachable through a control
//                                        word whose reserved bits alone are set: 0 is padding)
//   RA/FP held in reg    (FLEX, V2 s390x) -> RuleKind::kRegister reg
//   RA/FP = reg + off, off != 0 (FLEX) -> RuleKind::kValExpression "DW_OP_breg<reg> off"
//   RA/FP = *(reg + off) (FLEX)       -> RuleKind::kExpression "DW_OP_breg<reg> off" (the address)
//   RA undefined (FRE with no words)  -> RuleKind::kUndefined on the RA column, CFA kUndefined
//   FP (or RA) not tracked            -> no rule: unchanged from the callee (AArch64: the RA
//                                        still in x30, which only a topmost frame may rely on)
//   AArch64 mangled-RA bit            -> row.negate_ra_state, SframeRow::ra_mangled; the FDE's
//                                        PAC key as SframeRow::pauth_key_b
// The registers are those of the section's ABI (Section::registers(), from arch).
//   s390x                             -> also SP = CFA - 160 (RuleKind::kValOffset on r15)
// The AMD64 header's fixed RA offset (-8) gives every row "RA at CFA-8".
//
// Expression ownership: the expression bytes are built once, at parse time, by
// the Section (Section::breg_deref_expression) and shared by its copies. A row
// holding an expression stays valid as long as any copy of its Section lives,
// just as DWARF rows point into the section bytes they came from.
#pragma once

#include <cstdint>
#include <vector>

#include "model/unwind_row.hpp"
#include "sframe/sframe_section.hpp"

namespace framewalk::sframe {

struct SframeRow {
  UnwindRow row;
  uint32_t fde_index = 0;
  uint32_t fre_index = 0;
  // A FLEX rule reads a register other than SP and FP: its value is known only
  // in the topmost frame, so the row must not be used for outer frames.
  bool topmost_only = false;
  bool outermost = false;     // RA undefined: the stack ends here
  bool ra_mangled = false;    // AArch64: RA signed with a PAC (also row.negate_ra_state)
  bool pauth_key_b = false;   // AArch64: ... with key B (else key A)
  // PCMASK FDEs: the row's PC range repeats every rep_size bytes from the
  // function start, through the function (PLT entries). 0 for ordinary FDEs.
  uint32_t rep_size = 0;
};

// The row of `fre` for PCs [pc_begin, pc_end).
Result<SframeRow> make_row(const Section& section, const Fde& fde, const Fre& fre, uint64_t pc_begin,
                           uint64_t pc_end);

// The rows of every FRE of `fde` in order, each reaching the next FRE's start
// (the last one the function's end). For PCMASK FDEs the ranges are those of
// the first repetition block (see SframeRow::rep_size).
Result<std::vector<SframeRow>> fde_rows(const Section& section, const Fde& fde);

// The row in force at `pc`, whose range is the one around pc (for PCMASK FDEs,
// inside pc's block). Errc::kNoFde / kNoFre when nothing covers pc (an FDE
// without FREs: outermost if DEFAULT, a signal frame SFrame cannot describe if
// fde.signal). `fde` must be one of the section's (Section::owns).
Result<SframeRow> row_for_pc(const Section& section, const Fde& fde, uint64_t pc);
Result<SframeRow> row_for_pc(const Section& section, uint64_t pc);
// The same written into `out`, for the unwinder's hot path: no row is copied
// on the way out.
Result<void> row_for_pc(const Section& section, const Fde& fde, uint64_t pc, SframeRow& out);
Result<void> row_for_pc(const Section& section, uint64_t pc, SframeRow& out);
// make_row into `out`.
Result<void> make_row(const Section& section, const Fde& fde, const Fre& fre, uint64_t pc_begin, uint64_t pc_end,
                      SframeRow& out);

}  // namespace framewalk::sframe

// Cross-checks two unwind sources of one file, DWARF CFI and SFrame, at every
// PC of every function. Both are read through the row model (dwarf::run_fde
// and sframe::fde_rows), and rows are piecewise constant, so comparing once
// per piece between consecutive row boundaries of either source covers every
// PC; a piece whose rules read the PC (rip in the PLT CFA expression) is
// compared at each of its PCs.
//
// Rules are compared by what they compute, not by how they are spelled: each
// row is evaluated (with the DWARF expression VM) on a few made-up register
// files and a made-up memory whose every word is a hash of its address, and
// the CFA, the return address, the frame pointer and the caller's stack
// pointer (the registers of the SFrame section's ABI: rbp and rsp on x86-64,
// x29 and sp on AArch64) must come out the same (or both undefined). Where a
// call leaves the RA in a link register (AArch64 x30), no RA rule means the
// RA is still there, on both sides. On AArch64 the FRE's mangled-RA bit must
// match the CFI's negate_ra_state, and the FDE's PAC key the CIE's 'B'. So "rbp saved at CFA-16" matches a FLEX "*(CFA-16)",
// DW_OP_bregx matches DW_OP_breg, and the PLT expression matches PCMASK rows,
// without the checker sharing code with the generator's pattern matching.
// When the return address is undefined on both sides (the outermost frame),
// nothing else is compared. SFrame has no rule for the caller's SP: it is
// the CFA, as when CFI gives no rule either; on s390x it is CFA - 160 (the
// ABI's CFA is the SP at entry + 160), which is also what a CFI rule that
// saves r15 (stmg's slot, an FPR) holds. The s390x v2 "RA/FP in register N"
// words and v3 FLEX register rules read as register rules, like CFI's.
//
// Coverage holes are reported both ways: PCs CFI covers and SFrame does not,
// and the reverse. An SFrame FDE without FREs covers its PCs without rows
// (v3: with the signal bit, "use a signal-frame unwinder"; without it, the
// outermost frame) and is counted apart.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "dwarf/cfi_section.hpp"
#include "model/unwind_row.hpp"
#include "sframe/sframe_section.hpp"

namespace framewalk::sframe {

// What differs in a piece (bit mask).
enum CheckItem : uint8_t {
  kCheckCfa = 1,
  kCheckRa = 2,
  kCheckFp = 4,
  kCheckSp = 8,
  kCheckSignal = 16,  // v3 signal bit against the CIE's 'S'
  kCheckRaSigning = 32,  // AArch64: mangled-RA bit against negate_ra_state, PAC key against the CIE's 'B'
};
std::string check_items_text(uint8_t items);  // "CFA, RA"

struct RowDifference {
  uint64_t begin = 0, end = 0;  // coalesced range with the same difference
  uint8_t items = 0;
  UnwindRow cfi;                // the rows at `begin`
  UnwindRow sframe;
  bool sframe_topmost_only = false;
};

struct CoverageHole {
  uint64_t begin = 0, end = 0;
};

struct CheckOptions {
  size_t list_limit = 50;        // differences and holes kept for listing (0: all)
  unsigned trials = 3;           // register files each piece is evaluated on
  uint64_t max_pcs_per_piece = 4096;  // a rip-dependent piece longer than this is sampled
};

struct CheckReport {
  std::string cfi_sections;       // ".eh_frame", ".debug_frame" or ".eh_frame + .debug_frame"
  uint64_t cfi_fdes = 0;          // CFI FDEs with a non-empty range
  uint64_t sframe_fdes = 0;
  uint64_t sframe_fres = 0;
  uint64_t rows_compared = 0;     // pieces compared
  uint64_t bytes_compared = 0;
  uint64_t pcs_evaluated_singly = 0;  // PCs of rip-dependent pieces
  uint64_t disagreements = 0;     // coalesced ranges
  uint64_t disagreement_bytes = 0;
  uint64_t cfi_only_ranges = 0, cfi_only_bytes = 0;
  uint64_t sframe_only_ranges = 0, sframe_only_bytes = 0;
  uint64_t no_row_ranges = 0, no_row_bytes = 0;  // SFrame FDEs without FREs, where CFI has rows
  uint64_t cfi_errors = 0, sframe_errors = 0;
  std::vector<RowDifference> differences;  // the first list_limit
  std::vector<CoverageHole> cfi_only, sframe_only;
  std::vector<std::string> errors;         // unreadable FDEs (first list_limit)
};

// `cfi`: the sections in priority order (sframe_cfi_sections: .eh_frame, then
// .debug_frame for the functions .eh_frame lacks; see collect_cfi_fdes).
CheckReport check_rows(std::span<const dwarf::CfiSection* const> cfi, const Section& sframe,
                       const CheckOptions& options = {});
inline CheckReport check_rows(const dwarf::CfiSection& cfi, const Section& sframe, const CheckOptions& options = {}) {
  const dwarf::CfiSection* one = &cfi;
  return check_rows(std::span<const dwarf::CfiSection* const>(&one, 1), sframe, options);
}

}  // namespace framewalk::sframe

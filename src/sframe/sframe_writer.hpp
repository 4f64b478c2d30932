// Encodes SFrame sections (versions 1, 2 and 3) from a description that does
// not care where the rules came from: functions, each with its frame row
// entries given as the reader's own FrameRules (sframe_section.hpp). The
// reader is the inverse: for every FRE written, Section::rules() gives back
// the FrameRules passed in (source offsets aside).
//
// Choices the writer makes (the ones ld/gas make, see spec §1.4, §3.1):
//   - FDEs sorted by their resolved start, the SORTED flag set; V2 and V3 also
//     set FUNC_START_PCREL (start fields relative to the field itself), as
//     binutils 2.45 (V2) and 2.46 (V3) emit them; V1 starts are relative to
//     the section, as binutils 2.40 wrote them;
//   - the smallest FRE start-address type that holds every FRE start of the
//     function, and per FRE the smallest data-word size that holds every
//     signed offset and every unsigned FLEX control word;
//   - V3: the attribute record of each function directly before its FREs, in
//     FDE order.
// What each version can say is checked (check_fde) before anything is laid
// out: FLEX FDEs and the signal bit only in V3, "RA undefined" FREs from V2
// on, PCMASK blocks of 16 bytes only in V1 (it has no rep_size field).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "sframe/sframe_section.hpp"

namespace framewalk::sframe {

struct FreDesc {
  uint32_t start = 0;  // offset from the function start (PCMASK: within the block)
  FrameRules rules;    // cfa, ra, fp, ra_undefined and ra_mangled are written; topmost_only is derived
};

struct FdeDesc {
  uint64_t start = 0;  // function start address
  uint32_t size = 0;
  PcType pc_type = PcType::kInc;
  FdeType fde_type = FdeType::kDefault;  // FLEX: V3 only
  uint8_t rep_size = 0;                  // PCMASK block size
  bool signal = false;                   // V3 only
  bool pauth_key_b = false;              // AArch64
  std::vector<FreDesc> fres;             // strictly increasing starts
};

struct WriterOptions {
  uint8_t version = kVersion3;
  Abi abi = Abi::kAmd64Little;
  int8_t fixed_fp_offset = 0;    // header sfh_cfa_fixed_fp_offset (0: FP tracked per FRE)
  int8_t fixed_ra_offset = -8;   // header sfh_cfa_fixed_ra_offset (AMD64: -8; 0: tracked per FRE)
  uint64_t section_address = 0;  // where the section will be loaded: the PC-relative starts depend on it
};

// The header a writer uses for an ABI: AMD64 has RA at CFA-8; AArch64 and
// s390x track RA per FRE.
WriterOptions writer_options_for(Abi abi, uint8_t version, uint64_t section_address);

// Why an FDE cannot be written.
enum class Unencodable : uint8_t {
  kNone,
  kFlexNeedsV3,          // a FLEX FDE asked of V1/V2
  kSignalNeedsV3,        // the signal bit asked of V1/V2
  kRaUndefinedInV1,      // V1 knows no "RA undefined" FRE
  kCfaNotDefault,        // DEFAULT FDE: CFA other than SP/FP + offset
  kRaNotDefault,         // DEFAULT FDE: RA rule other than the fixed or a CFA-relative slot
  kFpNotDefault,         // DEFAULT FDE: FP rule other than unchanged or a CFA-relative slot
  kCfaFlexBase,          // FLEX: a CFA whose base is not a register
  kRaFlexRule,           // FLEX: RA rule the control word cannot say (CFA + offset without deref, or unchanged with a fixed RA)
  kFpFlexRule,           // FLEX: FP rule the control word cannot say
  kOffsetRange,          // an offset or control word beyond 32 bits, or an s390x CFA offset not 160 + 8k
  kTooManyFres,          // V3 counts FREs in 16 bits
  kFreOrder,             // FRE starts not strictly increasing
  kFreBeyondFunction,    // an FRE starts past the function's end (or PCMASK block)
  kRepSize,              // PCMASK without a block size (V1: other than 16)
  kStartRange,           // V1/V2 start field does not reach the function (32 bits)
  kDuplicateStart,       // two FDEs start at one address (SORTED needs strictly increasing starts)
  kFunctionWraps,        // start + size past the end of the address space
};
const char* to_string(Unencodable u);

struct WriteProblem {
  Unencodable what = Unencodable::kNone;
  uint32_t fde = 0;  // index in the caller's list
  uint32_t fre = 0;  // within that FDE, where it applies
  bool ok() const { return what == Unencodable::kNone; }
};

// Whether `fde` can be written with `options` (the start-field range checks
// need the FDE's index in the sorted table, and are made by write_section).
WriteProblem check_fde(const WriterOptions& options, const FdeDesc& fde);

// Whether one FRE's rules fit a DEFAULT FDE of this header (else FLEX is needed).
bool fits_default(const WriterOptions& options, const FrameRules& rules);

struct WrittenSection {
  std::vector<uint8_t> bytes;  // empty when problem is set
  WriteProblem problem;        // the first FDE that could not be written
  uint32_t num_fres = 0;
};

// Lays out and encodes a whole section. Nothing is dropped silently: the
// first unencodable FDE is reported instead (fde = its index in `fdes`).
WrittenSection write_section(const WriterOptions& options, std::span<const FdeDesc> fdes);

// The inverse: a parsed section as the writer takes it, FDEs in section order
// (rules without source offsets). Writing it with writer_options_of(section)
// gives the same FDEs, FREs and rules, laid out the writer's way (sorted,
// PC-relative starts from V2 on, the smallest fields), except where the
// writer refuses what the reader accepts: two functions at one address in an
// unsorted section (kDuplicateStart), a V2 start the PC-relative field cannot
// reach (kStartRange), a FLEX "CFA + offset" rule that only a control word
// with its unused bit 2 set says (kRaFlexRule, kFpFlexRule), and a V1 PCMASK
// FRE at 16 or beyond (kFreBeyondFunction: it can never match).
Result<std::vector<FdeDesc>> describe_section(const Section& section);
WriterOptions writer_options_of(const Section& section);

}  // namespace framewalk::sframe

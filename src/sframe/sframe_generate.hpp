// SFrame from DWARF CFI (x86-64, AArch64, s390x): every FDE's rows
// (dwarf::run_fde, the one executor) are turned into SFrame function
// descriptions (sframe_writer's FdeDesc), which the writer encodes. The
// conversion never looks at bytes of the output; the writer never looks at
// CFI. The registers are those of GenerateOptions::abi's machine
// (arch::FrameRegisters): below, rsp/rbp/rip on x86-64, sp/x29/x30 on AArch64,
// r15/r11/r14 on s390x.
//
// Per CFI row, SFrame needs: the CFA, the return address (rip) and the frame
// pointer (rbp); the caller's SP must be the CFA (s390x: CFA - 160; no other register is
// tracked, and none needs to be: SFrame is for stack tracing, not for
// restoring callee-saved registers).
//
//   CFI row                                        SFrame
//   CFA = rsp/rbp + off                            DEFAULT (CFA base bit, offset)
//   CFA = reg + off (r10, r13... DRAP prologues)   FLEX (v3), topmost frame only
//   CFA = *(reg + off)  (DW_OP_breg N; DW_OP_deref) FLEX (v3)
//   CFA = the PLT expression (breg7 A; breg16 0;   PCMASK FDE, rep_size M+1, FREs at 0 and K
//     litM; and; litK; ge; litS; shl; plus)         (the CFA grows by 1<<S from in-block offset K)
//   rip at CFA-8                                   the header's fixed RA offset
//   rip undefined                                  "RA undefined" FRE (outermost frame)
//   rip at CFA+off / in a register / *(reg+off)    FLEX (v3)
//   rbp unchanged / at CFA+off                     DEFAULT (no FP word / FP word)
//   rbp in a register / *(reg+off) / reg+off       FLEX (v3)
//   CIE 'S' (signal frame)                         v3 signal bit; when its rows cannot be
//                                                  written, an FDE with the bit and no FREs
//                                                  (as gas emits it: "use your signal unwinder")
// s390x (v2 and v3; v1 has no s390x ABI), where the CFA is the caller's SP + 160:
//   CFA = r15/r11 + off                            DEFAULT, stored as (off - 160) / 8 (160 + 8k only)
//   r15 saved (stmg slot, FPR), SP = CFA - 160     SFrame's SP = CFA - 160 (the saved value is r15 at entry)
//   r14/r11 at CFA+off                             RA/FP words (v2: even offsets only)
//   r14/r11 in a register (an FPR in leaves)       v2: the word (regnum << 1) | 1; v3: FLEX
//   r11 saved, r14 not                             RA padding word 0, then the FP word
// AArch64, where the header fixes no RA offset and the RA is tracked per FRE:
//   x30 unspecified or same-value                  no RA word: still in x30 (leaf, before the save)
//   x30 at CFA+off                                 RA word
//   negate_ra_state set (paciasp .. autiasp)       the FRE's mangled-RA bit
//   CIE 'B' (.cfi_b_key_frame)                     the FDE's PAC key bit (key B)
//   x29 saved, x30 not                             FLEX (v3): DEFAULT would need an RA
//                                                  padding word, which only s390x has
//
// A CFI FDE is written whole or not at all (as gas does): one row SFrame
// cannot say leaves the whole function out, and the reason is counted. FDEs
// are split only around PLT expression rows (PLT0 stays an ordinary FDE, the
// pltN block becomes a PCMASK FDE), as ld lays out its own PLT SFrame.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "dwarf/cfi_section.hpp"
#include "elf/elf_file.hpp"
#include "sframe/sframe_writer.hpp"
#include "dwarf/elf_cfi.hpp"

namespace framewalk::sframe {

struct GenerateOptions {
  uint8_t version = kVersion3;     // 1, 2 or 3 (1 only to feed binutils 2.40's objdump)
  Abi abi = Abi::kAmd64Little;     // the CFI's machine (generate_sframe(file) takes the file's)
  uint64_t section_address = 0;    // where the .sframe section will be
  // Executable address ranges [begin, end): FDEs outside them are left out
  // (.debug_frame keeps FDEs of discarded functions at address 0). Empty: no check.
  std::vector<std::pair<uint64_t, uint64_t>> code_ranges;
};

struct GenerateStats {
  std::string cfi_section;         // ".eh_frame", ".debug_frame" or ".eh_frame + .debug_frame"
  uint64_t cfi_fdes = 0;           // FDEs with a non-empty range
  uint64_t cfi_bytes = 0;          // the code bytes they cover
  uint64_t represented_fdes = 0;   // CFI FDEs whose every row SFrame carries
  uint64_t represented_bytes = 0;
  uint64_t signal_markers = 0;     // v3: signal FDEs written without rows
  uint64_t signal_marker_bytes = 0;
  // The written section.
  uint64_t sframe_fdes = 0, default_fdes = 0, flex_fdes = 0, pcmask_fdes = 0, signal_fdes = 0;
  uint64_t fres = 0, ra_undefined_fres = 0;
  uint64_t section_bytes = 0;
  struct Skip {
    uint64_t fdes = 0;
    uint64_t bytes = 0;
    uint64_t first_pc = 0;  // an example
  };
  std::map<std::string, Skip> skipped;  // reason -> FDEs left out
};

struct Conversion {
  std::vector<FdeDesc> fdes;
  // For each of `fdes`, the CFI FDE it came from ([begin, end) of its range)
  // and whether it is a signal marker: a CFI FDE is kept or dropped whole.
  struct Origin {
    uint64_t begin = 0, end = 0;
    bool marker = false;
  };
  std::vector<Origin> origins;
  GenerateStats stats;
};

// The CFI of a file that its SFrame is made from, and checked against: the
// file's own .eh_frame, then its .debug_frame (no separate debug file, no
// MiniDebugInfo). .debug_frame fills in functions .eh_frame lacks (a program
// built with -fno-asynchronous-unwind-tables has .eh_frame only for the C
// runtime's start files); where both describe a function, .eh_frame wins, as
// in ElfCfi::lookup.
ElfCfiOptions sframe_cfi_options();
std::vector<const dwarf::CfiSection*> sframe_cfi_sections(const ElfCfi& cfi);

struct CfiFde {
  const dwarf::CfiSection* section = nullptr;
  const dwarf::Cie* cie = nullptr;
  dwarf::Fde fde;
};

// The FDEs with a non-empty range, sorted by start: every FDE of the first
// section, then those of each later section that overlap none of the earlier
// sections' FDEs. Malformed records go to `on_error`.
std::vector<CfiFde> collect_cfi_fdes(std::span<const dwarf::CfiSection* const> sections,
                                     const std::function<void(const dwarf::CfiDiagnostic&)>& on_error);
// ".eh_frame", ".debug_frame", or ".eh_frame + .debug_frame": the kinds of `fdes`.
std::string cfi_sections_name(const std::vector<CfiFde>& fdes);

// Converts every FDE of `sections` (CFI of options.abi's machine, see collect_cfi_fdes).
// Reasons for leaving an FDE out are counted in stats.skipped; nothing else
// is dropped.
Conversion convert_cfi(std::span<const dwarf::CfiSection* const> sections, const GenerateOptions& options);
inline Conversion convert_cfi(const dwarf::CfiSection& section, const GenerateOptions& options) {
  const dwarf::CfiSection* one = &section;
  return convert_cfi(std::span<const dwarf::CfiSection* const>(&one, 1), options);
}

struct GeneratedSection {
  std::vector<uint8_t> bytes;
  GenerateStats stats;
};

// Converts and writes the SFrame section of `file` (an x86-64, AArch64 or
// s390x executable or shared object; options.abi is the file's)
// for a section at options.section_address. FDEs the writer
// refuses (a V1/V2 start field out of reach, say) are left out and counted too.
framewalk::Result<GeneratedSection> generate_sframe(std::shared_ptr<const elf::ElfFile> file,
                                                  const GenerateOptions& options);
// The same from CFI sections (in priority order, see collect_cfi_fdes), with
// options.code_ranges as given. kNotFound when no FDE has a range.
framewalk::Result<GeneratedSection> generate_sframe(std::span<const dwarf::CfiSection* const> sections,
                                                    const GenerateOptions& options);

}  // namespace framewalk::sframe

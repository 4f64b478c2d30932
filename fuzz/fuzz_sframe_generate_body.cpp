// fuzz_sframe_generate: the bytes as an x86-64, AArch64 or s390x .eh_frame whose functions lie
// in a made-up text range; SFrame is generated from it (generate_sframe, the
// code `framewalk sframe --generate` runs), read back, and checked against
// the same CFI at every PC (check_rows, the code of `framewalk check`):
// wherever the SFrame claims coverage it must agree with the CFI.
//
// Input: byte 0 = options: bits 0-1 the SFrame version (1, 2, 3; 0 means 3),
// bit 2 = no text range (every FDE is a candidate, wherever it lies), bit 3
// = AArch64 CFI (0x2d is negate_ra_state; RA in x30, PAC key from 'B'), bit
// 4 = with bit 3, big-endian, bit 5 (without bit 3) = s390x CFI (big-endian;
// version 1, which has no s390x ABI, means 2); the rest = the .eh_frame section.
#include <cstdio>
#include <string>

#include "arch/arch.hpp"
#include "dwarf/cfi_section.hpp"
#include "fuzz_bodies.hpp"
#include "sframe/sframe_check.hpp"
#include "sframe/sframe_generate.hpp"
#include "sframe/sframe_section.hpp"

namespace framewalk::fuzz {

namespace {

// The checker evaluates the PLT expression at every PC of a PCMASK function:
// past this many bytes of them, the input is generated and read but not
// checked (the fuzzer learns nothing from a PLT of a million entries).
constexpr uint64_t kMaxPcmaskBytesChecked = 64 * 1024;

// .eh_frame above the text, as linkers lay them out, so that the FDEs of
// real .eh_frame slices (PC-relative) land in the text range; .sframe after it.
constexpr uint64_t kTextBegin = 0x2000000, kEhFrameAddress = 0x4000000, kSframeAddress = 0x4100000;

}  // namespace

int fuzz_sframe_generate(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  const uint8_t options = data[0];
  const bool aarch64 = options & 8;
  const bool s390x = !aarch64 && (options & 0x20);
  const bool big = s390x || (aarch64 && (options & 0x10));
  dwarf::CfiSectionInfo info;
  info.kind = dwarf::CfiKind::kEhFrame;
  info.endian = big ? Endian::kBig : Endian::kLittle;
  info.arch = aarch64 ? arch::arch_for(usual_machine_key(kEmAarch64))
               : s390x ? arch::arch_for(usual_machine_key(kEmS390))
                       : nullptr;
  info.address_size = 8;
  info.bases.section_address = kEhFrameAddress;
  info.bases.text = kTextBegin;
  info.bases.has_text = true;
  const dwarf::CfiSection cfi(Bytes(data + 1, size - 1), info);
  const dwarf::CfiSection* sections[] = {&cfi};

  sframe::GenerateOptions o;
  o.version = (options & 3) ? (options & 3) : sframe::kVersion3;
  o.abi = s390x      ? sframe::Abi::kS390xBig
          : !aarch64 ? sframe::Abi::kAmd64Little
          : big      ? sframe::Abi::kAarch64Big
                     : sframe::Abi::kAarch64Little;
  if (s390x && o.version == sframe::kVersion1) o.version = sframe::kVersion2;
  o.section_address = kSframeAddress;
  if (!(options & 4)) o.code_ranges = {{kTextBegin, kEhFrameAddress}};
  auto generated = sframe::generate_sframe(sections, o);
  if (!generated.ok()) {
    FUZZ_CHECK(generated.error().code == ErrorCode::kNotFound);  // no FDE with a range
    return 0;
  }
  const sframe::GenerateStats& st = generated->stats;
  FUZZ_CHECK(st.represented_fdes <= st.cfi_fdes && st.represented_bytes <= st.cfi_bytes);
  FUZZ_CHECK(st.section_bytes == generated->bytes.size());

  auto parsed = sframe::Section::parse(Bytes(generated->bytes), kSframeAddress);
  FUZZ_CHECK(parsed.ok());
  const sframe::Section& s = *parsed;
  FUZZ_CHECK(s.version() == o.version && s.sorted());
  FUZZ_CHECK(s.fdes().size() == st.sframe_fdes && s.header().num_fres == st.fres);

  uint64_t pcmask_bytes = 0;
  for (const sframe::Fde& f : s.fdes())
    if (f.pc_type == sframe::PcType::kMask) pcmask_bytes += f.size;
  if (pcmask_bytes > kMaxPcmaskBytesChecked) return 0;

  sframe::CheckOptions co;
  co.list_limit = 1;
  co.max_pcs_per_piece = 256;
  const sframe::CheckReport r = sframe::check_rows(sections, s, co);
  if (r.disagreements || r.sframe_only_ranges || r.sframe_errors) {
    // Say what differs before aborting: the input alone does not show it.
    for (const auto& d : r.differences)
      std::fprintf(stderr, "disagreement at [%#llx, %#llx): %s\n", static_cast<unsigned long long>(d.begin),
                   static_cast<unsigned long long>(d.end), sframe::check_items_text(d.items).c_str());
    for (const auto& h : r.sframe_only)
      std::fprintf(stderr, "SFrame only: [%#llx, %#llx)\n", static_cast<unsigned long long>(h.begin),
                   static_cast<unsigned long long>(h.end));
    for (const std::string& e : r.errors) std::fprintf(stderr, "error: %s\n", e.c_str());
  }
  FUZZ_CHECK(r.disagreements == 0);
  FUZZ_CHECK(r.sframe_only_ranges == 0);
  FUZZ_CHECK(r.sframe_errors == 0);
  FUZZ_CHECK(r.sframe_fdes == s.fdes().size());
  return 0;
}

}  // namespace framewalk::fuzz

// Writes a copy of an ELF file with one section added, leaving every existing
// byte where it was: the new section's data, a new .shstrtab and a new section
// header table are appended at the end of the file (the old table and string
// table stay behind, unreferenced).
//
// Giving the section an address at run time needs two more program headers, a
// PT_LOAD that maps it and the segment naming it (PT_GNU_SFRAME for .sframe).
// Linked files have no free slots in their program header table (the table
// sits between the ELF header and the first section; the only spare-looking
// entries, PT_NOTE copies of .note.gnu.property, are still read by loaders that
// predate PT_GNU_PROPERTY). So when asked for a segment the writer moves the
// program header table itself to the end of the file, into the new PT_LOAD:
//
//   [original file][pad][program headers + 2][.sframe][.shstrtab][section headers]
//                       '------- new PT_LOAD (R) --------'
//
// The new PT_LOAD starts on the first page past every existing segment, and its
// file offset is its address less the first PT_LOAD's bias, so that e_phoff
// plus that bias is still the table's address: kernels before 5.18 compute
// AT_PHDR that way for executables, later ones (and ld.so) use PT_PHDR, which
// is updated. When that would need more than kMaxSegmentPadding bytes of
// padding (a huge .bss), when the file has no PT_LOAD, or when no segment is
// asked for, the section is not allocated: its sh_addr is still the address it
// would have had (where the PC-relative fields of an .sframe were computed
// against), and SectionPlacement::note says why.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "base/byte_reader.hpp"
#include "base/result.hpp"
#include "elf/elf_file.hpp"

namespace framewalk::elf {

inline constexpr uint32_t kShtGnuSframe = 0x6ffffff4;
inline constexpr uint64_t kMaxSegmentPadding = uint64_t{4} << 20;

enum class SegmentPolicy : uint8_t {
  kAuto,   // add a PT_LOAD and `segment_type` when the layout allows
  kNever,  // keep the section non-allocated
};

struct SectionPlacement {
  bool in_segment = false;       // a PT_LOAD and a segment of `segment_type` will be added
  uint64_t address = 0;          // the section's sh_addr (its run-time address when in_segment)
  uint64_t file_offset = 0;      // of the section data in the output
  uint64_t alignment = 8;
  std::string note;              // one line: where the section went and why

  // Layout details (in_segment): the moved program header table.
  uint64_t phdr_offset = 0;
  uint64_t phdr_address = 0;
  uint64_t padding = 0;          // zero bytes between the original end of file and the table
};

// Decides where a section appended to `file` lands. Only the header counts
// matter, not the section size: plan first, encode the data for `address`,
// then write.
Result<SectionPlacement> plan_added_section(const ElfFile& file, SegmentPolicy policy, uint64_t alignment = 8);

struct NewSection {
  std::string name;
  uint32_t type = kShtProgbits;
  Bytes data;
  uint32_t segment_type = kPtGnuSframe;  // the segment naming the section when in_segment
};

// The output file's bytes.
Result<std::vector<uint8_t>> add_section(const ElfFile& file, const SectionPlacement& placement,
                                         const NewSection& section);

}  // namespace framewalk::elf

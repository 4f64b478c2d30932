// fuzz_eh_frame_hdr: the binary-search table of .eh_frame_hdr.
//
// Input: byte 0 = options (bit 0 big-endian, bit 1 4-byte addresses, bits 2-3
// the header's address), the rest = the section.
#include <vector>

#include "dwarf/cfi_index.hpp"
#include "dwarf/cfi_section.hpp"
#include "dwarf/eh_frame_hdr.hpp"
#include "fuzz_bodies.hpp"

namespace framewalk::fuzz {

int fuzz_eh_frame_hdr(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  const uint8_t flags = data[0];
  const Endian endian = (flags & 1) ? Endian::kBig : Endian::kLittle;
  const uint8_t address_size = (flags & 2) ? 4 : 8;
  static constexpr uint64_t kAddresses[4] = {0, 0x1ef7c, 0x1a1b2c, 0xfffffffffffff000ull};
  const uint64_t address = kAddresses[(flags >> 2) & 3];
  const Bytes bytes(data + 1, size - 1);

  auto parsed = dwarf::EhFrameHdr::parse(bytes, endian, address_size, address);
  if (!parsed) {
    (void)to_string(parsed.error().code);
    return 0;
  }
  const dwarf::EhFrameHdr& hdr = *parsed;
  FUZZ_CHECK(hdr.version() == 1);
  (void)hdr.table_encoding();
  std::vector<uint64_t> pcs = {0, 1, ~uint64_t{0}, hdr.eh_frame_address()};
  const uint64_t count = hdr.fde_count();
  if (hdr.has_table()) {
    // parse() promised that the whole table lies in the section.
    for (uint64_t i : {uint64_t{0}, count / 2, count - 1}) FUZZ_CHECK(hdr.entry(i).ok());
    FUZZ_CHECK(!hdr.entry(count).ok());
    for (uint64_t i = 0; i < count && i < 64; ++i) {
      auto e = hdr.entry(i);
      FUZZ_CHECK(e.ok());
      pcs.push_back(e->initial_pc);
      pcs.push_back(e->initial_pc - 1);
      pcs.push_back(e->initial_pc + 1);
    }
  } else {
    FUZZ_CHECK(!hdr.entry(0).ok());
  }
  const bool sorted = !hdr.first_unsorted().has_value();
  for (uint64_t pc : pcs) {
    auto e = hdr.lookup(pc);
    if (e && sorted) FUZZ_CHECK(e->initial_pc <= pc);
  }

  // The index over an .eh_frame at the address the header names; here the
  // same bytes, so that the FDE addresses in the table lead somewhere.
  dwarf::CfiSectionInfo info;
  info.kind = dwarf::CfiKind::kEhFrame;
  info.endian = endian;
  info.address_size = address_size;
  info.bases.section_address = hdr.eh_frame_address();
  const dwarf::CfiSection section(bytes, info);
  const dwarf::CfiIndex index = dwarf::CfiIndex::build(section, &hdr);
  (void)index.hdr_rejected_reason();
  for (size_t i = 0; i < pcs.size() && i < 32; ++i) {
    auto m = index.find(pcs[i]);
    if (m) FUZZ_CHECK(m->fde.contains(pcs[i]));
  }
  return 0;
}

}  // namespace framewalk::fuzz

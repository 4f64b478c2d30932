// fuzz_cu_index: a .dwp's .debug_cu_index (versions 2 and 5) and the slicing
// of a row's contributions out of a package's sections.
//
// Input: byte 0 = options (bit 0 big-endian); the rest is .debug_cu_index.
// A table that parses finds, for every 8-byte window of the input taken as a
// signature, either nothing or a row of that signature; a row's sections
// sliced from a package of 4 KiB sections lie inside them or are refused with
// kBadCuIndex. A table that does not parse is refused with kBadCuIndex at an
// offset inside the input (or its end).
#include <vector>

#include "fuzz_bodies.hpp"
#include "symbol/split_dwarf.hpp"

namespace framewalk::fuzz {

int fuzz_cu_index(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  const Endian endian = (data[0] & 1) ? Endian::kBig : Endian::kLittle;
  const Bytes table(data + 1, size - 1);
  auto index = symbol::CuIndex::parse(table, endian);
  if (!index) {
    FUZZ_CHECK(index.error().code == ErrorCode::kBadCuIndex);
    FUZZ_CHECK(index.error().offset <= table.size());
    return 0;
  }
  FUZZ_CHECK(index->version() == 2 || index->version() == 5);
  static const std::vector<uint8_t> kSection(4096, 0);
  symbol::DwarfSections package;
  package.info = package.abbrev = package.str_offsets = package.rnglists = package.str = kSection;
  package.endian = endian;
  for (size_t at = 0; at + 8 <= table.size() && at < 4096; ++at) {
    uint64_t signature = 0;
    for (int i = 0; i < 8; ++i) signature = signature << 8 | table[at + static_cast<size_t>(i)];
    const symbol::CuIndexRow* row = index->find(signature);
    if (!row) continue;
    FUZZ_CHECK(row->signature == signature);
    const char* bad = nullptr;
    auto sections = symbol::package_unit_sections(package, *row, &bad);
    if (!sections) {
      FUZZ_CHECK(sections.error().code == ErrorCode::kBadCuIndex && bad != nullptr);
      continue;
    }
    const symbol::DwpContribution& info = (*row)[symbol::DwpSection::kInfo];
    FUZZ_CHECK(info.present && sections->info.size() == info.size);
    FUZZ_CHECK(sections->info.data() == kSection.data() + info.offset);
    FUZZ_CHECK(info.offset + info.size <= kSection.size());
  }
  return 0;
}

}  // namespace framewalk::fuzz

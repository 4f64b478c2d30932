// fuzz_line: the .debug_line reader and the line table built from it.
//
// Input: byte 0 = options (bit 0 big-endian, bit 1 4-byte addresses), bytes
// 1-2 = the length N of a .debug_line_str (little-endian, at most what is
// left), then N bytes of .debug_line_str (also used as .debug_str), then
// .debug_line. Every unit's header and program run; the table must answer
// every row address it lists. The same bytes also go through the
// .debug_info unit-root reader.
#include <algorithm>
#include <vector>

#include "fuzz_bodies.hpp"
#include "symbol/line_program.hpp"
#include "symbol/line_table.hpp"
#include "symbol/unit_roots.hpp"

namespace framewalk::fuzz {

int fuzz_line(const uint8_t* data, size_t size) {
  if (size < 3) return 0;
  const uint8_t flags = data[0];
  size_t strings = static_cast<size_t>(data[1]) | static_cast<size_t>(data[2]) << 8;
  strings = std::min(strings, size - 3);
  symbol::LineSections s;
  s.endian = (flags & 1) ? Endian::kBig : Endian::kLittle;
  s.address_size = (flags & 2) ? 4 : 8;
  s.line_str = Bytes(data + 3, strings);
  s.str = s.line_str;
  s.line = Bytes(data + 3 + strings, size - 3 - strings);

  // Unit by unit, as the table does, with the rows checked against the header.
  uint64_t offset = 0;
  size_t rows = 0;
  while (offset < s.line.size()) {
    auto h = symbol::parse_line_header(s, offset);
    if (!h) {
      FUZZ_CHECK(h.error().offset <= s.line.size() || h.error().code == ErrorCode::kBadStringOffset);
      (void)to_string(h.error().code);
      // As the table does: a sound unit length leads to the next unit.
      ByteReader r(s.line, s.endian);
      FUZZ_CHECK(r.seek(static_cast<size_t>(offset)).ok());
      auto length = r.initial_length();
      if (!length || length->length > r.remaining()) break;
      offset += length->header_size + length->length;
      continue;
    }
    FUZZ_CHECK(h->end > offset && h->end <= s.line.size());
    FUZZ_CHECK(h->program_offset <= h->end);
    FUZZ_CHECK(h->line_range != 0 && h->opcode_base != 0);
    auto r = symbol::run_line_program(s, *h, [&](const symbol::LineRow&) { ++rows; });
    if (!r) FUZZ_CHECK(r.error().offset >= h->program_offset && r.error().offset <= h->end);
    // Every row takes at least one byte of the program.
    FUZZ_CHECK(rows <= s.line.size());
    offset = h->end;
  }

  const symbol::LineTable table = symbol::LineTable::build(s, {{0, "/comp/dir"}});
  FUZZ_CHECK(table.row_count() <= rows + table.sequence_count());
  const std::vector<uint64_t> addresses = table.row_addresses();
  for (size_t i = 0; i < addresses.size() && i < 256; ++i) {
    auto loc = table.lookup(addresses[i]);
    FUZZ_CHECK(loc.has_value());
    (void)table.lookup(addresses[i] - 1);
    (void)table.lookup(addresses[i] + 1);
  }
  (void)table.lookup(0);
  (void)table.lookup(~uint64_t{0});

  // The same bytes as .debug_info with the strings as .debug_abbrev: the
  // unit-root reader must stop too, each problem inside its section.
  symbol::UnitRootSections u;
  u.endian = s.endian;
  u.info = s.line;
  u.abbrev = s.line_str;
  u.str = s.line_str;
  u.line_str = s.line_str;
  std::vector<Error> problems;
  for (const symbol::UnitRoot& root : symbol::read_unit_roots(u, &problems)) FUZZ_CHECK(root.offset < u.info.size());
  return 0;
}

}  // namespace framewalk::fuzz

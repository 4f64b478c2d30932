// fuzz_perf_map: the bytes as a perf map file, given whole and then in two
// pieces (a map read, then the lines appended since): every line is either
// taken or counted malformed, the two readings agree, and a lookup at every
// entry's start, end and middle finds an entry that holds the address.
#include <string_view>

#include "fuzz_bodies.hpp"
#include "symbol/perf_map.hpp"

namespace framewalk::fuzz {

int fuzz_perf_map(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  symbol::PerfMap whole("whole");
  whole.add_text(text);
  // The same lines in two pieces, cut at a newline.
  symbol::PerfMap pieces("pieces");
  const size_t cut = text.find('\n', text.size() / 2);
  if (cut == std::string_view::npos) {
    pieces.add_text(text);
  } else {
    pieces.add_text(text.substr(0, cut));
    pieces.add_text(text.substr(cut + 1));
  }
  FUZZ_CHECK(whole.lines() == pieces.lines());
  FUZZ_CHECK(whole.malformed() == pieces.malformed());
  FUZZ_CHECK(whole.malformed() == 0 || whole.first_malformed_line() > 0);
  for (uint64_t probe : {uint64_t{0}, uint64_t{1}, ~uint64_t{0}}) {
    const symbol::PerfMap::Entry* e = whole.find(probe);
    FUZZ_CHECK(!e || (probe >= e->start && probe - e->start < e->size));
  }
  // Every address a line names is found in some entry (a later line may
  // have taken it over), and what is found holds it.
  size_t checked = 0;
  for (size_t at = 0; at < text.size() && checked < 256; ++checked) {
    const size_t nl = text.find('\n', at);
    const std::string_view line = text.substr(at, nl == std::string_view::npos ? std::string_view::npos : nl - at);
    at = nl == std::string_view::npos ? text.size() : nl + 1;
    symbol::PerfMap one("one");
    one.add_text(line);
    for (const symbol::PerfMap::Entry& mine : one.entries())
      for (uint64_t probe : {mine.start, mine.start + mine.size / 2, mine.start + mine.size - 1}) {
        const symbol::PerfMap::Entry* e = whole.find(probe);
        FUZZ_CHECK(e && probe >= e->start && probe - e->start < e->size);
      }
  }
  // The entries are sorted and disjoint.
  const auto& entries = whole.entries();
  for (size_t i = 1; i < entries.size(); ++i)
    FUZZ_CHECK(entries[i - 1].start + entries[i - 1].size <= entries[i].start);
  return 0;
}

}  // namespace framewalk::fuzz

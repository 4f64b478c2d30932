// fuzz_dwarf_info: the .debug_info reader (unit headers, abbreviations,
// forms, DIE trees), range lists, the function index built on them, and the
// call sites of its functions with the tail-call search over them.
//
// Input: byte 0 = options (bit 0 big-endian, bit 1 4-byte addresses for the
// range lists read directly); then six sections, each a 2-byte little-endian
// length (at most what is left) and its bytes: .debug_abbrev, .debug_str,
// .debug_addr, .debug_str_offsets, .debug_rnglists, .debug_ranges; the rest
// is .debug_info. A chain at a subprogram's entry (empty where the unit's
// root ranges do not cover it: the unit is not asked, as in LLVM) ends in a
// physical function with only inlined ones before it.
#include <algorithm>
#include <cstring>
#include <vector>

#include "fuzz_bodies.hpp"
#include "symbol/debug_info.hpp"
#include "symbol/call_sites.hpp"
#include "symbol/function_index.hpp"

namespace framewalk::fuzz {

int fuzz_dwarf_info(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  const uint8_t flags = data[0];
  size_t at = 1;
  auto next = [&]() -> Bytes {
    if (size - at < 2) return {};
    size_t n = static_cast<size_t>(data[at]) | static_cast<size_t>(data[at + 1]) << 8;
    at += 2;
    n = std::min(n, size - at);
    Bytes out(data + at, n);
    at += n;
    return out;
  };
  symbol::DwarfSections s;
  s.endian = (flags & 1) ? Endian::kBig : Endian::kLittle;
  s.abbrev = next();
  s.str = next();
  s.addr = next();
  s.str_offsets = next();
  s.rnglists = next();
  s.ranges = next();
  s.info = Bytes(data + at, size - at);

  std::vector<symbol::DwarfProblem> problems;
  const std::vector<symbol::UnitHeader> units = symbol::read_unit_headers(s.info, s.endian, &problems);
  for (const symbol::UnitHeader& u : units) {
    FUZZ_CHECK(u.offset < u.first_die || u.first_die <= u.end);
    FUZZ_CHECK(u.end <= s.info.size());
  }
  for (const symbol::DwarfProblem& p : problems) FUZZ_CHECK(p.error.offset <= s.info.size());

  symbol::FunctionIndex index(s);
  const std::vector<uint64_t> entries = index.function_entries();
  for (size_t i = 0; i < entries.size() && i < 128; ++i) {
    const std::vector<symbol::FunctionLevel> chain = index.chain(entries[i]);
    if (chain.empty()) continue;
    FUZZ_CHECK(!chain.back().inlined);
    for (size_t j = 0; j + 1 < chain.size(); ++j) FUZZ_CHECK(chain[j].inlined);
    (void)index.chain(entries[i] - 1);
  }
  (void)index.chain(0);
  (void)index.chain(~uint64_t{0});

  // Call sites of the physical functions, and the tail-call search from
  // each site's return address to every entry (bounded: at most 16 x 16).
  symbol::CallSiteIndex call_sites(s);
  const symbol::ModuleCallGraph graph{index, call_sites, [](std::string_view) -> std::optional<uint64_t> {
                                        return std::nullopt;
                                      }};
  size_t searched = 0;
  for (size_t i = 0; i < entries.size() && i < 16; ++i) {
    const std::vector<symbol::FunctionLevel> chain = index.chain(entries[i]);
    if (chain.empty()) continue;
    const symbol::FunctionCallSites* sites = call_sites.sites(chain.back().die);
    if (!sites) continue;
    for (const symbol::CallSite& site : sites->sites) {
      if (searched++ >= 256) break;
      FUZZ_CHECK(graph.call_site_at(site.return_pc) == nullptr || graph.call_site_at(site.return_pc)->return_pc ==
                                                                       site.return_pc);
      for (size_t j = 0; j < entries.size() && j < 16; ++j) {
        const std::vector<symbol::TailCallFrame> frames = graph.tail_call_frames(site.return_pc, entries[j]);
        FUZZ_CHECK(frames.size() <= symbol::TailCallLimits{}.max_depth);
      }
    }
  }
  for (const symbol::DwarfProblem& p : index.problems()) (void)to_string(p.error.code);

  // The range lists directly, from offset 0 and by index 0.
  symbol::UnitContext u;
  u.sections = &s;
  u.header.address_size = (flags & 2) ? 4 : 8;
  u.header.version = 5;
  std::vector<symbol::AddressRange> ranges;
  symbol::FormValue v;
  v.kind = symbol::FormClass::kSectionOffset;
  (void)symbol::read_ranges(u, v, &ranges);
  v.kind = symbol::FormClass::kRnglistIndex;
  (void)symbol::read_ranges(u, v, &ranges);
  u.header.version = 4;
  v.kind = symbol::FormClass::kSectionOffset;
  (void)symbol::read_ranges(u, v, &ranges);
  for (const symbol::AddressRange& r : ranges) FUZZ_CHECK(r.low < r.high);
  return 0;
}

}  // namespace framewalk::fuzz

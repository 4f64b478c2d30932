// fuzz_sframe_roundtrip: a valid .sframe section is described for the writer
// (describe_section), written again (write_section) and read back; the two
// sections must say the same thing, FDE by FDE and FRE by FRE, and give the
// same rows. Where the writer refuses, the refusal must be one of the cases
// describe_section documents, checked on the input.
//
// Input: byte 0 = options (bits 0-1 the section's address, as fuzz_sframe),
// the rest = the section.
#include <algorithm>
#include <cstdio>
#include <limits>
#include <numeric>
#include <vector>

#include "fuzz_bodies.hpp"
#include "sframe/sframe_rows.hpp"
#include "sframe/sframe_section.hpp"
#include "sframe/sframe_writer.hpp"

namespace framewalk::fuzz {

namespace {

using namespace framewalk::sframe;

constexpr size_t kMaxRowsCompared = 256;

bool same_fde(const FdeDesc& a, const FdeDesc& b) {
  if (a.start != b.start || a.size != b.size || a.pc_type != b.pc_type || a.fde_type != b.fde_type ||
      a.rep_size != b.rep_size || a.signal != b.signal || a.pauth_key_b != b.pauth_key_b ||
      a.fres.size() != b.fres.size())
    return false;
  for (size_t i = 0; i < a.fres.size(); ++i)
    if (a.fres[i].start != b.fres[i].start || !(a.fres[i].rules == b.fres[i].rules)) return false;
  return true;
}

// The order the writer lays FDEs out in: by start, stably.
std::vector<uint32_t> sorted_order(const std::vector<FdeDesc>& fdes) {
  std::vector<uint32_t> order(fdes.size());
  std::iota(order.begin(), order.end(), 0u);
  std::stable_sort(order.begin(), order.end(), [&](uint32_t x, uint32_t y) { return fdes[x].start < fdes[y].start; });
  return order;
}

// Whether the writer's refusal is one describe_section documents.
bool refusal_explained(const Section& s, const std::vector<FdeDesc>& fdes, const WriteProblem& p) {
  if (p.fde >= fdes.size()) return false;
  const FdeDesc& fde = fdes[p.fde];
  switch (p.what) {
    case Unencodable::kDuplicateStart: {
      if (s.sorted()) return false;  // parse checked that starts increase
      size_t same = 0;
      for (const FdeDesc& f : fdes) same += f.start == fde.start;
      return same > 1;
    }
    case Unencodable::kStartRange: {
      if (s.version() != kVersion2) return false;  // V1 keeps section-relative starts; V3 has 64 bits
      const std::vector<uint32_t> order = sorted_order(fdes);
      const size_t at = static_cast<size_t>(std::find(order.begin(), order.end(), p.fde) - order.begin());
      const uint64_t field = s.address() + kHeaderSize + at * Section::fde_size(kVersion2);
      const int64_t raw = static_cast<int64_t>(fde.start - field);
      return raw < std::numeric_limits<int32_t>::min() || raw > std::numeric_limits<int32_t>::max();
    }
    case Unencodable::kRaFlexRule:
    case Unencodable::kFpFlexRule: {
      if (p.fre >= fde.fres.size() || fde.fde_type != FdeType::kFlex) return false;
      const FrameRules& r = fde.fres[p.fre].rules;
      const Rule& rule = p.what == Unencodable::kRaFlexRule ? r.ra : r.fp;
      return rule.kind == Rule::Kind::kCfa && !rule.deref;
    }
    case Unencodable::kFreBeyondFunction:
      return s.version() == kVersion1 && fde.pc_type == PcType::kMask && p.fre < fde.fres.size() &&
             fde.fres[p.fre].start >= 16;
    default: return false;
  }
}

// Rows at a few PCs of each FDE, from both sections; b's FDE i is a's FDE order[i].
void compare_rows(const Section& a, const Section& b, const std::vector<uint32_t>& order) {
  size_t compared = 0;
  for (size_t i = 0; i < order.size() && compared < kMaxRowsCompared; ++i) {
    const Fde& fa = a.fdes()[order[i]];
    const Fde& fb = b.fdes()[i];
    for (uint64_t pc : {fa.start, fa.start + fa.size / 2, fa.end() - 1}) {
      if (!fa.contains(pc)) break;
      ++compared;
      auto ra = row_for_pc(a, fa, pc);
      auto rb = row_for_pc(b, fb, pc);
      FUZZ_CHECK(ra.ok() == rb.ok());
      if (!ra.ok()) {
        FUZZ_CHECK(ra.error().code == rb.error().code);
        continue;
      }
      FUZZ_CHECK(ra->row.same_rules(rb->row));
      FUZZ_CHECK(ra->row.pc_begin == rb->row.pc_begin && ra->row.pc_end == rb->row.pc_end);
      FUZZ_CHECK(ra->topmost_only == rb->topmost_only && ra->outermost == rb->outermost &&
                 ra->ra_mangled == rb->ra_mangled && ra->rep_size == rb->rep_size);
    }
  }
}

}  // namespace

int fuzz_sframe_roundtrip(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  static constexpr uint64_t kAddresses[4] = {0, 0x2130, 0x402048, 0xfffffffffffff000ull};
  const uint64_t address = kAddresses[data[0] & 3];
  auto parsed = Section::parse(Bytes(data + 1, size - 1), address);
  if (!parsed.ok()) return 0;
  const Section& a = *parsed;

  auto described = describe_section(a);
  FUZZ_CHECK(described.ok());  // parse validated every FRE
  const std::vector<FdeDesc>& fdes = *described;
  const WriterOptions options = writer_options_of(a);
  WrittenSection written = write_section(options, fdes);
  if (!written.problem.ok()) {
    FUZZ_CHECK(written.bytes.empty());
    const bool explained = refusal_explained(a, fdes, written.problem);
    if (!explained)
      std::fprintf(stderr, "writer refused: %s (fde %u, fre %u)\n", to_string(written.problem.what),
                   written.problem.fde, written.problem.fre);
    FUZZ_CHECK(explained);
    return 0;
  }

  auto reread = Section::parse(Bytes(written.bytes), address);
  FUZZ_CHECK(reread.ok());
  const Section& b = *reread;
  FUZZ_CHECK(b.sorted() && b.version() == a.version() && b.abi() == a.abi() && b.endian() == a.endian());
  FUZZ_CHECK(b.header().cfa_fixed_fp_offset == a.header().cfa_fixed_fp_offset &&
             b.header().cfa_fixed_ra_offset == a.header().cfa_fixed_ra_offset);
  FUZZ_CHECK(b.header().num_fres == a.header().num_fres && written.num_fres == a.header().num_fres);
  auto again = describe_section(b);
  FUZZ_CHECK(again.ok() && again->size() == fdes.size());
  const std::vector<uint32_t> order = sorted_order(fdes);
  for (size_t i = 0; i < order.size(); ++i) {
    if (!same_fde(fdes[order[i]], (*again)[i]))
      std::fprintf(stderr, "FDE %u (at %#llx) reads back differently\n", order[i],
                   static_cast<unsigned long long>(fdes[order[i]].start));
    FUZZ_CHECK(same_fde(fdes[order[i]], (*again)[i]));
  }
  // Writing the written section again changes nothing.
  WrittenSection twice = write_section(writer_options_of(b), *again);
  FUZZ_CHECK(twice.problem.ok() && twice.bytes == written.bytes);
  compare_rows(a, b, order);
  return 0;
}

}  // namespace framewalk::fuzz

// fuzz_sframe: the bytes as an .sframe section, read every way framewalk
// reads one: parse, every FDE's FREs and rules, rows, lookups, every dump.
//
// Input: byte 0 = options (bits 0-1 the section's address), the rest = the
// section.
#include <string>
#include <vector>

#include "fuzz_bodies.hpp"
#include "sframe/sframe_dump.hpp"
#include "sframe/sframe_rows.hpp"
#include "sframe/sframe_section.hpp"

namespace framewalk::fuzz {

namespace {

using namespace framewalk::sframe;

// A cap on the work per input: huge sections are legal, but the fuzzer
// learns nothing from walking all of them.
constexpr size_t kMaxFdesWalked = 256;

void check_rows(const Section& s, const Fde& fde) {
  size_t fres = 0;
  auto walked = s.for_each_fre(fde, [&](const Fre& f) {
    FUZZ_CHECK(f.index == fres);
    FUZZ_CHECK(f.offset >= fde.fres_offset && f.offset + f.size <= fde.fres_end);
    FUZZ_CHECK(f.word_count <= Fre::kMaxWords);
    auto rules = s.rules(fde, f);  // parse() validated every FRE
    FUZZ_CHECK(rules.ok());
    if (rules->ra_undefined) FUZZ_CHECK(f.word_count == 0);
    ++fres;
    return true;
  });
  FUZZ_CHECK(walked.ok());
  FUZZ_CHECK(fres == fde.num_fres);
  auto rows = fde_rows(s, fde);
  FUZZ_CHECK(rows.ok());
  FUZZ_CHECK(rows->size() == fde.num_fres);
  for (const SframeRow& r : *rows) {
    FUZZ_CHECK(r.row.pc_begin <= r.row.pc_end && r.row.pc_begin >= fde.start && r.row.pc_end <= fde.end());
    if (r.row.cfa.kind == CfaKind::kExpression) FUZZ_CHECK(!r.row.cfa.expression.empty());
    for (int i = 0; i < r.row.rule_count; ++i) {
      const RegisterRule& rule = r.row.rules[i];
      if (rule.kind == RuleKind::kExpression || rule.kind == RuleKind::kValExpression)
        FUZZ_CHECK(!rule.expression().empty());
    }
    FUZZ_CHECK(r.outermost == (r.row.cfa.kind == CfaKind::kUndefined));
  }
}

void check_lookup(const Section& s, uint64_t pc) {
  auto fde = s.find_fde(pc);
  if (!fde.ok()) {
    FUZZ_CHECK(fde.error().code == Errc::kNoFde || fde.error().code == Errc::kUnsortedLookup);
    return;
  }
  FUZZ_CHECK((*fde)->contains(pc));
  auto fre = s.find_fre(**fde, pc);
  if (fre.ok()) FUZZ_CHECK(fre->start <= s.match_offset(**fde, pc));
  else FUZZ_CHECK(fre.error().code == Errc::kNoFre);
  auto row = row_for_pc(s, **fde, pc);
  FUZZ_CHECK(row.ok() == fre.ok());
  if (row.ok()) {
    FUZZ_CHECK(row->fre_index == fre->index);
    FUZZ_CHECK(pc >= row->row.pc_begin && pc < row->row.pc_end);
  }
}

}  // namespace

int fuzz_sframe(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  static constexpr uint64_t kAddresses[4] = {0, 0x2130, 0x402048, 0xfffffffffffff000ull};
  const uint64_t address = kAddresses[data[0] & 3];
  const Bytes bytes(data + 1, size - 1);

  auto parsed = Section::parse(bytes, address);
  if (!parsed.ok()) {
    FUZZ_CHECK(to_string(parsed.error().code) != nullptr);
    FUZZ_CHECK(parsed.error().offset <= bytes.size());
    (void)to_framewalk_error(parsed.error());
    return 0;
  }
  const Section copy = *parsed;  // copies share the FDE table and expressions
  const Section& s = copy;
  FUZZ_CHECK(s.fdes().size() == s.header().num_fdes);

  std::vector<uint64_t> pcs = {0, 1, address, ~uint64_t{0}};
  size_t walked = 0;
  for (const Fde& fde : s.fdes()) {
    if (walked++ == kMaxFdesWalked) break;
    FUZZ_CHECK(fde.fres_offset <= fde.fres_end && fde.fres_end <= bytes.size());
    check_rows(s, fde);
    pcs.push_back(fde.start);
    pcs.push_back(fde.start - 1);
    pcs.push_back(fde.start + fde.size / 2);
    pcs.push_back(fde.end() - 1);
    pcs.push_back(fde.end());
  }
  for (uint64_t pc : pcs) check_lookup(s, pc);

  for (Binutils release : {Binutils::k2_40, Binutils::k2_45, Binutils::k2_46}) {
    if (s.fdes().size() > kMaxFdesWalked) break;
    auto text = objdump_text(s, release);
    if (!text.ok()) {
      FUZZ_CHECK(text.error().code == Errc::kUnsupportedByDumper);
      continue;
    }
    FUZZ_CHECK(text->rfind("Contents of the SFrame section .sframe:", 0) == 0);
    FUZZ_CHECK(text->find('\0') == std::string::npos);
  }
  // The matching release always dumps.
  if (s.fdes().size() <= kMaxFdesWalked) FUZZ_CHECK(objdump_text(s, binutils_for_version(s.version())).ok());
  return 0;
}

}  // namespace framewalk::fuzz

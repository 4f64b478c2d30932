#include "sframe/sframe_check.hpp"

#include "base/text.hpp"

#include <algorithm>
#include <numeric>
#include <map>

#include "dwarf/cfa_program.hpp"
#include "dwarf/expression.hpp"
#include "sframe/sframe_generate.hpp"
#include "sframe/sframe_rows.hpp"

namespace framewalk::sframe {

namespace {

uint64_t mix(uint64_t x) {  // splitmix64
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

// A made-up machine: every register a hash of (trial, number), every memory
// word a hash of (trial, address), rip the PC being checked.
class FakeMachine : public dwarf::ExpressionInputs {
 public:
  FakeMachine(uint64_t trial, uint64_t pc, uint16_t pc_register, Endian endian)
      : seed_(mix(trial + 1)), pc_(pc), pc_reg_(pc_register), endian_(endian) {}
  // The byte order of the CFI's expression operands (the file's machine's).
  Endian endian() const { return endian_; }
  framewalk::Result<uint64_t> register_value(uint16_t reg) override {
    if (reg == pc_reg_) {
      reads_pc = true;
      return pc_;
    }
    return mix(seed_ ^ (uint64_t{reg} * 0x100000001b3ull));
  }
  framewalk::Result<uint64_t> read_memory(uint64_t address, unsigned size) override {
    const uint64_t v = mix(~seed_ ^ address);
    return size >= 8 ? v : v & ((uint64_t{1} << (8 * size)) - 1);
  }
  bool reads_pc = false;

 private:
  uint64_t seed_, pc_;
  uint16_t pc_reg_;
  Endian endian_;
};

struct Val {
  enum class State : uint8_t { kValue, kUndefined, kUnspecified, kError } state = State::kValue;
  uint64_t v = 0;
  bool operator==(const Val& o) const { return state == o.state && (state != State::kValue || v == o.v); }
};

struct Effect {
  Val cfa, ra, fp, sp;
};

Val value(uint64_t v) { return Val{Val::State::kValue, v}; }
Val error() { return Val{Val::State::kError, 0}; }

Val eval_expr(Bytes expr, uint64_t offset, bool push, uint64_t initial, FakeMachine& m) {
  dwarf::ExpressionOptions o;
  o.endian = m.endian();
  o.push_initial = push;
  o.initial = initial;
  auto r = dwarf::evaluate_expression(expr, offset, o, &m);
  return r ? value(*r) : error();
}

Val eval_cfa(const CfaRule& cfa, FakeMachine& m) {
  switch (cfa.kind) {
    case CfaKind::kRegisterOffset: {
      auto r = m.register_value(cfa.reg);
      return value(*r + static_cast<uint64_t>(cfa.offset));
    }
    case CfaKind::kExpression: return eval_expr(cfa.expression, cfa.expression_offset, false, 0, m);
    case CfaKind::kUndefined: break;
  }
  return Val{Val::State::kUndefined, 0};
}

// The caller's value of `reg` under `row`; `absent` is what no rule means.
Val eval_register(const UnwindRow& row, uint16_t reg, const Val& cfa, Val absent, FakeMachine& m) {
  const RegisterRule* r = row.find(reg);
  if (!r) return absent;
  const bool cfa_known = cfa.state == Val::State::kValue;
  switch (r->kind) {
    case RuleKind::kUndefined: return Val{Val::State::kUndefined, 0};
    case RuleKind::kSameValue: return value(*m.register_value(reg));
    case RuleKind::kOffset:
      if (!cfa_known) return error();
      return value(*m.read_memory(cfa.v + static_cast<uint64_t>(r->value), 8));
    case RuleKind::kValOffset:
      if (!cfa_known) return error();
      return value(cfa.v + static_cast<uint64_t>(r->value));
    case RuleKind::kRegister: return value(*m.register_value(static_cast<uint16_t>(r->value)));
    case RuleKind::kExpression: {
      if (!cfa_known) return error();
      Val addr = eval_expr(r->expression(), r->expression_offset, true, cfa.v, m);
      if (addr.state != Val::State::kValue) return addr;
      return value(*m.read_memory(addr.v, 8));
    }
    case RuleKind::kValExpression:
      if (!cfa_known) return error();
      return eval_expr(r->expression(), r->expression_offset, true, cfa.v, m);
  }
  return error();
}

// s390x: the caller's SP is CFA - 160 (the ABI defines the CFA as the SP at
// entry + 160), also where CFI saves r15 (stmg's slot, an FPR in a leaf):
// the value saved is r15 at entry, which no made-up memory can know.
Val caller_sp(const UnwindRow& row, const AbiRegisters& regs, Abi abi, const Val& cfa, FakeMachine& m) {
  if (abi != Abi::kS390xBig) return eval_register(row, regs.sp, cfa, cfa, m);
  const Val below = cfa.state == Val::State::kValue ? value(cfa.v - kS390xCfaAdjustment) : cfa;
  const RegisterRule* r = row.find(regs.sp);
  if (!r || r->kind == RuleKind::kOffset || r->kind == RuleKind::kRegister) return below;
  return eval_register(row, regs.sp, cfa, below, m);
}

Effect evaluate(const UnwindRow& row, const AbiRegisters& regs, Abi abi, FakeMachine& m) {
  Effect e;
  e.cfa = eval_cfa(row.cfa, m);
  // No RA rule: on a link-register machine the RA is still in its register
  // (a leaf, a prologue before the save); elsewhere there is none.
  const uint16_t ra = row.return_address_register;
  const Val ra_absent = regs.link_register ? value(*m.register_value(ra)) : Val{Val::State::kUnspecified, 0};
  e.ra = eval_register(row, ra, e.cfa, ra_absent, m);
  e.fp = eval_register(row, regs.fp, e.cfa, value(*m.register_value(regs.fp)), m);
  e.sp = caller_sp(row, regs, abi, e.cfa, m);
  return e;
}

uint8_t differences(const Effect& a, const Effect& b) {
  const bool a_outer = a.ra.state == Val::State::kUndefined;
  const bool b_outer = b.ra.state == Val::State::kUndefined;
  if (a_outer && b_outer) return 0;
  if (a_outer != b_outer) return kCheckRa;
  uint8_t d = 0;
  if (!(a.cfa == b.cfa)) d |= kCheckCfa;
  if (!(a.ra == b.ra)) d |= kCheckRa;
  if (!(a.fp == b.fp)) d |= kCheckFp;
  if (!(a.sp == b.sp)) d |= kCheckSp;
  return d;
}

// What differs between the two rows at `pc`; *reads_pc when either reads the PC.
uint8_t compare_at(const UnwindRow& cfi, const UnwindRow& sf, const AbiRegisters& regs, Abi abi, uint64_t pc,
                   unsigned trials, bool* reads_pc) {
  uint8_t d = 0;
  for (unsigned t = 0; t < trials; ++t) {
    FakeMachine m(t, pc, regs.pc, abi_machine_key(abi).endian);
    const Effect a = evaluate(cfi, regs, abi, m);
    const Effect b = evaluate(sf, regs, abi, m);
    d |= differences(a, b);
    if (m.reads_pc) *reads_pc = true;
  }
  return d;
}

// A row of one source over [begin, end).
struct Piece {
  uint64_t begin, end;
  size_t row;  // index into the source's row store
};


class Checker {
 public:
  Checker(std::span<const dwarf::CfiSection* const> cfi, const Section& sf, const CheckOptions& o, CheckReport& report)
      : cfi_(cfi), sf_(sf), o_(o), rep_(report) {}

  void run() {
    // SFrame FDEs by start (the reader keeps section order; only sorted
    // sections can be searched, but the checker also takes unsorted ones).
    const auto fdes = sf_.fdes();
    order_.resize(fdes.size());
    std::iota(order_.begin(), order_.end(), 0u);
    std::stable_sort(order_.begin(), order_.end(), [&](uint32_t a, uint32_t b) { return fdes[a].start < fdes[b].start; });
    rep_.sframe_fdes = fdes.size();
    for (const Fde& f : fdes) rep_.sframe_fres += f.num_fres;

    const std::vector<CfiFde> items = collect_cfi_fdes(cfi_, [&](const dwarf::CfiDiagnostic& d) {
      ++rep_.cfi_errors;
      note_error("CFI record at offset " + hex(d.entry_offset) + ": " + to_string(d.error.code));
    });
    rep_.cfi_sections = cfi_sections_name(items);

    std::vector<std::pair<uint64_t, uint64_t>> cfi_ranges;
    uint64_t covered = 0;
    for (const CfiFde& item : items) {
      if (item.fde.pc_end() <= item.fde.pc_begin) continue;  // wraps: not a range
      ++rep_.cfi_fdes;
      const uint64_t begin = std::max(item.fde.pc_begin, covered), end = item.fde.pc_end();
      if (begin >= end) continue;  // wholly inside an earlier FDE
      covered = end;
      cfi_ranges.emplace_back(begin, end);
      check_function(*item.section, *item.cie, item.fde, begin, end);
    }
    flush_difference();

    // SFrame coverage outside every CFI FDE.
    size_t c = 0;
    for (uint32_t idx : order_) {
      const Fde& f = fdes[idx];
      uint64_t at = f.start;
      const uint64_t end = f.end();
      while (at < end) {
        while (c < cfi_ranges.size() && cfi_ranges[c].second <= at) ++c;
        uint64_t next = end;
        if (c < cfi_ranges.size() && cfi_ranges[c].first <= at) {
          at = std::min(end, cfi_ranges[c].second);
          continue;
        }
        if (c < cfi_ranges.size()) next = std::min(end, cfi_ranges[c].first);
        add_hole(rep_.sframe_only, rep_.sframe_only_ranges, rep_.sframe_only_bytes, at, next);
        at = next;
      }
    }
  }

 private:
  void note_error(std::string text) {
    if (o_.list_limit == 0 || rep_.errors.size() < o_.list_limit) rep_.errors.push_back(std::move(text));
  }

  void add_hole(std::vector<CoverageHole>& list, uint64_t& ranges, uint64_t& bytes, uint64_t begin, uint64_t end) {
    if (begin >= end) return;
    bytes += end - begin;
    uint64_t& last_end = &list == &rep_.cfi_only ? cfi_only_end_ : sframe_only_end_;
    const bool continues = ranges > 0 && last_end == begin;
    last_end = end;
    if (continues) {
      if (!list.empty() && list.back().end == begin) list.back().end = end;
      return;
    }
    ++ranges;
    if (o_.list_limit == 0 || list.size() < o_.list_limit) list.push_back({begin, end});
  }

  const UnwindRow* initial_row(const dwarf::CfiSection& section, const dwarf::Cie& cie) {
    auto it = initial_.find({&section, cie.offset});
    if (it == initial_.end()) {
      auto row = dwarf::run_cie(section, cie);
      if (!row) return nullptr;
      it = initial_.emplace(std::make_pair(&section, cie.offset), *row).first;
    }
    return &it->second;
  }

  // SFrame rows over [begin, end) from every FDE overlapping it; PCMASK rows
  // repeated over their function; FDEs without FREs as row-less pieces.
  void sframe_pieces(uint64_t begin, uint64_t end) {
    sf_pieces_.clear();
    sf_rows_.clear();
    const auto fdes = sf_.fdes();
    auto it = std::upper_bound(order_.begin(), order_.end(), begin,
                               [&](uint64_t v, uint32_t idx) { return v < fdes[idx].start; });
    if (it != order_.begin()) --it;
    uint64_t last = 0;
    for (; it != order_.end() && fdes[*it].start < end; ++it) {
      const Fde& f = fdes[*it];
      if (f.end() <= begin) continue;
      if (f.num_fres == 0) {
        const uint64_t b = std::max({f.start, begin, last}), e = std::min(f.end(), end);
        if (b < e) {
          sf_pieces_.push_back({b, e, kNoRow});
          last = e;
        }
        continue;
      }
      auto rows = fde_rows(sf_, f);
      if (!rows) {
        ++rep_.sframe_errors;
        note_error("SFrame FDE " + std::to_string(f.index) + " at " + hex(f.start) + ": " + to_string(rows.error().code));
        continue;
      }
      const uint64_t rep = rows->empty() ? 0 : (*rows)[0].rep_size;
      // The rows are kept once; the pieces of every block refer to them.
      const size_t first_row = sf_rows_.size();
      sf_rows_.insert(sf_rows_.end(), rows->begin(), rows->end());
      // Only the blocks that meet [begin, end): a 4 GiB function of 1-byte
      // blocks must not be walked block by block.
      const uint64_t from = std::max(begin, f.start) - f.start;
      for (uint64_t block = rep ? from - from % rep : 0; block < f.size && f.start + block < end;
           block += rep ? rep : f.size) {
        for (size_t i = 0; i < rows->size(); ++i) {
          const SframeRow& r = (*rows)[i];
          const uint64_t b = std::max({r.row.pc_begin + block, begin, last, f.start});
          const uint64_t e = std::min({r.row.pc_end + block, end, f.end()});
          if (b >= e) continue;
          sf_pieces_.push_back({b, e, first_row + i});
          last = e;
        }
        if (!rep) break;
      }
    }
  }

  void check_function(const dwarf::CfiSection& section, const dwarf::Cie& cie, const dwarf::Fde& fde, uint64_t begin,
                      uint64_t end) {
    const UnwindRow* initial = initial_row(section, cie);
    if (!initial) {
      ++rep_.cfi_errors;
      note_error("CIE at offset " + hex(cie.offset) + " does not run");
      return;
    }
    cfi_rows_.clear();
    cfi_pieces_.clear();
    uint64_t last = begin;
    auto ran = dwarf::run_fde(section, cie, fde, *initial, [&](const UnwindRow& row, bool) {
      const uint64_t b = std::max(row.pc_begin, last), e = std::min(row.pc_end, end);
      if (b >= e) return true;
      cfi_rows_.push_back(row);
      cfi_pieces_.push_back({b, e, cfi_rows_.size() - 1});
      last = e;
      return true;
    });
    if (!ran) {
      ++rep_.cfi_errors;
      note_error("FDE at offset " + hex(fde.offset) + " (" + hex(fde.pc_begin) + "): " + to_string(ran.error().code));
      return;
    }
    cfi_key_b_ = cie.b_key;
    sframe_pieces(begin, end);

    // Sweep the union of both sources' boundaries.
    size_t ci = 0, si = 0;
    uint64_t at = begin;
    while (at < end) {
      while (ci < cfi_pieces_.size() && cfi_pieces_[ci].end <= at) ++ci;
      while (si < sf_pieces_.size() && sf_pieces_[si].end <= at) ++si;
      const Piece* cp = ci < cfi_pieces_.size() && cfi_pieces_[ci].begin <= at ? &cfi_pieces_[ci] : nullptr;
      const Piece* sp = si < sf_pieces_.size() && sf_pieces_[si].begin <= at ? &sf_pieces_[si] : nullptr;
      uint64_t next = end;
      if (cp) next = std::min(next, cp->end);
      else if (ci < cfi_pieces_.size()) next = std::min(next, cfi_pieces_[ci].begin);
      if (sp) next = std::min(next, sp->end);
      else if (si < sf_pieces_.size()) next = std::min(next, sf_pieces_[si].begin);
      if (cp && sp && sp->row == kNoRow) {
        rep_.no_row_bytes += next - at;
        if (!in_no_row_ || no_row_end_ != at) ++rep_.no_row_ranges;
        in_no_row_ = true;
        no_row_end_ = next;
      } else if (cp && sp) {
        compare(cfi_rows_[cp->row], sf_rows_[sp->row], at, next);
      } else if (cp) {
        add_hole(rep_.cfi_only, rep_.cfi_only_ranges, rep_.cfi_only_bytes, at, next);
      } else if (sp) {
        add_hole(rep_.sframe_only, rep_.sframe_only_ranges, rep_.sframe_only_bytes, at, next);
      }
      at = next;
    }
  }

  void compare(const UnwindRow& cfi, const SframeRow& sf, uint64_t begin, uint64_t end) {
    ++rep_.rows_compared;
    rep_.bytes_compared += end - begin;
    bool reads_pc = false;
    const AbiRegisters regs = sf_.registers();
    uint8_t d = compare_at(cfi, sf.row, regs, sf_.abi(), begin, o_.trials, &reads_pc);
    if (sf_.version() >= kVersion3 && cfi.signal_frame != sf.row.signal_frame) d |= kCheckSignal;
    d |= signing_differences(cfi, sf, d);
    if (!reads_pc) {
      note_difference(d, cfi, sf, begin, end);
      return;
    }
    // Rules that read rip: every PC (sampled past max_pcs_per_piece).
    const uint64_t len = end - begin;
    const uint64_t step = len > o_.max_pcs_per_piece ? (len + o_.max_pcs_per_piece - 1) / o_.max_pcs_per_piece : 1;
    for (uint64_t pc = begin; pc < end; pc += step) {
      ++rep_.pcs_evaluated_singly;
      bool unused = false;
      uint8_t dp = pc == begin ? d : compare_at(cfi, sf.row, regs, sf_.abi(), pc, o_.trials, &unused);
      if (sf_.version() >= kVersion3 && cfi.signal_frame != sf.row.signal_frame) dp |= kCheckSignal;
      if (pc != begin) dp |= signing_differences(cfi, sf, dp);
      note_difference(dp, cfi, sf, pc, std::min(end, pc + step));
    }
  }

  // AArch64: whether the RA is signed (CFI: negate_ra_state; SFrame: the
  // FRE's mangled-RA bit) and, where it is, with which key (CIE 'B'; the
  // FDE's PAC key bit). Nothing to compare at an outermost frame (gas writes
  // its FREs without the bit) or on other machines.
  uint8_t signing_differences(const UnwindRow& cfi, const SframeRow& sf, uint8_t items) const {
    if (!abi_has_pauth(sf_.abi()) || sf.outermost || (items & kCheckRa)) return 0;
    if (cfi.negate_ra_state != sf.ra_mangled) return kCheckRaSigning;
    if (sf.ra_mangled && cfi_key_b_ != sf.pauth_key_b) return kCheckRaSigning;
    return 0;
  }

  void note_difference(uint8_t items, const UnwindRow& cfi, const SframeRow& sf, uint64_t begin, uint64_t end) {
    if (!items) {
      flush_difference();
      return;
    }
    if (have_pending_ && pending_.items == items && pending_.end == begin) {
      pending_.end = end;
      return;
    }
    flush_difference();
    have_pending_ = true;
    pending_.begin = begin;
    pending_.end = end;
    pending_.items = items;
    pending_.cfi = cfi;
    pending_.sframe = sf.row;
    pending_.sframe_topmost_only = sf.topmost_only;
  }

  void flush_difference() {
    if (!have_pending_) return;
    have_pending_ = false;
    ++rep_.disagreements;
    rep_.disagreement_bytes += pending_.end - pending_.begin;
    if (o_.list_limit == 0 || rep_.differences.size() < o_.list_limit) rep_.differences.push_back(pending_);
  }

  static constexpr size_t kNoRow = ~size_t{0};

  std::span<const dwarf::CfiSection* const> cfi_;
  const Section& sf_;
  const CheckOptions& o_;
  CheckReport& rep_;
  std::vector<uint32_t> order_;
  std::map<std::pair<const dwarf::CfiSection*, uint64_t>, UnwindRow> initial_;
  std::vector<UnwindRow> cfi_rows_;
  std::vector<Piece> cfi_pieces_;
  std::vector<SframeRow> sf_rows_;
  std::vector<Piece> sf_pieces_;
  bool cfi_key_b_ = false;  // the CIE of the function being checked has 'B'
  bool have_pending_ = false;
  RowDifference pending_;
  bool in_no_row_ = false;
  uint64_t no_row_end_ = 0;
  uint64_t cfi_only_end_ = 0, sframe_only_end_ = 0;
};

}  // namespace

std::string check_items_text(uint8_t items) {
  std::string s;
  const std::pair<uint8_t, const char*> names[] = {
      {kCheckCfa, "CFA"}, {kCheckRa, "RA"}, {kCheckFp, "FP"},
      {kCheckSp, "SP"},   {kCheckSignal, "signal"}, {kCheckRaSigning, "RA signing"}};
  for (const auto& [bit, name] : names) {
    if (!(items & bit)) continue;
    if (!s.empty()) s += ", ";
    s += name;
  }
  return s;
}

CheckReport check_rows(std::span<const dwarf::CfiSection* const> cfi, const Section& sframe, const CheckOptions& options) {
  CheckReport report;
  Checker(cfi, sframe, options, report).run();
  return report;
}

}  // namespace framewalk::sframe

#include "sframe/sframe_generate.hpp"

#include <algorithm>
#include <optional>
#include <map>

#include "arch/arch.hpp"
#include "dwarf/cfa_program.hpp"

namespace framewalk::sframe {

namespace {

// DWARF expression operators the matchers know.
constexpr uint8_t kOpDeref = 0x06, kOpConst1u = 0x08, kOpConst2u = 0x0a, kOpAnd = 0x1a, kOpPlus = 0x22,
                  kOpShl = 0x24, kOpGe = 0x2a, kOpLit0 = 0x30, kOpLit31 = 0x4f, kOpBreg0 = 0x70,
                  kOpBreg31 = 0x8f, kOpBregx = 0x92;

// Reasons, as the report groups them.
constexpr const char* kWhyCfaExpression = "CFA expression";
constexpr const char* kWhyCfaUndefined = "no CFA rule";
constexpr const char* kWhyRaUnspecified = "RA rule unspecified";
constexpr const char* kWhyRaSameValue = "RA rule same-value";
constexpr const char* kWhyRaExpression = "RA rule is an expression";
constexpr const char* kWhySpRule = "SP rule other than SP = CFA";
constexpr const char* kWhySignalV2 = "signal frame (no signal bit before v3)";
constexpr const char* kWhyFlexCfaDeref = "CFA = *(reg + offset) needs FLEX (v3)";
constexpr const char* kWhyFlexRule = "register rule needs FLEX (v3)";
constexpr const char* kWhyPltBlock = "PLT expression on a block SFrame cannot repeat";
constexpr const char* kWhyRowsOrder = "CFI rows out of order";
constexpr const char* kWhyOverlap = "overlaps another FDE";
constexpr const char* kWhyOutsideCode = "outside the code sections";
constexpr const char* kWhyFpWithoutRa = "FP saved without the RA needs FLEX (v3): no RA padding word on AArch64";
constexpr const char* kWhyTooLarge = "function of 4 GiB or more (SFrame sizes and FRE offsets are 32-bit)";

// The machine a conversion is for: its SFrame registers, and the reasons
// that name them ("FP (rbp) rule undefined", "FP (x29) rule undefined").
struct MachineContext {
  Abi abi;
  AbiRegisters regs;
  std::string why_ra_column, why_fp_undefined, why_fp_expression, why_flex_cfa_reg;

  explicit MachineContext(Abi a) : abi(a), regs(abi_registers(a)) {
    const arch::ArchInfo* info = arch::dwarf_arch_for(abi_machine_key(a));
    auto name = [&](uint16_t reg) {
      const char* n = arch::dwarf_register_name(info, reg);
      return n ? std::string(n) : "r" + std::to_string(reg);
    };
    const std::string fp = name(regs.fp);
    why_ra_column = "return-address column is not " + name(regs.ra);
    why_fp_undefined = "FP (" + fp + ") rule undefined";
    why_fp_expression = "FP (" + fp + ") rule is an expression";
    why_flex_cfa_reg = "CFA based on a register other than " + name(regs.sp) + "/" + fp + " needs FLEX (v3)";
  }
};

struct BregExpr {
  uint16_t reg = 0;
  int64_t offset = 0;
  bool deref = false;
};

// "DW_OP_breg<N> off" or "DW_OP_bregx N off", optionally then DW_OP_deref, and nothing else.
std::optional<BregExpr> match_breg(Bytes e) {
  ByteReader r(e, Endian::kLittle);
  auto op = r.u8();
  if (!op) return std::nullopt;
  BregExpr out;
  if (*op >= kOpBreg0 && *op <= kOpBreg31) {
    out.reg = static_cast<uint16_t>(*op - kOpBreg0);
  } else if (*op == kOpBregx) {
    auto reg = r.uleb128();
    if (!reg || *reg > 0xffff) return std::nullopt;
    out.reg = static_cast<uint16_t>(*reg);
  } else {
    return std::nullopt;
  }
  auto off = r.sleb128();
  if (!off) return std::nullopt;
  out.offset = *off;
  if (!r.at_end()) {
    auto next = r.u8();
    if (!next || *next != kOpDeref || !r.at_end()) return std::nullopt;
    out.deref = true;
  }
  return out;
}

// The CFA expression of glibc/ld PLT entries:
//   DW_OP_breg<base> A; DW_OP_breg16 (rip) 0; <M>; DW_OP_and; <K>; DW_OP_ge; <S>; DW_OP_shl; DW_OP_plus
// CFA = base + A + (((rip & M) >= K) << S), constants as DW_OP_lit / const1u / const2u.
struct PltExpr {
  uint16_t base = 0;
  int64_t offset = 0;
  uint64_t mask = 0;
  uint64_t threshold = 0;
  uint64_t shift = 0;
};

std::optional<PltExpr> match_plt(Bytes e, uint16_t pc_register) {
  ByteReader r(e, Endian::kLittle);
  auto constant = [&]() -> std::optional<uint64_t> {
    auto op = r.u8();
    if (!op) return std::nullopt;
    if (*op >= kOpLit0 && *op <= kOpLit31) return uint64_t{*op} - kOpLit0;
    if (*op == kOpConst1u) {
      auto v = r.u8();
      return v ? std::optional<uint64_t>(*v) : std::nullopt;
    }
    if (*op == kOpConst2u) {
      auto v = r.u16();
      return v ? std::optional<uint64_t>(*v) : std::nullopt;
    }
    return std::nullopt;
  };
  auto expect = [&](uint8_t want) {
    auto op = r.u8();
    return op && *op == want;
  };
  PltExpr p;
  auto op = r.u8();
  if (!op || *op < kOpBreg0 || *op > kOpBreg31) return std::nullopt;
  p.base = static_cast<uint16_t>(*op - kOpBreg0);
  auto a = r.sleb128();
  if (!a) return std::nullopt;
  p.offset = *a;
  if (pc_register > 31 || !expect(static_cast<uint8_t>(kOpBreg0 + pc_register))) return std::nullopt;
  auto rip_off = r.sleb128();
  if (!rip_off || *rip_off != 0) return std::nullopt;
  auto m = constant();
  if (!m || !expect(kOpAnd)) return std::nullopt;
  auto k = constant();
  if (!k || !expect(kOpGe)) return std::nullopt;
  auto s = constant();
  if (!s || !expect(kOpShl) || !expect(kOpPlus) || !r.at_end()) return std::nullopt;
  if (*s > 31) return std::nullopt;
  p.mask = *m;
  p.threshold = *k;
  p.shift = *s;
  return p;
}

// One CFI row as SFrame sees it.
struct RowShape {
  enum class Kind : uint8_t { kRules, kPlt, kFail } kind = Kind::kRules;
  FrameRules rules;  // kRules; for kPlt the RA and FP rules (the CFA differs per half)
  PltExpr plt;
  const char* reason = nullptr;
};

RowShape fail(const char* reason) {
  RowShape s;
  s.kind = RowShape::Kind::kFail;
  s.reason = reason;
  return s;
}

// A saved-register rule (RA or FP) as an SFrame rule; null reason when it converts.
const char* convert_rule(const RegisterRule& r, const char* expression_reason, Rule* out) {
  *out = Rule{};
  switch (r.kind) {
    case RuleKind::kOffset:
    case RuleKind::kValOffset:
      out->kind = Rule::Kind::kCfa;
      out->deref = r.kind == RuleKind::kOffset;
      out->offset = r.value;
      return nullptr;
    case RuleKind::kRegister:
      out->kind = Rule::Kind::kRegister;
      out->reg = static_cast<uint16_t>(r.value);
      return nullptr;
    case RuleKind::kExpression:
    case RuleKind::kValExpression: {
      // The CFA is pushed first; an expression that pushes breg and stops
      // leaves breg on top, which is the result.
      auto b = match_breg(r.expression());
      if (!b || b->deref) return expression_reason;
      out->kind = Rule::Kind::kRegister;
      out->reg = b->reg;
      out->offset = b->offset;
      out->deref = r.kind == RuleKind::kExpression;
      return nullptr;
    }
    default:
      return expression_reason;  // callers handle undefined/same-value first
  }
}

// How far below the CFA SFrame puts the caller's SP: 0, s390x 160.
int64_t caller_sp_below_cfa(Abi abi) { return abi == Abi::kS390xBig ? kS390xCfaAdjustment : 0; }

RowShape shape_of(const UnwindRow& row, const MachineContext& mc) {
  RowShape s;
  const AbiRegisters& regs = mc.regs;
  if (row.return_address_register != regs.ra) return fail(mc.why_ra_column.c_str());
  const RegisterRule* ra = row.find(regs.ra);
  if (ra && ra->kind == RuleKind::kUndefined) {
    s.rules.ra_undefined = true;  // outermost: nothing else matters
    return s;
  }
  // AArch64: the RA is signed from paciasp to autiasp (DW_CFA_AARCH64_negate_ra_state).
  s.rules.ra_mangled = row.negate_ra_state;
  if (regs.link_register && (!ra || ra->kind == RuleKind::kSameValue)) {
    // Still in the link register (a leaf, or before the prologue saves it):
    // SFrame's untracked RA says the same.
  } else {
    if (!ra) return fail(kWhyRaUnspecified);
    if (ra->kind == RuleKind::kSameValue) return fail(kWhyRaSameValue);
    if (const char* why = convert_rule(*ra, kWhyRaExpression, &s.rules.ra)) return fail(why);
  }

  if (const RegisterRule* fp = row.find(regs.fp)) {
    if (fp->kind == RuleKind::kUndefined) return fail(mc.why_fp_undefined.c_str());
    if (fp->kind != RuleKind::kSameValue)
      if (const char* why = convert_rule(*fp, mc.why_fp_expression.c_str(), &s.rules.fp)) return fail(why);
  }

  Rule& cfa = s.rules.cfa;
  cfa.kind = Rule::Kind::kRegister;
  switch (row.cfa.kind) {
    case CfaKind::kUndefined: return fail(kWhyCfaUndefined);
    case CfaKind::kRegisterOffset:
      cfa.reg = row.cfa.reg;
      cfa.offset = row.cfa.offset;
      break;
    case CfaKind::kExpression:
      if (auto b = match_breg(row.cfa.expression)) {
        cfa.reg = b->reg;
        cfa.offset = b->offset;
        cfa.deref = b->deref;
      } else if (auto p = match_plt(row.cfa.expression, regs.pc)) {
        s.kind = RowShape::Kind::kPlt;
        s.plt = *p;
      } else {
        return fail(kWhyCfaExpression);
      }
      break;
  }

  // SFrame's caller SP is the CFA (s390x: CFA - 160): a CFI row must say the
  // same (or nothing). On s390x a saved r15 (stmg's slot, an FPR in a leaf)
  // holds the value at entry, which the ABI's CFA is 160 above.
  if (const RegisterRule* sp = row.find(regs.sp)) {
    bool same = sp->kind == RuleKind::kValOffset && sp->value == -caller_sp_below_cfa(mc.abi);
    if (mc.abi == Abi::kS390xBig && (sp->kind == RuleKind::kOffset || sp->kind == RuleKind::kRegister)) same = true;
    if (!same && s.kind == RowShape::Kind::kRules &&
        (sp->kind == RuleKind::kExpression || sp->kind == RuleKind::kValExpression)) {
      // rsp saved at the address the CFA is loaded from, or rsp = the CFA's register + offset.
      auto b = match_breg(sp->expression());
      const int64_t below = caller_sp_below_cfa(mc.abi);
      same = b && !b->deref && b->reg == cfa.reg && b->offset == cfa.offset - below &&
             (sp->kind == RuleKind::kExpression) == cfa.deref && (below == 0 || !cfa.deref);
    }
    if (!same) return fail(kWhySpRule);
  }
  return s;
}

// An FP slot without an RA slot: DEFAULT FDEs say it with an RA word of 0,
// which only s390x readers take for padding (binutils' libsframe reads it as
// "RA at CFA+0" on AArch64, and gas writes such FREs wrongly: the FP offset
// in the RA slot). FLEX can say it on every ABI.
bool needs_ra_padding(const MachineContext& mc, const FrameRules& r) {
  return abi_has_pauth(mc.abi) && !r.ra_undefined && r.ra.kind == Rule::Kind::kUnchanged &&
         r.fp.kind != Rule::Kind::kUnchanged;
}

bool fits_default_fde(const WriterOptions& wo, const MachineContext& mc, const FrameRules& r) {
  return fits_default(wo, r) && !needs_ra_padding(mc, r);
}

// Why a run of rows needs FLEX, for versions without it; or why FLEX would
// not do either (an s390x CFA offset other than 160 + 8k, say).
const char* flex_reason(const WriterOptions& wo, const MachineContext& mc, const FrameRules& r) {
  WriterOptions v3 = wo;
  v3.version = kVersion3;
  FdeDesc probe;
  probe.fde_type = FdeType::kFlex;
  probe.size = 1;
  probe.fres.push_back(FreDesc{0, r});
  if (WriteProblem p = check_fde(v3, probe); !p.ok()) return to_string(p.what);
  const AbiRegisters& regs = mc.regs;
  if (r.cfa.deref) return kWhyFlexCfaDeref;
  if (r.cfa.reg != regs.sp && r.cfa.reg != regs.fp) return mc.why_flex_cfa_reg.c_str();
  if (needs_ra_padding(mc, r)) return kWhyFpWithoutRa;
  return kWhyFlexRule;
}

bool same_rules(const FrameRules& a, const FrameRules& b) {
  if (a.ra_undefined || b.ra_undefined) return a.ra_undefined == b.ra_undefined;
  return a == b;
}

struct Piece {
  uint64_t begin, end;
  RowShape shape;
};

// The SFrame FDEs of one CFI FDE, or the reason it cannot have any.
const char* convert_fde(const std::vector<Piece>& pieces, const WriterOptions& wo, const MachineContext& mc,
                        bool signal, bool pauth_key_b, std::vector<FdeDesc>* out) {
  if (signal && wo.version < kVersion3) return kWhySignalV2;
  std::vector<FdeDesc> fdes;
  FdeDesc run;
  bool in_run = false;
  uint64_t run_end = 0;
  auto flush = [&]() -> const char* {
    if (!in_run) return nullptr;
    in_run = false;
    run.size = static_cast<uint32_t>(run_end - run.start);
    for (const FreDesc& f : run.fres)
      if (!fits_default_fde(wo, mc, f.rules)) {
        if (wo.version < kVersion3) return flex_reason(wo, mc, f.rules);
        run.fde_type = FdeType::kFlex;
      }
    fdes.push_back(std::move(run));
    run = FdeDesc{};
    return nullptr;
  };
  for (const Piece& p : pieces) {
    if (p.shape.kind == RowShape::Kind::kFail) return p.shape.reason;
    if (p.shape.kind == RowShape::Kind::kPlt) {
      if (const char* why = flush()) return why;
      const PltExpr& plt = p.shape.plt;
      const uint64_t rep = plt.mask + 1;
      // (rip & M) is the offset within an M+1 block only when M+1 is a power
      // of two and the block starts on a multiple of it.
      if (plt.mask == 0 || (rep & plt.mask) != 0 || rep > 0xff || p.begin % rep != 0) return kWhyPltBlock;
      FdeDesc f;
      f.start = p.begin;
      f.size = static_cast<uint32_t>(p.end - p.begin);
      f.pc_type = PcType::kMask;
      f.rep_size = static_cast<uint8_t>(rep);
      f.signal = signal;
      f.pauth_key_b = pauth_key_b;
      FreDesc low, high;
      low.rules = high.rules = p.shape.rules;
      low.rules.cfa = Rule{Rule::Kind::kRegister, false, plt.base, plt.offset, 0};
      high.rules.cfa = low.rules.cfa;
      high.rules.cfa.offset += int64_t{1} << plt.shift;
      high.start = static_cast<uint32_t>(plt.threshold);
      if (plt.threshold == 0) f.fres.push_back(high);
      else if (plt.threshold >= rep) f.fres.push_back(low);
      else f.fres = {low, high};
      for (const FreDesc& fre : f.fres)
        if (!fits_default_fde(wo, mc, fre.rules)) {
          if (wo.version < kVersion3) return flex_reason(wo, mc, fre.rules);
          f.fde_type = FdeType::kFlex;
        }
      fdes.push_back(std::move(f));
      continue;
    }
    if (!in_run) {
      in_run = true;
      run = FdeDesc{};
      run.start = p.begin;
      run.signal = signal;
      run.pauth_key_b = pauth_key_b;
    }
    if (run.fres.empty() || !same_rules(run.fres.back().rules, p.shape.rules)) {
      FreDesc f;
      f.start = static_cast<uint32_t>(p.begin - run.start);
      f.rules = p.shape.rules;
      run.fres.push_back(f);
    }
    run_end = p.end;
  }
  if (const char* why = flush()) return why;
  for (const FdeDesc& f : fdes)
    if (WriteProblem problem = check_fde(wo, f); !problem.ok()) return to_string(problem.what);
  *out = std::move(fdes);
  return nullptr;
}

// Byte counts over FDEs that may overlap saturate instead of wrapping around.
uint64_t add_bytes(uint64_t a, uint64_t b) { return b > ~a ? ~uint64_t{0} : a + b; }

void count_skip(GenerateStats& stats, const std::string& reason, uint64_t begin, uint64_t bytes) {
  GenerateStats::Skip& s = stats.skipped[reason];
  if (s.fdes == 0) s.first_pc = begin;
  ++s.fdes;
  s.bytes = add_bytes(s.bytes, bytes);
}

bool inside(const std::vector<std::pair<uint64_t, uint64_t>>& ranges, uint64_t begin, uint64_t end) {
  auto it = std::upper_bound(ranges.begin(), ranges.end(), begin,
                             [](uint64_t v, const std::pair<uint64_t, uint64_t>& r) { return v < r.first; });
  if (it == ranges.begin()) return false;
  --it;
  return begin >= it->first && end <= it->second;
}

}  // namespace

std::vector<CfiFde> collect_cfi_fdes(std::span<const dwarf::CfiSection* const> sections,
                                     const std::function<void(const dwarf::CfiDiagnostic&)>& on_error) {
  std::vector<CfiFde> all;
  std::vector<std::pair<uint64_t, uint64_t>> earlier;  // ranges of the sections before, sorted
  for (const dwarf::CfiSection* section : sections) {
    std::vector<CfiFde> mine;
    section->for_each(
        [&](const dwarf::CfiSection::Entry& e) {
          if (e.type == dwarf::CfiSection::Entry::Type::kFde && e.fde.pc_range != 0) mine.push_back({section, e.cie, e.fde});
          return true;
        },
        [&](const dwarf::CfiDiagnostic& d) {
          if (on_error) on_error(d);
        });
    for (const CfiFde& f : mine) {
      const uint64_t b = f.fde.pc_begin, e = f.fde.pc_end();
      // Overlaps an earlier section's FDE: the last range starting below e.
      auto it = std::lower_bound(earlier.begin(), earlier.end(), std::make_pair(e, uint64_t{0}));
      bool overlaps = false;
      for (int back = 0; back < 4 && it != earlier.begin(); ++back) {
        --it;
        if (it->second > b && it->first < e) {
          overlaps = true;
          break;
        }
      }
      if (!overlaps || earlier.empty()) all.push_back(f);
    }
    for (const CfiFde& f : mine) earlier.emplace_back(f.fde.pc_begin, f.fde.pc_end());
    std::sort(earlier.begin(), earlier.end());
  }
  std::stable_sort(all.begin(), all.end(), [](const CfiFde& a, const CfiFde& b) { return a.fde.pc_begin < b.fde.pc_begin; });
  return all;
}

std::string cfi_sections_name(const std::vector<CfiFde>& fdes) {
  bool eh = false, debug = false;
  for (const CfiFde& f : fdes) (f.section->kind() == dwarf::CfiKind::kEhFrame ? eh : debug) = true;
  if (eh && debug) return ".eh_frame + .debug_frame";
  return debug ? ".debug_frame" : ".eh_frame";
}

Conversion convert_cfi(std::span<const dwarf::CfiSection* const> sections, const GenerateOptions& options) {
  Conversion conv;
  GenerateStats& stats = conv.stats;
  const WriterOptions wo = writer_options_for(options.abi, options.version, options.section_address);
  const MachineContext mc(options.abi);

  // Executable ranges, adjacent ones merged (an FDE may span .init/.plt/.text).
  std::vector<std::pair<uint64_t, uint64_t>> code = options.code_ranges;
  std::sort(code.begin(), code.end());
  std::vector<std::pair<uint64_t, uint64_t>> merged;
  for (const auto& r : code) {
    if (!merged.empty() && r.first <= merged.back().second) merged.back().second = std::max(merged.back().second, r.second);
    else merged.push_back(r);
  }

  const std::vector<CfiFde> items = collect_cfi_fdes(sections, [&](const dwarf::CfiDiagnostic& d) {
    ++stats.cfi_fdes;
    count_skip(stats, std::string("CFI record unreadable: ") + to_string(d.error.code), 0, 0);
  });
  stats.cfi_section = cfi_sections_name(items);

  std::map<std::pair<const dwarf::CfiSection*, uint64_t>, UnwindRow> initial_rows;
  std::vector<Piece> pieces;
  uint64_t covered_end = 0;
  bool any = false;
  for (const CfiFde& item : items) {
    const dwarf::CfiSection& section = *item.section;
    const dwarf::Fde& fde = item.fde;
    const uint64_t begin = fde.pc_begin, end = fde.pc_end();
    // A range that wraps counts up to the end of the address space.
    const uint64_t bytes = end < begin ? 0 - begin : fde.pc_range;
    ++stats.cfi_fdes;
    stats.cfi_bytes = add_bytes(stats.cfi_bytes, bytes);
    if (end < begin) {
      count_skip(stats, "function runs past the end of the address space", begin, bytes);
      continue;
    }
    // Where FDEs overlap, the earlier one holds (as in check_rows), also when
    // it is not written itself: a later one would claim PCs the earlier describes.
    if (any && begin < covered_end) {
      count_skip(stats, kWhyOverlap, begin, bytes);
      covered_end = std::max(covered_end, end);
      continue;
    }
    any = true;
    covered_end = end;
    if (!merged.empty() && !inside(merged, begin, end)) {
      count_skip(stats, kWhyOutsideCode, begin, bytes);
      continue;
    }
    if (bytes > 0xffffffffu) {
      count_skip(stats, kWhyTooLarge, begin, bytes);
      continue;
    }

    auto it = initial_rows.find({item.section, item.cie->offset});
    if (it == initial_rows.end()) {
      auto initial = dwarf::run_cie(section, *item.cie);
      if (!initial) {
        count_skip(stats, std::string("CIE program error: ") + to_string(initial.error().code), begin, bytes);
        continue;
      }
      it = initial_rows.emplace(std::make_pair(item.section, item.cie->offset), *initial).first;
    }
    pieces.clear();
    const char* why = nullptr;
    uint64_t last_end = begin;
    auto ran = dwarf::run_fde(section, *item.cie, fde, it->second, [&](const UnwindRow& row, bool) {
      const uint64_t b = std::max(row.pc_begin, begin);
      const uint64_t e = std::min(row.pc_end, end);
      if (b >= e) return true;
      if (b < last_end) {
        why = kWhyRowsOrder;
        return false;
      }
      last_end = e;
      pieces.push_back(Piece{b, e, shape_of(row, mc)});
      return true;
    });
    if (!ran) {
      count_skip(stats, std::string("FDE program error: ") + to_string(ran.error().code), begin, bytes);
      continue;
    }
    std::vector<FdeDesc> out;
    // The CIE's 'B' augmentation: the RA is signed with key B (AArch64 PAC).
    const bool key_b = abi_has_pauth(options.abi) && item.cie->b_key;
    if (!why) why = convert_fde(pieces, wo, mc, item.cie->signal_frame, key_b, &out);
    if (why) {
      if (item.cie->signal_frame && wo.version >= kVersion3) {
        // As gas does: the signal bit and no rows tell a tracer to use its
        // own signal-frame unwinder here.
        FdeDesc marker;
        marker.start = begin;
        marker.size = static_cast<uint32_t>(bytes);
        marker.signal = true;
        conv.fdes.push_back(marker);
        conv.origins.push_back({begin, end, true});
        ++stats.signal_markers;
        stats.signal_marker_bytes += bytes;
        count_skip(stats, std::string("signal frame written without rows: ") + why, begin, bytes);
      } else {
        count_skip(stats, why, begin, bytes);
      }
      continue;
    }
    ++stats.represented_fdes;
    stats.represented_bytes += bytes;
    for (FdeDesc& f : out) {
      conv.fdes.push_back(std::move(f));
      conv.origins.push_back({begin, end, false});
    }
  }
  return conv;
}

ElfCfiOptions sframe_cfi_options() {
  ElfCfiOptions o;
  o.use_debug_frame = true;
  o.use_gnu_debugdata = false;
  o.use_separate_debug_file = false;
  return o;
}

std::vector<const dwarf::CfiSection*> sframe_cfi_sections(const ElfCfi& cfi) {
  std::vector<const dwarf::CfiSection*> out;
  for (dwarf::CfiKind kind : {dwarf::CfiKind::kEhFrame, dwarf::CfiKind::kDebugFrame})
    for (const auto& src : cfi.sources())
      if (src->section && src->kind == kind && src->file_name == cfi.elf().name()) out.push_back(src->section.get());
  return out;
}

framewalk::Result<GeneratedSection> generate_sframe(std::shared_ptr<const elf::ElfFile> file,
                                                    const GenerateOptions& options) {
  // Every machine SFrame has an ABI for: x86-64, AArch64, s390x.
  const std::optional<Abi> abi = abi_for_elf(file->machine_key());
  if (!abi) return framewalk::Error{ErrorCode::kUnsupportedElf, 18};
  if (file->type() == elf::kEtRel) return framewalk::Error{ErrorCode::kUnsupportedElf, 16};
  FW_TRY(ElfCfi cfi, ElfCfi::load(file, sframe_cfi_options()));
  const std::vector<const dwarf::CfiSection*> sections = sframe_cfi_sections(cfi);

  GenerateOptions opts = options;
  opts.abi = *abi;
  if (opts.code_ranges.empty())
    for (const elf::Section& s : file->sections())
      if ((s.flags & elf::kShfExecinstr) && (s.flags & elf::kShfAlloc) && s.size) opts.code_ranges.emplace_back(s.address, s.address + s.size);
  return generate_sframe(sections, opts);
}

framewalk::Result<GeneratedSection> generate_sframe(std::span<const dwarf::CfiSection* const> sections,
                                                    const GenerateOptions& opts) {
  if (opts.version < kVersion1 || opts.version > kVersion3) return framewalk::Error{ErrorCode::kUnsupportedElf, 0};
  // s390x arrived with v2: v1 has no ABI number for it.
  if (opts.abi == Abi::kS390xBig && opts.version == kVersion1) return framewalk::Error{ErrorCode::kUnsupportedElf, 1};
  Conversion conv = convert_cfi(sections, opts);
  if (conv.stats.cfi_fdes == 0) return framewalk::Error{ErrorCode::kNotFound, 0};
  const WriterOptions wo = writer_options_for(opts.abi, opts.version, opts.section_address);

  // What the writer still refuses (a V1/V2 start field out of reach, two
  // functions at one address) leaves the CFI FDE it came from out as well.
  GeneratedSection out;
  // Each refusal removes at least the refused FDE: at most one attempt more than there are FDEs.
  const size_t max_attempts = conv.fdes.size() + 1;
  for (size_t attempt = 0;; ++attempt) {
    WrittenSection w = write_section(wo, conv.fdes);
    if (w.problem.ok()) {
      out.bytes = std::move(w.bytes);
      break;
    }
    const Conversion::Origin origin = conv.origins[w.problem.fde];
    std::vector<FdeDesc> kept;
    std::vector<Conversion::Origin> kept_origins;
    for (size_t i = 0; i < conv.fdes.size(); ++i) {
      if (conv.origins[i].begin == origin.begin && conv.origins[i].end == origin.end) continue;
      kept.push_back(std::move(conv.fdes[i]));
      kept_origins.push_back(conv.origins[i]);
    }
    conv.fdes = std::move(kept);
    conv.origins = std::move(kept_origins);
    const uint64_t bytes = origin.end - origin.begin;
    if (origin.marker) {
      --conv.stats.signal_markers;
      conv.stats.signal_marker_bytes -= bytes;
    } else {
      --conv.stats.represented_fdes;
      conv.stats.represented_bytes -= bytes;
    }
    count_skip(conv.stats, to_string(w.problem.what), origin.begin, bytes);
    if (attempt >= max_attempts) return framewalk::Error{ErrorCode::kBadLength, 0};
  }

  GenerateStats& st = conv.stats;
  st.sframe_fdes = conv.fdes.size();
  for (const FdeDesc& f : conv.fdes) {
    st.fres += f.fres.size();
    if (f.fde_type == FdeType::kFlex) ++st.flex_fdes;
    else ++st.default_fdes;
    if (f.pc_type == PcType::kMask) ++st.pcmask_fdes;
    if (f.signal) ++st.signal_fdes;
    for (const FreDesc& r : f.fres) st.ra_undefined_fres += r.rules.ra_undefined;
  }
  st.section_bytes = out.bytes.size();
  out.stats = std::move(st);
  return out;
}

}  // namespace framewalk::sframe

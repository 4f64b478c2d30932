#include "sframe/sframe_rows.hpp"

#include <algorithm>

namespace framewalk::sframe {

namespace {

// The address form of a register expression: "DW_OP_breg<reg> off" (the
// section stores it followed by DW_OP_deref).
Result<Bytes> breg_expression(const Section& section, const Rule& rule, bool with_deref) {
  const Bytes full = section.breg_deref_expression(rule.reg, rule.offset);
  if (full.empty()) return Error{Errc::kBadFlexControl, rule.source_offset};
  return with_deref ? full : full.first(full.size() - 1);
}

Result<void> set_rule(UnwindRow& row, const Section& section, const Rule& rule, uint16_t column) {
  RegisterRule out{column, RuleKind::kSameValue, 0, {}, 0};
  switch (rule.kind) {
    case Rule::Kind::kUnchanged: return ok();  // unspecified: the callee's value
    case Rule::Kind::kCfa:
      out.kind = rule.deref ? RuleKind::kOffset : RuleKind::kValOffset;
      out.value = rule.offset;
      break;
    case Rule::Kind::kRegister:
      if (!rule.deref && rule.offset == 0) {
        out.kind = RuleKind::kRegister;
        out.value = rule.reg;
      } else {
        FW_TRY(Bytes expression, breg_expression(section, rule, false));
        out.kind = rule.deref ? RuleKind::kExpression : RuleKind::kValExpression;
        out.set_expression(expression, rule.source_offset);
      }
      break;
  }
  if (!row.set(out)) return Error{Errc::kBadRegister, rule.source_offset};
  return ok();
}

}  // namespace

Result<void> make_row(const Section& section, const Fde& fde, const Fre& fre, uint64_t pc_begin, uint64_t pc_end,
                      SframeRow& out) {
  out = SframeRow{};  // cheap: a fresh row constructs no rules
  out.fde_index = fde.index;
  out.fre_index = fre.index;
  out.pauth_key_b = fde.pauth_key_b;
  out.rep_size = section.effective_rep_size(fde);
  UnwindRow& row = out.row;
  row.pc_begin = pc_begin;
  row.pc_end = pc_end;
  const AbiRegisters regs = section.registers();
  row.return_address_register = regs.ra;
  row.signal_frame = fde.signal;
  row.negate_ra_state = fre.mangled_ra();
  out.ra_mangled = fre.mangled_ra();

  FrameRules rules;
  Error error;
  if (!section.decode_rules(fde, fre, rules, &error)) return error;
  if (rules.ra_undefined) {
    out.outermost = true;
    row.cfa.kind = CfaKind::kUndefined;
    if (!row.set(RegisterRule{regs.ra, RuleKind::kUndefined, 0, {}, 0})) return Error{Errc::kBadRegister, fre.offset};
    return ok();
  }
  out.topmost_only = rules.topmost_only;
  if (rules.cfa.deref) {
    FW_TRY(row.cfa.expression, breg_expression(section, rules.cfa, true));
    row.cfa.kind = CfaKind::kExpression;
    row.cfa.expression_offset = rules.cfa.source_offset;
  } else {
    row.cfa.kind = CfaKind::kRegisterOffset;
    row.cfa.reg = rules.cfa.reg;
    row.cfa.offset = rules.cfa.offset;
  }
  FW_CHECK(set_rule(row, section, rules.ra, regs.ra));
  FW_CHECK(set_rule(row, section, rules.fp, regs.fp));
  if (section.abi() == Abi::kS390xBig) {
    // The caller's SP is CFA - 160 on s390x (the CFA is SP + 160).
    if (!row.set(RegisterRule{regs.sp, RuleKind::kValOffset, -kS390xCfaAdjustment, {}, 0}))
      return Error{Errc::kBadRegister, fre.offset};
  }
  return ok();
}

Result<SframeRow> make_row(const Section& section, const Fde& fde, const Fre& fre, uint64_t pc_begin,
                           uint64_t pc_end) {
  SframeRow out;
  FW_CHECK(make_row(section, fde, fre, pc_begin, pc_end, out));
  return out;
}

Result<std::vector<SframeRow>> fde_rows(const Section& section, const Fde& fde) {
  std::vector<Fre> fres;
  fres.reserve(fde.num_fres);  // validated against the section at parse
  FW_CHECK(section.for_each_fre(fde, [&](const Fre& f) {
    fres.push_back(f);
    return true;
  }));
  const uint32_t rep = section.effective_rep_size(fde);
  const uint64_t limit = rep ? std::min<uint64_t>(rep, fde.size) : fde.size;
  std::vector<SframeRow> rows;
  rows.reserve(fres.size());
  for (size_t i = 0; i < fres.size(); ++i) {
    const uint64_t begin = fres[i].start;
    const uint64_t end = i + 1 < fres.size() ? fres[i + 1].start : std::max<uint64_t>(limit, begin);
    FW_TRY(SframeRow row, make_row(section, fde, fres[i], fde.start + begin, fde.start + end));
    rows.push_back(row);
  }
  return rows;
}

Result<void> row_for_pc(const Section& section, const Fde& fde, uint64_t pc, SframeRow& out) {
  if (!fde.contains(pc) || !section.owns(fde)) return Error{Errc::kNoFde, fde.offset};  // see find_fre
  const uint32_t rep = section.effective_rep_size(fde);
  const uint64_t in_fde = pc - fde.start;
  const uint64_t block_base = rep ? in_fde - in_fde % rep : 0;
  const uint64_t block_end = rep ? std::min<uint64_t>(block_base + rep, fde.size) : fde.size;
  Section::FreSlot slot;
  if (!section.find_fre_slot(fde, in_fde - block_base, &slot)) return Error{Errc::kNoFre, fde.offset};
  const uint64_t begin = fde.start + block_base + slot.start;
  const uint64_t end = slot.has_next ? fde.start + std::min<uint64_t>(block_base + slot.next_start, block_end)
                                     : fde.start + block_end;
  return make_row(section, fde, section.fre_at(fde, slot), begin, std::max(begin, end), out);
}

Result<void> row_for_pc(const Section& section, uint64_t pc, SframeRow& out) {
  const Fde* fde = section.lookup_fde(pc);
  if (!fde) {
    FW_TRY(fde, section.find_fde(pc));  // for the error: unsorted, or which FDE stops short
  }
  return row_for_pc(section, *fde, pc, out);
}

Result<SframeRow> row_for_pc(const Section& section, const Fde& fde, uint64_t pc) {
  SframeRow out;
  FW_CHECK(row_for_pc(section, fde, pc, out));
  return out;
}

Result<SframeRow> row_for_pc(const Section& section, uint64_t pc) {
  SframeRow out;
  FW_CHECK(row_for_pc(section, pc, out));
  return out;
}

}  // namespace framewalk::sframe

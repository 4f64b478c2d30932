#include "unwind/compact_rule.hpp"

namespace framewalk {

uint64_t encode(const CompactRule& r) {
  using namespace compact;
  return uint64_t{r.cfa_offset} | uint64_t{r.ra_slot} << kOffsetBits | uint64_t{r.fp_slot} << (kOffsetBits + kSlotBits) |
         (r.fp_based ? kFpBased : 0) | (r.outermost ? kOutermost : 0) | uint64_t{r.fp2_slot} << kFp2SlotShift |
         (r.fp2_based ? kFp2Based : 0);
}

CompactRule decode(uint64_t word) {
  CompactRule r;
  r.cfa_offset = compact::cfa_offset(word);
  r.ra_slot = static_cast<uint32_t>(compact::ra_slot(word));
  r.fp_slot = static_cast<uint32_t>(compact::fp_slot(word));
  r.fp_based = (word & compact::kFpBased) != 0;
  r.outermost = (word & compact::kOutermost) != 0;
  r.fp2_slot = static_cast<uint32_t>(compact::fp2_slot(word));
  r.fp2_based = (word & compact::kFp2Based) != 0;
  return r;
}

namespace {
// A rule "saved at CFA + origin - k words" for k in 1..max, as k (the
// offset is checked against the range first: it comes from the input).
bool slot_of(const RegisterRule& rule, unsigned word, int64_t origin, uint32_t* slot,
             uint64_t max = compact::kSlotMask) {
  if (rule.kind != RuleKind::kOffset || rule.value >= origin ||
      rule.value < origin - static_cast<int64_t>(max * word) || (origin - rule.value) % word != 0)
    return false;
  *slot = static_cast<uint32_t>((origin - rule.value) / word);
  return true;
}
}  // namespace

bool compact_rule_from_row(const arch::Machine& machine, const UnwindRow& row, CompactRule* out) {
  if (row.signal_frame || row.window_saved) return false;  // restores more than a compact rule holds
  const uint16_t ra_column = row.return_address_register;
  const RegisterRule* ra = row.find(ra_column);
  if (ra && ra->kind == RuleKind::kUndefined) {
    *out = CompactRule{};
    out->outermost = true;
    return true;
  }
  // A return-address frame without a rule for a link register's column:
  // the step loop stops there (bad-unwind-info: the return address is
  // lost); the fast path, which reports frames and not reasons, ends the
  // stack there too. glibc's clone3 thread start on AArch64 has such a row.
  if (!ra && ra_column == machine.return_address_column() && machine.link_register()) {
    *out = CompactRule{};
    out->outermost = true;
    return true;
  }
  if (ra_column != machine.return_address_column() || !ra) return false;
  const unsigned word = machine.address_size();
  const uint16_t sp = machine.stack_pointer(), fp = machine.frame_pointer(), fp2 = machine.second_frame_pointer();
  const bool has_fp2 = fp2 != arch::Machine::kNoRegister;
  if (row.cfa.kind != CfaKind::kRegisterOffset ||
      (row.cfa.reg != sp && row.cfa.reg != fp && !(has_fp2 && row.cfa.reg == fp2)))
    return false;
  // The caller's SP (CFA - cfa_above_stack_pointer) lies above an sp-based
  // CFA's base (x86-64's above the return address the frame holds); a frame
  // pointer may be the CFA itself (riscv64's s0, with ra and the caller's s0
  // just below it).
  const int64_t above = machine.info().cfa_above_stack_pointer;
  const int64_t least_offset = above + (row.cfa.reg == sp ? static_cast<int64_t>(word) : 0);
  const int64_t origin = machine.saved_above_cfa();
  if (row.cfa.offset < least_offset || row.cfa.offset % word != 0 ||
      row.cfa.offset > static_cast<int64_t>(kMaxCompactCfaOffset))
    return false;
  CompactRule r;
  r.cfa_offset = static_cast<uint32_t>(row.cfa.offset);
  r.fp_based = row.cfa.reg == fp;
  r.fp2_based = has_fp2 && row.cfa.reg == fp2;
  if (!slot_of(*ra, word, origin, &r.ra_slot)) return false;
  // The caller's PC is kept apart from the return-address column where a
  // link register holds it: a rule for the PC itself is not compact.
  if (machine.program_counter() != ra_column && row.find(machine.program_counter())) return false;
  // The caller's SP is the CFA (less cfa_above_stack_pointer). Where the
  // caller keeps a register save area for its callee, s390x's prologues
  // store the SP on entry, the caller's, into it (`stmg %r6,%r15,48(%r15)`,
  // "r15 at CFA - 40"): the same value, which the step need not load.
  if (const RegisterRule* saved_sp = row.find(sp)) {
    if (saved_sp->kind != RuleKind::kOffset || saved_sp->value >= 0 || saved_sp->value < -above) return false;
  }
  if (const RegisterRule* saved_fp = row.find(fp)) {
    if (saved_fp->kind != RuleKind::kSameValue && !slot_of(*saved_fp, word, origin, &r.fp_slot)) return false;
  }
  if (const RegisterRule* saved_fp2 = has_fp2 ? row.find(fp2) : nullptr) {
    if (saved_fp2->kind != RuleKind::kSameValue &&
        !slot_of(*saved_fp2, word, origin, &r.fp2_slot, compact::kFp2SlotMask))
      return false;
  }
  // A stack-pointer-based frame holds the words the step reads: the hot
  // loops rely on it instead of checking every step.
  uint64_t deepest = r.ra_slot > r.fp_slot ? r.ra_slot : r.fp_slot;
  if (r.fp2_slot > deepest) deepest = r.fp2_slot;
  if (!r.fp_based && !r.fp2_based && deepest * word > r.cfa_offset + origin) return false;
  *out = r;
  return true;
}

void row_from_compact_rule(const arch::Machine& machine, const CompactRule& rule, UnwindRow* row) {
  *row = UnwindRow{};
  row->return_address_register = machine.return_address_column();
  const int64_t word = machine.address_size(), origin = machine.saved_above_cfa();
  if (rule.outermost) {
    (void)row->set(RegisterRule{machine.return_address_column(), RuleKind::kUndefined, 0, {}, 0});
    return;
  }
  row->cfa.kind = CfaKind::kRegisterOffset;
  row->cfa.reg = rule.fp_based    ? machine.frame_pointer()
                 : rule.fp2_based ? machine.second_frame_pointer()
                                  : machine.stack_pointer();
  row->cfa.offset = rule.cfa_offset;
  auto saved_at = [&](uint16_t reg, uint32_t slot) {
    (void)row->set(RegisterRule{reg, RuleKind::kOffset, origin - word * slot, {}, 0});
  };
  saved_at(machine.return_address_column(), rule.ra_slot);
  if (rule.fp_slot) saved_at(machine.frame_pointer(), rule.fp_slot);
  if (rule.fp2_slot) saved_at(machine.second_frame_pointer(), rule.fp2_slot);
}

}  // namespace framewalk

// The one unwind-row model. Every source (DWARF CFI, SFrame, frame-pointer and
// signal-frame rules) produces rows of this shape; one executor applies them;
// the dumpers, the SFrame writer and the cross-checker read them.
#pragma once

#include <algorithm>
#include <cstdint>
#include <memory>

#include "base/byte_reader.hpp"
#include "base/result.hpp"

namespace framewalk {

// How to recover a caller's register (DWARF 5, 6.4.1). A register with no rule
// in a row is "unspecified": the architecture's default applies.
enum class RuleKind : uint8_t {
  kUndefined,      // not recoverable
  kSameValue,      // unchanged from the callee
  kOffset,         // saved at [CFA + value]
  kValOffset,      // the value is CFA + value
  kRegister,       // held in register `value`
  kExpression,     // saved at the address the expression computes (CFA pushed first)
  kValExpression,  // the value is what the expression computes (CFA pushed first)
};

// 24 bytes: a row holds kMaxRules of them, and rows sit on the stack of
// every walk (a signal handler's too), so the value and the expression's
// bytes share their storage (a rule has one or the other, by its kind).
struct RegisterRule {
  uint16_t reg = 0;
  RuleKind kind = RuleKind::kUndefined;

 private:
  uint32_t expression_size_ = 0;

 public:
  union {
    int64_t value = 0;  // offset, or register number for kRegister (not for the expression kinds)
    const uint8_t* expression_data_;
  };
  uint64_t expression_offset = 0;  // section offset of the expression, for messages

  RegisterRule() = default;
  // `expression` for the expression kinds (ignored otherwise), else `value`.
  constexpr RegisterRule(uint16_t r, RuleKind k, int64_t v, Bytes expression = {}, uint64_t offset = 0)
      : reg(r), kind(k), value(v), expression_offset(offset) {
    if (is_expression()) set_expression(expression, offset);
  }

  constexpr bool is_expression() const { return kind == RuleKind::kExpression || kind == RuleKind::kValExpression; }
  // The expression's bytes (empty for the other kinds).
  Bytes expression() const { return is_expression() ? Bytes(expression_data_, expression_size_) : Bytes(); }
  // Makes the rule's storage hold `bytes` (the kind is set apart). An
  // expression block lies in a section: its length fits 32 bits.
  constexpr void set_expression(Bytes bytes, uint64_t offset) {
    expression_data_ = bytes.data();
    expression_size_ = static_cast<uint32_t>(bytes.size());
    expression_offset = offset;
  }

  bool operator==(const RegisterRule& o) const {
    if (reg != o.reg || kind != o.kind) return false;
    if (!is_expression()) return value == o.value;
    const Bytes a = expression(), b = o.expression();
    return a.size() == b.size() && (a.empty() || a.data() == b.data() || std::equal(a.begin(), a.end(), b.begin()));
  }
};
static_assert(sizeof(RegisterRule) == 24, "rules fill rows on every walk's stack");

enum class CfaKind : uint8_t {
  kRegisterOffset,  // CFA = reg + offset
  kExpression,      // CFA = result of expression
  kUndefined,       // no CFA rule yet (an empty CIE)
};

struct CfaRule {
  CfaKind kind = CfaKind::kUndefined;
  uint16_t reg = 0;
  int64_t offset = 0;
  Bytes expression;
  uint64_t expression_offset = 0;

  bool operator==(const CfaRule& o) const {
    if (kind != o.kind) return false;
    if (kind == CfaKind::kRegisterOffset) return reg == o.reg && offset == o.offset;
    if (kind == CfaKind::kExpression)
      return expression.size() == o.expression.size() &&
             std::equal(expression.begin(), expression.end(), o.expression.begin());
    return true;
  }
};

// One row of the table: for PCs in [pc_begin, pc_end), how to find the CFA and
// the caller's registers. Fixed capacity so that no row ever allocates.
struct UnwindRow {
  // The most any machine's frames need: a ppc64 signal frame restores
  // r0-r31, f0-f31, nip, lr, ctr, cr and xer (69); ARM EHABI can pop 67
  // registers; an AArch64 signal frame x0-x30, sp and pc (33).
  static constexpr int kMaxRules = 72;

  uint64_t pc_begin = 0;
  uint64_t pc_end = 0;
  CfaRule cfa;
  uint16_t return_address_register = 0;
  bool signal_frame = false;      // the CIE says 'S': the PC is exact, not a return address
  bool negate_ra_state = false;   // AArch64 RA is signed (DW_CFA_AARCH64_negate_ra_state parity)
  // SPARC: DW_CFA_GNU_window_save has run: the caller's %l0-%i7 (16-31)
  // are in the register window save area at the CFA, and its %o7 is this
  // frame's %i7. A flag, as readelf shows it (no columns).
  bool window_saved = false;
  uint64_t args_size = 0;         // DW_CFA_GNU_args_size
  uint8_t rule_count = 0;
  // Sorted by register; only [0, rule_count) is valid. A union, so that no
  // rule is constructed until used: RegisterRule is not trivially
  // constructible (std::span), and a row is made per lookup on hot paths.
  union {
    RegisterRule rules[kMaxRules];
  };

  UnwindRow() {}  // leaves the rules unconstructed
  // Copies only the rules in use: rows are copied per FDE and per remembered
  // state, and most hold a handful of rules.
  UnwindRow(const UnwindRow& o) { copy_from(o); }
  UnwindRow& operator=(const UnwindRow& o) {
    if (this != &o) copy_from(o);
    return *this;
  }

  const RegisterRule* find(uint16_t reg) const {
    for (int i = 0; i < rule_count; ++i) {
      if (rules[i].reg == reg) return &rules[i];
      if (rules[i].reg > reg) break;
    }
    return nullptr;
  }

  // Sets (or replaces) the rule for rule.reg.
  Result<void> set(const RegisterRule& rule) {
    int i = 0;
    while (i < rule_count && rules[i].reg < rule.reg) ++i;
    if (i < rule_count && rules[i].reg == rule.reg) {
      rules[i] = rule;
      return ok();
    }
    if (rule_count >= kMaxRules) return Error{ErrorCode::kTooManyRules, 0};
    for (int j = rule_count; j > i; --j) std::construct_at(&rules[j], rules[j - 1]);
    std::construct_at(&rules[i], rule);
    ++rule_count;
    return ok();
  }

  void erase(uint16_t reg) {
    for (int i = 0; i < rule_count; ++i) {
      if (rules[i].reg == reg) {
        for (int j = i; j + 1 < rule_count; ++j) rules[j] = rules[j + 1];
        --rule_count;
        return;
      }
    }
  }

  void copy_from(const UnwindRow& o) {
    pc_begin = o.pc_begin;
    pc_end = o.pc_end;
    cfa = o.cfa;
    return_address_register = o.return_address_register;
    signal_frame = o.signal_frame;
    negate_ra_state = o.negate_ra_state;
    window_saved = o.window_saved;
    args_size = o.args_size;
    rule_count = o.rule_count;
    for (int i = 0; i < rule_count; ++i) std::construct_at(&rules[i], o.rules[i]);
  }

  // Same CFA and register rules (ignores the PC range).
  bool same_rules(const UnwindRow& o) const {
    if (!(cfa == o.cfa) || rule_count != o.rule_count) return false;
    for (int i = 0; i < rule_count; ++i)
      if (!(rules[i] == o.rules[i])) return false;
    return true;
  }
};

}  // namespace framewalk

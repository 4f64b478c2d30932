#include "dump/cfi_text.hpp"

#include "base/text.hpp"

#include <cstdlib>
#include <string>
#include <unordered_map>

#include "dwarf/cfa_program.hpp"
#include "dwarf/expression.hpp"
#include "unwind/symbolize.hpp"

namespace framewalk::dump {

namespace {

std::string expression_text(Bytes expr, const arch::ArchInfo* arch, uint8_t address_size, Endian endian) {
  dwarf::ExpressionOptions o;
  o.address_size = address_size;
  o.endian = endian;
  return dwarf::disassemble_expression(expr, o, arch);
}

std::string signed_offset(int64_t v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%+lld", static_cast<long long>(v));
  return buf;
}

std::string symbol_text(const elf::SymbolTable* symbols, uint64_t pc) {
  if (!symbols) return {};
  auto m = symbols->lookup(pc);
  if (!m) return {};
  std::string s = demangle(m->symbol->name);
  if (m->offset) s += "+" + hex(m->offset);
  return s;
}

std::string encoding_text(uint8_t enc) {
  if (enc == 0xff) return "omit";
  static const char* const kForm[16] = {"absptr", "uleb128", "udata2", "udata4", "udata8", "?5", "?6", "?7",
                                        "signed", "sleb128", "sdata2", "sdata4", "sdata8", "?d", "?e", "?f"};
  static const char* const kApp[8] = {"", "pcrel|", "textrel|", "datarel|", "funcrel|", "aligned|", "?6|", "?7|"};
  std::string s = (enc & 0x80) ? "indirect|" : "";
  s += kApp[(enc >> 4) & 7];
  s += kForm[enc & 0x0f];
  return s;
}

}  // namespace

std::string demangle(std::string_view name) { return demangle_name(std::string(name)); }

std::string register_name(const arch::ArchInfo* arch, unsigned reg) {
  if (const char* n = arch::dwarf_register_name(arch, reg)) return n;
  return "r" + std::to_string(reg);
}

std::string rule_text(const RegisterRule& rule, const arch::ArchInfo* arch, uint8_t asz, Endian e) {
  switch (rule.kind) {
    case RuleKind::kUndefined: return "undef";
    case RuleKind::kSameValue: return "same";
    case RuleKind::kOffset: return "[CFA" + signed_offset(rule.value) + "]";
    case RuleKind::kValOffset: return "CFA" + signed_offset(rule.value);
    case RuleKind::kRegister: return "=" + register_name(arch, static_cast<unsigned>(rule.value));
    case RuleKind::kExpression: return "[expr(" + expression_text(rule.expression(), arch, asz, e) + ")]";
    case RuleKind::kValExpression: return "expr(" + expression_text(rule.expression(), arch, asz, e) + ")";
  }
  return "?";
}

std::string cfa_text(const CfaRule& cfa, const arch::ArchInfo* arch, uint8_t asz, Endian e) {
  switch (cfa.kind) {
    case CfaKind::kRegisterOffset: return register_name(arch, cfa.reg) + signed_offset(cfa.offset);
    case CfaKind::kExpression: return "expr(" + expression_text(cfa.expression, arch, asz, e) + ")";
    case CfaKind::kUndefined: return "undef";
  }
  return "?";
}

namespace {

void write_row_text(TextWriter& w, const UnwindRow& row, const arch::ArchInfo* arch, uint8_t asz, Endian e) {
  w.str("CFA=").str(cfa_text(row.cfa, arch, asz, e));
  for (int i = 0; i < row.rule_count; ++i) {
    const RegisterRule& r = row.rules[i];
    w.str("  ").str(register_name(arch, r.reg)).ch('=');
    const std::string t = rule_text(r, arch, asz, e);
    w.str(t[0] == '=' ? std::string_view(t).substr(1) : std::string_view(t));
  }
  if (row.args_size) w.str("  args_size=").udec(row.args_size);
  if (row.negate_ra_state) w.str("  ra_signed");
  if (row.window_saved) w.str("  window_saved");
}

void write_row_json(TextWriter& w, const UnwindRow& row, const arch::ArchInfo* arch, uint8_t asz, Endian e) {
  w.str("{\"pc\":\"").str(hex(row.pc_begin)).str("\",\"pc_end\":\"").str(hex(row.pc_end)).str("\",\"cfa\":");
  if (row.cfa.kind == CfaKind::kExpression) {
    w.str("{\"expression\":\"").str(json_escape(cfa_text(row.cfa, arch, asz, e))).str("\"}");
  } else if (row.cfa.kind == CfaKind::kRegisterOffset) {
    w.str("{\"register\":\"").str(register_name(arch, row.cfa.reg)).str("\",\"offset\":").dec(row.cfa.offset).ch('}');
  } else {
    w.str("null");
  }
  w.str(",\"registers\":{");
  static const char* const kKinds[] = {"undefined", "same_value", "offset", "val_offset", "register", "expression", "val_expression"};
  for (int i = 0; i < row.rule_count; ++i) {
    const RegisterRule& r = row.rules[i];
    if (i) w.ch(',');
    w.ch('"').str(register_name(arch, r.reg)).str("\":{\"rule\":\"").str(kKinds[static_cast<int>(r.kind)]).ch('"');
    switch (r.kind) {
      case RuleKind::kOffset: case RuleKind::kValOffset: w.str(",\"offset\":").dec(r.value); break;
      case RuleKind::kRegister: w.str(",\"register\":\"").str(register_name(arch, static_cast<unsigned>(r.value))).ch('"'); break;
      case RuleKind::kExpression: case RuleKind::kValExpression:
        w.str(",\"expression\":\"").str(json_escape(rule_text(r, arch, asz, e))).ch('"');
        break;
      default: break;
    }
    w.ch('}');
  }
  w.ch('}');
  if (row.args_size) w.str(",\"args_size\":").udec(row.args_size);
  w.ch('}');
}

}  // namespace

namespace {

// Each CIE's initial row, computed once: a section holds many FDEs per CIE,
// and running a long CIE program again for each of them is quadratic.
class InitialRows {
 public:
  explicit InitialRows(const dwarf::CfiSection& section) : section_(section) {}
  const Result<UnwindRow>& get(const dwarf::Cie& cie) {
    auto it = rows_.find(cie.offset);
    if (it == rows_.end()) it = rows_.emplace(cie.offset, dwarf::run_cie(section_, cie)).first;
    return it->second;
  }

 private:
  const dwarf::CfiSection& section_;
  std::unordered_map<uint64_t, Result<UnwindRow>> rows_;
};

}  // namespace

void write_cfi_text(TextWriter& w, const CfiSource& source, const arch::ArchInfo* arch,
                    const elf::SymbolTable* symbols, const ProblemSink& on_problem) {
  const dwarf::CfiSection& section = *source.section;
  InitialRows initial_rows(section);
  const Endian e = section.info().endian;
  size_t cies = 0, fdes = 0;
  w.str(source.file_name).str(": ").str(source.section_name);
  if (section.kind() == dwarf::CfiKind::kEhFrame) w.str(" at ").str(hex(section.info().bases.section_address));
  if (!source.decompressed) w.str(" (file offset ").str(hex(source.file_offset)).str(")");
  else w.str(" (decompressed)");
  w.str(", ").udec(section.data().size()).str(" bytes\n");
  if (source.hdr) {
    w.str("  .eh_frame_hdr: ").udec(source.hdr->fde_count()).str(" entries, table ")
        .str(encoding_text(source.hdr->table_encoding())).ch('\n');
  }
  if (source.elf->type() == elf::kEtRel)
    w.str("  (relocatable object: addresses are shown unrelocated)\n");
  section.for_each(
      [&](const dwarf::CfiSection::Entry& entry) {
        if (entry.type == dwarf::CfiSection::Entry::Type::kTerminator) {
          w.str("\nterminator at ").str(hex(entry.offset)).ch('\n');
          return true;
        }
        const dwarf::Cie& cie = *entry.cie;
        const uint8_t asz = cie.address_size;
        if (entry.type == dwarf::CfiSection::Entry::Type::kCie) {
          ++cies;
          w.str("\nCIE ").str(hex(entry.offset)).str(" version ").udec(cie.version).str(" augmentation \"")
              .str(cie.augmentation).str("\" code_align ").udec(cie.code_alignment).str(" data_align ")
              .dec(cie.data_alignment).str(" ra ").str(register_name(arch, static_cast<unsigned>(cie.return_address_register)));
          if (cie.has_augmentation_data) w.str(" fde_encoding ").str(encoding_text(cie.fde_encoding));
          if (cie.lsda_encoding != 0xff) w.str(" lsda_encoding ").str(encoding_text(cie.lsda_encoding));
          if (cie.personality_encoding != 0xff) w.str(" personality ").str(hex(cie.personality));
          if (cie.signal_frame) w.str(" signal_frame");
          w.ch('\n');
          const Result<UnwindRow>& initial = initial_rows.get(cie);
          if (!initial) {
            if (on_problem) on_problem(DumpProblem{&source, initial.error(), entry.offset});
          } else {
            w.str("  initial  ");
            write_row_text(w, *initial, arch, asz, e);
            w.ch('\n');
          }
          return true;
        }
        ++fdes;
        const dwarf::Fde& fde = entry.fde;
        w.str("\nFDE ").str(hex(entry.offset)).ch(' ').str(hex(fde.pc_begin)).str("..").str(hex(fde.pc_end()));
        const std::string sym = symbol_text(symbols, fde.pc_begin);
        if (!sym.empty()) w.ch(' ').str(sym);
        w.str(" (CIE ").str(hex(fde.cie_offset)).ch(')');
        if (fde.has_lsda) w.str(" lsda ").str(hex(fde.lsda));
        w.ch('\n');
        const Result<UnwindRow>& initial = initial_rows.get(cie);
        Result<void> ran = initial ? dwarf::run_fde(section, cie, fde, *initial, [&](const UnwindRow& row, bool) {
          if (row.pc_end <= row.pc_begin) return true;  // empty rows change nothing
          w.str("  ").str(hex(row.pc_begin)).str("  ");
          write_row_text(w, row, arch, asz, e);
          w.ch('\n');
          return true;
        }) : Result<void>(initial.error());
        if (!ran && on_problem) on_problem(DumpProblem{&source, ran.error(), entry.offset});
        return true;
      },
      [&](const dwarf::CfiDiagnostic& d) {
        if (on_problem) on_problem(DumpProblem{&source, d.error, d.entry_offset});
      });
  w.str("\n").udec(cies).str(" CIEs, ").udec(fdes).str(" FDEs\n");
  w.flush();
}

void write_cfi_json(TextWriter& w, const CfiSource& source, const arch::ArchInfo* arch,
                    const elf::SymbolTable* symbols, const ProblemSink& on_problem) {
  const dwarf::CfiSection& section = *source.section;
  InitialRows initial_rows(section);
  const Endian e = section.info().endian;
  w.str("{\"file\":\"").str(json_escape(source.file_name)).str("\",\"section\":\"").str(source.section_name)
      .str("\",\"address\":\"").str(hex(section.info().bases.section_address)).str("\",\"size\":")
      .udec(section.data().size()).str(",\"relocatable\":").str(source.elf->type() == elf::kEtRel ? "true" : "false")
      .str(",\"entries\":[");
  bool first = true;
  section.for_each(
      [&](const dwarf::CfiSection::Entry& entry) {
        if (entry.type == dwarf::CfiSection::Entry::Type::kTerminator) return true;
        if (!first) w.ch(',');
        first = false;
        const dwarf::Cie& cie = *entry.cie;
        const uint8_t asz = cie.address_size;
        const Result<UnwindRow>& initial = initial_rows.get(cie);
        if (entry.type == dwarf::CfiSection::Entry::Type::kCie) {
          w.str("\n{\"type\":\"cie\",\"offset\":").udec(entry.offset).str(",\"version\":").udec(cie.version)
              .str(",\"augmentation\":\"").str(json_escape(cie.augmentation)).str("\",\"code_alignment\":")
              .udec(cie.code_alignment).str(",\"data_alignment\":").dec(cie.data_alignment)
              .str(",\"return_address_register\":\"")
              .str(register_name(arch, static_cast<unsigned>(cie.return_address_register)))
              .str("\",\"signal_frame\":").str(cie.signal_frame ? "true" : "false").str(",\"initial\":");
          if (initial) write_row_json(w, *initial, arch, asz, e); else w.str("null");
          w.ch('}');
          if (!initial && on_problem) on_problem(DumpProblem{&source, initial.error(), entry.offset});
          return true;
        }
        const dwarf::Fde& fde = entry.fde;
        w.str("\n{\"type\":\"fde\",\"offset\":").udec(entry.offset).str(",\"cie\":").udec(fde.cie_offset)
            .str(",\"pc_begin\":\"").str(hex(fde.pc_begin)).str("\",\"pc_end\":\"").str(hex(fde.pc_end())).ch('"');
        const std::string sym = symbol_text(symbols, fde.pc_begin);
        w.str(",\"function\":");
        if (sym.empty()) w.str("null"); else w.ch('"').str(json_escape(sym)).ch('"');
        if (fde.has_lsda) w.str(",\"lsda\":\"").str(hex(fde.lsda)).ch('"');
        w.str(",\"rows\":[");
        bool first_row = true;
        Result<void> ran = initial ? dwarf::run_fde(section, cie, fde, *initial, [&](const UnwindRow& row, bool) {
          if (row.pc_end <= row.pc_begin) return true;
          if (!first_row) w.ch(',');
          first_row = false;
          write_row_json(w, row, arch, asz, e);
          return true;
        }) : Result<void>(initial.error());
        w.str("]");
        if (!ran) {
          w.str(",\"error\":\"").str(to_string(ran.error().code)).ch('"');
          if (on_problem) on_problem(DumpProblem{&source, ran.error(), entry.offset});
        }
        w.ch('}');
        return true;
      },
      [&](const dwarf::CfiDiagnostic& d) {
        if (on_problem) on_problem(DumpProblem{&source, d.error, d.entry_offset});
      });
  w.str("]}");
  w.flush();
}

void write_row_at(TextWriter& w, const RowLookup& hit, uint64_t pc, const arch::ArchInfo* arch,
                  const elf::SymbolTable* symbols, bool json) {
  const Endian e = hit.source->section->info().endian;
  const uint8_t asz = hit.cie->address_size;
  const std::string sym = symbol_text(symbols, pc);
  if (json) {
    w.str("{\"pc\":\"").str(hex(pc)).str("\",\"function\":");
    if (sym.empty()) w.str("null"); else w.ch('"').str(json_escape(sym)).ch('"');
    w.str(",\"section\":\"").str(hit.source->section_name).str("\",\"file\":\"")
        .str(json_escape(hit.source->file_name)).str("\",\"fde\":{\"offset\":").udec(hit.fde.offset)
        .str(",\"pc_begin\":\"").str(hex(hit.fde.pc_begin)).str("\",\"pc_end\":\"").str(hex(hit.fde.pc_end()))
        .str("\",\"cie\":").udec(hit.fde.cie_offset).str("},\"row\":");
    write_row_json(w, hit.row, arch, asz, e);
    w.str("}\n");
  } else {
    w.str(hex(pc));
    if (!sym.empty()) w.ch(' ').str(sym);
    w.str("\n  FDE ").str(hex(hit.fde.offset)).str(" in ").str(hit.source->section_name).str(" of ")
        .str(hit.source->file_name).str(": ").str(hex(hit.fde.pc_begin)).str("..").str(hex(hit.fde.pc_end()))
        .str(" (CIE ").str(hex(hit.fde.cie_offset)).str(")\n  row ").str(hex(hit.row.pc_begin)).str("..")
        .str(hex(hit.row.pc_end)).str(": ");
    write_row_text(w, hit.row, arch, asz, e);
    w.ch('\n');
  }
  w.flush();
}

}  // namespace framewalk::dump

#include "dump/readelf_frames.hpp"

#include <algorithm>
#include <unordered_map>
#include <vector>

#include "dwarf/cfa_instructions.hpp"
#include "dwarf/cfa_program.hpp"

namespace framewalk::dump {

namespace {

using dwarf::CfaInstruction;
using dwarf::Cie;
using dwarf::CfiSection;
namespace cfa = dwarf::cfa;

// readelf's regname(reg, 1): the bare name, or "rN" when there is none.
void write_reg_name(TextWriter& w, const arch::ArchInfo* arch, uint64_t reg) {
  if (const char* n = reg <= 0xffffffffu ? arch::dwarf_register_name(arch, static_cast<unsigned>(reg)) : nullptr) {
    w.str(n);
  } else {
    w.ch('r').dec(static_cast<int32_t>(static_cast<uint32_t>(reg)));
  }
}

// readelf's regname(reg, 0): "rN (name)", or "rN".
void write_reg_full(TextWriter& w, const arch::ArchInfo* arch, uint64_t reg) {
  w.ch('r').dec(static_cast<int32_t>(static_cast<uint32_t>(reg)));
  if (const char* n = reg <= 0xffffffffu ? arch::dwarf_register_name(arch, static_cast<unsigned>(reg)) : nullptr)
    w.str(" (").str(n).ch(')');
}

// The registers readelf shows as columns: those an instruction names as the
// register it sets a rule for. Registers past the architecture's table are
// not tracked by readelf.
struct Columns {
  std::vector<uint16_t> regs;  // sorted, unique
  bool all_nops = true;
};

Result<void> collect_columns(const CfiSection& section, const Cie& cie, Bytes instructions,
                             uint64_t offset, const arch::ArchInfo* arch, Columns& cols) {
  dwarf::DecodeContext ctx;
  ctx.address_size = cie.address_size;
  ctx.pointer_encoding = cie.fde_encoding;
  ctx.bases = section.info().bases;
  ByteReader r(instructions, section.info().endian, offset);
  const uint64_t limit = arch ? arch->dwarf_register_count : 1024;
  while (!r.at_end()) {
    FW_TRY(CfaInstruction insn, dwarf::decode_cfa_instruction(r, ctx));
    if (insn.opcode != cfa::kNop) cols.all_nops = false;
    switch (insn.opcode) {
      case cfa::kOffset: case cfa::kRestore: case cfa::kOffsetExtended: case cfa::kValOffset:
      case cfa::kRestoreExtended: case cfa::kUndefined: case cfa::kSameValue: case cfa::kRegister:
      case cfa::kExpression: case cfa::kValExpression: case cfa::kOffsetExtendedSf:
      case cfa::kValOffsetSf: case cfa::kGnuNegativeOffsetExtended:
        if (insn.operand1 <= limit) cols.regs.push_back(static_cast<uint16_t>(insn.operand1));
        break;
      default: break;
    }
  }
  return ok();
}

void sort_unique(std::vector<uint16_t>& v) {
  std::sort(v.begin(), v.end());
  v.erase(std::unique(v.begin(), v.end()), v.end());
}

class FrameTablePrinter {
 public:
  FrameTablePrinter(TextWriter& w, const arch::ArchInfo* arch, const std::vector<uint16_t>& cols,
                    uint64_t ra, unsigned address_size)
      : w_(w), arch_(arch), cols_(cols), ra_(ra), address_size_(address_size) {}

  void row(const UnwindRow& row) {
    if (need_header_) {
      need_header_ = false;
      size_t m = w_.mark();
      w_.str("   LOC");
      w_.pad_from(m, 2 * address_size_);
      w_.str(" CFA      ");
      for (uint16_t r : cols_) {
        if (r == ra_) {
          w_.str("ra    ");
        } else {
          m = w_.mark();
          write_reg_name(w_, arch_, r);
          w_.pad_from(m, 5).ch(' ');
        }
      }
      w_.ch('\n');
    }
    w_.hex_bytes(row.pc_begin, address_size_).ch(' ');
    size_t m = w_.mark();
    if (row.cfa.kind == CfaKind::kExpression) {
      w_.str("exp");
    } else {
      write_reg_name(w_, arch_, row.cfa.reg);
      w_.signed_dec(static_cast<int32_t>(static_cast<uint32_t>(row.cfa.offset)));
    }
    w_.pad_from(m, 8).ch(' ');
    for (uint16_t r : cols_) {
      m = w_.mark();
      const RegisterRule* rule = row.find(r);
      if (!rule) {
        w_.ch('u');
      } else {
        switch (rule->kind) {
          case RuleKind::kUndefined: w_.ch('u'); break;
          case RuleKind::kSameValue: w_.ch('s'); break;
          case RuleKind::kOffset: w_.ch('c').signed_dec(static_cast<int32_t>(static_cast<uint32_t>(rule->value))); break;
          case RuleKind::kValOffset: w_.ch('v').signed_dec(static_cast<int32_t>(static_cast<uint32_t>(rule->value))); break;
          case RuleKind::kRegister: write_reg_full(w_, arch_, static_cast<uint64_t>(rule->value)); break;
          case RuleKind::kExpression: w_.str("exp"); break;
          case RuleKind::kValExpression: w_.str("vexp"); break;
        }
      }
      w_.pad_from(m, 5).ch(' ');
    }
    w_.ch('\n');
  }

 private:
  TextWriter& w_;
  const arch::ArchInfo* arch_;
  const std::vector<uint16_t>& cols_;
  uint64_t ra_;
  unsigned address_size_;
  bool need_header_ = true;
};

struct CieState {
  std::vector<uint16_t> columns;  // registers the CIE's instructions name
  bool ok = false;
};

}  // namespace

void write_readelf_frames(TextWriter& w, const CfiSource& source, const arch::ArchInfo* arch,
                          bool name_file, const ProblemSink& on_problem) {
  const CfiSection& section = *source.section;
  const Bytes data = section.data();
  const bool is_eh = section.kind() == dwarf::CfiKind::kEhFrame;
  w.str("Contents of the ").str(source.section_name).str(" section");
  if (name_file) w.str(" (loaded from ").str(source.file_name).ch(')');
  w.str(":\n\n");
  auto problem = [&](Error e, uint64_t entry) {
    if (on_problem) on_problem(DumpProblem{&source, e, entry});
  };
  std::unordered_map<uint64_t, CieState> cie_states;
  auto cie_state = [&](const Cie& cie) -> const CieState& {
    auto it = cie_states.find(cie.offset);
    if (it != cie_states.end()) return it->second;
    CieState st;
    Columns cols;
    st.ok = collect_columns(section, cie, cie.instructions, cie.instructions_offset, arch, cols).ok();
    st.columns = std::move(cols.regs);
    sort_unique(st.columns);
    return cie_states.emplace(cie.offset, std::move(st)).first->second;
  };

  uint64_t offset = 0;
  while (offset < data.size()) {
    // A zero length is a terminator; readelf folds any zero bytes after it.
    ByteReader lr(data, section.info().endian);
    (void)lr.seek(offset);
    auto len32 = lr.u32();
    if (len32 && *len32 == 0) {
      w.ch('\n').hex(offset, 8).str(" ZERO terminator\n\n");
      offset += 4;
      while (offset < data.size() && data[offset] == 0) ++offset;
      continue;
    }
    uint64_t next = data.size();
    auto entry = section.entry_at(offset, &next);
    if (!entry) {
      problem(entry.error(), offset);
      if (next <= offset) break;
      offset = next;
      continue;
    }
    const Cie& cie = *entry->cie;
    const unsigned ptr_size = cie.address_size;
    const unsigned offset_size = cie.dwarf64 ? 8 : 4;
    const bool is_cie = entry->type == CfiSection::Entry::Type::kCie;
    const uint64_t length = is_cie ? cie.length : entry->fde.length;
    const bool entry64 = is_cie ? cie.dwarf64 : entry->fde.dwarf64;
    const uint64_t id = is_cie ? cie.id : entry->fde.cie_pointer;
    w.ch('\n').hex(offset, 8).ch(' ').hex_bytes(length, ptr_size).ch(' ')
        .hex_bytes(id, entry64 ? 8 : offset_size).ch(' ');
    (void)is_eh;

    std::vector<uint16_t> columns = cie_state(cie).columns;
    Columns own;
    Bytes instructions;
    uint64_t instructions_offset;
    if (is_cie) {
      w.str("CIE \"").str(cie.augmentation).str("\" cf=")
          .dec(static_cast<int32_t>(static_cast<uint32_t>(cie.code_alignment)))
          .str(" df=").dec(static_cast<int32_t>(cie.data_alignment))
          .str(" ra=").dec(static_cast<int32_t>(static_cast<uint32_t>(cie.return_address_register)))
          .ch('\n');
      instructions = cie.instructions;
      instructions_offset = cie.instructions_offset;
    } else {
      const dwarf::Fde& fde = entry->fde;
      w.str("FDE cie=").hex(fde.cie_offset, 8).str(" pc=");
      if (cie.segment_size) w.hex(fde.segment_selector, 4).ch(':');
      w.hex_bytes(fde.pc_begin, ptr_size).str("..").hex_bytes(fde.pc_begin + fde.pc_range, ptr_size).ch('\n');
      instructions = fde.instructions;
      instructions_offset = fde.instructions_offset;
    }
    auto collected = collect_columns(section, cie, instructions, instructions_offset, arch, own);
    if (!collected) {
      problem(collected.error(), offset);
      offset = next;
      continue;
    }
    if (!is_cie) {
      columns.insert(columns.end(), own.regs.begin(), own.regs.end());
      sort_unique(columns);
    }
    FrameTablePrinter printer(w, arch, columns, cie.return_address_register, ptr_size);
    const bool all_nops = own.all_nops;
    auto on_row = [&](const UnwindRow& row, bool last) {
      if (!last || !all_nops) printer.row(row);
      return true;
    };
    Result<void> ran = ok();
    if (is_cie) {
      UnwindRow start{};
      start.return_address_register = static_cast<uint16_t>(cie.return_address_register);
      ran = dwarf::run_instructions(section, cie, cie.instructions, cie.instructions_offset, start,
                                    nullptr, 0, on_row);
    } else {
      auto initial = dwarf::run_cie(section, cie);
      if (!initial) {
        ran = initial.error();
      } else {
        ran = dwarf::run_fde(section, cie, entry->fde, *initial, on_row);
      }
    }
    if (!ran) problem(ran.error(), offset);
    offset = next;
  }
  w.ch('\n');
  w.flush();
}

}  // namespace framewalk::dump

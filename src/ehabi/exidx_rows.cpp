#include "ehabi/exidx_rows.hpp"

#include "arch/arm/registers.hpp"
#include "ehabi/unwind_instructions.hpp"

namespace framewalk::ehabi {

namespace arm = arch::arm;

namespace {

// The entry's function start without the Thumb bit.
Result<uint64_t> function_start(const IndexTable& index, uint64_t i) {
  const SectionWords& words = index.section();
  FW_TRY(uint32_t w, words.word(i * kIndexEntrySize));
  return prel31_target(w, words.address + i * kIndexEntrySize) & ~uint64_t{1};
}

// The virtual unwinder's state: vsp as an offset from the base register
// (r13 until `vsp = r[n]`), and where each register was popped, as an offset
// from the same base. The rules are made at the end, relative to the final
// vsp (the CFA).
class VirtualUnwinder {
 public:
  Result<void> run(const OpcodeBuffer& bytes, EntryRow* result) {
    size_t pos = 0;
    while (pos < bytes.size) {
      const Instruction in = decode_instruction(bytes.view(), pos);
      const uint64_t where = bytes.offset_of_byte(pos);
      pos += in.size;
      FW_CHECK(check_instruction(in, where));
      switch (in.op) {
        case Op::kFinish: return ok();
        case Op::kRefuseToUnwind:
          *result = EntryRow::kCannotUnwind;
          return ok();
        case Op::kVspAdd: vsp_ += in.amount; break;
        case Op::kVspSubtract: vsp_ -= in.amount; break;
        case Op::kVspFromRegister:
          // Pops so far are relative to the old base: one CFA cannot hold both.
          if (saved_count_) return Error{ErrorCode::kExidxVspAfterPop, where};
          base_ = in.reg;
          vsp_ = 0;
          break;
        case Op::kPopCore:
          // The caller's SP would be the popped word, not the final vsp.
          if (in.mask & (1u << arm::kSp)) return Error{ErrorCode::kExidxPopsStackPointer, where};
          for (unsigned r = 0; r < 16; ++r) {
            if (!(in.mask & (1u << r))) continue;
            FW_CHECK(save(static_cast<uint16_t>(r), where));
            vsp_ += 4;
          }
          break;
        case Op::kPopVfpFstmx:
        case Op::kPopVfpVpush:
          for (unsigned d = in.first; d <= in.last; ++d) {
            FW_CHECK(save(static_cast<uint16_t>(arm::kD0 + d), where));
            vsp_ += 8;
          }
          if (in.op == Op::kPopVfpFstmx) vsp_ += 4;  // FSTMFDX's pad word
          break;
        case Op::kPopWmmxData:
          for (unsigned r = in.first; r <= in.last; ++r) {
            FW_CHECK(save(static_cast<uint16_t>(arm::kWr0 + r), where));
            vsp_ += 8;
          }
          break;
        case Op::kPopWmmxControl:
          for (unsigned r = 0; r < 4; ++r) {
            if (!(in.mask & (1u << r))) continue;
            FW_CHECK(save(static_cast<uint16_t>(arm::kWcgr0 + r), where));
            vsp_ += 4;
          }
          break;
        case Op::kPopPacCode:
          // A backtracer does not authenticate: the code is a saved word like others (remark g).
          FW_CHECK(save(arm::kRaAuthCode, where));
          vsp_ += 4;
          break;
        case Op::kPacModifier: break;  // only names the modifier (remark h)
        default: return Error{ErrorCode::kSpareUnwindOpcode, where};  // check_instruction refused the rest
      }
    }
    // The bytes end: an implicit finish, unless the entry was cut short.
    if (bytes.cut_short) return Error{ErrorCode::kTruncated, bytes.missing_word};
    return ok();
  }

  Result<void> make_row(UnwindRow* row) const {
    row->cfa.kind = CfaKind::kRegisterOffset;
    row->cfa.reg = base_;
    row->cfa.offset = static_cast<int64_t>(vsp_);
    bool pc_popped = false;
    for (unsigned i = 0; i < saved_count_; ++i) {
      pc_popped |= saved_[i].reg == arm::kPc;
      const int64_t offset = static_cast<int64_t>(saved_[i].vsp - vsp_);
      auto set = row->set(RegisterRule{saved_[i].reg, RuleKind::kOffset, offset, {}, 0});
      if (!set) return Error{ErrorCode::kTooManyRules, saved_[i].where};
    }
    row->return_address_register = pc_popped ? arm::kPc : arm::kLr;
    return ok();
  }

 private:
  // A register popped again (a later pop is an earlier push) takes the later slot.
  Result<void> save(uint16_t reg, uint64_t where) {
    for (unsigned i = 0; i < saved_count_; ++i) {
      if (saved_[i].reg == reg) {
        saved_[i].vsp = vsp_;
        return ok();
      }
    }
    if (saved_count_ >= UnwindRow::kMaxRules) return Error{ErrorCode::kTooManyRules, where};
    saved_[saved_count_++] = {reg, vsp_, where};
    return ok();
  }

  struct Saved {
    uint16_t reg;
    uint64_t vsp;    // offset from the base register (wrapping: vsp may go below it)
    uint64_t where;  // of the instruction, for errors
  };
  uint16_t base_ = arm::kSp;
  uint64_t vsp_ = 0;
  Saved saved_[UnwindRow::kMaxRules];
  unsigned saved_count_ = 0;
};

void cannot_unwind_row(UnwindRow* row) {
  row->cfa.kind = CfaKind::kRegisterOffset;
  row->cfa.reg = arm::kSp;
  row->cfa.offset = 0;
  row->return_address_register = arm::kPc;
  (void)row->set(RegisterRule{arm::kPc, RuleKind::kUndefined, 0, {}, 0});
}

}  // namespace

Result<IndexEntry> find_entry(const IndexTable& index, uint64_t pc, uint64_t* next_start) {
  pc &= ~uint64_t{1};
  // The last entry whose start is at or below pc: [lo, hi) narrows to it.
  uint64_t lo = 0, hi = index.size();
  while (lo < hi) {
    const uint64_t mid = lo + (hi - lo) / 2;
    FW_TRY(uint64_t start, function_start(index, mid));
    if (start <= pc) lo = mid + 1;
    else hi = mid;
  }
  if (lo == 0) return Error{ErrorCode::kNotFound, pc};
  FW_TRY(IndexEntry e, index.entry(lo - 1));
  if (e.corrupt_function_word()) return Error{ErrorCode::kBadExidxEntry, e.offset};
  if (next_start) {
    if (lo < index.size()) {
      FW_TRY(*next_start, function_start(index, lo));
    } else {
      *next_start = UINT64_MAX;
    }
  }
  return e;
}

Result<EntryRow> execute_instructions(const OpcodeBuffer& bytes, UnwindRow* row) {
  *row = UnwindRow{};
  EntryRow result = EntryRow::kUnwinds;
  VirtualUnwinder unwinder;
  FW_CHECK(unwinder.run(bytes, &result));
  if (result == EntryRow::kCannotUnwind) {
    cannot_unwind_row(row);
    return result;
  }
  FW_CHECK(unwinder.make_row(row));
  return result;
}

Result<EntryRow> entry_row(const ExidxTables& tables, const IndexEntry& entry, uint64_t next_start, UnwindRow* row) {
  OpcodeBuffer bytes;
  EntryRow result = EntryRow::kUnwinds;
  switch (entry.kind) {
    case EntryKind::kCantUnwind:
      *row = UnwindRow{};
      cannot_unwind_row(row);
      result = EntryRow::kCannotUnwind;
      break;
    case EntryKind::kInline: {
      const EntryHeader h = read_header(entry.data_word, 0);
      // Only index 0 fits in the index word; the long forms need words that are not there.
      if (h.corrupt_compact_word || h.personality_index >= 3) return Error{ErrorCode::kBadPersonalityIndex, entry.offset + 4};
      compact_opcodes(h, nullptr, entry.offset + 4, &bytes);
      FW_TRY(result, execute_instructions(bytes, row));
      break;
    }
    case EntryKind::kTable: {
      const SectionWords& extab = tables.extab;
      if (entry.table < extab.address || entry.table - extab.address >= extab.data.size())
        return Error{ErrorCode::kBadExtabPointer, entry.offset + 4};
      const uint64_t offset = entry.table - extab.address;
      FW_TRY(uint32_t first, extab.word(offset));
      const EntryHeader h = read_header(first, entry.table);
      if (h.model == Model::kCompact) {
        if (h.corrupt_compact_word || h.personality_index >= 3) return Error{ErrorCode::kBadPersonalityIndex, offset};
        compact_opcodes(h, &extab, offset, &bytes);
      } else {
        FW_CHECK(gnu_personality_opcodes(extab, offset, &bytes));
      }
      FW_TRY(result, execute_instructions(bytes, row));
      break;
    }
  }
  row->pc_begin = entry.function & ~uint64_t{1};
  row->pc_end = next_start;
  return result;
}

Result<EntryRow> row_for_pc(const ExidxTables& tables, uint64_t pc, bool exact_pc, UnwindRow* row) {
  const IndexTable index(tables.index);
  uint64_t next_start = 0;
  FW_TRY(IndexEntry entry, find_entry(index, pc, &next_start));
  FW_TRY(EntryRow result, entry_row(tables, entry, next_start, row));
  if (exact_pc && result == EntryRow::kUnwinds && (pc & ~uint64_t{1}) == row->pc_begin) {
    const uint64_t begin = row->pc_begin, end = row->pc_end;
    *row = UnwindRow{};
    row->cfa = CfaRule{CfaKind::kRegisterOffset, arm::kSp, 0, {}, 0};
    row->return_address_register = arm::kLr;
    row->pc_begin = begin;
    row->pc_end = end;
  }
  return result;
}

}  // namespace framewalk::ehabi

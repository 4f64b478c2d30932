#include "dump/readelf_frames.hpp"

#include <algorithm>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <thread>
#include <cstdio>
#include <memory>
#include <cstring>
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
  // Bounded so that a row always fits LineBuilder (every arch table is smaller).
  const uint64_t limit = arch && arch->dwarf_register_count ? arch->dwarf_register_count : 255;
  while (!r.at_end()) {
    const uint8_t byte = r.peek_unchecked();
    if ((byte & 0xc0) == cfa::kAdvanceLoc || byte == cfa::kDefCfaOffset) {
      // No register operand: skip quickly (the decoder validates on the row pass).
      cols.all_nops = false;
      r.advance_unchecked(1);
      if (byte == cfa::kDefCfaOffset) FW_CHECK(r.uleb128());
      continue;
    }
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

// readelf's regname(reg, 1) for the registers rows name, computed once per
// section: "rax", or "r17" when the architecture has no name.
class RegisterNames {
 public:
  static constexpr unsigned kCached = 256;
  explicit RegisterNames(const arch::ArchInfo* arch) {
    for (unsigned r = 0; r < kCached; ++r) {
      const char* n = arch::dwarf_register_name(arch, r);
      int len = n ? std::snprintf(names_[r], sizeof names_[r], "%s", n)
                  : std::snprintf(names_[r], sizeof names_[r], "r%u", r);
      lengths_[r] = static_cast<uint8_t>(len < 0 ? 0 : (len >= 24 ? 23 : len));
    }
  }
  const char* name(unsigned r) const { return names_[r]; }
  uint8_t length(unsigned r) const { return lengths_[r]; }

  // The 6-byte cell "c-8   " for an offset rule, or null when out of the cached range.
  static constexpr int64_t kCellMin = -999, kCellMax = 1000;  // texts of at most 4 characters
  const char* offset_cell(bool val, int64_t v) {
    if (v < kCellMin || v >= kCellMax) return nullptr;
    char* cell = cells_[val][v - kCellMin];
    if (cell[0] == 0) {
      std::snprintf(cell, 8, "%c%+-4d ", val ? 'v' : 'c', static_cast<int>(v));
    }
    return cell;
  }

 private:
  char names_[kCached][24];
  uint8_t lengths_[kCached];
  char cells_[2][kCellMax - kCellMin][8] = {};
};

// Formats into a fixed line buffer without per-character checks: rows are the
// bulk of the output (a libLLVM-sized file has about a million). The buffer
// holds the widest possible line: kMaxColumns cells of at most kMaxCell bytes.
class LineBuilder {
 public:
  static constexpr size_t kMaxCell = 40;
  static constexpr size_t kMaxColumns = 256;
  static constexpr size_t kMaxLine = (kMaxColumns + 3) * kMaxCell;

  explicit LineBuilder(TextWriter& w) : w_(w), buf_(w.raw_begin(kMaxLine)), p_(buf_) {}

  void put(const char* s, size_t n) {
    std::memcpy(p_, s, n);
    p_ += n;
  }
  void put(const char* s) { put(s, std::strlen(s)); }
  void put(char c) { *p_++ = c; }
  void put_cell6(const char* cell) {
    std::memcpy(p_, cell, 8);  // fixed-size copy; only 6 bytes are kept
    p_ += 6;
  }
  void put_signed(int32_t v) {
    *p_++ = v < 0 ? '-' : '+';
    put_unsigned(v < 0 ? 0u - static_cast<uint32_t>(v) : static_cast<uint32_t>(v));
  }
  void put_unsigned(uint32_t u) {
    char tmp[12];
    char* e = tmp + sizeof tmp;
    char* q = e;
    while (u >= 100) {
      const uint32_t r = u % 100;
      u /= 100;
      q -= 2;
      std::memcpy(q, kDigitPairs + 2 * r, 2);
    }
    if (u >= 10) {
      q -= 2;
      std::memcpy(q, kDigitPairs + 2 * u, 2);
    } else {
      *--q = static_cast<char>('0' + u);
    }
    put(q, static_cast<size_t>(e - q));
  }
  // `bytes` bytes of v as 2*bytes hex digits.
  void put_hex_bytes(uint64_t v, unsigned bytes) {
    for (int i = static_cast<int>(bytes) - 1; i >= 0; --i) {
      std::memcpy(p_, kHexPairs + 2 * ((v >> (8 * i)) & 0xff), 2);
      p_ += 2;
    }
  }
  size_t size() const { return static_cast<size_t>(p_ - buf_); }
  void pad_to(size_t column) {
    const size_t n = size();
    if (n < column) {
      const size_t k = column - n;
      if (k <= 16) std::memcpy(p_, "                ", 16);  // room is guaranteed by kMaxLine
      else std::memset(p_, ' ', k);
      p_ += k;
    }
  }
  void reg_name(const RegisterNames& names, uint64_t reg) {
    if (reg < RegisterNames::kCached) {
      std::memcpy(p_, names.name(static_cast<unsigned>(reg)), 24);
      p_ += names.length(static_cast<unsigned>(reg));
    } else {
      put('r');
      put_raw_int(static_cast<int32_t>(static_cast<uint32_t>(reg)));
    }
  }
  void reg_name(const arch::ArchInfo* arch, uint64_t reg) {
    if (const char* n = reg <= 0xffffffffu ? arch::dwarf_register_name(arch, static_cast<unsigned>(reg)) : nullptr) {
      put(n);
    } else {
      put('r');
      put_raw_int(static_cast<int32_t>(static_cast<uint32_t>(reg)));
    }
  }
  void reg_full(const arch::ArchInfo* arch, uint64_t reg) {
    put('r');
    put_raw_int(static_cast<int32_t>(static_cast<uint32_t>(reg)));
    if (const char* n = reg <= 0xffffffffu ? arch::dwarf_register_name(arch, static_cast<unsigned>(reg)) : nullptr) {
      put(" (", 2);
      put(n);
      put(')');
    }
  }
  void commit() { w_.raw_commit(p_); }

 private:
  void put_raw_int(int32_t v) {
    if (v < 0) {
      put('-');
      put_unsigned(0u - static_cast<uint32_t>(v));
    } else {
      put_unsigned(static_cast<uint32_t>(v));
    }
  }
  static constexpr char kDigitPairs[] =
      "00010203040506070809101112131415161718192021222324252627282930313233343536373839"
      "40414243444546474849505152535455565758596061626364656667686970717273747576777879"
      "8081828384858687888990919293949596979899";
  static constexpr char kHexPairs[] =
      "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f"
      "202122232425262728292a2b2c2d2e2f303132333435363738393a3b3c3d3e3f"
      "404142434445464748494a4b4c4d4e4f505152535455565758595a5b5c5d5e5f"
      "606162636465666768696a6b6c6d6e6f707172737475767778797a7b7c7d7e7f"
      "808182838485868788898a8b8c8d8e8f909192939495969798999a9b9c9d9e9f"
      "a0a1a2a3a4a5a6a7a8a9aaabacadaeafb0b1b2b3b4b5b6b7b8b9babbbcbdbebf"
      "c0c1c2c3c4c5c6c7c8c9cacbcccdcecfd0d1d2d3d4d5d6d7d8d9dadbdcdddedf"
      "e0e1e2e3e4e5e6e7e8e9eaebecedeeeff0f1f2f3f4f5f6f7f8f9fafbfcfdfeff";
  TextWriter& w_;
  char* buf_;
  char* p_;
};

class FrameTablePrinter {
 public:
  FrameTablePrinter(TextWriter& w, const arch::ArchInfo* arch, RegisterNames& names,
                    const std::vector<uint16_t>& cols, uint64_t ra, unsigned address_size)
      : w_(w), arch_(arch), names_(names), cols_(cols), ra_(ra), address_size_(address_size) {}

  void row(const UnwindRow& row) {
    if (need_header_) {
      need_header_ = false;
      LineBuilder h(w_);
      h.put("   LOC");
      h.pad_to(2 * (address_size_ > 8 ? 8 : address_size_));
      h.put(" CFA      ");
      for (uint16_t r : cols_) {
        if (r == ra_) {
          h.put("ra    ");
        } else {
          const size_t start = h.size();
          h.reg_name(names_, r);
          h.pad_to(start + 5);
          h.put(' ');
        }
      }
      h.put('\n');
      h.commit();
    }
    LineBuilder b(w_);
    b.put_hex_bytes(row.pc_begin, address_size_ > 8 ? 8 : address_size_);
    b.put(' ');
    size_t start = b.size();
    if (row.cfa.kind == CfaKind::kExpression) {
      b.put("exp", 3);
    } else {
      b.reg_name(names_, row.cfa.reg);
      b.put_signed(static_cast<int32_t>(static_cast<uint32_t>(row.cfa.offset)));
    }
    b.pad_to(start + 8);
    b.put(' ');
    // Rules and columns are both sorted by register: walk them together.
    int ri = 0;
    for (uint16_t r : cols_) {
      while (ri < row.rule_count && row.rules[ri].reg < r) ++ri;
      const RegisterRule* rule = ri < row.rule_count && row.rules[ri].reg == r ? &row.rules[ri] : nullptr;
      start = b.size();
      if (!rule) {
        b.put('u');
      } else {
        switch (rule->kind) {
          case RuleKind::kUndefined: b.put('u'); break;
          case RuleKind::kSameValue: b.put('s'); break;
          case RuleKind::kOffset:
          case RuleKind::kValOffset: {
            const bool val = rule->kind == RuleKind::kValOffset;
            if (const char* cell = names_.offset_cell(val, rule->value)) {
              b.put_cell6(cell);  // already padded, with its trailing space
              continue;
            }
            b.put(val ? 'v' : 'c');
            b.put_signed(static_cast<int32_t>(static_cast<uint32_t>(rule->value)));
            break;
          }
          case RuleKind::kRegister: b.reg_full(arch_, static_cast<uint64_t>(rule->value)); break;
          case RuleKind::kExpression: b.put("exp", 3); break;
          case RuleKind::kValExpression: b.put("vexp", 4); break;
        }
      }
      b.pad_to(start + 5);
      b.put(' ');
    }
    b.put('\n');
    b.commit();
  }

 private:
  TextWriter& w_;
  const arch::ArchInfo* arch_;
  RegisterNames& names_;
  const std::vector<uint16_t>& cols_;
  uint64_t ra_;
  unsigned address_size_;
  bool need_header_ = true;
};

struct CieState {
  std::vector<uint16_t> columns;  // registers the CIE's instructions name
  bool ok = false;
  Result<UnwindRow> initial = Error{ErrorCode::kNotFound, 0};  // the FDEs' starting row
};

// The records that start in [begin, end), in readelf's format. Problems are
// collected rather than reported so that ranges can be formatted in parallel.
void write_records(TextWriter& w, const CfiSource& source, const arch::ArchInfo* arch, uint64_t begin,
                   uint64_t end, std::vector<DumpProblem>& problems) {
  const CfiSection& section = *source.section;
  const Bytes data = section.data();
  auto problem = [&](Error e, uint64_t entry) {
    problems.push_back(DumpProblem{&source, e, entry});
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
    st.initial = dwarf::run_cie(section, cie);
    return cie_states.emplace(cie.offset, std::move(st)).first->second;
  };

  std::vector<uint16_t> columns;
  Columns own;
  const auto names_storage = std::make_unique<RegisterNames>(arch);
  RegisterNames& names = *names_storage;
  uint64_t offset = begin;
  while (offset < end) {
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
    if (entry->type == CfiSection::Entry::Type::kTerminator) {
      // A zero DWARF64 length (0xffffffff, then 8 zero bytes): it has no CIE.
      w.ch('\n').hex(offset, 8).str(" ZERO terminator\n\n");
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

    const CieState& cie_st = cie_state(cie);
    columns = cie_st.columns;
    own.regs.clear();
    own.all_nops = true;
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
    FrameTablePrinter printer(w, arch, names, columns, cie.return_address_register, ptr_size);
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
      if (!cie_st.initial) {
        ran = cie_st.initial.error();
      } else {
        ran = dwarf::run_fde(section, cie, entry->fde, *cie_st.initial, on_row);
      }
    }
    if (!ran) problem(ran.error(), offset);
    offset = next;
  }
}

// Where the record after the one at `offset` starts, as the formatter walks.
uint64_t next_record(const CfiSection& section, uint64_t offset) {
  const Bytes data = section.data();
  ByteReader r(data, section.info().endian);
  if (!r.seek(offset)) return data.size();
  auto len = r.initial_length();
  if (!len) return data.size();
  if (len->length == 0) {
    offset += 4;
    while (offset < data.size() && data[offset] == 0) ++offset;
    return offset;
  }
  if (len->length > r.remaining()) return data.size();
  return r.offset() + len->length;
}

}  // namespace

void write_readelf_frames(TextWriter& w, const CfiSource& source, const arch::ArchInfo* arch,
                          bool name_file, const ProblemSink& on_problem) {
  const CfiSection& section = *source.section;
  const uint64_t size = section.data().size();
  if (size == 0) {  // an empty section in an object file, as crtbeginT.o's .eh_frame
    w.str("\nSection '").str(source.section_name).str("' has no debugging data.\n");
    return;
  }
  w.str("Contents of the ").str(source.section_name).str(" section");
  if (name_file) w.str(" (loaded from ").str(source.file_name).ch(')');
  w.str(":\n\n");
  // Large sections are formatted in parallel, in ranges split at record
  // boundaries and written in order, so the output is the same. A window of
  // reused buffers bounds the memory (fresh pages cost more than formatting).
  unsigned threads = std::min(4u, std::max(1u, std::thread::hardware_concurrency()));
  if (size < (1u << 20)) threads = 1;
  std::vector<uint64_t> bounds{0};
  if (threads > 1) {
    const uint64_t target = 64 * 1024;  // bytes of section per range (about 1 MB of text)
    for (uint64_t off = 0, last = 0; off < size; off = next_record(section, off)) {
      if (off - last >= target) {
        bounds.push_back(off);
        last = off;
      }
    }
    // Parse every CIE now so that the workers only read the cache.
    section.for_each([](const CfiSection::Entry&) { return true; }, nullptr);
  }
  bounds.push_back(size);
  const size_t ranges = bounds.size() - 1;
  std::vector<std::vector<DumpProblem>> problems(ranges);
  if (ranges == 1) {
    write_records(w, source, arch, 0, size, problems[0]);
  } else {
    const size_t window = 2 * threads;
    std::vector<std::unique_ptr<TextWriter>> buffers(window);
    for (auto& b : buffers) b = std::make_unique<TextWriter>();
    std::vector<size_t> finished(window, SIZE_MAX);  // which range each buffer holds
    std::mutex mutex;
    std::condition_variable changed;
    size_t next_range = 0, written = 0;
    auto worker = [&] {
      for (;;) {
        size_t i;
        {
          std::unique_lock<std::mutex> lock(mutex);
          if (next_range >= ranges) return;
          i = next_range++;
          changed.wait(lock, [&] { return i < written + window; });
        }
        write_records(*buffers[i % window], source, arch, bounds[i], bounds[i + 1], problems[i]);
        std::lock_guard<std::mutex> lock(mutex);
        finished[i % window] = i;
        changed.notify_all();
      }
    };
    std::vector<std::thread> workers;
    for (unsigned t = 0; t < threads; ++t) workers.emplace_back(worker);
    for (size_t i = 0; i < ranges; ++i) {
      std::unique_lock<std::mutex> lock(mutex);
      changed.wait(lock, [&] { return finished[i % window] == i; });
      lock.unlock();
      TextWriter& part = *buffers[i % window];
      w.write_through(part.text());
      part.clear();
      lock.lock();
      written = i + 1;
      changed.notify_all();
    }
    for (auto& t : workers) t.join();
  }
  if (on_problem)
    for (auto& list : problems)
      for (auto& p : list) on_problem(p);
  w.ch('\n');
  w.flush();
}

}  // namespace framewalk::dump

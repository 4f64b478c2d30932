#include "dump/arm_unwind.hpp"

#include "base/text.hpp"

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <optional>
#include <string_view>

#include "ehabi/exidx.hpp"

namespace framewalk::dump {

namespace {

using ehabi::Instruction;
using ehabi::Op;

void appendf(std::string& out, const char* format, uint64_t value) {
  char buf[32];
  std::snprintf(buf, sizeof buf, format, value);
  out += buf;
}


// readelf's function symbols for these tables: the defined STT_FUNC symbols
// of the (last) .symtab in value order (a stable sort: table order among
// equals), Thumb bit cleared; an address is named by readelf's own bisection of that
// array (find_symbol_for_address): the nearest named symbol at or below it
// that the bisection meets, less than 1 MiB away. Among symbols of one
// value (C1/C2 constructor aliases) that is whichever the bisection hits
// first, not always the first in table order.
class FunctionSymbols {
 public:
  explicit FunctionSymbols(const elf::ElfFile& file) {
    const elf::Section* table = nullptr;
    for (const elf::Section& s : file.sections())
      if (s.type == elf::kShtSymtab) table = &s;
    if (!table) return;
    auto data = file.section_data(*table);
    if (!data) return;
    if (table->link < file.sections().size()) {
      auto strings = file.section_data(file.sections()[table->link]);
      if (strings) strtab_ = *strings;
    }
    const size_t entsize = file.is_64() ? 24 : 16;
    ByteReader r(*data, file.endian());
    for (uint32_t index = 0; r.remaining() >= entsize; ++index) {
      uint32_t name = *r.u32();
      uint64_t value;
      uint8_t info;
      uint16_t section;
      if (file.is_64()) {
        info = *r.u8();
        (void)r.skip(1);
        section = *r.u16();
        value = *r.u64();
        (void)r.skip(8);
      } else {
        value = *r.u32();
        (void)r.skip(4);
        info = *r.u8();
        (void)r.skip(1);
        section = *r.u16();
      }
      constexpr uint8_t kSttFunc = 2;
      if ((info & 0xf) == kSttFunc && section != 0) symbols_.push_back({value, index, name});
    }
    std::stable_sort(symbols_.begin(), symbols_.end(), [](const Entry& a, const Entry& b) { return a.value < b.value; });
  }

  struct Match {
    std::string_view name;
    uint64_t offset;
  };

  std::optional<Match> lookup(uint64_t address) const {
    address &= ~uint64_t{1};
    uint64_t distance = 0x100000;
    const Entry* best = nullptr;
    size_t begin = 0, end = symbols_.size();
    while (begin < end) {
      const size_t middle = begin + (end - begin) / 2;
      const Entry& e = symbols_[middle];
      const uint64_t value = e.value & ~uint64_t{1};
      if (e.name != 0 && address >= value && address - value < distance) {
        best = &e;
        distance = address - value;
        if (distance == 0) break;
      }
      if (address < value) end = middle;
      else begin = middle + 1;
    }
    if (!best) return std::nullopt;
    return Match{name_at(best->name), distance};
  }

 private:
  struct Entry {
    uint64_t value;
    uint32_t index;
    uint32_t name;
  };
  std::string_view name_at(uint32_t offset) const {
    if (offset >= strtab_.size()) return "<corrupt>";
    const auto* begin = reinterpret_cast<const char*>(strtab_.data()) + offset;
    return std::string_view(begin, strnlen(begin, strtab_.size() - offset));
  }
  std::vector<Entry> symbols_;
  Bytes strtab_;
};

// readelf's printable_section_name: control characters as ^X.
std::string printable(std::string_view name) {
  std::string out;
  for (unsigned char c : name) {
    if (c < 0x20 || c == 0x7f) {
      out += '^';
      out += static_cast<char>(c == 0x7f ? '?' : c + 0x40);
    } else {
      out += static_cast<char>(c);
    }
  }
  return out;
}

std::string register_list(const char* prefix, uint16_t mask) {
  std::string out = "{";
  for (unsigned i = 0; i < 16; ++i) {
    if (!(mask & (1u << i))) continue;
    if (out.size() > 1) out += ", ";
    out += prefix + std::to_string(i);
  }
  return out + "}";
}

std::string register_range(const char* prefix, const Instruction& in) {
  std::string out = std::string("pop {") + prefix + std::to_string(in.first);
  if (in.last != in.first) out += std::string("-") + prefix + std::to_string(in.last);
  return out + "}";
}

// The single-byte instructions readelf indents by five spaces: all but the
// VFP pops 0xb8-0xbf and 0xd0-0xd7 (a quirk of readelf's format strings).
bool padded(uint8_t op, uint8_t size) {
  return size == 1 && (op & 0xf8) != 0xb8 && (op & 0xf8) != 0xd0;
}

struct Section {
  const elf::Section* header;
  ehabi::SectionWords words;
};

Section section_words(const elf::ElfFile& file, const elf::Section& s) {
  Section out{&s, {{}, s.address, file.endian()}};
  auto data = file.section_data(s);
  if (data) out.words.data = *data;
  return out;
}

const elf::Section* section_containing(const elf::ElfFile& file, uint64_t address) {
  for (const elf::Section& s : file.sections())
    if (address >= s.address && address - s.address < s.size) return &s;
  return nullptr;
}

class Dumper {
 public:
  Dumper(const elf::ElfFile& file, bool readelf) : file_(file), symbols_(file), readelf_(readelf) {}

  ArmUnwindDump run() {
    bool any = false;
    for (const elf::Section& s : file_.sections()) {
      if (s.type != ehabi::kShtArmExidx) continue;
      any = true;
      dump_index(s);
    }
    if (!any && readelf_) out_.text += "\nThere are no unwind sections in this file.\n";
    return std::move(out_);
  }

 private:
  void problem(ErrorCode code, uint64_t offset, const elf::Section& s) {
    out_.problems.push_back({Error{code, offset}, std::string(s.name), s.offset});
  }

  // The address, and readelf's ` <name+0xoff>` when a symbol is near.
  std::optional<FunctionSymbols::Match> vma_and_name(uint64_t address) {
    std::string& t = out_.text;
    t += hex(address);
    auto match = symbols_.lookup(address);
    if (match) {
      t += " <";
      t += match->name;
      if (match->offset) appendf(t, "+0x%" PRIx64, match->offset);
      t += '>';
    }
    return match;
  }

  void dump_index(const elf::Section& s) {
    const uint64_t count = s.size / ehabi::kIndexEntrySize;
    std::string& t = out_.text;
    if (readelf_) {
      t += "\nUnwind section '" + printable(s.name) + "' at offset " + hex(s.offset) + " contains " +
           std::to_string(count) + (count == 1 ? " entry:\n" : " entries:\n");
    } else {
      t += std::string(s.name) + ": " + std::to_string(count) + (count == 1 ? " entry\n" : " entries\n");
    }
    Section index = section_words(file_, s);
    const ehabi::IndexTable table(index.words);
    if (count && table.size() != count) {
      // The section's bytes are not in the file: readelf stops at the first word.
      if (readelf_) t += '\n';
      problem(ErrorCode::kSectionOutOfFile, 0, s);
      return;
    }
    for (uint64_t i = 0; i < count; ++i) {
      auto entry = table.entry(i);
      if (!entry) {
        problem(entry.error().code, entry.error().offset, s);
        return;
      }
      dump_entry(*entry, index);
    }
    if (readelf_) t += '\n';
  }

  void dump_entry(const ehabi::IndexEntry& e, const Section& index) {
    std::string& t = out_.text;
    if (readelf_) t += '\n';
    if (e.corrupt_function_word()) problem(ErrorCode::kBadExidxEntry, e.offset, *index.header);
    vma_and_name(e.function);
    t += ": ";
    switch (e.kind) {
      case ehabi::EntryKind::kCantUnwind:
        t += "0x1 [cantunwind]\n";
        return;
      case ehabi::EntryKind::kInline: {
        t += hex(e.data_word);
        t += readelf_ ? "\n" : " ";
        dump_table_entry(ehabi::read_header(e.data_word, 0), nullptr, e.offset + 4, *index.header);
        return;
      }
      case ehabi::EntryKind::kTable: {
        t += "@" + hex(e.table);
        t += readelf_ ? "\n" : " ";
        const elf::Section* holder = section_containing(file_, e.table);
        if (!holder) {
          if (!readelf_) t += "\n";
          problem(ErrorCode::kBadExtabPointer, e.offset + 4, *index.header);
          return;
        }
        const Section extab = section_words(file_, *holder);
        const uint64_t offset = e.table - holder->address;
        auto first = extab.words.word(offset);
        if (!first) {
          if (!readelf_) t += "\n";
          problem(ErrorCode::kTruncated, offset, *holder);
          return;
        }
        dump_table_entry(ehabi::read_header(*first, holder->address + offset), &extab, offset, *holder);
        return;
      }
    }
  }

  // `words` is null for an inline entry; `offset` is the header word's, in `where`.
  void dump_table_entry(const ehabi::EntryHeader& h, const Section* words, uint64_t offset,
                        const elf::Section& where) {
    std::string& t = out_.text;
    ehabi::OpcodeBytes bytes;
    if (h.model == ehabi::Model::kGeneric) {
      t += readelf_ ? "  Personality routine: " : "personality ";
      auto name = vma_and_name(h.personality);
      t += readelf_ ? "\n" : "";
      if (!name || !ehabi::is_gnu_personality(name->name)) {
        if (!readelf_) t += "\n";
        return;
      }
      auto gnu = ehabi::gnu_personality_opcodes(words->words, offset);
      if (!gnu) {
        if (!readelf_) t += "\n";
        problem(ErrorCode::kTruncated, gnu.error().offset, where);
        return;
      }
      bytes = std::move(*gnu);
    } else {
      if (h.corrupt_compact_word || h.personality_index >= 3) problem(ErrorCode::kBadPersonalityIndex, offset, where);
      if (readelf_) {
        t += "  Compact model index: " + std::to_string(h.personality_index) + "\n";
      } else {
        t += "pr" + std::to_string(h.personality_index);
      }
      if (h.personality_index >= 3) {
        t += readelf_ ? "  [reserved]\n" : "\n";
        return;
      }
      bytes = ehabi::compact_opcodes(h, words ? &words->words : nullptr, offset);
    }
    if (bytes.cut_short) problem(ErrorCode::kTruncated, bytes.missing_word, where);
    const auto instructions = ehabi::decode_instructions(bytes.bytes);
    if (readelf_) {
      write_readelf_instructions(instructions, bytes);
    } else {
      std::string sep = ": ";
      for (const Instruction& in : instructions) {
        t += sep + (in.op == Op::kTruncated ? std::string("[Truncated opcode]") : instruction_text(in));
        sep = "; ";
      }
      t += "\n";
    }
    for (const Instruction& in : instructions)
      // The ones readelf fails on too (it prints [Spare] and [Reserved] and goes on).
      if (in.op == Op::kTruncated || in.op == Op::kBadVspChange || in.op == Op::kUnsupported) {
        auto checked = ehabi::check_instruction(in, bytes.offset_of_byte(in.offset));
        if (!checked) problem(checked.error().code, checked.error().offset, where);
      }
  }

  void write_readelf_instructions(const std::vector<Instruction>& instructions, const ehabi::OpcodeBytes& bytes) {
    std::string& t = out_.text;
    for (const Instruction& in : instructions) {
      t += "  ";
      for (unsigned i = 0; i < in.size; ++i) appendf(t, "0x%02" PRIx64 " ", bytes.bytes[in.offset + i]);
      if (in.op == Op::kTruncated) {
        // Bytes missing because the section ends: readelf stops mid-line.
        if (!bytes.cut_short) t += "[Truncated opcode]\n";
        return;
      }
      if (padded(bytes.bytes[in.offset], in.size)) t += "     ";
      t += instruction_text(in);
      t += '\n';
    }
  }

  const elf::ElfFile& file_;
  FunctionSymbols symbols_;
  bool readelf_;
  ArmUnwindDump out_;
};

}  // namespace

std::string instruction_text(const Instruction& in) {
  switch (in.op) {
    case Op::kVspAdd: {
      char buf[48];
      std::snprintf(buf, sizeof buf, "vsp = vsp + %" PRId64, static_cast<int64_t>(in.amount));
      return buf;
    }
    case Op::kVspSubtract: return "vsp = vsp - " + std::to_string(in.amount);
    case Op::kRefuseToUnwind: return "Refuse to unwind";
    case Op::kPopCore: return "pop " + register_list("r", in.mask);
    case Op::kVspFromRegister: return "vsp = r" + std::to_string(in.reg);
    case Op::kReservedRegisterMove: return "[Reserved]";
    case Op::kFinish: return "finish";
    case Op::kSpare: return "[Spare]";
    case Op::kBadVspChange: return "";
    case Op::kPopVfpFstmx:
    case Op::kPopVfpVpush: return register_range("D", in);
    case Op::kPopWmmxData: return register_range("wR", in);
    case Op::kPopWmmxControl: return "pop " + register_list("wCGR", in.mask);
    case Op::kPopPacCode: return "pop {ra_auth_code}";
    case Op::kPacModifier: return "vsp as modifier for PAC validation";
    case Op::kUnsupported: return "[unsupported opcode]";
    case Op::kTruncated: return "";
  }
  return "";
}

ArmUnwindDump readelf_arm_unwind(const elf::ElfFile& file) { return Dumper(file, true).run(); }

ArmUnwindDump arm_unwind_text(const elf::ElfFile& file) { return Dumper(file, false).run(); }

}  // namespace framewalk::dump

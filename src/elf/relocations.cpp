#include "elf/relocations.hpp"

#include <optional>

namespace framewalk::elf {

namespace {

constexpr uint32_t kShtRela = 4, kShtRel = 9;
constexpr uint8_t kSttSection = 3, kSttCommon = 5;

struct RelocationKind {
  unsigned size;  // bytes written
  bool pc_relative;
};

// The relocation types readelf applies to debug sections, per machine.
std::optional<RelocationKind> kind_of(uint16_t machine, uint32_t type) {
  if (machine == kEmX86_64) {
    switch (type) {
      case 1: return RelocationKind{8, false};   // R_X86_64_64
      case 2: return RelocationKind{4, true};    // R_X86_64_PC32
      case 10: return RelocationKind{4, false};  // R_X86_64_32
      case 24: return RelocationKind{8, true};   // R_X86_64_PC64
    }
  } else if (machine == kEm386) {
    switch (type) {
      case 1: return RelocationKind{4, false};  // R_386_32
      case 2: return RelocationKind{4, true};   // R_386_PC32
    }
  } else if (machine == kEmAarch64) {
    switch (type) {
      case 257: return RelocationKind{8, false};  // R_AARCH64_ABS64
      case 258: return RelocationKind{4, false};  // R_AARCH64_ABS32
      case 260: return RelocationKind{8, true};   // R_AARCH64_PREL64
      case 261: return RelocationKind{4, true};   // R_AARCH64_PREL32
    }
  } else if (machine == kEmArm) {
    switch (type) {
      case 2: return RelocationKind{4, false};  // R_ARM_ABS32
      case 3: return RelocationKind{4, true};   // R_ARM_REL32
    }
  }
  return std::nullopt;
}

bool is_none(uint16_t machine, uint32_t type) {
  switch (machine) {
    case kEmX86_64:
    case kEm386:
    case kEmArm: return type == 0;
    case kEmAarch64: return type == 0 || type == 256;  // R_AARCH64_NONE, and its old number
    default: return false;
  }
}

uint64_t load(const uint8_t* p, unsigned size, Endian endian) {
  uint64_t v = 0;
  for (unsigned i = 0; i < size; ++i) {
    const unsigned shift = endian == Endian::kLittle ? 8 * i : 8 * (size - 1 - i);
    v |= uint64_t{p[i]} << shift;
  }
  return v;
}

void store(uint8_t* p, unsigned size, Endian endian, uint64_t v) {
  for (unsigned i = 0; i < size; ++i) {
    const unsigned shift = endian == Endian::kLittle ? 8 * i : 8 * (size - 1 - i);
    p[i] = static_cast<uint8_t>(v >> shift);
  }
}

struct Symbol {
  uint8_t type;
  uint64_t value;
};

Result<Symbol> symbol_at(const ElfFile& file, Bytes symtab, uint64_t index) {
  const size_t entry = file.is_64() ? 24 : 16;
  ByteReader r(symtab, file.endian());
  FW_CHECK(r.seek(static_cast<size_t>(index * entry)));
  FW_CHECK(r.skip(4));  // st_name
  Symbol sym{};
  if (file.is_64()) {
    FW_TRY(uint8_t info, r.u8());
    FW_CHECK(r.skip(3));  // st_other, st_shndx
    FW_TRY(sym.value, r.u64());
    sym.type = info & 0xf;
  } else {
    FW_TRY(uint32_t value, r.u32());
    FW_CHECK(r.skip(4));  // st_size
    FW_TRY(uint8_t info, r.u8());
    sym.value = value;
    sym.type = info & 0xf;
  }
  return sym;
}

}  // namespace

Result<std::vector<uint8_t>> relocated_contents(const ElfFile& file, const Section& target, Bytes contents,
                                                RelocationCounts* counts) {
  std::vector<uint8_t> out(contents.begin(), contents.end());
  RelocationCounts local;
  RelocationCounts& tally = counts ? *counts : local;
  const auto& sections = file.sections();
  for (const Section& rel : sections) {
    if ((rel.type != kShtRel && rel.type != kShtRela) || rel.info != target.index || rel.size == 0 ||
        rel.link >= sections.size())
      continue;
    const Section& symsec = sections[rel.link];
    if (symsec.type != kShtSymtab && symsec.type != kShtDynsym) continue;
    FW_TRY(Bytes relocs, file.section_data(rel));
    FW_TRY(Bytes symtab, file.section_data(symsec));
    const bool rela = rel.type == kShtRela;
    const unsigned word = file.address_size();
    const size_t entry = word * (rela ? 3 : 2);
    const uint64_t symbol_count = symtab.size() / (file.is_64() ? 24 : 16);
    ByteReader r(relocs, file.endian());
    while (r.remaining() >= entry) {
      FW_TRY(uint64_t place, r.address(word));
      FW_TRY(uint64_t info, r.address(word));
      uint64_t addend = 0;
      if (rela) { FW_TRY(addend, r.address(word)); }
      const uint32_t type = static_cast<uint32_t>(file.is_64() ? info & 0xffffffff : info & 0xff);
      const uint64_t symbol_index = file.is_64() ? info >> 32 : info >> 8;
      if (is_none(file.machine(), type)) continue;
      const auto kind = kind_of(file.machine(), type);
      if (!kind || place > out.size() || out.size() - place < kind->size || symbol_index >= symbol_count) {
        ++tally.skipped;
        continue;
      }
      FW_TRY(Symbol sym, symbol_at(file, symtab, symbol_index));
      // readelf refuses targets such as STT_FILE, STT_TLS and STT_GNU_IFUNC.
      if (symbol_index != 0 && sym.type > kSttSection && sym.type != kSttCommon) {
        ++tally.skipped;
        continue;
      }
      uint8_t* where = out.data() + place;
      // REL keeps the addend in the place itself.
      if (!rela) addend = load(where, kind->size, file.endian());
      uint64_t value = sym.value + addend;
      if (kind->pc_relative) value -= place;
      store(where, kind->size, file.endian(), value);
      ++tally.applied;
    }
  }
  return out;
}

}  // namespace framewalk::elf

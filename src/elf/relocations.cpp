#include "elf/relocations.hpp"

#include <optional>

namespace framewalk::elf {

namespace {

constexpr uint32_t kShtRela = 4, kShtRel = 9;
constexpr uint8_t kSttSection = 3, kSttCommon = 5;

// How a relocation's value is formed and stored, as readelf's
// apply_relocations forms it. S: the symbol's value; A: the addend (RELA's
// r_addend; REL's is the place's contents); P: the place (an offset: every
// section is at address 0).
enum class Operation : uint8_t {
  kAbsolute,    // S + A
  kPcRelative,  // S + A - P
  kAdd,         // in place: contents + A + S (RISC-V ADD8..ADD64)
  kSubtract,    // in place: contents + A - S (RISC-V SUB8..SUB64)
  kSet6,        // the low 6 bits of S + A; the top 2 bits of the byte kept (RISC-V SET6)
  kSubtract6,   // in place, 6 bits: (contents & 0x3f) + A - S; the top 2 bits kept (RISC-V SUB6)
};

struct RelocationKind {
  unsigned size;  // bytes written
  Operation operation;
};

constexpr uint16_t kEmS390Old = 0xa390;  // EM_S390's number before one was assigned

struct MachineRelocation {
  uint16_t machine;
  uint32_t type;
  RelocationKind kind;
};

// The relocation types readelf applies to debug sections, per machine
// (binutils' is_{32,64}bit_{abs,pcrel}_reloc, is_{6,8,16}bit_abs_reloc and
// the RISC-V in-place add/sub kinds). Others are left as they are: readelf
// applies neither R_RISCV_SET32 nor the ULEB128 pair.
constexpr MachineRelocation kRelocations[] = {
    {kEmX86_64, 1, {8, Operation::kAbsolute}},     // R_X86_64_64
    {kEmX86_64, 2, {4, Operation::kPcRelative}},   // R_X86_64_PC32
    {kEmX86_64, 10, {4, Operation::kAbsolute}},    // R_X86_64_32
    {kEmX86_64, 24, {8, Operation::kPcRelative}},  // R_X86_64_PC64
    {kEm386, 1, {4, Operation::kAbsolute}},        // R_386_32
    {kEm386, 2, {4, Operation::kPcRelative}},      // R_386_PC32
    {kEmAarch64, 257, {8, Operation::kAbsolute}},    // R_AARCH64_ABS64
    {kEmAarch64, 258, {4, Operation::kAbsolute}},    // R_AARCH64_ABS32
    {kEmAarch64, 260, {8, Operation::kPcRelative}},  // R_AARCH64_PREL64
    {kEmAarch64, 261, {4, Operation::kPcRelative}},  // R_AARCH64_PREL32
    {kEmArm, 2, {4, Operation::kAbsolute}},    // R_ARM_ABS32
    {kEmArm, 3, {4, Operation::kPcRelative}},  // R_ARM_REL32
    {kEmPpc, 1, {4, Operation::kAbsolute}},      // R_PPC_ADDR32
    {kEmPpc, 26, {4, Operation::kPcRelative}},   // R_PPC_REL32
    {kEmPpc64, 1, {4, Operation::kAbsolute}},    // R_PPC64_ADDR32
    {kEmPpc64, 26, {4, Operation::kPcRelative}}, // R_PPC64_REL32
    {kEmPpc64, 38, {8, Operation::kAbsolute}},   // R_PPC64_ADDR64
    {kEmPpc64, 44, {8, Operation::kPcRelative}}, // R_PPC64_REL64
    {kEmS390, 4, {4, Operation::kAbsolute}},      // R_390_32
    {kEmS390, 5, {4, Operation::kPcRelative}},    // R_390_PC32
    {kEmS390, 22, {8, Operation::kAbsolute}},     // R_390_64
    {kEmS390, 23, {8, Operation::kPcRelative}},   // R_390_PC64
    {kEmS390Old, 4, {4, Operation::kAbsolute}},
    {kEmS390Old, 5, {4, Operation::kPcRelative}},
    {kEmS390Old, 22, {8, Operation::kAbsolute}},
    {kEmS390Old, 23, {8, Operation::kPcRelative}},
    {kEmRiscv, 1, {4, Operation::kAbsolute}},     // R_RISCV_32
    {kEmRiscv, 2, {8, Operation::kAbsolute}},     // R_RISCV_64
    {kEmRiscv, 33, {1, Operation::kAdd}},         // R_RISCV_ADD8
    {kEmRiscv, 34, {2, Operation::kAdd}},         // R_RISCV_ADD16
    {kEmRiscv, 35, {4, Operation::kAdd}},         // R_RISCV_ADD32
    {kEmRiscv, 36, {8, Operation::kAdd}},         // R_RISCV_ADD64
    {kEmRiscv, 37, {1, Operation::kSubtract}},    // R_RISCV_SUB8
    {kEmRiscv, 38, {2, Operation::kSubtract}},    // R_RISCV_SUB16
    {kEmRiscv, 39, {4, Operation::kSubtract}},    // R_RISCV_SUB32
    {kEmRiscv, 40, {8, Operation::kSubtract}},    // R_RISCV_SUB64
    {kEmRiscv, 52, {1, Operation::kSubtract6}},   // R_RISCV_SUB6
    {kEmRiscv, 53, {1, Operation::kSet6}},        // R_RISCV_SET6
    {kEmRiscv, 54, {1, Operation::kAbsolute}},    // R_RISCV_SET8
    {kEmRiscv, 55, {2, Operation::kAbsolute}},    // R_RISCV_SET16
    {kEmRiscv, 57, {4, Operation::kPcRelative}},  // R_RISCV_32_PCREL
    // SPARC: readelf applies the same kinds for the three SPARC machines.
    {kEmSparc, 3, {4, Operation::kAbsolute}},     // R_SPARC_32
    {kEmSparc, 6, {4, Operation::kPcRelative}},   // R_SPARC_DISP32
    {kEmSparc, 23, {4, Operation::kAbsolute}},    // R_SPARC_UA32
    {kEmSparc, 32, {8, Operation::kAbsolute}},    // R_SPARC_64
    {kEmSparc, 46, {8, Operation::kPcRelative}},  // R_SPARC_DISP64
    {kEmSparc, 54, {8, Operation::kAbsolute}},    // R_SPARC_UA64
};

std::optional<RelocationKind> kind_of(uint16_t machine, uint32_t type) {
  if (machine == kEmSparc32plus || machine == kEmSparcv9) machine = kEmSparc;
  for (const MachineRelocation& r : kRelocations)
    if (r.machine == machine && r.type == type) return r.kind;
  return std::nullopt;
}

bool is_none(uint16_t machine, uint32_t type) {
  switch (machine) {
    case kEmX86_64:
    case kEm386:
    case kEmArm:
    case kEmPpc:
    case kEmPpc64:
    case kEmS390:
    case kEmS390Old:
    case kEmRiscv:
    case kEmSparc:
    case kEmSparc32plus:
    case kEmSparcv9: return type == 0;
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
      if (rela) {
        FW_TRY(addend, r.address(word));
        // ELF32's r_addend is signed: widened as readelf widens it (it shows in 8-byte places).
        if (!file.is_64()) addend = static_cast<uint64_t>(static_cast<int64_t>(static_cast<int32_t>(addend)));
      }
      uint32_t type = static_cast<uint32_t>(file.is_64() ? info & 0xffffffff : info & 0xff);
      // SPARC v9 keeps a data field above the type's low 8 bits (ELF64_R_TYPE_ID).
      if (file.machine() == kEmSparcv9) type &= 0xff;
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
      const uint64_t contents_there = load(where, kind->size, file.endian());
      // REL keeps the addend in the place itself; the in-place kinds add
      // the place's contents to RELA's addend.
      const Operation op = kind->operation;
      const bool in_place = op == Operation::kAdd || op == Operation::kSubtract || op == Operation::kSubtract6;
      if (!rela || in_place) addend += op == Operation::kSubtract6 ? contents_there & 0x3f : contents_there;
      uint64_t value = 0;
      switch (op) {
        case Operation::kAbsolute:
        case Operation::kAdd: value = addend + sym.value; break;
        case Operation::kPcRelative: value = addend + sym.value - place; break;
        case Operation::kSubtract: value = addend - sym.value; break;
        case Operation::kSet6:
        case Operation::kSubtract6: {
          const uint64_t v = op == Operation::kSet6 ? addend + sym.value : addend - sym.value;
          value = (v & 0x3f) | (contents_there & 0xc0);
          break;
        }
      }
      store(where, kind->size, file.endian(), value);
      ++tally.applied;
    }
  }
  return out;
}

}  // namespace framewalk::elf

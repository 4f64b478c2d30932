// fuzz_exidx: the bytes as an ARM ELF file dumped as `readelf -u` and as text;
// then, whatever the header, as a bare .ARM.exidx whose words also serve as
// .ARM.extab, every entry read, its instructions decoded, and its row made by
// the executor (ehabi/exidx_rows) as the step loop makes it, with a lookup
// for the PC of each entry.
#include <vector>

#include "base/mapped_file.hpp"
#include "dump/arm_unwind.hpp"
#include "ehabi/exidx.hpp"
#include "ehabi/exidx_rows.hpp"
#include "ehabi/unwind_instructions.hpp"
#include "elf/elf_file.hpp"
#include "fuzz_bodies.hpp"

namespace framewalk::fuzz {

namespace {

void check_decoding(const ehabi::OpcodeBytes& bytes) {
  FUZZ_CHECK(bytes.bytes.size() <= ehabi::kMaxOpcodeBytes);
  const auto instructions = ehabi::decode_instructions(bytes.bytes);
  size_t next = 0;
  for (const ehabi::Instruction& in : instructions) {
    // The instructions tile the bytes, in order, and only the last may be cut off.
    FUZZ_CHECK(in.offset == next && in.size >= 1);
    next += in.size;
    FUZZ_CHECK(next <= bytes.bytes.size());
    (void)ehabi::check_instruction(in, bytes.offset_of_byte(in.offset));
    (void)dump::instruction_text(in);
    if (in.op == ehabi::Op::kTruncated) FUZZ_CHECK(next == bytes.bytes.size());
  }
  FUZZ_CHECK(next == bytes.bytes.size());
}

// What every row of the executor must be, whatever the bytes.
void check_row(const Result<ehabi::EntryRow>& result, const UnwindRow& row) {
  if (!result) return;
  FUZZ_CHECK(row.cfa.kind == CfaKind::kRegisterOffset);
  FUZZ_CHECK(row.rule_count <= UnwindRow::kMaxRules);
  for (int i = 1; i < row.rule_count; ++i) FUZZ_CHECK(row.rules[i - 1].reg < row.rules[i].reg);
  if (*result == ehabi::EntryRow::kCannotUnwind) {
    const RegisterRule* ra = row.find(row.return_address_register);
    FUZZ_CHECK(ra && ra->kind == RuleKind::kUndefined);
    return;
  }
  FUZZ_CHECK(row.return_address_register == 14 || row.return_address_register == 15);
  if (row.return_address_register == 15) FUZZ_CHECK(row.find(15) != nullptr);
  FUZZ_CHECK(row.find(13) == nullptr);  // a pop of sp is refused
  for (int i = 0; i < row.rule_count; ++i) FUZZ_CHECK(row.rules[i].kind == RuleKind::kOffset);
}

void bare_tables(const uint8_t* data, size_t size) {
  const Endian endian = (size && (data[0] & 1)) ? Endian::kBig : Endian::kLittle;
  const ehabi::SectionWords words{Bytes(data, size), 0x10000, endian};
  const ehabi::IndexTable table(words);
  const ehabi::ExidxTables tables{words, words};
  UnwindRow row;
  for (uint64_t i = 0; i < table.size(); ++i) {
    auto entry = table.entry(i);
    FUZZ_CHECK(entry.ok());
    check_row(ehabi::entry_row(tables, *entry, entry->function + 4, &row), row);
    // The lookup finds an entry at or below the PC (the index need not be
    // sorted). The whole path, executor included, for the first entries only:
    // the executor has just run on this one, and CI time is counted.
    uint64_t next = 0;
    if (auto found = ehabi::find_entry(table, entry->function, &next)) {
      FUZZ_CHECK((found->function & ~uint64_t{1}) <= (entry->function & ~uint64_t{1}));
      if (i < 8) check_row(ehabi::row_for_pc(tables, entry->function, i & 1, &row), row);
    }
    if (entry->kind == ehabi::EntryKind::kInline) {
      check_decoding(ehabi::compact_opcodes(ehabi::read_header(entry->data_word, 0), nullptr, entry->offset + 4));
    } else if (entry->kind == ehabi::EntryKind::kTable) {
      const uint64_t offset = entry->table - words.address;
      auto first = words.word(offset);
      if (!first) continue;
      const ehabi::EntryHeader h = ehabi::read_header(*first, entry->table);
      if (h.model == ehabi::Model::kCompact) {
        check_decoding(ehabi::compact_opcodes(h, &words, offset));
      } else if (auto gnu = ehabi::gnu_personality_opcodes(words, offset)) {
        check_decoding(*gnu);
      }
    }
  }
}

}  // namespace

int fuzz_exidx(const uint8_t* data, size_t size) {
  auto file = elf::ElfFile::parse(FileImage::from_buffer(std::vector<uint8_t>(data, data + size)), "fuzz");
  if (file && (*file)->machine() == elf::kEmArm) {
    (void)dump::readelf_arm_unwind(**file);
    (void)dump::arm_unwind_text(**file);
  }
  bare_tables(data, size);
  return 0;
}

}  // namespace framewalk::fuzz

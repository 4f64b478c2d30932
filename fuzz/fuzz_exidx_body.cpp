// fuzz_exidx: the bytes as an ARM ELF file dumped as `readelf -u` and as text;
// then, whatever the header, as a bare .ARM.exidx whose words also serve as
// .ARM.extab, every entry read and its instructions decoded.
#include <vector>

#include "base/mapped_file.hpp"
#include "dump/arm_unwind.hpp"
#include "ehabi/exidx.hpp"
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

void bare_tables(const uint8_t* data, size_t size) {
  const Endian endian = (size && (data[0] & 1)) ? Endian::kBig : Endian::kLittle;
  const ehabi::SectionWords words{Bytes(data, size), 0x10000, endian};
  const ehabi::IndexTable table(words);
  for (uint64_t i = 0; i < table.size(); ++i) {
    auto entry = table.entry(i);
    FUZZ_CHECK(entry.ok());
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

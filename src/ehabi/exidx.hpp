// ARM EHABI tables: the index (.ARM.exidx, two words per function) and the
// exception-handling table entries it points to (.ARM.extab, or inline in the
// index). Reading them yields the entry's model (compact with a personality
// index, or generic with a personality routine's address) and its unwind
// instruction bytes in execution order; ehabi/unwind_instructions decodes
// those. Nothing here depends on symbols: which generic routines carry GNU
// unwind bytes is the caller's decision (it needs the routine's name).
#pragma once

#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "base/byte_reader.hpp"
#include "base/result.hpp"

namespace framewalk::ehabi {

inline constexpr uint32_t kShtArmExidx = 0x70000001;
inline constexpr uint32_t kExidxCantUnwind = 1;
inline constexpr uint64_t kIndexEntrySize = 8;

// prel31: bits 0-30 sign-extended from bit 30, plus the word's own address.
// In 64 bits, as readelf computes it, so that a hostile offset shows as it is.
uint64_t prel31_target(uint32_t word, uint64_t word_address);

// A section's bytes read as 32-bit words of the file's byte order.
struct SectionWords {
  Bytes data;
  uint64_t address = 0;  // sh_addr
  Endian endian = Endian::kLittle;

  // The word at `offset`; kTruncated (at `offset`) past the end.
  Result<uint32_t> word(uint64_t offset) const;
};

enum class EntryKind : uint8_t {
  kCantUnwind,  // data word EXIDX_CANTUNWIND
  kInline,      // data word bit 31 set: the compact table entry itself
  kTable,       // data word bit 31 clear: prel31 pointer to the table entry
};

struct IndexEntry {
  uint64_t offset = 0;  // of the entry within the index section
  uint32_t function_word = 0;
  uint32_t data_word = 0;
  uint64_t function = 0;  // prel31 target of function_word
  EntryKind kind = EntryKind::kCantUnwind;
  uint64_t table = 0;  // kTable: prel31 target of data_word

  // The EHABI requires bit 31 of the function word clear.
  bool corrupt_function_word() const { return (function_word & 0x80000000u) != 0; }
};

class IndexTable {
 public:
  explicit IndexTable(SectionWords section) : section_(section) {}
  // Whole entries only: trailing bytes are ignored, as readelf ignores them.
  uint64_t size() const { return section_.data.size() / kIndexEntrySize; }
  Result<IndexEntry> entry(uint64_t index) const;
  const SectionWords& section() const { return section_; }

 private:
  SectionWords section_;
};

enum class Model : uint8_t { kCompact, kGeneric };

// The first word of a table entry (or an inline data word).
struct EntryHeader {
  Model model = Model::kCompact;
  uint32_t word = 0;
  // kCompact: bits 24-30, as readelf reads them (3..127 are reserved).
  uint8_t personality_index = 0;
  // kCompact: bits 28-30 must be clear.
  bool corrupt_compact_word = false;
  // kGeneric: the personality routine (prel31 target).
  uint64_t personality = 0;
};

EntryHeader read_header(uint32_t word, uint64_t word_address);

// The unwind instruction bytes of one entry, in execution order (the most
// significant byte of each word first).
struct OpcodeBytes {
  std::vector<uint8_t> bytes;
  void push_back(uint8_t b) { bytes.push_back(b); }
  // A word the entry declares lies past the end of its section (or the entry
  // is inline and declares more words): the bytes stop at `missing_word`.
  bool cut_short = false;
  uint64_t missing_word = 0;  // section offset of the first word that is not there
  // Where byte i came from: word (i + skipped) / 4 after `first_word`.
  uint64_t first_word = 0;
  unsigned skipped = 0;

  uint64_t offset_of_byte(size_t i) const { return first_word + 4 * ((i + skipped) / 4); }
};

// The most bytes an entry can hold: 255 extra words after the first.
inline constexpr size_t kMaxOpcodeBytes = 4 + 255 * 4;

// A compact entry's bytes: index 0 has three in its first word; 1 and 2 have
// a count N in bits 16-23, two bytes, then N more words. `words` holds the
// entry (null for an inline one), its first word at `first_word_offset`.
// Indexes 3 and above have no defined layout: no bytes.
OpcodeBytes compact_opcodes(const EntryHeader& header, const SectionWords* words, uint64_t first_word_offset);

// A generic entry of a GNU personality routine (__gxx_personality_v0 and
// kin): the word after the routine's has the layout of a long compact word (N
// in bits 24-31, three bytes, then N more words). Fails with kTruncated when
// that word is past the end of the section.
Result<OpcodeBytes> gnu_personality_opcodes(const SectionWords& words, uint64_t first_word_offset);

// The same bytes in a fixed buffer, for the unwinding path, which never
// allocates (about 1 KiB: at most kMaxOpcodeBytes).
struct OpcodeBuffer {
  uint8_t bytes[kMaxOpcodeBytes];
  uint16_t size = 0;
  bool cut_short = false;
  uint64_t missing_word = 0;
  uint64_t first_word = 0;
  unsigned skipped = 0;

  OpcodeBuffer() {}  // leaves `bytes` uninitialised: only [0, size) is read
  void push_back(uint8_t b) {
    if (size < kMaxOpcodeBytes) bytes[size++] = b;
  }
  std::span<const uint8_t> view() const { return {bytes, size}; }
  uint64_t offset_of_byte(size_t i) const { return first_word + 4 * ((i + skipped) / 4); }
};
void compact_opcodes(const EntryHeader& header, const SectionWords* words, uint64_t first_word_offset,
                     OpcodeBuffer* out);
Result<void> gnu_personality_opcodes(const SectionWords& words, uint64_t first_word_offset, OpcodeBuffer* out);

// The routines whose data start with unwind bytes in that layout, as readelf
// recognises them (by prefix).
bool is_gnu_personality(std::string_view name);

}  // namespace framewalk::ehabi

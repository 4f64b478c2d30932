#include "ehabi/exidx.hpp"

#include <string_view>

namespace framewalk::ehabi {

uint64_t prel31_target(uint32_t word, uint64_t word_address) {
  uint64_t offset = word & 0x7fffffffu;
  if (offset & 0x40000000u) offset |= ~uint64_t{0x7fffffff};
  return offset + word_address;
}

Result<uint32_t> SectionWords::word(uint64_t offset) const {
  if (data.size() < 4 || offset > data.size() - 4) return Error{ErrorCode::kTruncated, offset};
  const uint8_t* p = data.data() + offset;
  if (endian == Endian::kLittle)
    return uint32_t{p[0]} | uint32_t{p[1]} << 8 | uint32_t{p[2]} << 16 | uint32_t{p[3]} << 24;
  return uint32_t{p[3]} | uint32_t{p[2]} << 8 | uint32_t{p[1]} << 16 | uint32_t{p[0]} << 24;
}

Result<IndexEntry> IndexTable::entry(uint64_t index) const {
  if (index >= size()) return Error{ErrorCode::kTruncated, index * kIndexEntrySize};
  IndexEntry e;
  e.offset = index * kIndexEntrySize;
  FW_TRY(e.function_word, section_.word(e.offset));
  FW_TRY(e.data_word, section_.word(e.offset + 4));
  e.function = prel31_target(e.function_word, section_.address + e.offset);
  if (e.data_word == kExidxCantUnwind) {
    e.kind = EntryKind::kCantUnwind;
  } else if (e.data_word & 0x80000000u) {
    e.kind = EntryKind::kInline;
  } else {
    e.kind = EntryKind::kTable;
    e.table = prel31_target(e.data_word, section_.address + e.offset + 4);
  }
  return e;
}

EntryHeader read_header(uint32_t word, uint64_t word_address) {
  EntryHeader h;
  h.word = word;
  if (word & 0x80000000u) {
    h.model = Model::kCompact;
    h.personality_index = (word >> 24) & 0x7f;
    h.corrupt_compact_word = (word & 0x70000000u) != 0;
  } else {
    h.model = Model::kGeneric;
    h.personality = prel31_target(word, word_address);
  }
  return h;
}

namespace {

// OpcodeBytes and OpcodeBuffer are filled by the same code: both have
// push_back, cut_short, missing_word, first_word and skipped.

// Appends the bytes of `word` after its first `skip`, most significant first.
template <typename Out>
void append_word(Out& out, uint32_t word, unsigned skip) {
  for (unsigned i = skip; i < 4; ++i) out.push_back(static_cast<uint8_t>(word >> (24 - 8 * i)));
}

// Appends `count` words that follow `first_word_offset`, stopping at the first one missing.
template <typename Out>
void append_words(Out& out, const SectionWords* words, uint64_t first_word_offset, unsigned count) {
  for (unsigned n = 1; n <= count; ++n) {
    const uint64_t at = first_word_offset + 4 * n;
    Result<uint32_t> w = words ? words->word(at) : Result<uint32_t>(Error{ErrorCode::kTruncated, at});
    if (!w) {
      out.cut_short = true;
      out.missing_word = at;
      return;
    }
    append_word(out, *w, 0);
  }
}

template <typename Out>
void fill_compact(Out& out, const EntryHeader& header, const SectionWords* words, uint64_t first_word_offset) {
  out.first_word = first_word_offset;
  if (header.personality_index == 0) {
    out.skipped = 1;
    append_word(out, header.word, 1);
  } else if (header.personality_index < 3) {
    out.skipped = 2;
    append_word(out, header.word, 2);
    append_words(out, words, first_word_offset, (header.word >> 16) & 0xff);
  }
}

template <typename Out>
Result<void> fill_gnu_personality(Out& out, const SectionWords& words, uint64_t first_word_offset) {
  out.first_word = first_word_offset + 4;
  out.skipped = 1;
  FW_TRY(uint32_t count_word, words.word(first_word_offset + 4));
  append_word(out, count_word, 1);
  append_words(out, &words, first_word_offset + 4, count_word >> 24);
  return ok();
}

}  // namespace

OpcodeBytes compact_opcodes(const EntryHeader& header, const SectionWords* words, uint64_t first_word_offset) {
  OpcodeBytes out;
  fill_compact(out, header, words, first_word_offset);
  return out;
}

Result<OpcodeBytes> gnu_personality_opcodes(const SectionWords& words, uint64_t first_word_offset) {
  OpcodeBytes out;
  FW_CHECK(fill_gnu_personality(out, words, first_word_offset));
  return out;
}

void compact_opcodes(const EntryHeader& header, const SectionWords* words, uint64_t first_word_offset,
                     OpcodeBuffer* out) {
  out->size = 0;
  out->cut_short = false;
  fill_compact(*out, header, words, first_word_offset);
}

Result<void> gnu_personality_opcodes(const SectionWords& words, uint64_t first_word_offset, OpcodeBuffer* out) {
  out->size = 0;
  out->cut_short = false;
  return fill_gnu_personality(*out, words, first_word_offset);
}

bool is_gnu_personality(std::string_view name) {
  for (std::string_view gnu : {"__gcc_personality_v0", "__gxx_personality_v0", "__gcj_personality_v0",
                               "__gnu_objc_personality_v0"})
    if (name.starts_with(gnu)) return true;
  return false;
}

}  // namespace framewalk::ehabi

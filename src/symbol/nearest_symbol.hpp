// The symbol-table answer binutils gives for an address (bfd's
// elf_find_function, what addr2line falls back on without DWARF and names
// functions by): among the symbols of the address's section that may be
// functions (not sections, files, objects or TLS; size 0 counting as 1; not
// the hidden local zero-size NOTYPE marks annobin leaves), the one starting
// last at or below the address, the larger on a tie, with no upper bound:
// an address past a function's end still gets its name. The file name is
// the STT_FILE symbol before it, for local symbols, and for global ones only
// when no other symbol came between (as ld orders them, never).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string_view>
#include <vector>

#include "elf/elf_file.hpp"

namespace framewalk::symbol {

struct NearestSymbol {
  std::string_view name;
  std::optional<std::string_view> file;  // the STT_FILE name binutils would print, if any
  uint64_t address = 0;
  uint64_t size = 0;  // st_size
  // The name llvm-symbolizer gives among the symbols at `address`: the
  // largest st_size, then the last in the table (its stable sort by address
  // and size keeps the last).
  std::string_view llvm_name;
  // The STT_FILE name llvm-symbolizer gives with `llvm_name`: local symbols only, never empty.
  std::optional<std::string_view> llvm_file;
};

class NearestSymbols {
 public:
  // From .symtab, or .dynsym when there is no .symtab (as bfd's canonical table).
  static NearestSymbols load(std::shared_ptr<const elf::ElfFile> file);
  // `section` is the index of the allocated section containing `address`.
  std::optional<NearestSymbol> lookup(uint32_t section, uint64_t address) const;
  size_t size() const { return entries_.size(); }

 private:
  static constexpr uint32_t kNoFile = UINT32_MAX;
  struct Entry {  // 40 bytes; names are offsets into the string table, files indexes into files_
    uint32_t section;
    uint32_t name, llvm_name;
    uint32_t file, llvm_file;  // kNoFile: none
    uint64_t address;
    uint64_t st_size;
  };
  std::optional<std::string_view> file_name(uint32_t index) const {
    if (index == kNoFile) return std::nullopt;
    return files_[index];
  }
  std::string_view name_at(uint32_t offset) const;

  std::shared_ptr<const elf::ElfFile> file_;
  Bytes strings_;
  std::vector<Entry> entries_;  // by (section, address): the winner of each address only
  std::vector<std::string_view> files_;  // STT_FILE names
};

}  // namespace framewalk::symbol

// Function symbols of one ELF file (.symtab and .dynsym merged), sorted for lookup.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "elf/elf_file.hpp"

namespace framewalk::elf {

struct Symbol {
  uint64_t address = 0;
  uint64_t size = 0;
  std::string_view name;  // points into the ElfFile's image
  uint8_t binding = 0;    // STB_LOCAL 0, STB_GLOBAL 1, STB_WEAK 2
  uint64_t limit = 0;     // for size-0 symbols: the end of their section (0: unknown)
};

// One entry of a symbol table (.symtab, .dynsym) as stored, ELF32 or ELF64.
struct RawSymbol {
  uint32_t name = 0;  // offset in the linked string table
  uint8_t info = 0;   // binding << 4 | type
  uint8_t other = 0;  // visibility in the low bits
  uint16_t shndx = 0;
  uint64_t value = 0;
  uint64_t size = 0;
};
// Entry `index` of a symbol table's bytes; the caller keeps `index` below
// data.size() / (file.is_64() ? 24 : 16).
RawSymbol raw_symbol(const ElfFile& file, Bytes data, size_t index);

// The link-time value of the data object `name` (STT_OBJECT) of at least
// `min_size` bytes that `file` defines, from .dynsym, else .symtab; nullopt
// when neither defines it. (Type and size are checked before the name: a
// pass over a large program's symbols reads few names.)
std::optional<uint64_t> defined_object(const ElfFile& file, std::string_view name, uint64_t min_size);
// defined_object for several names in one pass over the tables: each
// query's `value` is set where the file defines it (a query with a value
// already is not looked for).
struct ObjectQuery {
  std::string_view name;
  uint64_t min_size = 0;
  std::optional<uint64_t> value;
};
void find_defined_objects(const ElfFile& file, std::span<ObjectQuery> queries);

struct SymbolMatch {
  const Symbol* symbol;
  uint64_t offset;  // address - symbol->address
};

class SymbolTable {
 public:
  // Reads function-like symbols (FUNC, GNU_IFUNC) of `file`. Keeps `file` alive.
  static SymbolTable load(std::shared_ptr<const ElfFile> file);
  // The symbols of several files for the same addresses (a library, its
  // .gnu_debugdata, its separate debug file), sorted once.
  static SymbolTable load(std::vector<std::shared_ptr<const ElfFile>> files);
  // Adds the symbols of another file for the same addresses (e.g. .gnu_debugdata).
  void merge(std::shared_ptr<const ElfFile> file);

  // The symbol covering `address`; a symbol of size 0 covers up to the next one.
  std::optional<SymbolMatch> lookup(uint64_t address) const;
  size_t size() const { return symbols_.size(); }
  const std::vector<Symbol>& symbols() const { return symbols_; }

 private:
  void add_file(std::shared_ptr<const ElfFile> file);
  void add_from(const ElfFile& file, const Section& table);
  // "name@plt" for each PLT stub (x86-64 .plt / .plt.sec with .rela.plt), as gdb names them.
  void add_plt_stubs(const ElfFile& file);
  void finish();

  std::vector<std::shared_ptr<const ElfFile>> files_;
  std::vector<Symbol> symbols_;
  std::vector<std::unique_ptr<std::string>> owned_names_;  // for synthesized names
};

}  // namespace framewalk::elf

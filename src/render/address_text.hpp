// What `framewalk addr2line` answers for one address of an ELF file: its
// function, file, line and the calls inlined there, as binutils addr2line
// prints them (with its quirks: the names it takes from ELF symbols, the
// paths of DWARF 5 units) or as llvm-symbolizer's JSON names them. A layer
// of its own beside the stack renderer, for every user of answers by
// address (the command, a profiler's reports).
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "elf/elf_file.hpp"
#include "symbol/inline_symbolizer.hpp"

namespace framewalk {

struct AddressAnswerOptions {
  bool json = false;       // llvm-symbolizer's names, framewalk's JSON; else binutils' text
  bool addresses = false;  // -a: the address first
  bool functions = false;  // -f
  bool demangle = false;   // -C
  bool basenames = false;  // -s
  bool pretty = false;     // -p: one line
  bool inlines = false;    // -i: the inlined calls too
};

class AddressAnswers;

// Answers for the link-time addresses of one file (its DWARF, or its
// separate debug file's, and its symbol tables).
class AddressAnswerer {
 public:
  AddressAnswerer(const AddressAnswerOptions& options, std::shared_ptr<const elf::ElfFile> file,
                  const std::string& path);
  ~AddressAnswerer();
  AddressAnswerer(const AddressAnswerer&) = delete;
  AddressAnswerer& operator=(const AddressAnswerer&) = delete;

  // Appends the answer for `address` to `out` (text lines, or one JSON object and a newline).
  void answer(uint64_t address, std::string& out);
  const symbol::InlineSymbolizer& dwarf() const;

 private:
  std::unique_ptr<AddressAnswers> impl_;
};

}  // namespace framewalk

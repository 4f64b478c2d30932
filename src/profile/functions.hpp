// The functions a profile's addresses are charged to: sorted, disjoint
// address ranges with names. From an ELF file's symbol table the ranges are
// gprof's: a function reaches up to the next function symbol (its padding
// included), the last one to the end of its symbol or section.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "elf/symbols.hpp"

namespace framewalk::profile {

struct FunctionRange {
  uint64_t start = 0;
  uint64_t end = 0;  // exclusive
  std::string name;
};

class FunctionTable {
 public:
  FunctionTable() = default;
  // Sorts the ranges; where two overlap, the earlier one is cut short.
  explicit FunctionTable(std::vector<FunctionRange> ranges);
  static FunctionTable from_symbols(const elf::SymbolTable& symbols);

  // Index of the range holding `address`, or -1.
  int64_t find(uint64_t address) const;
  const std::vector<FunctionRange>& ranges() const { return ranges_; }

 private:
  std::vector<FunctionRange> ranges_;
};

}  // namespace framewalk::profile

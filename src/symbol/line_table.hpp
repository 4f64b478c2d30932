// Every line program of a file as one table searchable by address: for an
// address, the row in force (file, line, column, discriminator). File names
// are resolved to paths the way binutils addr2line prints them: the unit's
// DW_AT_comp_dir, the file's directory and its name (an absolute directory or
// name stands alone). Where sequences overlap, the one starting first is kept
// and the others dropped. At the start every program is run once for its
// sequences' bounds only; a unit's rows and paths are made when an address
// first falls in one of its sequences (load; build makes them all at once),
// then kept. Safe to call from several threads.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.hpp"
#include "elf/elf_file.hpp"
#include "symbol/line_program.hpp"

namespace framewalk::symbol {

// How a file entry becomes a path: as binutils (dwarf2.c concat_filename)
// or as LLVM (DWARFDebugLine getFileNameByIndex) makes it. They differ in one
// case: a DWARF 5 file of directory 0 (the unit's directory) that is relative
// (glibc's "./iconv"): binutils puts DW_AT_comp_dir before it, LLVM does not.
enum class PathStyle : uint8_t { kBinutils, kLlvm };

struct LineLocation {
  std::string_view file;  // the resolved path; empty when the row names no file the unit has
  uint32_t line = 0;
  uint32_t column = 0;
  uint32_t discriminator = 0;
};

// A problem met while building: what, and where in .debug_line (or .debug_info).
struct LineProblem {
  Error error;
  const char* section;  // ".debug_line" or ".debug_info"
};

class LineTable {
 public:
  // Every unit of `sections.line`; units named by no root come with no comp_dir.
  // `comp_dirs`: (offset of a line program, the directory of its unit), sorted by offset.
  static LineTable build(const LineSections& sections,
                         const std::vector<std::pair<uint64_t, std::string_view>>& comp_dirs,
                         PathStyle style = PathStyle::kBinutils);
  // The line table of an ELF file: .debug_line, .debug_line_str, .debug_str
  // and the units' roots in .debug_info (sections decompressed by ElfFile).
  // `alt_str`: the supplementary (dwz) file's .debug_str, for a DW_AT_comp_dir in DW_FORM_GNU_strp_alt.
  static LineTable load(std::shared_ptr<const elf::ElfFile> file, PathStyle style = PathStyle::kBinutils,
                        Bytes alt_str = {});

  // The row in force at `address`, if a sequence covers it.
  std::optional<LineLocation> lookup(uint64_t address) const;

  // The paths of the unit whose program starts at `offset` in .debug_line,
  // by file index (made with the unit's rows); null when no unit starts there.
  // A unit's paths in one string (a path each is a std::string's 32 bytes
  // and an allocation, for names of 50).
  class UnitPaths {
   public:
    std::string_view operator[](size_t i) const { return {text_.data() + spans_[i].first, spans_[i].second}; }
    size_t size() const { return spans_.size(); }
    void push_back(std::string_view path) {
      spans_.emplace_back(static_cast<uint32_t>(text_.size()), static_cast<uint32_t>(path.size()));
      text_ += path;
    }
    void shrink_to_fit() {
      text_.shrink_to_fit();
      spans_.shrink_to_fit();
    }

   private:
    std::string text_;
    std::vector<std::pair<uint32_t, uint32_t>> spans_;  // offset, length
  };
  struct UnitFiles {
    const UnitPaths* paths;
    size_t header_files;  // those of the header; define_file adds the rest
    bool zero_based;      // DWARF 5 numbers files from 0, earlier versions from 1
  };
  std::optional<UnitFiles> unit_files(uint64_t offset) const;

  // Makes the rows and paths of every unit not made yet, in order, until
  // `stop` is set: on a thread beside one that looks addresses up, which
  // then finds them made (a unit being made is waited for, not made twice).
  void make_units(const std::atomic<bool>& stop) const;

  // Whether any sequence has rows (nothing is run for it).
  bool has_rows() const { return !kept_.empty(); }
  size_t row_count() const;  // makes every unit's rows
  size_t sequence_count() const { return sequences_; }
  const std::vector<LineProblem>& problems() const { return problems_; }
  // The start address of every row (end rows excluded), sorted: what the conformance test asks about.
  std::vector<uint64_t> row_addresses() const;

 private:
  static constexpr uint32_t kEndOfSequence = 0xffffffffu;
  static constexpr uint32_t kNoFile = 0xfffffffeu;
  struct Row {  // while a unit is made; kept packed (RowBlocks)
    uint64_t address;
    uint32_t file;  // index into its unit's paths, kNoFile, or kEndOfSequence
    uint32_t line;
    uint32_t column;
    uint32_t discriminator;
  };

  struct Sequence {  // a kept sequence: the `ordinal`th sequence with rows of unit `unit`
    uint64_t start, end;
    uint32_t unit, ordinal;
  };
  // A unit's rows, packed: runs of up to kRowsPerBlock rows, each run found
  // by its first row's address and decoded from there. A row is a byte of
  // flags and the line's change, the address's advance, and the fields
  // that changed: about 3 bytes, where a Row is 24 (a large program has
  // millions of rows).
  struct RowBlocks {
    static constexpr uint32_t kRowsPerBlock = 16;
    std::vector<uint8_t> bytes;
    std::vector<uint64_t> address;  // of each block's first row
    std::vector<uint32_t> offset;   // of each block in `bytes`; a block ends where the next begins
    void append(const Row* rows, size_t count);  // one sequence's rows, as blocks of their own
    // Calls `row` with each row of block `block` until it returns false.
    template <class F>
    void decode(uint32_t block, F&& row) const;
  };
  struct Unit {
    uint64_t offset = 0;  // of its header in .debug_line
    std::string_view comp_dir;
    std::once_flag made;
    // Made once: the blocks of each sequence with rows (first, count), by ordinal.
    RowBlocks rows;
    std::vector<std::pair<uint32_t, uint32_t>> sequences;
    UnitPaths paths;  // by Row::file
    size_t header_files = 0;
    bool zero_based = false;
  };
  // Every program run for its sequences' bounds; no unit made yet.
  static LineTable scan(const LineSections& sections,
                        const std::vector<std::pair<uint64_t, std::string_view>>& comp_dirs, PathStyle style);
  const Unit& made(uint32_t unit) const;

  std::shared_ptr<const elf::ElfFile> file_;  // keeps the sections the paths point into alive
  LineSections sections_;
  PathStyle style_ = PathStyle::kBinutils;
  std::vector<std::unique_ptr<Unit>> units_;
  std::vector<Sequence> kept_;  // sorted by start, disjoint
  size_t sequences_ = 0;
  std::vector<LineProblem> problems_;
};

// The path binutils (or LLVM) makes of a file entry.
std::string resolve_file_path(const LineHeader& header, const LineFileEntry& entry, std::string_view comp_dir,
                              PathStyle style = PathStyle::kBinutils);

}  // namespace framewalk::symbol

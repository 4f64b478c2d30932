// The call frame information of one ELF file, gathered from every place it can
// live: .eh_frame (with .eh_frame_hdr), .debug_frame, the MiniDebugInfo in
// .gnu_debugdata and a separate debug file.
#pragma once

#include <atomic>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "dwarf/cfa_program.hpp"
#include "dwarf/cfi_index.hpp"
#include "dwarf/cfi_section.hpp"
#include "elf/debug_file.hpp"
#include "elf/elf_file.hpp"

namespace framewalk {

struct CfiSource {
  std::string section_name;  // as in the file: ".eh_frame", ".debug_frame" or ".zdebug_frame"
  dwarf::CfiKind kind = dwarf::CfiKind::kEhFrame;
  std::string file_name;     // the file the section was read from
  std::shared_ptr<const elf::ElfFile> elf;  // keeps the bytes alive
  uint64_t file_offset = 0;  // of the section in `file_name` (0 when decompressed)
  bool decompressed = false;
  // A section of type NOBITS (a debug file made with --only-keep-debug): it has
  // no bytes, `section` is null. Kept so that dumps can say so.
  bool nobits = false;
  // The section's bytes with the object's relocations applied, when they were
  // (readelf-compatible dumps of relocatable objects); `section` views them.
  std::vector<uint8_t> relocated;
  std::unique_ptr<dwarf::CfiSection> section;
  std::unique_ptr<dwarf::EhFrameHdr> hdr;
  mutable std::atomic<const dwarf::CfiIndex*> index{nullptr};  // built on first lookup, owned

  // The FDE index, built on first use. Thread-safe. Once it is built (the
  // local back-end's refresh() builds every one), a call is one acquire load
  // and async-signal-safe. The call that builds it allocates, so it is not
  // for signal handlers; but it never waits for another thread, so a handler
  // that interrupts a build on its own thread cannot deadlock on it.
  const dwarf::CfiIndex& get_index() const;

  CfiSource() = default;
  CfiSource(const CfiSource&) = delete;
  CfiSource& operator=(const CfiSource&) = delete;
  ~CfiSource() { delete index.load(std::memory_order_relaxed); }
};

struct ElfCfiOptions {
  bool use_debug_frame = true;
  bool use_gnu_debugdata = true;
  bool use_separate_debug_file = true;
  // For dumping in the style of readelf: relative pointer encodings other than
  // pcrel are left unrelocated (bases of zero), and the separate debug file's
  // .eh_frame is listed too (readelf follows debug links); a relocatable
  // object's relocations are applied to its CFI sections, as readelf does.
  bool readelf_compatible = false;
  elf::DebugFileSearch search;
};

struct RowLookup {
  const CfiSource* source;
  const dwarf::Cie* cie;
  dwarf::Fde fde;
  UnwindRow row;
};

class ElfCfi {
 public:
  static Result<ElfCfi> load(std::shared_ptr<const elf::ElfFile> file, const ElfCfiOptions& options = {});

  const std::vector<std::unique_ptr<CfiSource>>& sources() const { return sources_; }
  const elf::ElfFile& elf() const { return *file_; }
  // Problems met while gathering (a missing debug file is not one).
  const std::vector<std::string>& notes() const { return notes_; }
  // The separate debug file that was found (empty if none).
  const std::string& separate_debug_file() const { return separate_debug_file_; }

  // The row in force at `pc` (a link-time address), from the first source that covers it.
  Result<RowLookup> lookup(uint64_t pc) const;

 private:
  void add_sections_of(std::shared_ptr<const elf::ElfFile> file, const ElfCfiOptions& options,
                       bool eh_frame_too);

  std::shared_ptr<const elf::ElfFile> file_;
  std::vector<std::unique_ptr<CfiSource>> sources_;
  std::vector<std::string> notes_;
  std::string separate_debug_file_;
};

}  // namespace framewalk

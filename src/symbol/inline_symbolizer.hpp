// Source frames of an address: the innermost inlined function at the line
// table's location, then each caller at the call site of the function it
// inlined, up to the physical subprogram (what addr2line -i and
// llvm-symbolizer print). Built on LineTable (.debug_line) and FunctionIndex
// (.debug_info); both lazy or built once, and safe to call from several threads.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "elf/debug_file.hpp"
#include "elf/elf_file.hpp"
#include "symbol/call_sites.hpp"
#include "symbol/debug_info.hpp"
#include "symbol/function_index.hpp"
#include "symbol/line_table.hpp"

namespace framewalk::symbol {

struct SourceFrame {
  std::string_view function;  // as .debug_info names it (linkage name, else DW_AT_name); empty: unknown
  bool linkage_name = false;  // `function` is a mangled linkage name
  bool final_name = false;    // binutils takes `function` as it is (see FunctionLevel::final_name)
  uint64_t function_entry = 0;  // the low address of the function's (or inlined instance's) first range
  uint64_t function_die = 0;    // the offset of its DIE in .debug_info (0: no DWARF function)
  std::string_view file;        // empty: unknown
  uint32_t line = 0;            // 0: unknown
  uint32_t column = 0;
  uint32_t discriminator = 0;  // of the line-table row (innermost frame only)
  bool inlined = false;        // this frame's code was inlined into the next frame
};

// The DWARF sections of an ELF file (decompressed, .zdebug_* too); problems reading them are appended.
DwarfSections dwarf_sections(const elf::ElfFile& file, std::vector<DwarfProblem>* problems);

class InlineSymbolizer {
 public:
  // The DWARF of `file`, opened from `path` (the separate debug file's, found
  // by build-id or debuglink, when `file` has no .debug_info); the dwz file
  // its .gnu_debugaltlink names, when it exists, for DW_FORM_GNU_*_alt.
  // Paths are made in `style` (binutils' or LLVM's, line_table.hpp). The
  // split units of skeleton units are read from `path`.dwp or their .dwo
  // files (symbol/split_dwarf.hpp), each when an address first falls in it.
  // `search`: where separate debug files (and dwz supplementary files) are looked for.
  static std::unique_ptr<InlineSymbolizer> load(std::shared_ptr<const elf::ElfFile> file, const std::string& path,
                                                PathStyle style = PathStyle::kBinutils,
                                                const elf::DebugFileSearch& search = {});
  // `program_path`: the program's file, for split DWARF (`<program_path>.dwp`,
  // .dwo files beside it); empty: split units are looked for only where their
  // skeletons name them.
  InlineSymbolizer(std::shared_ptr<const elf::ElfFile> dwarf, std::shared_ptr<const elf::ElfFile> supplementary,
                   PathStyle style = PathStyle::kBinutils, const std::string& program_path = {});

  // Innermost first; the last frame is the physical function. With no
  // DWARF function at `address` but a line-table row: one frame with an
  // empty `function`. Empty when neither knows the address.
  std::vector<SourceFrame> frames(uint64_t address) const;

  // The call-site view of this file (symbol/call_sites.hpp) for the search
  // gdb runs for the frames tail calls left off the stack: the call site at
  // a return address, a call site's target, the tail-call frames between a
  // callee and a caller's return address (file addresses of this module).
  // A target known by name only is the one function symbol of that name
  // (function_named). Valid as long as the symbolizer.
  ModuleCallGraph call_graph() const;
  // The address of the function symbols of .symtab and .dynsym of the
  // DWARF's file named `name` (aliases included; a versioned name counts
  // for its default version, `name@@V`, only); nullopt when none, or when
  // symbols of that name are at different addresses.
  std::optional<uint64_t> function_named(std::string_view name) const;
  const CallSiteIndex& call_sites() const { return *call_sites_; }

  // The file the DWARF was read from (the separate debug file when one was used).
  const elf::ElfFile& dwarf_file() const { return *dwarf_; }
  std::shared_ptr<const elf::ElfFile> dwarf_file_shared() const { return dwarf_; }
  bool has_debug_info() const { return !sections_.info.empty(); }
  const LineTable& lines() const { return lines_; }
  const FunctionIndex& functions() const { return *functions_; }
  // Problems of the line table and of .debug_info so far.
  std::vector<DwarfProblem> problems() const;

 private:
  std::shared_ptr<const elf::ElfFile> dwarf_, supplementary_;
  std::vector<DwarfProblem> section_problems_;
  DwarfSections sections_, alt_sections_;
  LineTable lines_;
  std::unique_ptr<FunctionIndex> functions_;
  std::unique_ptr<CallSiteIndex> call_sites_;
  struct Named {
    const InlineSymbolizer* self;
    std::optional<uint64_t> operator()(std::string_view name) const { return self->function_named(name); }
  } named_{this};
  mutable std::once_flag names_once_;
  mutable std::vector<std::pair<std::string_view, uint64_t>> names_;  // function symbols, sorted by name
};

}  // namespace framewalk::symbol

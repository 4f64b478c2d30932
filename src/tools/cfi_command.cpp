#include "tools/cfi_command.hpp"

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "dump/cfi_text.hpp"
#include "dump/readelf_frames.hpp"
#include "elf/symbols.hpp"
#include "unwind/elf_cfi.hpp"
#include "tools/messages.hpp"

namespace framewalk::tools {

namespace {

}  // namespace

int run_cfi_command(const CfiCommandOptions& options) {
  int status = 0;
  dump::TextWriter out(stdout);
  const bool readelf = options.format == "readelf";
  const bool json = options.format == "json";
  bool first_json = true;
  if (json && !options.pc) out.str("[");
  for (const std::string& path : options.files) {
    if (readelf && options.files.size() > 1) out.str("\nFile: ").str(path).ch('\n');
    auto file = elf::ElfFile::open(path);
    if (!file) {
      const Error e = file.error();
      if (e.code == ErrorCode::kIoError) report(path, std::strerror(static_cast<int>(e.offset)));
      else report(path, std::string(to_string(e.code)) + " at offset " + hex(e.offset));
      status = 1;
      continue;
    }
    ElfCfiOptions cfi_options;
    cfi_options.use_debug_frame = options.debug_frame;
    cfi_options.use_separate_debug_file = options.debug_frame;
    // readelf does not look inside .gnu_debugdata; its emulation must not either.
    cfi_options.use_gnu_debugdata = options.gnu_debugdata && !readelf;
    cfi_options.readelf_compatible = readelf;
    auto cfi = ElfCfi::load(*file, cfi_options);
    if (!cfi) {
      report(path, to_string(cfi.error().code));
      status = 1;
      continue;
    }
    for (const std::string& note : cfi->notes()) {
      // A note starts with the name of the file it is about (`path`, or the
      // separate debug file): "framewalk: FILE: ...", like every report.
      std::fflush(stdout);
      std::fprintf(stderr, "framewalk: %s\n", note.c_str());
      status = 1;
    }
    const arch::ArchInfo* arch = arch::arch_for_machine((*file)->machine());
    auto on_problem = [&](const dump::DumpProblem& p) {
      std::string where = p.source->section_name;
      std::string msg = std::string(to_string(p.error.code)) + " at offset " + hex(p.error.offset) + " of " +
                        where;
      if (!p.source->decompressed) msg += " (file offset " + hex(p.source->file_offset + p.error.offset) + ")";
      msg += ", in the record at " + hex(p.entry_offset);
      report(p.source->file_name, msg);
      status = 1;
    };
    std::optional<elf::SymbolTable> symbols;
    if (!readelf) {
      symbols = elf::SymbolTable::load(*file);
      if (auto mini = (*file)->gnu_debugdata()) symbols->merge(*mini);
      if (!cfi->separate_debug_file().empty())
        if (auto debug = elf::ElfFile::open(cfi->separate_debug_file())) symbols->merge(*debug);
    }
    if (options.pc) {
      auto hit = cfi->lookup(*options.pc);
      if (!hit) {
        report(path, "no unwind row for " + hex(*options.pc) + ": " + to_string(hit.error().code));
        status = 1;
        continue;
      }
      dump::write_row_at(out, *hit, *options.pc, arch, symbols ? &*symbols : nullptr, json);
      continue;
    }
    if (cfi->sources().empty() && !readelf) {
      report(path, "no .eh_frame or .debug_frame");
      status = 1;
    }
    for (const auto& source : cfi->sources()) {
      if (source->nobits) {
        if (readelf) out.str("section '").str(source->section_name).str("' has the NOBITS type - its contents are unreliable.\n");
        continue;
      }
      if (readelf) {
        dump::write_readelf_frames(out, *source, arch, !cfi->separate_debug_file().empty(), on_problem);
      } else if (json) {
        if (!first_json) out.str(",\n");
        first_json = false;
        dump::write_cfi_json(out, *source, arch, symbols ? &*symbols : nullptr, on_problem);
      } else {
        dump::write_cfi_text(out, *source, arch, symbols ? &*symbols : nullptr, on_problem);
      }
    }
  }
  if (json && !options.pc) out.str("]\n");
  out.flush();
  return status;
}

}  // namespace framewalk::tools

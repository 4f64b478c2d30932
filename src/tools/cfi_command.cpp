#include "tools/cfi_command.hpp"

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "base/mapped_file.hpp"
#include "dump/cfi_text.hpp"
#include "dump/readelf_frames.hpp"
#include "elf/archive.hpp"
#include "elf/symbols.hpp"
#include "dwarf/elf_cfi.hpp"
#include "tools/messages.hpp"

namespace framewalk::tools {

namespace {

std::string describe(const Error& e) {
  if (e.code == ErrorCode::kIoError) return std::strerror(static_cast<int>(e.offset));
  return std::string(to_string(e.code)) + " at offset " + hex(e.offset);
}

class CfiDumper {
 public:
  explicit CfiDumper(const CfiCommandOptions& options)
      : options_(options), readelf_(options.format == "readelf"), json_(options.format == "json") {}

  int run();

 private:
  void dump_path(const std::string& path);
  void dump_archive(const std::string& path, std::shared_ptr<const FileImage> image);
  // `in_archive`: a member without CFI is not a problem (objects of data only are common).
  void dump_elf(const std::shared_ptr<elf::ElfFile>& file, bool in_archive);

  const CfiCommandOptions& options_;
  const bool readelf_;
  const bool json_;
  dump::TextWriter out_{stdout};
  bool first_json_ = true;
  int status_ = 0;
};

int CfiDumper::run() {
  if (options_.pc) {
    // Every member of an archive starts its sections at 0: one address means nothing there.
    for (const std::string& path : options_.files) {
      auto image = FileImage::map(path);
      if (image && elf::is_archive((*image)->bytes())) {
        report(path, "--pc needs an executable, a shared library or a debug file, not an archive");
        return 2;
      }
    }
  }
  if (json_ && !options_.pc) out_.str("[");
  for (const std::string& path : options_.files) dump_path(path);
  if (json_ && !options_.pc) out_.str("]\n");
  out_.flush();
  return status_;
}

void CfiDumper::dump_path(const std::string& path) {
  auto image = FileImage::map(path);
  if (!image) {
    report(path, describe(image.error()));
    status_ = 1;
    return;
  }
  // readelf names each archive member itself, and never the archive.
  if (elf::is_archive((*image)->bytes())) return dump_archive(path, std::move(*image));
  auto file = elf::ElfFile::parse(std::move(*image), path);
  // readelf names the file once its magic is read, before the rest of the headers.
  const bool has_elf_magic = file || file.error().code != ErrorCode::kBadElf || file.error().offset != 0;
  if (readelf_ && options_.files.size() > 1 && has_elf_magic) out_.str("\nFile: ").str(path).ch('\n');
  if (!file) {
    report(path, describe(file.error()));
    status_ = 1;
    return;
  }
  dump_elf(*file, false);
}

void CfiDumper::dump_archive(const std::string& path, std::shared_ptr<const FileImage> image) {
  auto reader = elf::ArchiveReader::open(image->bytes());
  if (!reader) {
    report(path, describe(reader.error()));
    status_ = 1;
    return;
  }
  const bool thin = reader->kind() == elf::ArchiveKind::kThin;
  const size_t slash = path.rfind('/');
  const std::string directory = slash == std::string::npos ? "" : path.substr(0, slash + 1);
  for (;;) {
    auto member = reader->next();
    if (!member) {
      report(path, describe(member.error()));
      status_ = 1;
      return;
    }
    if (!*member) return;
    const elf::ArchiveMember& m = **member;
    // readelf's names: archive(member), and archive[member] for a thin
    // archive's; a short name without GNU's '/' as its field holds it,
    // padding and all.
    const bool padded = readelf_ && m.name_field.find('/') == std::string::npos && m.name_field.size() >= m.name.size() &&
                        m.name_field.compare(0, m.name.size(), m.name) == 0;
    const std::string name = path + (thin ? "[" : "(") + (padded ? m.name_field : m.name) + (thin ? "]" : ")");
    Result<std::shared_ptr<elf::ElfFile>> file = Error{ErrorCode::kBadElf, 0};
    std::string where;
    if (thin) {
      const std::string member_path = !m.name.empty() && m.name[0] == '/' ? m.name : directory + m.name;
      auto member_image = FileImage::map(member_path);
      if (member_image && elf::is_archive((*member_image)->bytes()))
        member_image = Error{ErrorCode::kNestedThinArchive, 0};
      if (!member_image) {
        report(name, member_path + ": " +
                         (member_image.error().code == ErrorCode::kIoError ? describe(member_image.error())
                                                                           : to_string(member_image.error().code)));
        status_ = 1;
        if (readelf_) return;  // as readelf, which stops at the first thin member it cannot open
        continue;
      }
      file = elf::ElfFile::parse(std::move(*member_image), name);
      where = " of " + member_path;
      if (!file && readelf_) {
        report(name, describe(file.error()) + where);
        status_ = 1;
        return;  // readelf opens a thin member as an ELF file, and stops when it cannot
      }
    } else {
      file = elf::ElfFile::parse(FileImage::slice(image, m.data_offset, m.data.size()), name);
      where = " of the member at archive offset " + hex(m.header_offset);
    }
    if (readelf_) out_.str("\nFile: ").str(name).ch('\n');
    if (!file) {
      report(name, describe(file.error()) + where);
      status_ = 1;
      continue;
    }
    dump_elf(*file, true);
  }
}

void CfiDumper::dump_elf(const std::shared_ptr<elf::ElfFile>& file, bool in_archive) {
  const std::string& path = file->name();
  ElfCfiOptions cfi_options;
  cfi_options.use_debug_frame = options_.debug_frame;
  // Objects inside archives have no debug links or build-ids to follow.
  cfi_options.use_separate_debug_file = options_.debug_frame && !in_archive;
  // readelf does not look inside .gnu_debugdata; its emulation must not either.
  cfi_options.use_gnu_debugdata = options_.gnu_debugdata && !readelf_;
  cfi_options.readelf_compatible = readelf_;
  auto cfi = ElfCfi::load(file, cfi_options);
  if (!cfi) {
    report(path, to_string(cfi.error().code));
    status_ = 1;
    return;
  }
  for (const std::string& note : cfi->notes()) {
    // A note starts with the name of the file it is about (`path`, or the
    // separate debug file): "framewalk: FILE: ...", like every report.
    std::fflush(stdout);
    std::fprintf(stderr, "framewalk: %s\n", note.c_str());
    status_ = 1;
  }
  const arch::ArchInfo* arch = arch::dwarf_arch_for(file->machine_key());
  auto on_problem = [&](const dump::DumpProblem& p) {
    std::string where = p.source->section_name;
    std::string msg = std::string(to_string(p.error.code)) + " at offset " + hex(p.error.offset) + " of " + where;
    if (!p.source->decompressed) msg += " (file offset " + hex(p.source->file_offset + p.error.offset) + ")";
    msg += ", in the record at " + hex(p.entry_offset);
    report(p.source->file_name, msg);
    status_ = 1;
  };
  std::optional<elf::SymbolTable> symbols;
  if (!readelf_) {
    symbols = elf::SymbolTable::load(file);
    if (auto mini = file->gnu_debugdata()) symbols->merge(*mini);
    if (!cfi->separate_debug_file().empty())
      if (auto debug = elf::ElfFile::open(cfi->separate_debug_file())) symbols->merge(*debug);
  }
  if (options_.pc) {
    auto hit = cfi->lookup(*options_.pc);
    if (!hit) {
      report(path, "no unwind row for " + hex(*options_.pc) + ": " + to_string(hit.error().code));
      status_ = 1;
      return;
    }
    dump::write_row_at(out_, *hit, *options_.pc, arch, symbols ? &*symbols : nullptr, json_);
    return;
  }
  if (cfi->sources().empty() && !readelf_ && !in_archive) {
    report(path, "no .eh_frame or .debug_frame");
    status_ = 1;
  }
  for (const auto& source : cfi->sources()) {
    if (source->nobits) {
      if (readelf_) out_.str("section '").str(source->section_name).str("' has the NOBITS type - its contents are unreliable.\n");
      continue;
    }
    if (readelf_) {
      dump::write_readelf_frames(out_, *source, arch, !cfi->separate_debug_file().empty(), on_problem);
    } else if (json_) {
      if (!first_json_) out_.str(",\n");
      first_json_ = false;
      dump::write_cfi_json(out_, *source, arch, symbols ? &*symbols : nullptr, on_problem);
    } else {
      dump::write_cfi_text(out_, *source, arch, symbols ? &*symbols : nullptr, on_problem);
    }
  }
}

}  // namespace

int run_cfi_command(const CfiCommandOptions& options) { return CfiDumper(options).run(); }

}  // namespace framewalk::tools

#include "dwarf/elf_cfi.hpp"

#include "base/text.hpp"

#include <cstdio>

#include "elf/relocations.hpp"

namespace framewalk {

namespace {
}  // namespace

const dwarf::CfiIndex& CfiSource::get_index() const {
  if (const dwarf::CfiIndex* built = index.load(std::memory_order_acquire)) return *built;
  // Not std::call_once, which makes the others wait (a signal handler that
  // interrupted the builder would wait forever): threads that race each build
  // an index, the first published wins and the others discard theirs.
  auto mine = std::make_unique<const dwarf::CfiIndex>(dwarf::CfiIndex::build(*section, hdr.get()));
  const dwarf::CfiIndex* expected = nullptr;
  if (index.compare_exchange_strong(expected, mine.get(), std::memory_order_acq_rel, std::memory_order_acquire))
    return *mine.release();
  return *expected;
}

void ElfCfi::add_sections_of(std::shared_ptr<const elf::ElfFile> file, const ElfCfiOptions& options,
                             bool eh_frame_too) {
  const elf::Section* text = file->section_by_name(".text");
  const elf::Section* got = file->section_by_name(".got");
  for (const elf::Section& s : file->sections()) {
    const bool is_eh = s.name == ".eh_frame";
    const bool is_debug = s.name == ".debug_frame" || s.name == ".zdebug_frame";
    if (!(is_eh && eh_frame_too) && !(is_debug && options.use_debug_frame)) continue;
    if (s.type == elf::kShtNobits) {
      auto src = std::make_unique<CfiSource>();
      src->section_name = std::string(s.name);
      src->kind = is_eh ? dwarf::CfiKind::kEhFrame : dwarf::CfiKind::kDebugFrame;
      src->file_name = file->name();
      src->elf = file;
      src->nobits = true;
      sources_.push_back(std::move(src));
      continue;
    }
    auto data = file->section_data(s);
    if (!data) {
      // The error's offset is a file offset, as in the ELF reader's own errors.
      notes_.push_back(file->name() + ": " + std::string(s.name) + ": " + to_string(data.error().code) +
                       " at offset " + hex(data.error().offset));
      continue;
    }
    auto src = std::make_unique<CfiSource>();
    src->section_name = std::string(s.name);
    src->kind = is_eh ? dwarf::CfiKind::kEhFrame : dwarf::CfiKind::kDebugFrame;
    src->file_name = file->name();
    src->elf = file;
    src->decompressed = data->data() < file->image().data() ||
                        data->data() >= file->image().data() + file->image().size();
    src->file_offset = src->decompressed ? 0 : s.offset;
    Bytes contents = *data;
    if (options.readelf_compatible && file->type() == elf::kEtRel) {
      auto relocated = elf::relocated_contents(*file, s, contents);
      if (!relocated) {
        notes_.push_back(file->name() + ": " + std::string(s.name) + ": relocations: " +
                         to_string(relocated.error().code) + " at offset " + hex(relocated.error().offset));
      } else {
        src->relocated = std::move(*relocated);
        contents = Bytes(src->relocated);
      }
    }
    dwarf::CfiSectionInfo info;
    info.kind = is_eh ? dwarf::CfiKind::kEhFrame : dwarf::CfiKind::kDebugFrame;
    info.endian = file->endian();
    info.address_size = static_cast<uint8_t>(file->address_size());
    info.arch = arch::dwarf_arch_for(file->machine_key());
    info.bases.section_address = is_eh ? s.address : 0;
    if (options.readelf_compatible) {
      info.bases.has_text = info.bases.has_data = info.bases.has_func = true;
    } else {
      if (text) { info.bases.text = text->address; info.bases.has_text = true; }
      if (got) { info.bases.data = got->address; info.bases.has_data = true; }
    }
    src->section = std::make_unique<dwarf::CfiSection>(contents, info);
    if (is_eh) {
      if (const elf::Section* h = file->section_by_name(".eh_frame_hdr")) {
        if (auto hd = file->section_data(*h)) {
          auto parsed = dwarf::EhFrameHdr::parse(*hd, file->endian(),
                                                 static_cast<uint8_t>(file->address_size()), h->address);
          if (parsed) src->hdr = std::make_unique<dwarf::EhFrameHdr>(*parsed);
          else notes_.push_back(file->name() + ": .eh_frame_hdr: " + to_string(parsed.error().code) +
                                " at offset " + hex(parsed.error().offset) + " of .eh_frame_hdr (file offset " +
                                hex(h->offset + parsed.error().offset) + ")");
        }
      }
    }
    sources_.push_back(std::move(src));
  }
}

Result<ElfCfi> ElfCfi::load(std::shared_ptr<const elf::ElfFile> file, const ElfCfiOptions& options) {
  ElfCfi cfi;
  cfi.file_ = file;
  cfi.add_sections_of(file, options, true);
  const bool has_debug_frame = [&] {
    for (auto& s : cfi.sources_) if (s->kind == dwarf::CfiKind::kDebugFrame && !s->nobits) return true;
    return false;
  }();
  if ((!has_debug_frame || options.readelf_compatible) && options.use_debug_frame &&
      options.use_separate_debug_file) {
    if (auto path = elf::find_debug_file(*file, file->name(), options.search)) {
      if (auto debug = elf::ElfFile::open(*path)) {
        cfi.separate_debug_file_ = *path;
        cfi.add_sections_of(*debug, options, options.readelf_compatible);
      }
    }
  }
  if (options.use_gnu_debugdata && file->section_by_name(".gnu_debugdata")) {
    auto mini = file->gnu_debugdata();
    if (mini) cfi.add_sections_of(*mini, options, false);
    else cfi.notes_.push_back(file->name() + ": .gnu_debugdata: " + to_string(mini.error().code));
  }
  return cfi;
}

Result<RowLookup> ElfCfi::lookup(uint64_t pc) const {
  Error last{ErrorCode::kNotFound, pc};
  for (const auto& src : sources_) {
    if (!src->section) continue;
    auto match = src->get_index().find(pc);
    if (!match) {
      if (match.error().code != ErrorCode::kNotFound) last = match.error();
      continue;
    }
    FW_TRY(UnwindRow row, dwarf::row_for_pc(*src->section, *match->cie, match->fde, pc));
    return RowLookup{src.get(), match->cie, match->fde, row};
  }
  return last;
}

}  // namespace framewalk

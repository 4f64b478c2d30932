// fuzz_elf: the bytes as an ELF file, then everything the reader offers.
#include <memory>
#include <vector>

#include "arch/arch.hpp"
#include "dump/cfi_text.hpp"
#include "dump/readelf_frames.hpp"
#include "dump/text_writer.hpp"
#include "elf/elf_file.hpp"
#include "elf/symbols.hpp"
#include "fuzz_bodies.hpp"
#include "json_check.hpp"
#include "dwarf/elf_cfi.hpp"

namespace framewalk::fuzz {

namespace {

bool inside(Bytes inner, Bytes outer) {
  return inner.empty() || (inner.data() >= outer.data() &&
                           inner.data() + inner.size() <= outer.data() + outer.size());
}

void exercise(const std::shared_ptr<elf::ElfFile>& file, int depth) {
  const Bytes image = file->image();
  std::vector<uint64_t> addresses = {file->entry(), file->first_load_vaddr()};
  for (const elf::Section& s : file->sections()) {
    FUZZ_CHECK(file->section_by_name(s.name) != nullptr);
    (void)file->section_by_address(s.address);
    auto data = file->section_data(s);
    if (data && !(s.flags & elf::kShfCompressed) && !s.name.starts_with(".zdebug_")) {
      FUZZ_CHECK(s.type == elf::kShtNobits ? data->empty() : data->size() == s.size);
      FUZZ_CHECK(inside(*data, image));
    }
    if (data && !data->empty()) {
      // Touch the first and last byte so that ASan sees a span that lies.
      volatile uint8_t first = (*data)[0], last = (*data)[data->size() - 1];
      (void)first;
      (void)last;
    }
    // A second call is served from the cache and must agree.
    auto again = file->section_data(s);
    FUZZ_CHECK(data.ok() == again.ok());
    if (data) FUZZ_CHECK(data->data() == again->data() && data->size() == again->size());
    if (addresses.size() < 32) addresses.push_back(s.address);
  }
  for (const elf::Segment& p : file->segments()) {
    if (addresses.size() < 48) addresses.push_back(p.vaddr);
  }
  for (const elf::Note& n : file->notes()) {
    if (!n.desc.empty()) {
      volatile uint8_t last = n.desc[n.desc.size() - 1];
      (void)last;
    }
    (void)n.name.size();
  }
  (void)file->build_id();
  (void)file->debuglink();

  elf::SymbolTable symbols = elf::SymbolTable::load(file);
  std::shared_ptr<elf::ElfFile> mini;
  if (depth == 0) {
    auto debugdata = file->gnu_debugdata();
    if (debugdata) {
      mini = *debugdata;
      exercise(mini, depth + 1);
      symbols.merge(mini);
    }
  }
  for (const elf::Symbol& s : symbols.symbols()) {
    if (addresses.size() >= 64) break;
    addresses.push_back(s.address);
  }
  for (uint64_t a : addresses) {
    for (uint64_t pc : {a, a + 1, a - 1}) {
      auto m = symbols.lookup(pc);
      if (m) {
        FUZZ_CHECK(m->symbol->address + m->offset == pc);
        (void)m->symbol->name.size();
      }
    }
  }

  // The CFI of the file as the CLI gathers it, but without looking for
  // separate debug files on this machine.
  ElfCfiOptions options;
  options.use_separate_debug_file = false;
  auto cfi = ElfCfi::load(file, options);
  if (!cfi) return;
  const arch::ArchInfo* arch = arch::dwarf_arch_for(file->machine_key());
  auto sink = [](const dump::DumpProblem& p) { (void)to_string(p.error.code); };
  for (const auto& source : cfi->sources()) {
    if (!source->section) continue;
    for (size_t i = 0; i < addresses.size() && i < 16; ++i) (void)source->get_index().find(addresses[i]);
    // The dumps as the CLI writes them, with symbol names (and so demangling).
    dump::TextWriter w;
    dump::write_cfi_text(w, *source, arch, &symbols, sink);
    dump::write_readelf_frames(w, *source, arch, false, sink);
    dump::TextWriter j;
    dump::write_cfi_json(j, *source, arch, &symbols, sink);
    FUZZ_CHECK(valid_json(j.text()));
  }
  for (size_t i = 0; i < addresses.size() && i < 16; ++i) {
    auto hit = cfi->lookup(addresses[i]);
    if (!hit) continue;
    FUZZ_CHECK(hit->row.pc_begin <= addresses[i] && addresses[i] < hit->row.pc_end);
    dump::TextWriter w;
    dump::write_row_at(w, *hit, addresses[i], arch, &symbols, false);
    dump::TextWriter j;
    dump::write_row_at(j, *hit, addresses[i], arch, &symbols, true);
    FUZZ_CHECK(valid_json(j.text()));
  }
}

}  // namespace

int fuzz_elf(const uint8_t* data, size_t size) {
  auto image = FileImage::from_buffer(std::vector<uint8_t>(data, data + size));
  auto file = elf::ElfFile::parse(image, "fuzz");
  if (!file) return 0;
  exercise(*file, 0);
  return 0;
}

}  // namespace framewalk::fuzz

// fuzz_cfi: the bytes as a CFI section, read every way framewalk reads one.
#include <cstdio>
#include <cstring>
#include <memory>
#include <vector>

#include "arch/arch.hpp"
#include "dump/cfi_text.hpp"
#include "dump/readelf_frames.hpp"
#include "dump/text_writer.hpp"
#include "dwarf/cfa_program.hpp"
#include "dwarf/cfi_index.hpp"
#include "dwarf/cfi_section.hpp"
#include "elf/elf_file.hpp"
#include "fuzz_bodies.hpp"
#include "json_check.hpp"
#include "dwarf/elf_cfi.hpp"

namespace framewalk::fuzz {

namespace {

using dwarf::CfiKind;
using dwarf::CfiSection;

constexpr uint64_t kEhFrameAddress = 0x1f978;

// The dumpers want the ELF file a section came from (for its type): a bare
// ELF header of the right class, with no sections.
std::shared_ptr<const elf::ElfFile> header_only_elf(bool is_64) {
  std::vector<uint8_t> h(is_64 ? 64 : 52, 0);
  std::memcpy(h.data(), "\x7f" "ELF", 4);
  h[4] = is_64 ? 2 : 1;  // class
  h[5] = 1;              // little-endian
  h[6] = 1;              // EI_VERSION
  h[16] = 3;             // ET_DYN
  h[18] = is_64 ? 62 : 3;
  h[20] = 1;             // e_version
  auto file = elf::ElfFile::parse(FileImage::from_buffer(std::move(h)), "fuzz");
  FUZZ_CHECK(file.ok());
  return *file;
}

// Every rule of a row must be inside the row's bounds; reading them all also
// lets the sanitizers see uninitialised rules.
void touch_row(const UnwindRow& row) {
  FUZZ_CHECK(row.rule_count <= UnwindRow::kMaxRules);
  for (int i = 0; i < row.rule_count; ++i) {
    if (i > 0) FUZZ_CHECK(row.rules[i - 1].reg < row.rules[i].reg);
    FUZZ_CHECK(row.find(row.rules[i].reg) == &row.rules[i]);
  }
}

void exercise(Bytes data, CfiKind kind, uint8_t address_size, Endian endian) {
  dwarf::CfiSectionInfo info;
  info.kind = kind;
  info.endian = endian;
  info.address_size = address_size;
  info.bases.section_address = kind == CfiKind::kEhFrame ? kEhFrameAddress : 0;
  info.bases.text = 0x4000;
  info.bases.has_text = true;
  info.bases.data = 0x28000;
  info.bases.has_data = true;

  CfiSection section(data, info);
  std::vector<uint64_t> pcs = {0, ~uint64_t{0}};
  size_t entries = 0;
  section.for_each(
      [&](const CfiSection::Entry& e) {
        ++entries;
        FUZZ_CHECK(e.next > e.offset && e.next <= data.size());
        if (e.type == CfiSection::Entry::Type::kTerminator) return true;
        FUZZ_CHECK(e.cie != nullptr);
        const dwarf::Cie& cie = *e.cie;
        auto initial = dwarf::run_cie(section, cie);
        if (initial) touch_row(*initial);
        if (e.type == CfiSection::Entry::Type::kCie) return true;
        const dwarf::Fde& fde = e.fde;
        if (pcs.size() < 16) {
          pcs.push_back(fde.pc_begin);
          pcs.push_back(fde.pc_begin + fde.pc_range / 2);
          pcs.push_back(fde.pc_end() - 1);
        }
        if (!initial) return true;
        uint64_t rows = 0;
        auto ran = dwarf::run_fde(section, cie, fde, *initial, [&](const UnwindRow& row, bool last) {
          touch_row(row);
          if (last) FUZZ_CHECK(row.pc_end == fde.pc_end());
          ++rows;
          return true;
        });
        if (ran) FUZZ_CHECK(rows > 0);
        if (fde.pc_range) {
          auto row = dwarf::row_for_pc(section, cie, fde, fde.pc_begin);
          if (row) FUZZ_CHECK(row->pc_begin <= fde.pc_begin && fde.pc_begin < row->pc_end);
        }
        // Re-reading the FDE by offset must give the same record.
        const dwarf::Cie* again_cie = nullptr;
        auto again = section.fde_at(e.offset, &again_cie);
        FUZZ_CHECK(again.ok() && again_cie == e.cie && again->pc_begin == fde.pc_begin &&
                   again->pc_range == fde.pc_range);
        return true;
      },
      [&](const dwarf::CfiDiagnostic& d) { (void)to_string(d.error.code); });

  // Records at offsets the walk did not visit.
  for (uint64_t i = 0; i < 8 && !data.empty(); ++i) {
    uint64_t next = 0;
    const uint64_t offset = (i * 37) % data.size();
    auto e = section.entry_at(offset, &next);
    (void)e;
    (void)section.cie_at(offset);
  }

  const dwarf::CfiIndex index = dwarf::CfiIndex::build(section, nullptr);
  for (uint64_t pc : pcs) {
    auto m = index.find(pc);
    if (!m) continue;
    FUZZ_CHECK(m->fde.contains(pc));
    auto row = dwarf::row_for_pc(section, *m->cie, m->fde, pc);
    if (row) {
      touch_row(*row);
      FUZZ_CHECK(row->pc_begin <= pc && pc < row->pc_end);
    }
  }

  // The three dumpers, into memory.
  static const auto elf64 = header_only_elf(true);
  static const auto elf32 = header_only_elf(false);
  CfiSource source;
  source.section_name = kind == CfiKind::kEhFrame ? ".eh_frame" : ".debug_frame";
  source.file_name = "fuzz";
  source.elf = address_size == 8 ? elf64 : elf32;
  source.file_offset = 0x1f978;
  source.section = std::make_unique<CfiSection>(data, info);
  const arch::ArchInfo* arch = arch::arch_for(usual_machine_key(address_size == 8 ? 62 : 3));
  size_t problems = 0;
  auto sink = [&](const dump::DumpProblem& p) {
    FUZZ_CHECK(p.source == &source);
    (void)to_string(p.error.code);
    ++problems;
  };
  {
    dump::TextWriter w;
    dump::write_readelf_frames(w, source, arch, false, sink);
  }
  {
    dump::TextWriter w;
    dump::write_cfi_text(w, source, arch, nullptr, sink);
  }
  {
    dump::TextWriter w;
    dump::write_cfi_json(w, source, arch, nullptr, sink);
    FUZZ_CHECK(!w.text().empty() && w.text().front() == '{' && w.text().back() == '}');
    if (!valid_json(w.text())) std::fprintf(stderr, "invalid JSON:\n%.*s\n", static_cast<int>(w.text().size()), w.text().data());
    FUZZ_CHECK(valid_json(w.text()));
  }
}

}  // namespace

int fuzz_cfi(const uint8_t* data, size_t size) {
  const Bytes bytes(data, size);
  exercise(bytes, CfiKind::kEhFrame, 8, Endian::kLittle);
  exercise(bytes, CfiKind::kEhFrame, 4, Endian::kLittle);
  exercise(bytes, CfiKind::kDebugFrame, 8, Endian::kLittle);
  exercise(bytes, CfiKind::kDebugFrame, 4, Endian::kLittle);
  exercise(bytes, CfiKind::kDebugFrame, 8, Endian::kBig);
  return 0;
}

}  // namespace framewalk::fuzz

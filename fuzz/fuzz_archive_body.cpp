// fuzz_archive: the bytes as an ar archive; every member with contents as an
// ELF file, dumped the way `framewalk cfi --format=readelf` does (with the
// object's relocations applied).
#include <memory>
#include <vector>

#include "arch/arch.hpp"
#include "base/mapped_file.hpp"
#include "dump/readelf_frames.hpp"
#include "dump/text_writer.hpp"
#include "elf/archive.hpp"
#include "elf/elf_file.hpp"
#include "fuzz_bodies.hpp"
#include "dwarf/elf_cfi.hpp"

namespace framewalk::fuzz {

namespace {

void dump_member(const std::shared_ptr<const FileImage>& image, const elf::ArchiveMember& m) {
  auto file = elf::ElfFile::parse(FileImage::slice(image, m.data_offset, m.data.size()), m.name);
  if (!file) return;
  ElfCfiOptions options;
  options.use_separate_debug_file = false;
  options.readelf_compatible = true;
  auto cfi = ElfCfi::load(*file, options);
  if (!cfi) return;
  const arch::ArchInfo* arch = arch::dwarf_arch_for((*file)->machine_key());
  auto sink = [](const dump::DumpProblem& p) { (void)to_string(p.error.code); };
  for (const auto& source : cfi->sources()) {
    if (!source->section) continue;
    dump::TextWriter w;
    dump::write_readelf_frames(w, *source, arch, false, sink);
  }
}

}  // namespace

int fuzz_archive(const uint8_t* data, size_t size) {
  auto image = FileImage::from_buffer(std::vector<uint8_t>(data, data + size));
  const Bytes bytes = image->bytes();
  auto reader = elf::ArchiveReader::open(bytes);
  if (!reader) return 0;
  uint64_t previous_header = elf::kArchiveMagicSize - 1;
  for (size_t count = 0;; ++count) {
    // Each header takes 60 bytes of the input, so this bounds the members.
    FUZZ_CHECK(count <= size / elf::kArchiveHeaderSize);
    if (count > size / elf::kArchiveHeaderSize) return 0;
    auto member = reader->next();
    if (!member) {
      // A reader stays at the damaged header.
      auto again = reader->next();
      FUZZ_CHECK(!again && again.error().code == member.error().code &&
                 again.error().offset == member.error().offset);
      FUZZ_CHECK(member.error().offset < size);
      return 0;
    }
    if (!*member) return 0;
    const elf::ArchiveMember& m = **member;
    FUZZ_CHECK(m.header_offset > previous_header);
    FUZZ_CHECK(m.header_offset + elf::kArchiveHeaderSize <= size);
    previous_header = m.header_offset;
    if (reader->kind() == elf::ArchiveKind::kThin) {
      FUZZ_CHECK(m.data.empty() && m.data_offset == 0);
      continue;
    }
    FUZZ_CHECK(m.data.size() <= m.size);
    FUZZ_CHECK(m.data_offset + m.data.size() <= size);
    FUZZ_CHECK(m.data.empty() || m.data.data() == bytes.data() + m.data_offset);
    dump_member(image, m);
  }
}

}  // namespace framewalk::fuzz

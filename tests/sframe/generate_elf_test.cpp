// SFrame into a copy of an ELF file, end to end: generate -> elf_writer ->
// ElfFile -> SFrame reader -> checker, on this test program itself; the copy's
// layout (old bytes kept, the new PT_LOAD / PT_GNU_SFRAME / PT_PHDR, section
// headers); the non-allocated fallback; and elf_writer on small hand-made
// ELF32/ELF64 images of either byte order.
#include <gtest/gtest.h>

#include <cstring>

#include "base/mapped_file.hpp"
#include "elf/elf_writer.hpp"
#include "sframe/sframe_check.hpp"
#include "sframe/sframe_generate.hpp"
#include "support/tiny_elf.hpp"

namespace framewalk::sframe {
namespace {

using framewalk::test::tiny_elf;

struct Copy {
  std::shared_ptr<elf::ElfFile> original;
  elf::SectionPlacement placement;
  GeneratedSection generated;
  std::shared_ptr<elf::ElfFile> copy;
};

Copy make_copy(const std::string& path, elf::SegmentPolicy policy, uint8_t version = 3) {
  Copy c;
  auto f = elf::ElfFile::open(path);
  EXPECT_TRUE(f.ok());
  c.original = *f;
  auto p = elf::plan_added_section(*c.original, policy);
  EXPECT_TRUE(p.ok());
  c.placement = *p;
  GenerateOptions o;
  o.version = version;
  o.section_address = c.placement.address;
  auto g = generate_sframe(c.original, o);
  EXPECT_TRUE(g.ok());
  c.generated = std::move(*g);
  elf::NewSection s;
  s.name = ".sframe";
  s.type = elf::kShtGnuSframe;
  s.data = c.generated.bytes;
  auto bytes = elf::add_section(*c.original, c.placement, s);
  EXPECT_TRUE(bytes.ok());
  auto copy = elf::ElfFile::parse(FileImage::from_buffer(std::move(*bytes)), "copy");
  EXPECT_TRUE(copy.ok());
  c.copy = *copy;
  return c;
}

const elf::Segment* segment_of_type(const elf::ElfFile& f, uint32_t type) {
  for (const elf::Segment& s : f.segments())
    if (s.type == type) return &s;
  return nullptr;
}

TEST(GenerateElf, ThisProgramRoundTripsThroughACopyWithAGnuSframeSegment) {
  const Copy c = make_copy("/proc/self/exe", elf::SegmentPolicy::kAuto);
  ASSERT_TRUE(c.copy);
  ASSERT_TRUE(c.placement.in_segment) << c.placement.note;
  const elf::ElfFile& orig = *c.original;
  const elf::ElfFile& copy = *c.copy;
  EXPECT_GT(c.generated.stats.represented_fdes, 100u);
  EXPECT_EQ(c.generated.stats.cfi_section, ".eh_frame");

  // Old sections unchanged (only .shstrtab moved), .sframe appended.
  ASSERT_EQ(copy.sections().size(), orig.sections().size() + 1);
  for (size_t i = 0; i < orig.sections().size(); ++i) {
    const elf::Section& a = orig.sections()[i];
    const elf::Section& b = copy.sections()[i];
    EXPECT_EQ(a.name, b.name);
    EXPECT_EQ(a.address, b.address);
    if (a.name != ".shstrtab") {  // moved to the end, with the new name
      EXPECT_EQ(a.offset, b.offset) << a.name;
      EXPECT_EQ(a.size, b.size) << a.name;
    }
  }
  const elf::Section& sf = copy.sections().back();
  EXPECT_EQ(sf.name, ".sframe");
  EXPECT_EQ(sf.type, elf::kShtGnuSframe);
  EXPECT_EQ(sf.flags & elf::kShfAlloc, elf::kShfAlloc);
  EXPECT_EQ(sf.address, c.placement.address);
  EXPECT_EQ(sf.size, c.generated.bytes.size());

  // Every byte of the original past the ELF header is where it was.
  const Bytes a = orig.image(), b = copy.image();
  ASSERT_GE(b.size(), a.size());
  EXPECT_EQ(std::memcmp(a.data() + 64, b.data() + 64, a.size() - 64), 0);

  // Segments: the old ones, a PT_LOAD after the last PT_LOAD mapping the moved
  // table and the section, PT_GNU_SFRAME naming it, PT_PHDR on the new table.
  ASSERT_EQ(copy.segments().size(), orig.segments().size() + 2);
  const elf::Segment* gs = segment_of_type(copy, elf::kPtGnuSframe);
  ASSERT_NE(gs, nullptr);
  EXPECT_EQ(gs->vaddr, sf.address);
  EXPECT_EQ(gs->offset, sf.offset);
  EXPECT_EQ(gs->filesz, sf.size);
  const elf::Segment* load = nullptr;
  uint64_t last_vaddr = 0;
  for (const elf::Segment& s : copy.segments()) {
    if (s.type != elf::kPtLoad) continue;
    EXPECT_GE(s.vaddr, last_vaddr);  // still in address order
    last_vaddr = s.vaddr;
    load = &s;
  }
  ASSERT_NE(load, nullptr);
  EXPECT_EQ(load->vaddr, c.placement.phdr_address);
  EXPECT_LE(load->vaddr, sf.address);
  EXPECT_GE(load->vaddr + load->memsz, sf.address + sf.size);
  EXPECT_EQ(load->vaddr - load->offset, copy.first_load_vaddr());
  if (const elf::Segment* phdr = segment_of_type(copy, elf::kPtPhdr)) {
    EXPECT_EQ(phdr->vaddr, c.placement.phdr_address);
    EXPECT_EQ(phdr->offset, c.placement.phdr_offset);
  }

  // The section reads back and agrees with the CFI everywhere it covers.
  auto data = copy.section_data(sf);
  ASSERT_TRUE(data.ok());
  auto section = Section::parse(*data, sf.address);
  ASSERT_TRUE(section.ok()) << to_string(section.error().code);
  EXPECT_EQ(section->version(), 3);
  EXPECT_EQ(section->fdes().size(), c.generated.stats.sframe_fdes);
  auto cfi = ElfCfi::load(c.copy, sframe_cfi_options());
  ASSERT_TRUE(cfi.ok());
  const CheckReport r = check_rows(sframe_cfi_sections(*cfi), *section);
  EXPECT_EQ(r.disagreements, 0u);
  EXPECT_EQ(r.sframe_only_bytes, 0u);
  EXPECT_EQ(r.bytes_compared, c.generated.stats.represented_bytes);
  EXPECT_EQ(r.cfi_only_bytes + r.no_row_bytes, c.generated.stats.cfi_bytes - c.generated.stats.represented_bytes);
}

TEST(GenerateElf, VersionTwoAndANonAllocatedSection) {
  const Copy c = make_copy("/proc/self/exe", elf::SegmentPolicy::kNever, 2);
  ASSERT_TRUE(c.copy);
  EXPECT_FALSE(c.placement.in_segment);
  EXPECT_NE(c.placement.note.find("not allocated"), std::string::npos);
  EXPECT_EQ(c.copy->segments().size(), c.original->segments().size());
  EXPECT_EQ(segment_of_type(*c.copy, elf::kPtGnuSframe), nullptr);
  const elf::Section& sf = c.copy->sections().back();
  EXPECT_EQ(sf.flags & elf::kShfAlloc, 0u);
  // Its sh_addr is the address the PC-relative starts were computed for: past every segment.
  EXPECT_EQ(sf.address, c.placement.address);
  for (const elf::Segment& s : c.original->segments()) EXPECT_GE(sf.address, s.vaddr + s.memsz);
  auto data = c.copy->section_data(sf);
  ASSERT_TRUE(data.ok());
  auto section = Section::parse(*data, sf.address);
  ASSERT_TRUE(section.ok());
  EXPECT_EQ(section->version(), 2);
  auto cfi = ElfCfi::load(c.original, sframe_cfi_options());
  ASSERT_TRUE(cfi.ok());
  EXPECT_EQ(check_rows(sframe_cfi_sections(*cfi), *section).disagreements, 0u);
}

// ---- elf_writer on hand-made images ----------------------------------------

TEST(ElfWriter, AddsASectionToElf32AndElf64OfEitherByteOrder) {
  const uint8_t payload[] = {1, 2, 3, 4, 5};
  for (bool is64 : {false, true}) {
    for (Endian e : {Endian::kLittle, Endian::kBig}) {
      SCOPED_TRACE(std::string(is64 ? "ELF64 " : "ELF32 ") + (e == Endian::kLittle ? "LE" : "BE"));
      auto f = elf::ElfFile::parse(FileImage::from_buffer(tiny_elf(is64, e)), "tiny");
      ASSERT_TRUE(f.ok());
      for (elf::SegmentPolicy policy : {elf::SegmentPolicy::kAuto, elf::SegmentPolicy::kNever}) {
        auto p = elf::plan_added_section(**f, policy);
        ASSERT_TRUE(p.ok());
        EXPECT_EQ(p->in_segment, policy == elf::SegmentPolicy::kAuto);
        EXPECT_EQ(p->address % 8, 0u);
        EXPECT_GE(p->address, 0x11000u);  // past the only segment, on its page size
        elf::NewSection s;
        s.name = ".sframe";
        s.type = elf::kShtGnuSframe;
        s.data = Bytes(payload);
        auto out = elf::add_section(**f, *p, s);
        ASSERT_TRUE(out.ok());
        auto g = elf::ElfFile::parse(FileImage::from_buffer(std::move(*out)), "out");
        ASSERT_TRUE(g.ok());
        const elf::ElfFile& o = **g;
        ASSERT_EQ(o.sections().size(), 4u);
        EXPECT_EQ(o.sections()[1].name, ".text");
        EXPECT_EQ(o.sections()[2].name, ".shstrtab");
        const elf::Section& added = o.sections()[3];
        EXPECT_EQ(added.name, ".sframe");
        EXPECT_EQ(added.address, p->address);
        auto data = o.section_data(added);
        ASSERT_TRUE(data.ok());
        EXPECT_EQ(std::vector<uint8_t>(data->begin(), data->end()), std::vector<uint8_t>(payload, payload + 5));
        if (policy == elf::SegmentPolicy::kAuto) {
          ASSERT_EQ(o.segments().size(), 4u);
          EXPECT_EQ(o.segments()[1].type, elf::kPtLoad);  // right after the last PT_LOAD
          EXPECT_EQ(o.segments()[1].vaddr - o.segments()[1].offset, 0x10000u);  // the first PT_LOAD's bias
          EXPECT_EQ(o.segments()[2].type, elf::kPtNote);
          EXPECT_EQ(o.segments()[3].type, elf::kPtGnuSframe);
          EXPECT_EQ(o.segments()[3].vaddr, added.address);
          EXPECT_EQ(o.segments()[3].filesz, 5u);
        } else {
          EXPECT_EQ(o.segments().size(), 2u);
        }
      }
    }
  }
}

TEST(ElfWriter, AFileWithoutSectionHeadersGetsAStringTableToo) {
  auto f = elf::ElfFile::parse(FileImage::from_buffer(tiny_elf(true, Endian::kLittle, false)), "tiny");
  ASSERT_TRUE(f.ok());
  auto p = elf::plan_added_section(**f, elf::SegmentPolicy::kAuto);
  ASSERT_TRUE(p.ok());
  const uint8_t payload[] = {9};
  elf::NewSection s;
  s.name = ".sframe";
  s.data = Bytes(payload);
  auto out = elf::add_section(**f, *p, s);
  ASSERT_TRUE(out.ok());
  auto g = elf::ElfFile::parse(FileImage::from_buffer(std::move(*out)), "out");
  ASSERT_TRUE(g.ok());
  ASSERT_EQ((*g)->sections().size(), 3u);
  EXPECT_EQ((*g)->sections()[1].name, ".sframe");
  EXPECT_EQ((*g)->sections()[2].name, ".shstrtab");
}

TEST(ElfWriter, AHugeBssKeepsTheSectionUnallocated) {
  // A PT_LOAD whose memory image runs 64 MiB past the file: mapping past it
  // with offset = address - bias would need that much padding.
  std::vector<uint8_t> bytes = tiny_elf(true, Endian::kLittle);
  const uint64_t memsz = uint64_t{64} << 20;
  for (unsigned i = 0; i < 8; ++i) bytes[64 + 40 + i] = static_cast<uint8_t>(memsz >> (8 * i));  // p_memsz of the PT_LOAD
  auto f = elf::ElfFile::parse(FileImage::from_buffer(bytes), "bss");
  ASSERT_TRUE(f.ok());
  auto p = elf::plan_added_section(**f, elf::SegmentPolicy::kAuto);
  ASSERT_TRUE(p.ok());
  EXPECT_FALSE(p->in_segment);
  EXPECT_NE(p->note.find("padding"), std::string::npos);
  EXPECT_GE(p->address, 0x10000u + (uint64_t{64} << 20));
}

}  // namespace
}  // namespace framewalk::sframe

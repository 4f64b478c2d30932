// The ELF reader on small images built in memory: ELF32/ELF64 in both byte
// orders, sections, segments, notes, debug links, compressed sections,
// MiniDebugInfo, symbols, broken headers, and relocations applied the way
// readelf applies them.
#include "elf/elf_file.hpp"

#include <gtest/gtest.h>
#include <lzma.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>
#include <zstd.h>

#include <array>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "elf/debug_file.hpp"
#include "elf/relocations.hpp"
#include "elf/section_cache.hpp"
#include "elf/symbols.hpp"
#include "support/section_builder.hpp"

namespace framewalk::elf {
namespace {

using test::SectionBuilder;

constexpr uint32_t kShtNote = 7;
constexpr uint32_t kPfR = 4, kPfX = 1;
constexpr uint8_t kStbLocal = 0, kStbGlobal = 1, kStbWeak = 2;
constexpr uint8_t kSttObject = 1, kSttFunc = 2, kSttGnuIfunc = 10;

// ---- building ELF images ------------------------------------------------------

// Constructors with defaults (instead of aggregates) so that every brace list
// may stop early without -Wmissing-field-initializers.
struct SectionSpec {
  SectionSpec(std::string name_, uint32_t type_ = kShtProgbits, uint64_t flags_ = 0, uint64_t address_ = 0,
              std::vector<uint8_t> data_ = {}, uint32_t link_ = 0, uint32_t info_ = 0, uint64_t entsize_ = 0,
              uint64_t align_ = 1, std::optional<uint64_t> size_ = std::nullopt,
              std::optional<uint64_t> offset_ = std::nullopt)
      : name(std::move(name_)), type(type_), flags(flags_), address(address_), data(std::move(data_)),
        link(link_), info(info_), entsize(entsize_), align(align_), size(size_), offset(offset_) {}
  std::string name;
  uint32_t type;
  uint64_t flags;
  uint64_t address;
  std::vector<uint8_t> data;
  uint32_t link;
  uint32_t info;
  uint64_t entsize;
  uint64_t align;
  std::optional<uint64_t> size;    // overrides sh_size (default: the data's size)
  std::optional<uint64_t> offset;  // overrides sh_offset
};

struct SegmentSpec {
  SegmentSpec(uint32_t type_, uint32_t flags_, int section_, uint64_t offset_, uint64_t vaddr_, uint64_t filesz_ = 0,
              uint64_t memsz_ = 0, uint64_t align_ = 0x1000)
      : type(type_), flags(flags_), section(section_), offset(offset_), vaddr(vaddr_), filesz(filesz_),
        memsz(memsz_), align(align_) {}
  uint32_t type;
  uint32_t flags;
  int section;  // take offset and file size from this section (1-based index), or -1
  uint64_t offset;
  uint64_t vaddr;
  uint64_t filesz;
  uint64_t memsz;
  uint64_t align;
};

struct ElfSpec {
  bool is64 = true;
  Endian endian = Endian::kLittle;
  uint16_t type = kEtDyn;
  uint16_t machine = kEmX86_64;
  uint64_t entry = 0;
  std::vector<SectionSpec> sections;  // indexes 1..n; the null section and .shstrtab are added
  std::vector<SegmentSpec> segments;
};

struct ElfLayout {
  std::vector<uint64_t> section_offsets;  // by section index (0 is the null section)
  uint64_t shoff = 0;
  uint64_t phoff = 0;
  uint16_t shstrndx = 0;
  unsigned ehsize = 0, phentsize = 0, shentsize = 0;
};

std::vector<uint8_t> build_elf(const ElfSpec& spec, ElfLayout* layout_out = nullptr) {
  ElfLayout layout;
  const bool w = spec.is64;
  layout.ehsize = w ? 64 : 52;
  layout.phentsize = w ? 56 : 32;
  layout.shentsize = w ? 64 : 40;
  const unsigned asz = w ? 8 : 4;
  std::vector<uint8_t> file(layout.ehsize + layout.phentsize * spec.segments.size(), 0);
  layout.phoff = spec.segments.empty() ? 0 : layout.ehsize;
  auto align = [&](uint64_t a) {
    while (a > 1 && file.size() % a != 0) file.push_back(0);
  };
  std::string shstr(1, '\0');
  std::vector<uint32_t> names;
  for (const SectionSpec& s : spec.sections) {
    names.push_back(static_cast<uint32_t>(shstr.size()));
    shstr += s.name;
    shstr += '\0';
  }
  const uint32_t shstrtab_name = static_cast<uint32_t>(shstr.size());
  shstr += ".shstrtab";
  shstr += '\0';
  layout.section_offsets.push_back(0);
  for (const SectionSpec& s : spec.sections) {
    align(s.align);
    layout.section_offsets.push_back(file.size());
    if (s.type != kShtNobits) file.insert(file.end(), s.data.begin(), s.data.end());
  }
  const uint64_t shstr_offset = file.size();
  file.insert(file.end(), shstr.begin(), shstr.end());
  layout.section_offsets.push_back(shstr_offset);
  align(8);
  layout.shoff = file.size();
  layout.shstrndx = static_cast<uint16_t>(spec.sections.size() + 1);

  SectionBuilder sh(spec.endian);
  auto header = [&](uint32_t name, uint32_t type, uint64_t flags, uint64_t addr, uint64_t off,
                    uint64_t size, uint32_t link, uint32_t info, uint64_t al, uint64_t entsize) {
    sh.u32(name).u32(type).fixed(flags, asz).fixed(addr, asz).fixed(off, asz).fixed(size, asz);
    sh.u32(link).u32(info).fixed(al, asz).fixed(entsize, asz);
  };
  header(0, kShtNull, 0, 0, 0, 0, 0, 0, 0, 0);
  for (size_t i = 0; i < spec.sections.size(); ++i) {
    const SectionSpec& s = spec.sections[i];
    header(names[i], s.type, s.flags, s.address, s.offset.value_or(layout.section_offsets[i + 1]),
           s.size.value_or(s.data.size()), s.link, s.info, s.align, s.entsize);
  }
  header(shstrtab_name, kShtStrtab, 0, 0, shstr_offset, shstr.size(), 0, 0, 1, 0);
  const auto sh_bytes = sh.finish();
  file.insert(file.end(), sh_bytes.begin(), sh_bytes.end());

  SectionBuilder ph(spec.endian);
  for (const SegmentSpec& p : spec.segments) {
    uint64_t off = p.offset, filesz = p.filesz;
    if (p.section > 0) {
      off = layout.section_offsets[p.section];
      filesz = spec.sections[p.section - 1].data.size();
    }
    const uint64_t memsz = p.memsz ? p.memsz : filesz;
    if (w) {
      ph.u32(p.type).u32(p.flags).u64(off).u64(p.vaddr).u64(p.vaddr).u64(filesz).u64(memsz).u64(p.align);
    } else {
      ph.u32(p.type).u32(static_cast<uint32_t>(off)).u32(static_cast<uint32_t>(p.vaddr));
      ph.u32(static_cast<uint32_t>(p.vaddr)).u32(static_cast<uint32_t>(filesz));
      ph.u32(static_cast<uint32_t>(memsz)).u32(p.flags).u32(static_cast<uint32_t>(p.align));
    }
  }
  const auto ph_bytes = ph.finish();
  std::copy(ph_bytes.begin(), ph_bytes.end(), file.begin() + layout.ehsize);

  SectionBuilder eh(spec.endian);
  eh.raw("\x7f" "ELF").u8(w ? 2 : 1).u8(spec.endian == Endian::kLittle ? 1 : 2).u8(1).zeros(9);
  eh.u16(spec.type).u16(spec.machine).u32(1);
  eh.fixed(spec.entry, asz).fixed(layout.phoff, asz).fixed(layout.shoff, asz);
  eh.u32(0).u16(static_cast<uint16_t>(layout.ehsize)).u16(static_cast<uint16_t>(layout.phentsize));
  eh.u16(static_cast<uint16_t>(spec.segments.size())).u16(static_cast<uint16_t>(layout.shentsize));
  eh.u16(static_cast<uint16_t>(spec.sections.size() + 2)).u16(layout.shstrndx);
  const auto eh_bytes = eh.finish();
  EXPECT_EQ(eh_bytes.size(), layout.ehsize);
  std::copy(eh_bytes.begin(), eh_bytes.end(), file.begin());
  if (layout_out) *layout_out = layout;
  return file;
}

Result<std::shared_ptr<ElfFile>> parse(std::vector<uint8_t> bytes, std::string name = "test.elf") {
  return ElfFile::parse(FileImage::from_buffer(std::move(bytes)), std::move(name));
}

std::shared_ptr<ElfFile> parse_ok(std::vector<uint8_t> bytes, std::string name = "test.elf") {
  auto f = parse(std::move(bytes), std::move(name));
  EXPECT_TRUE(f.ok()) << to_string(f.error().code) << " at " << f.error().offset;
  return f.ok() ? *f : nullptr;
}

void patch(std::vector<uint8_t>& file, size_t offset, uint64_t value, unsigned size, Endian e) {
  for (unsigned i = 0; i < size; ++i) {
    const unsigned shift = e == Endian::kLittle ? 8 * i : 8 * (size - 1 - i);
    file[offset + i] = static_cast<uint8_t>(value >> shift);
  }
}

std::vector<uint8_t> bytes_of(std::string_view s) { return std::vector<uint8_t>(s.begin(), s.end()); }
std::vector<uint8_t> vec(Bytes b) { return std::vector<uint8_t>(b.begin(), b.end()); }

std::vector<uint8_t> note(Endian e, uint32_t type, std::string_view name, const std::vector<uint8_t>& desc) {
  SectionBuilder b(e);
  b.u32(static_cast<uint32_t>(name.size() + 1)).u32(static_cast<uint32_t>(desc.size())).u32(type);
  b.str(name).align(4).bytes(desc).align(4);
  return b.finish();
}

struct Sym {
  std::string name;
  uint64_t value;
  uint64_t size;
  uint8_t bind = kStbGlobal;
  uint8_t type = kSttFunc;
  uint16_t shndx = 1;
};

// A symbol table (with its null entry) and its string table.
std::pair<std::vector<uint8_t>, std::vector<uint8_t>> symtab(const std::vector<Sym>& syms, bool is64, Endian e) {
  SectionBuilder t(e);
  std::string strings(1, '\0');
  t.zeros(is64 ? 24 : 16);
  for (const Sym& s : syms) {
    const uint32_t name = s.name.empty() ? 0 : static_cast<uint32_t>(strings.size());
    if (!s.name.empty()) {
      strings += s.name;
      strings += '\0';
    }
    const uint8_t info = static_cast<uint8_t>(s.bind << 4 | s.type);
    if (is64) {
      t.u32(name).u8(info).u8(0).u16(s.shndx).u64(s.value).u64(s.size);
    } else {
      t.u32(name).u32(static_cast<uint32_t>(s.value)).u32(static_cast<uint32_t>(s.size)).u8(info).u8(0).u16(s.shndx);
    }
  }
  return {t.finish(), bytes_of(strings)};
}

std::vector<uint8_t> zlib_compress(const std::vector<uint8_t>& in) {
  uLongf size = compressBound(static_cast<uLong>(in.size()));
  std::vector<uint8_t> out(size);
  EXPECT_EQ(compress2(out.data(), &size, in.data(), static_cast<uLong>(in.size()), 9), Z_OK);
  out.resize(size);
  return out;
}

std::vector<uint8_t> zstd_compress(const std::vector<uint8_t>& in) {
  std::vector<uint8_t> out(ZSTD_compressBound(in.size()));
  const size_t n = ZSTD_compress(out.data(), out.size(), in.data(), in.size(), 3);
  EXPECT_FALSE(ZSTD_isError(n));
  out.resize(n);
  return out;
}

std::vector<uint8_t> xz_compress(const std::vector<uint8_t>& in) {
  std::vector<uint8_t> out(in.size() + in.size() / 2 + 1024);
  size_t pos = 0;
  EXPECT_EQ(lzma_easy_buffer_encode(6, LZMA_CHECK_CRC64, nullptr, in.data(), in.size(), out.data(), &pos,
                                    out.size()),
            LZMA_OK);
  out.resize(pos);
  return out;
}

// An Elf64_Chdr / Elf32_Chdr followed by `payload`.
std::vector<uint8_t> compressed(bool is64, Endian e, uint32_t type, uint64_t size,
                                const std::vector<uint8_t>& payload) {
  SectionBuilder b(e);
  if (is64) b.u32(type).u32(0).u64(size).u64(1);
  else b.u32(type).u32(static_cast<uint32_t>(size)).u32(1);
  b.bytes(payload);
  return b.finish();
}

std::vector<uint8_t> text_bytes(size_t n) {
  std::vector<uint8_t> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = static_cast<uint8_t>((i * 7) ^ (i >> 3));
  return v;
}

struct Flavour {
  bool is64;
  Endian endian;
};
const Flavour kFlavours[] = {
    {true, Endian::kLittle}, {true, Endian::kBig}, {false, Endian::kLittle}, {false, Endian::kBig}};

std::string flavour_name(const Flavour& f) {
  return std::string(f.is64 ? "ELF64" : "ELF32") + (f.endian == Endian::kLittle ? " LE" : " BE");
}

// ---- headers, sections, segments -------------------------------------------------

ElfSpec basic_spec(const Flavour& f) {
  ElfSpec s;
  s.is64 = f.is64;
  s.endian = f.endian;
  s.machine = f.is64 ? kEmX86_64 : kEm386;
  s.entry = 0x401020;
  s.sections = {
      {".text", kShtProgbits, kShfAlloc | kShfExecinstr, 0x401000, text_bytes(0x40), 0, 0, 0, 16},
      {".rodata", kShtProgbits, kShfAlloc, 0x402000, bytes_of("hello"), 0, 0, 0, 8},
      {".bss", kShtNobits, kShfAlloc, 0x403000, {}, 0, 0, 0, 8, 0x100},
      {".comment", kShtProgbits, 0, 0, bytes_of("GCC"), 0, 1, 1, 1},
  };
  s.segments = {
      {kPtLoad, kPfR | kPfX, -1, 0, 0x400000, 0x1000, 0x1000, 0x1000},
      {kPtLoad, kPfR, 2, 0, 0x402000, 0, 0x1100, 0x1000},
      {kPtGnuEhFrame, kPfR, -1, 0x20, 0x400020, 0x10, 0x10, 4},
  };
  return s;
}

TEST(ElfFileTest, HeaderSectionsAndSegmentsInEveryFlavour) {
  for (const Flavour& f : kFlavours) {
    SCOPED_TRACE(flavour_name(f));
    ElfLayout layout;
    const ElfSpec spec = basic_spec(f);
    auto elf = parse_ok(build_elf(spec, &layout));
    ASSERT_NE(elf, nullptr);
    EXPECT_EQ(elf->name(), "test.elf");
    EXPECT_EQ(elf->is_64(), f.is64);
    EXPECT_EQ(elf->endian(), f.endian);
    EXPECT_EQ(elf->address_size(), f.is64 ? 8u : 4u);
    EXPECT_EQ(elf->type(), kEtDyn);
    EXPECT_EQ(elf->machine(), f.is64 ? kEmX86_64 : kEm386);
    EXPECT_EQ(elf->entry(), 0x401020u);

    ASSERT_EQ(elf->sections().size(), 6u);
    EXPECT_EQ(elf->sections()[0].name, "");
    EXPECT_EQ(elf->sections()[0].type, kShtNull);
    const Section* text = elf->section_by_name(".text");
    ASSERT_NE(text, nullptr);
    EXPECT_EQ(text->index, 1u);
    EXPECT_EQ(text->type, kShtProgbits);
    EXPECT_EQ(text->flags, kShfAlloc | kShfExecinstr);
    EXPECT_EQ(text->address, 0x401000u);
    EXPECT_EQ(text->offset, layout.section_offsets[1]);
    EXPECT_EQ(text->size, 0x40u);
    const Section* comment = elf->section_by_name(".comment");
    ASSERT_NE(comment, nullptr);
    EXPECT_EQ(comment->info, 1u);
    EXPECT_EQ(elf->section_by_name(".shstrtab")->index, 5u);
    EXPECT_EQ(elf->section_by_name(".missing"), nullptr);
    EXPECT_EQ(elf->section_by_name(""), &elf->sections()[0]);

    auto data = elf->section_data(*text);
    ASSERT_TRUE(data.ok());
    EXPECT_EQ(vec(*data), text_bytes(0x40));
    EXPECT_EQ(data->data(), elf->image().data() + layout.section_offsets[1]);  // not copied
    auto bss = elf->section_data(*elf->section_by_name(".bss"));
    ASSERT_TRUE(bss.ok());
    EXPECT_TRUE(bss->empty());
    EXPECT_EQ(elf->section_by_name(".bss")->size, 0x100u);

    ASSERT_EQ(elf->segments().size(), 3u);
    const Segment& load0 = elf->segments()[0];
    EXPECT_EQ(load0.type, kPtLoad);
    EXPECT_EQ(load0.flags, kPfR | kPfX);
    EXPECT_EQ(load0.offset, 0u);
    EXPECT_EQ(load0.vaddr, 0x400000u);
    EXPECT_EQ(load0.filesz, 0x1000u);
    EXPECT_EQ(load0.memsz, 0x1000u);
    EXPECT_EQ(load0.align, 0x1000u);
    const Segment& load1 = elf->segments()[1];
    EXPECT_EQ(load1.offset, layout.section_offsets[2]);
    EXPECT_EQ(load1.filesz, 5u);
    EXPECT_EQ(load1.memsz, 0x1100u);
    EXPECT_EQ(elf->segments()[2].type, kPtGnuEhFrame);
    EXPECT_EQ(elf->segments()[2].align, 4u);
    EXPECT_EQ(elf->first_load_vaddr(), 0x400000u);
  }
}

TEST(ElfFileTest, SectionByAddress) {
  ElfSpec s;
  s.sections = {
      {".outer", kShtProgbits, kShfAlloc, 0x1000, std::vector<uint8_t>(0x100)},
      {".inner", kShtProgbits, kShfAlloc, 0x1040, std::vector<uint8_t>(0x10)},
      {".empty", kShtProgbits, kShfAlloc, 0x1080, {}},
      {".debug_info", kShtProgbits, 0, 0x1090, std::vector<uint8_t>(0x4)},  // not allocated
      {".tbss", kShtNobits, kShfAlloc, 0x2000, {}, 0, 0, 0, 1, 0x20},
  };
  auto elf = parse_ok(build_elf(s));
  ASSERT_NE(elf, nullptr);
  auto name_at = [&](uint64_t a) -> std::string {
    const Section* sec = elf->section_by_address(a);
    return sec ? std::string(sec->name) : "-";
  };
  EXPECT_EQ(name_at(0x1000), ".outer");
  EXPECT_EQ(name_at(0x103f), ".outer");
  EXPECT_EQ(name_at(0x1040), ".inner");  // the smallest section containing it
  EXPECT_EQ(name_at(0x104f), ".inner");
  EXPECT_EQ(name_at(0x1050), ".outer");
  EXPECT_EQ(name_at(0x1080), ".outer");  // an empty section contains nothing
  EXPECT_EQ(name_at(0x1090), ".outer");  // not .debug_info
  EXPECT_EQ(name_at(0x10ff), ".outer");
  EXPECT_EQ(name_at(0x1100), "-");
  EXPECT_EQ(name_at(0xfff), "-");
  EXPECT_EQ(name_at(0x2010), ".tbss");
}

// section_by_address answers from an index of the boundaries (few sections)
// or by a scan (many): both as the rule says, on random overlapping sections.
TEST(ElfFileTest, SectionByAddressOnRandomSections) {
  std::mt19937_64 rng(7);
  for (size_t count : {size_t{20}, size_t{1100}}) {
    SCOPED_TRACE(count);
    ElfSpec s;
    for (size_t i = 0; i < count; ++i) {
      const uint64_t address = 0x1000 + rng() % 0x400;
      const size_t size = rng() % 4 == 0 ? 0 : 1 + rng() % 0x80;
      const bool nobits = rng() % 5 == 0;
      s.sections.push_back({".s" + std::to_string(i), nobits ? kShtNobits : kShtProgbits,
                            rng() % 6 == 0 ? 0 : kShfAlloc, address,
                            nobits ? std::vector<uint8_t>{} : std::vector<uint8_t>(size), 0, 0, 0, 1,
                            nobits ? std::optional<uint64_t>(size) : std::nullopt});
    }
    auto elf = parse_ok(build_elf(s));
    ASSERT_NE(elf, nullptr);
    for (uint64_t a = 0xff0; a < 0x1500; ++a) {
      const Section* best = nullptr;
      for (const Section& sec : elf->sections())
        if ((sec.flags & kShfAlloc) && a >= sec.address && a - sec.address < sec.size && (!best || sec.size < best->size))
          best = &sec;
      ASSERT_EQ(elf->section_by_address(a), best) << std::hex << a;
    }
  }
}

TEST(ElfFileTest, FirstLoadVaddrWithoutLoadSegments) {
  ElfSpec s;
  s.segments = {{kPtNote, kPfR, -1, 0x40, 0x40, 0, 0, 4}};
  auto elf = parse_ok(build_elf(s));
  ASSERT_NE(elf, nullptr);
  EXPECT_EQ(elf->first_load_vaddr(), 0u);
  // A PIE whose first PT_LOAD maps offset 0x1000 at 0x401000.
  s.segments = {{kPtNote, kPfR, -1, 0x40, 0x40, 0, 0, 4}, {kPtLoad, kPfR, -1, 0x1000, 0x401000, 0x10, 0x10}};
  auto pie = parse_ok(build_elf(s));
  EXPECT_EQ(pie->first_load_vaddr(), 0x400000u);
}

TEST(ElfFileTest, NoSectionHeaders) {
  ElfSpec s;
  auto bytes = build_elf(s);
  const unsigned shoff_at = 0x28;  // e_shoff in ELF64
  patch(bytes, shoff_at, 0, 8, Endian::kLittle);
  auto elf = parse_ok(bytes);
  ASSERT_NE(elf, nullptr);
  EXPECT_TRUE(elf->sections().empty());
  EXPECT_EQ(elf->section_by_name(".shstrtab"), nullptr);
  EXPECT_TRUE(elf->notes().empty());
  EXPECT_EQ(elf->build_id(), std::nullopt);
  EXPECT_EQ(elf->debuglink(), std::nullopt);
}

// ---- notes, build-id, debuglink --------------------------------------------------------

const std::vector<uint8_t> kBuildId = {0xde, 0xad, 0xbe, 0xef, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06,
                                       0x07, 0x08, 0x09, 0x0a, 0x0b, 0x0c, 0x0d, 0x0e, 0x0f, 0x10};

TEST(ElfFileTest, NotesAndBuildIdFromSections) {
  for (const Flavour& f : kFlavours) {
    SCOPED_TRACE(flavour_name(f));
    ElfSpec s;
    s.is64 = f.is64;
    s.endian = f.endian;
    std::vector<uint8_t> notes = note(f.endian, 1, "GNU", {0, 0, 0, 0, 3, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0});
    const auto odd = note(f.endian, 0x100, "stapsdt", {1, 2, 3});  // name and desc need padding
    notes.insert(notes.end(), odd.begin(), odd.end());
    const auto id = note(f.endian, 3, "GNU", kBuildId);
    s.sections = {{".note.ABI-tag", kShtNote, kShfAlloc, 0x400200, notes, 0, 0, 0, 4},
                  {".note.gnu.build-id", kShtNote, kShfAlloc, 0x400300, id, 0, 0, 0, 4}};
    auto elf = parse_ok(build_elf(s));
    ASSERT_NE(elf, nullptr);
    const auto all = elf->notes();
    ASSERT_EQ(all.size(), 3u);
    EXPECT_EQ(all[0].type, 1u);
    EXPECT_EQ(all[0].name, "GNU");
    EXPECT_EQ(all[0].desc.size(), 16u);
    EXPECT_EQ(all[1].type, 0x100u);
    EXPECT_EQ(all[1].name, "stapsdt");
    EXPECT_EQ(vec(all[1].desc), (std::vector<uint8_t>{1, 2, 3}));
    EXPECT_EQ(all[2].type, 3u);
    EXPECT_EQ(vec(all[2].desc), kBuildId);
    EXPECT_EQ(elf->build_id(), kBuildId);
  }
}

TEST(ElfFileTest, NotesFromSegmentsWhenThereAreNoNoteSections) {
  for (const Flavour& f : kFlavours) {
    SCOPED_TRACE(flavour_name(f));
    ElfSpec s;
    s.is64 = f.is64;
    s.endian = f.endian;
    s.sections = {{".data", kShtProgbits, kShfAlloc, 0x1000, note(f.endian, 3, "GNU", kBuildId), 0, 0, 0, 4}};
    s.segments = {{kPtNote, kPfR, 1, 0, 0x1000, 0, 0, 4}};
    auto elf = parse_ok(build_elf(s));
    ASSERT_NE(elf, nullptr);
    EXPECT_EQ(elf->build_id(), kBuildId);
  }
}

TEST(ElfFileTest, BuildIdNeedsTheGnuName) {
  ElfSpec s;
  s.sections = {{".note", kShtNote, kShfAlloc, 0x1000, note(Endian::kLittle, 3, "Go", kBuildId), 0, 0, 0, 4}};
  auto elf = parse_ok(build_elf(s));
  ASSERT_NE(elf, nullptr);
  EXPECT_EQ(elf->notes().size(), 1u);
  EXPECT_EQ(elf->build_id(), std::nullopt);
}

TEST(ElfFileTest, TruncatedNotesStopWithoutError) {
  auto data = note(Endian::kLittle, 3, "GNU", kBuildId);
  const auto second = note(Endian::kLittle, 1, "GNU", {1, 2, 3, 4});
  data.insert(data.end(), second.begin(), second.end());
  data.resize(data.size() - 2);  // the second note's descriptor is cut short
  ElfSpec s;
  s.sections = {{".note", kShtNote, kShfAlloc, 0x1000, data, 0, 0, 0, 4}};
  auto elf = parse_ok(build_elf(s));
  ASSERT_NE(elf, nullptr);
  const auto notes = elf->notes();
  ASSERT_EQ(notes.size(), 1u);
  EXPECT_EQ(vec(notes[0].desc), kBuildId);
  // A descsz past the section.
  auto huge = note(Endian::kLittle, 3, "GNU", kBuildId);
  patch(huge, 4, 0x7fffffff, 4, Endian::kLittle);
  s.sections[0].data = huge;
  auto elf2 = parse_ok(build_elf(s));
  ASSERT_NE(elf2, nullptr);
  EXPECT_TRUE(elf2->notes().empty());
  EXPECT_EQ(elf2->build_id(), std::nullopt);
}

TEST(ElfFileTest, Crc32) {
  EXPECT_EQ(gnu_debuglink_crc32(bytes_of("123456789")), 0xcbf43926u);
  EXPECT_EQ(gnu_debuglink_crc32(Bytes{}), 0u);
  // Incremental.
  const uint32_t part = gnu_debuglink_crc32(bytes_of("12345"));
  EXPECT_EQ(gnu_debuglink_crc32(bytes_of("6789"), part), 0xcbf43926u);
}

TEST(ElfFileTest, Debuglink) {
  for (const Flavour& f : kFlavours) {
    for (std::string name : {std::string("libfoo.so.debug"), std::string("abc"), std::string("ab")}) {
      SCOPED_TRACE(flavour_name(f) + " " + name);
      SectionBuilder link(f.endian);
      link.str(name).align(4).u32(0x12345678);
      ElfSpec s;
      s.is64 = f.is64;
      s.endian = f.endian;
      s.sections = {{".gnu_debuglink", kShtProgbits, 0, 0, link.finish(), 0, 0, 0, 4}};
      auto elf = parse_ok(build_elf(s));
      ASSERT_NE(elf, nullptr);
      auto dl = elf->debuglink();
      ASSERT_TRUE(dl.has_value());
      EXPECT_EQ(dl->first, name);
      EXPECT_EQ(dl->second, 0x12345678u);
    }
  }
}

TEST(ElfFileTest, DebuglinkWithoutCrcOrTerminator) {
  ElfSpec s;
  s.sections = {{".gnu_debuglink", kShtProgbits, 0, 0, bytes_of(std::string("x.debug\0", 8)), 0, 0, 0, 4}};
  auto elf = parse_ok(build_elf(s));
  EXPECT_EQ(elf->debuglink(), std::nullopt);
  s.sections[0].data = bytes_of("no-terminator");
  auto elf2 = parse_ok(build_elf(s));
  EXPECT_EQ(elf2->debuglink(), std::nullopt);
}

TEST(ElfFileTest, Debugaltlink) {
  SectionBuilder link(Endian::kLittle);
  link.str("/usr/lib/debug/.dwz/x86_64-linux-gnu/pkg.debug");
  for (uint8_t b : kBuildId) link.u8(b);
  ElfSpec s;
  s.sections = {{".gnu_debugaltlink", kShtProgbits, 0, 0, link.finish(), 0, 0, 0, 1}};
  auto elf = parse_ok(build_elf(s));
  ASSERT_NE(elf, nullptr);
  auto alt = elf->debugaltlink();
  ASSERT_TRUE(alt.has_value());
  EXPECT_EQ(alt->first, "/usr/lib/debug/.dwz/x86_64-linux-gnu/pkg.debug");
  EXPECT_EQ(alt->second, kBuildId);
  // No build-id after the name, no terminator, an empty name: no link.
  for (std::string bad : {std::string("x.debug\0", 8), std::string("x.debug"), std::string("\0\1\2", 3)}) {
    s.sections[0].data = bytes_of(bad);
    auto broken = parse_ok(build_elf(s));
    EXPECT_EQ(broken->debugaltlink(), std::nullopt) << bad.size();
  }
}

// A dwz supplementary file is found where its link says, relative to the
// debug file, or by its build-id under a debug root; only with the build-id
// the link names.
TEST(ElfFileTest, SupplementaryFileSearch) {
  char dir_template[] = "/tmp/framewalk-altlink-XXXXXX";
  ASSERT_NE(mkdtemp(dir_template), nullptr);
  const std::string dir = dir_template;
  auto write = [](const std::string& path, const std::vector<uint8_t>& bytes) {
    FILE* f = std::fopen(path.c_str(), "wb");
    ASSERT_NE(f, nullptr);
    std::fwrite(bytes.data(), 1, bytes.size(), f);
    std::fclose(f);
  };
  auto with_build_id = [](const std::vector<uint8_t>& id) {
    ElfSpec s;
    s.sections = {{".note.gnu.build-id", kShtNote, 0, 0, note(Endian::kLittle, 3, "GNU", id), 0, 0, 0, 4}};
    return build_elf(s);
  };
  auto linking_to = [](const std::string& name, const std::vector<uint8_t>& id) {
    SectionBuilder link(Endian::kLittle);
    link.str(name);
    for (uint8_t b : id) link.u8(b);
    ElfSpec s;
    s.sections = {{".gnu_debugaltlink", kShtProgbits, 0, 0, link.finish(), 0, 0, 0, 1}};
    return build_elf(s);
  };
  const std::string debug_path = dir + "/prog.debug";
  write(debug_path, linking_to("sup.debug", kBuildId));
  auto opened = ElfFile::open(debug_path);
  ASSERT_TRUE(opened.ok());
  const ElfFile* debug = opened->get();
  DebugFileSearch search;
  search.debug_roots = {dir + "/root"};
  EXPECT_EQ(find_supplementary_file(*debug, debug_path, search), std::nullopt);  // nothing there yet

  std::vector<uint8_t> other_id = kBuildId;
  other_id[0] ^= 1;
  write(dir + "/sup.debug", with_build_id(other_id));
  EXPECT_EQ(find_supplementary_file(*debug, debug_path, search), std::nullopt);  // the wrong build-id

  const std::string hex = build_id_hex(kBuildId);
  EXPECT_EQ(hex, "deadbeef0102030405060708090a0b0c0d0e0f10");
  ASSERT_EQ(::mkdir((dir + "/root").c_str(), 0700), 0);
  ASSERT_EQ(::mkdir((dir + "/root/.build-id").c_str(), 0700), 0);
  ASSERT_EQ(::mkdir((dir + "/root/.build-id/de").c_str(), 0700), 0);
  const std::string by_id = dir + "/root/.build-id/de/" + hex.substr(2) + ".debug";
  write(by_id, with_build_id(kBuildId));
  EXPECT_EQ(find_supplementary_file(*debug, debug_path, search), by_id);

  write(dir + "/sup.debug", with_build_id(kBuildId));  // the written path comes first
  EXPECT_EQ(find_supplementary_file(*debug, debug_path, search), dir + "/sup.debug");

  EXPECT_EQ(find_dwp_file(dir + "/prog"), std::nullopt);
  write(dir + "/prog.dwp", {});
  EXPECT_EQ(find_dwp_file(dir + "/prog"), dir + "/prog.dwp");
  for (const char* f : {"/sup.debug", "/prog.debug", "/prog.dwp"}) std::remove((dir + f).c_str());
  std::remove(by_id.c_str());
  for (const char* d : {"/root/.build-id/de", "/root/.build-id", "/root", ""}) ::rmdir((dir + d).c_str());
}

// ---- compressed sections ----------------------------------------------------------------

TEST(ElfFileTest, CompressedSectionsZlibAndZstd) {
  const std::vector<uint8_t> plain = text_bytes(5000);
  for (const Flavour& f : kFlavours) {
    SCOPED_TRACE(flavour_name(f));
    ElfSpec s;
    s.is64 = f.is64;
    s.endian = f.endian;
    s.sections = {
        {".debug_frame", kShtProgbits, kShfCompressed, 0,
         compressed(f.is64, f.endian, 1, plain.size(), zlib_compress(plain)), 0, 0, 0, 8},
        {".debug_info", kShtProgbits, kShfCompressed, 0,
         compressed(f.is64, f.endian, 2, plain.size(), zstd_compress(plain)), 0, 0, 0, 8},
    };
    auto elf = parse_ok(build_elf(s));
    ASSERT_NE(elf, nullptr);
    for (const char* name : {".debug_frame", ".debug_info"}) {
      SCOPED_TRACE(name);
      const Section* sec = elf->section_by_name(name);
      ASSERT_NE(sec, nullptr);
      auto d = elf->section_data(*sec);
      ASSERT_TRUE(d.ok()) << to_string(d.error().code);
      EXPECT_EQ(vec(*d), plain);
      // Decompressed once and kept: the same bytes again.
      auto again = elf->section_data(*sec);
      ASSERT_TRUE(again.ok());
      EXPECT_EQ(again->data(), d->data());
    }
  }
}

TEST(ElfFileTest, LegacyZdebugSection) {
  const std::vector<uint8_t> plain = text_bytes(300);
  SectionBuilder z(Endian::kLittle);
  z.raw("ZLIB").u64(plain.size(), Endian::kBig).bytes(zlib_compress(plain));
  ElfSpec s;
  s.sections = {{".zdebug_frame", kShtProgbits, 0, 0, z.finish()},
                {".zdebug_x", kShtProgbits, 0, 0, bytes_of("ZLIX00000000")}};
  ElfLayout layout;
  auto elf = parse_ok(build_elf(s, &layout));
  ASSERT_NE(elf, nullptr);
  auto d = elf->section_data(*elf->section_by_name(".zdebug_frame"));
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(vec(*d), plain);
  auto bad = elf->section_data(*elf->section_by_name(".zdebug_x"));
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().code, ErrorCode::kDecompressFailed);
  EXPECT_EQ(bad.error().offset, layout.section_offsets[2]);
}

TEST(ElfFileTest, CompressedSectionErrors) {
  const std::vector<uint8_t> plain = text_bytes(1000);
  auto corrupt = zlib_compress(plain);
  corrupt[corrupt.size() / 2] ^= 0xff;
  auto short_zstd = zstd_compress(plain);
  short_zstd.resize(short_zstd.size() - 4);
  ElfSpec s;
  s.sections = {
      {".bad_type", kShtProgbits, kShfCompressed, 0, compressed(true, Endian::kLittle, 3, plain.size(), zlib_compress(plain)), 0, 0, 0, 8},
      {".corrupt", kShtProgbits, kShfCompressed, 0, compressed(true, Endian::kLittle, 1, plain.size(), corrupt), 0, 0, 0, 8},
      {".size_lies", kShtProgbits, kShfCompressed, 0, compressed(true, Endian::kLittle, 1, plain.size() + 1, zlib_compress(plain)), 0, 0, 0, 8},
      {".too_big", kShtProgbits, kShfCompressed, 0, compressed(true, Endian::kLittle, 2, uint64_t{1} << 40, zstd_compress(plain)), 0, 0, 0, 8},
      {".short_zstd", kShtProgbits, kShfCompressed, 0, compressed(true, Endian::kLittle, 2, plain.size(), short_zstd), 0, 0, 0, 8},
      {".short_header", kShtProgbits, kShfCompressed, 0, {1, 0, 0, 0, 0, 0, 0, 0, 0x10}, 0, 0, 0, 8},
  };
  ElfLayout layout;
  auto elf = parse_ok(build_elf(s, &layout));
  ASSERT_NE(elf, nullptr);
  for (uint32_t i = 1; i <= 5; ++i) {
    SCOPED_TRACE(s.sections[i - 1].name);
    auto d = elf->section_data(elf->sections()[i]);
    ASSERT_FALSE(d.ok());
    EXPECT_EQ(d.error().code, ErrorCode::kDecompressFailed);
    EXPECT_EQ(d.error().offset, layout.section_offsets[i]);
  }
  auto h = elf->section_data(elf->sections()[6]);
  ASSERT_FALSE(h.ok());
  EXPECT_EQ(h.error().code, ErrorCode::kTruncated);
  EXPECT_EQ(h.error().offset, layout.section_offsets[6] + 8);
}

// A compressed section goes through the cache on disk (elf/section_cache.hpp)
// when one is set and the file has a build-id: written once inflated, read
// from it by the next file object, and a cache file truncated or corrupted is
// ignored, the section inflated again and the file written anew.
TEST(ElfFileTest, CompressedSectionsThroughTheCacheOnDisk) {
  char dir_template[] = "/tmp/framewalk-elf-cache-XXXXXX";
  ASSERT_NE(mkdtemp(dir_template), nullptr);
  SectionCacheSettings settings;
  settings.directory = dir_template;
  settings.min_section_bytes = 1000;
  set_section_cache(settings);
  const std::vector<uint8_t> plain = text_bytes(5000);
  SectionBuilder z(Endian::kLittle);
  z.raw("ZLIB").u64(plain.size(), Endian::kBig).bytes(zlib_compress(plain));
  ElfSpec s;
  s.sections = {
      {".note.gnu.build-id", kShtNote, kShfAlloc, 0x400300, note(Endian::kLittle, 3, "GNU", kBuildId), 0, 0, 0, 4},
      {".debug_info", kShtProgbits, kShfCompressed, 0, compressed(true, Endian::kLittle, 1, plain.size(), zlib_compress(plain)), 0, 0, 0, 8},
      {".zdebug_line", kShtProgbits, 0, 0, z.finish()},
      {".debug_small", kShtProgbits, kShfCompressed, 0, compressed(true, Endian::kLittle, 2, 100, zstd_compress(text_bytes(100))), 0, 0, 0, 8},
  };
  const std::vector<uint8_t> image = build_elf(s);
  auto data_of = [&](const char* name) {
    auto elf = parse_ok(image);
    auto d = elf->section_data(*elf->section_by_name(name));
    EXPECT_TRUE(d.ok());
    return d.ok() ? vec(*d) : std::vector<uint8_t>{};
  };
  auto elf = parse_ok(image);
  ASSERT_NE(elf, nullptr);
  const Section& info = *elf->section_by_name(".debug_info");
  const SectionCacheKey key{kBuildId, info.index, ".debug_info", 1, info.size, plain.size()};
  const std::string path = settings.directory + "/" + section_cache_file_name(key);
  auto file_check = [&] {
    auto mapped = FileImage::map(path);
    if (!mapped) return SectionCacheCheck::kTooShort;
    Bytes payload;
    return check_section_cache_file((*mapped)->bytes(), key, &payload);
  };

  // Inflated and written.
  EXPECT_EQ(data_of(".debug_info"), plain);
  EXPECT_EQ(file_check(), SectionCacheCheck::kOk);
  EXPECT_EQ(data_of(".zdebug_line"), plain);
  const Section& line = *elf->section_by_name(".zdebug_line");
  const SectionCacheKey line_key{kBuildId, line.index, ".zdebug_line", kZdebugCompression, line.size, plain.size()};
  EXPECT_EQ(::access((settings.directory + "/" + section_cache_file_name(line_key)).c_str(), F_OK), 0);
  // Below min_section_bytes: inflated each time, not written.
  EXPECT_EQ(data_of(".debug_small"), text_bytes(100));

  // Read from the cache: a valid file of other bytes is what the next file object sees.
  std::vector<uint8_t> other = plain;
  other[0] ^= 0xff;
  ASSERT_TRUE(store_cached_section(settings, key, Bytes{other.data(), other.size()}));
  EXPECT_EQ(data_of(".debug_info"), other);

  // Truncated: ignored, inflated again, written anew.
  ASSERT_EQ(::truncate(path.c_str(), 4096 + 100), 0);
  EXPECT_EQ(data_of(".debug_info"), plain);
  EXPECT_EQ(file_check(), SectionCacheCheck::kOk);
  // Corrupted (a payload byte, then the header): the same.
  for (long at : {4096L + 2500, 20L}) {
    SCOPED_TRACE(at);
    std::FILE* f = std::fopen(path.c_str(), "r+b");
    ASSERT_NE(f, nullptr);
    std::fseek(f, at, SEEK_SET);
    std::fputc(0x77, f);
    std::fclose(f);
    EXPECT_NE(file_check(), SectionCacheCheck::kOk);
    EXPECT_EQ(data_of(".debug_info"), plain);
    EXPECT_EQ(file_check(), SectionCacheCheck::kOk);
  }

  // No cache: nothing read or written.
  set_section_cache(std::nullopt);
  ASSERT_TRUE(store_cached_section(settings, key, Bytes{other.data(), other.size()}));
  EXPECT_EQ(data_of(".debug_info"), plain);
  std::string rm = std::string("rm -rf ") + dir_template;
  EXPECT_EQ(std::system(rm.c_str()), 0);
}

// Without a build-id nothing names the file: its sections are not cached.
TEST(ElfFileTest, NoCacheWithoutBuildId) {
  char dir_template[] = "/tmp/framewalk-elf-cache-XXXXXX";
  ASSERT_NE(mkdtemp(dir_template), nullptr);
  SectionCacheSettings settings;
  settings.directory = std::string(dir_template) + "/cache";
  settings.min_section_bytes = 0;
  set_section_cache(settings);
  const std::vector<uint8_t> plain = text_bytes(5000);
  ElfSpec s;
  s.sections = {{".debug_info", kShtProgbits, kShfCompressed, 0,
                 compressed(true, Endian::kLittle, 1, plain.size(), zlib_compress(plain)), 0, 0, 0, 8}};
  auto elf = parse_ok(build_elf(s));
  auto d = elf->section_data(*elf->section_by_name(".debug_info"));
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(vec(*d), plain);
  EXPECT_NE(::access(settings.directory.c_str(), F_OK), 0);
  set_section_cache(std::nullopt);
  std::string rm = std::string("rm -rf ") + dir_template;
  EXPECT_EQ(std::system(rm.c_str()), 0);
}

TEST(ElfFileTest, DecompressionHelpers) {
  const std::vector<uint8_t> plain = text_bytes(100000);
  auto z = decompress_zlib(zlib_compress(plain), plain.size());
  ASSERT_TRUE(z.ok());
  EXPECT_EQ(std::vector<uint8_t>(z->bytes().begin(), z->bytes().end()), plain);
  auto zs = decompress_zstd(zstd_compress(plain), plain.size());
  ASSERT_TRUE(zs.ok());
  EXPECT_EQ(std::vector<uint8_t>(zs->bytes().begin(), zs->bytes().end()), plain);
  // Empty output, and a stream longer than claimed by a single byte.
  const std::vector<uint8_t> none;
  auto z0 = decompress_zlib(zlib_compress(none), 0);
  ASSERT_TRUE(z0.ok());
  EXPECT_EQ(z0->size(), 0u);
  EXPECT_FALSE(decompress_zlib(zlib_compress(text_bytes(1)), 0).ok());
  EXPECT_FALSE(decompress_zstd(zstd_compress(text_bytes(1)), 0).ok());
  auto x = decompress_xz(xz_compress(plain), uint64_t{1} << 30);
  ASSERT_TRUE(x.ok());
  EXPECT_EQ(*x, plain);
  // The size must match exactly.
  EXPECT_FALSE(decompress_zlib(zlib_compress(plain), plain.size() - 1).ok());
  EXPECT_FALSE(decompress_zstd(zstd_compress(plain), plain.size() + 1).ok());
  // xz output above the limit.
  auto capped = decompress_xz(xz_compress(plain), 50000);
  ASSERT_FALSE(capped.ok());
  EXPECT_EQ(capped.error().code, ErrorCode::kDecompressFailed);
  // The limit holds whatever the size of the first output buffer.
  const std::vector<uint8_t> small = text_bytes(3000);
  EXPECT_FALSE(decompress_xz(xz_compress(small), 1000).ok());
  EXPECT_FALSE(decompress_xz(xz_compress(small), 2999).ok());
  auto exact = decompress_xz(xz_compress(small), 3000);
  ASSERT_TRUE(exact.ok());
  EXPECT_EQ(*exact, small);
  auto exact_big = decompress_xz(xz_compress(plain), plain.size());
  ASSERT_TRUE(exact_big.ok());
  EXPECT_EQ(exact_big->size(), plain.size());
  EXPECT_FALSE(decompress_xz(xz_compress(plain), plain.size() - 1).ok());
  // Truncated and garbage input.
  auto xz = xz_compress(plain);
  xz.resize(xz.size() / 2);
  EXPECT_FALSE(decompress_xz(xz, uint64_t{1} << 30).ok());
  EXPECT_FALSE(decompress_xz(bytes_of("not xz at all"), uint64_t{1} << 30).ok());
  EXPECT_FALSE(decompress_zlib(bytes_of("not zlib"), 8).ok());
  EXPECT_FALSE(decompress_zstd(bytes_of("not zstd"), 8).ok());
}

TEST(ElfFileTest, SectionOutsideTheFile) {
  ElfSpec s;
  s.sections = {{".past_end", kShtProgbits, 0, 0, {1, 2, 3}, 0, 0, 0, 1, 0x100000},
                {".far", kShtProgbits, 0, 0, {1, 2, 3}, 0, 0, 0, 1, 3, uint64_t{1} << 40},
                {".wraps", kShtProgbits, 0, 0, {}, 0, 0, 0, 1, ~uint64_t{0}, 0x10}};
  ElfLayout layout;
  auto elf = parse_ok(build_elf(s, &layout));
  ASSERT_NE(elf, nullptr);
  auto a = elf->section_data(elf->sections()[1]);
  ASSERT_FALSE(a.ok());
  EXPECT_EQ(a.error().code, ErrorCode::kSectionOutOfFile);
  EXPECT_EQ(a.error().offset, layout.section_offsets[1]);
  auto b = elf->section_data(elf->sections()[2]);
  ASSERT_FALSE(b.ok());
  EXPECT_EQ(b.error().code, ErrorCode::kSectionOutOfFile);
  EXPECT_EQ(b.error().offset, uint64_t{1} << 40);
  auto c = elf->section_data(elf->sections()[3]);
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.error().code, ErrorCode::kSectionOutOfFile);
}

// ---- MiniDebugInfo -------------------------------------------------------------------------

TEST(ElfFileTest, GnuDebugdata) {
  // The embedded file: a symbol table only.
  const auto [tab, str] = symtab({{"hidden_helper", 0x401100, 0x20, kStbLocal}}, true, Endian::kLittle);
  ElfSpec mini;
  mini.sections = {{".symtab", kShtSymtab, 0, 0, tab, 2, 1, 24, 8}, {".strtab", kShtStrtab, 0, 0, str}};
  const auto mini_bytes = build_elf(mini);
  ElfSpec outer;
  outer.sections = {{".text", kShtProgbits, kShfAlloc | kShfExecinstr, 0x401000, text_bytes(0x200), 0, 0, 0, 16},
                    {".gnu_debugdata", kShtProgbits, 0, 0, xz_compress(mini_bytes)}};
  auto elf = parse_ok(build_elf(outer), "/usr/bin/prog");
  ASSERT_NE(elf, nullptr);
  auto inner = elf->gnu_debugdata();
  ASSERT_TRUE(inner.ok()) << to_string(inner.error().code);
  EXPECT_EQ((*inner)->name(), "/usr/bin/prog[.gnu_debugdata]");
  EXPECT_EQ((*inner)->image().size(), mini_bytes.size());
  ASSERT_NE((*inner)->section_by_name(".symtab"), nullptr);

  // Its symbols merge into the outer file's table.
  SymbolTable table = SymbolTable::load(elf);
  EXPECT_EQ(table.size(), 0u);
  table.merge(*inner);
  ASSERT_EQ(table.size(), 1u);
  auto m = table.lookup(0x401110);
  ASSERT_TRUE(m.has_value());
  EXPECT_EQ(m->symbol->name, "hidden_helper");
  EXPECT_EQ(m->offset, 0x10u);
}

TEST(ElfFileTest, GnuDebugdataErrors) {
  ElfSpec none;
  auto elf = parse_ok(build_elf(none));
  auto missing = elf->gnu_debugdata();
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().code, ErrorCode::kNotFound);
  EXPECT_EQ(missing.error().offset, 0u);

  ElfSpec bad;
  bad.sections = {{".gnu_debugdata", kShtProgbits, 0, 0, bytes_of("\xfd" "7zXZ garbage")}};
  ElfLayout layout;
  auto elf2 = parse_ok(build_elf(bad, &layout));
  auto corrupt = elf2->gnu_debugdata();
  ASSERT_FALSE(corrupt.ok());
  EXPECT_EQ(corrupt.error().code, ErrorCode::kDecompressFailed);
  EXPECT_EQ(corrupt.error().offset, layout.section_offsets[1]);

  // Valid xz, but not an ELF file inside.
  ElfSpec not_elf;
  not_elf.sections = {{".gnu_debugdata", kShtProgbits, 0, 0, xz_compress(bytes_of("just text, no ELF"))}};
  auto elf3 = parse_ok(build_elf(not_elf));
  auto inner = elf3->gnu_debugdata();
  ASSERT_FALSE(inner.ok());
  EXPECT_EQ(inner.error().code, ErrorCode::kBadElf);
  EXPECT_EQ(inner.error().offset, 0u);
}

// ---- symbols -------------------------------------------------------------------------------

// The symbols' section 1 is a .text at 0x1000 of `text_size` bytes.
std::shared_ptr<ElfFile> elf_with_symbols(const std::vector<Sym>& syms, const Flavour& f = kFlavours[0],
                                          uint32_t table_type = kShtSymtab, size_t text_size = 0x10) {
  const auto [tab, str] = symtab(syms, f.is64, f.endian);
  ElfSpec s;
  s.is64 = f.is64;
  s.endian = f.endian;
  s.sections = {{".text", kShtProgbits, kShfAlloc | kShfExecinstr, 0x1000, text_bytes(text_size), 0, 0, 0, 16},
                {table_type == kShtSymtab ? ".symtab" : ".dynsym", table_type, 0, 0, tab, 3, 1,
                 f.is64 ? 24u : 16u, 8},
                {".strtab", kShtStrtab, 0, 0, str}};
  return parse_ok(build_elf(s));
}

std::string name_at(const SymbolTable& t, uint64_t address) {
  auto m = t.lookup(address);
  if (!m) return "-";
  return std::string(m->symbol->name) + "+" + std::to_string(m->offset);
}

TEST(ElfFileTest, SymbolsInEveryFlavour) {
  for (const Flavour& f : kFlavours) {
    SCOPED_TRACE(flavour_name(f));
    auto elf = elf_with_symbols({{"main", 0x1000, 0x40},
                                 {"helper", 0x1040, 0x20, kStbLocal},
                                 {"resolver", 0x1080, 0x10, kStbGlobal, kSttGnuIfunc},
                                 {"data_object", 0x1060, 0x10, kStbGlobal, kSttObject},
                                 {"undefined_import", 0, 0, kStbGlobal, kSttFunc, 0}},
                                f);
    ASSERT_NE(elf, nullptr);
    const SymbolTable t = SymbolTable::load(elf);
    ASSERT_EQ(t.size(), 3u);  // functions only, and no undefined ones
    EXPECT_EQ(t.symbols()[0].name, "main");
    EXPECT_EQ(t.symbols()[0].binding, kStbGlobal);
    EXPECT_EQ(t.symbols()[1].name, "helper");
    EXPECT_EQ(t.symbols()[1].binding, kStbLocal);
    EXPECT_EQ(t.symbols()[1].size, 0x20u);
    EXPECT_EQ(name_at(t, 0x1000), "main+0");
    EXPECT_EQ(name_at(t, 0x103f), "main+63");
    EXPECT_EQ(name_at(t, 0x1044), "helper+4");
    EXPECT_EQ(name_at(t, 0x1060), "-");  // past helper's size; the object is not a function
    EXPECT_EQ(name_at(t, 0x1088), "resolver+8");
    EXPECT_EQ(name_at(t, 0x1090), "-");
    EXPECT_EQ(name_at(t, 0xfff), "-");
  }
}

TEST(ElfFileTest, GlobalSymbolPreferredOverAWeakAliasAtTheSameAddress) {
  for (bool weak_first : {true, false}) {
    std::vector<Sym> syms = {{"__libc_malloc_weak", 0x2000, 0x100, kStbWeak},
                             {"malloc_global", 0x2000, 0x100, kStbGlobal},
                             {"malloc_local", 0x2000, 0x100, kStbLocal}};
    if (!weak_first) std::swap(syms[0], syms[1]);
    auto elf = elf_with_symbols(syms);
    const SymbolTable t = SymbolTable::load(elf);
    ASSERT_EQ(t.size(), 1u);  // one symbol per address
    EXPECT_EQ(name_at(t, 0x2010), "malloc_global+16");
  }
  // Without a global one the weak alias wins over the local.
  auto elf = elf_with_symbols({{"local_alias", 0x2000, 0x100, kStbLocal}, {"weak_alias", 0x2000, 0x100, kStbWeak}});
  EXPECT_EQ(name_at(SymbolTable::load(elf), 0x2000), "weak_alias+0");
}

TEST(ElfFileTest, SizeZeroSymbols) {
  // .text covers start and next; last_label is absolute (SHN_ABS), in no section.
  auto elf = elf_with_symbols({{"start", 0x1000, 0}, {"next", 0x1100, 0x10}, {"last_label", 0x4000, 0, kStbGlobal, kSttFunc, 0xfff1}},
                              kFlavours[0], kShtSymtab, 0x2000);
  const SymbolTable t = SymbolTable::load(elf);
  ASSERT_EQ(t.size(), 3u);
  // A size-0 symbol covers up to the next symbol.
  EXPECT_EQ(name_at(t, 0x1000), "start+0");
  EXPECT_EQ(name_at(t, 0x10ff), "start+255");
  EXPECT_EQ(name_at(t, 0x1100), "next+0");
  EXPECT_EQ(name_at(t, 0x1110), "-");
  // The last one covers at most 1 MiB.
  EXPECT_EQ(name_at(t, 0x4000 + (1 << 20)), "last_label+1048576");
  EXPECT_EQ(name_at(t, 0x4000 + (1 << 20) + 1), "-");
  // A sized symbol wins over a size-0 label at the same address.
  auto both = elf_with_symbols({{"label", 0x3000, 0}, {"function", 0x3000, 0x40}});
  EXPECT_EQ(name_at(SymbolTable::load(both), 0x3010), "function+16");
}

TEST(ElfFileTest, DynsymAndSymtabMerge) {
  const auto [dyn, dynstr] = symtab({{"exported", 0x1000, 0x10}, {"shared", 0x1020, 0x10, kStbWeak}}, true,
                                    Endian::kLittle);
  const auto [tab, str] = symtab({{"shared_impl", 0x1020, 0x10, kStbGlobal}, {"internal", 0x1040, 0x10, kStbLocal}},
                                 true, Endian::kLittle);
  ElfSpec s;
  s.sections = {{".text", kShtProgbits, kShfAlloc | kShfExecinstr, 0x1000, text_bytes(0x60), 0, 0, 0, 16},
                {".dynsym", kShtDynsym, kShfAlloc, 0x200, dyn, 3, 1, 24, 8},
                {".dynstr", kShtStrtab, kShfAlloc, 0x300, dynstr},
                {".symtab", kShtSymtab, 0, 0, tab, 5, 1, 24, 8},
                {".strtab", kShtStrtab, 0, 0, str}};
  auto elf = parse_ok(build_elf(s));
  ASSERT_NE(elf, nullptr);
  const SymbolTable t = SymbolTable::load(elf);
  ASSERT_EQ(t.size(), 3u);
  EXPECT_EQ(name_at(t, 0x1004), "exported+4");
  EXPECT_EQ(name_at(t, 0x1024), "shared_impl+4");  // the global beats the weak .dynsym entry
  EXPECT_EQ(name_at(t, 0x1048), "internal+8");
}

TEST(ElfFileTest, BrokenSymbolTables) {
  // Names past the string table and empty names are skipped; a bad link is ignored.
  const auto [tab, str] = symtab({{"ok", 0x1000, 0x10}, {"", 0x1010, 0x10}}, true, Endian::kLittle);
  auto bad_name = tab;
  // Point the first symbol's name past the string table.
  patch(bad_name, 24, 0x1000, 4, Endian::kLittle);
  ElfSpec s;
  s.sections = {{".symtab", kShtSymtab, 0, 0, bad_name, 2, 1, 24, 8},
                {".strtab", kShtStrtab, 0, 0, str},
                {".symtab2", kShtSymtab, 0, 0, tab, 99, 1, 24, 8}};
  auto elf = parse_ok(build_elf(s));
  ASSERT_NE(elf, nullptr);
  EXPECT_EQ(SymbolTable::load(elf).size(), 0u);
  // A partial trailing entry is ignored.
  auto partial = tab;
  partial.resize(partial.size() - 5);
  s.sections = {{".symtab", kShtSymtab, 0, 0, partial, 2, 1, 24, 8}, {".strtab", kShtStrtab, 0, 0, str}};
  auto elf2 = parse_ok(build_elf(s));
  const SymbolTable t = SymbolTable::load(elf2);
  ASSERT_EQ(t.size(), 1u);
  EXPECT_EQ(t.symbols()[0].name, "ok");
}

// ---- broken headers -------------------------------------------------------------------------

void expect_parse_error(const std::vector<uint8_t>& bytes, ErrorCode code, uint64_t offset) {
  auto f = parse(bytes);
  ASSERT_FALSE(f.ok());
  EXPECT_EQ(f.error().code, code) << to_string(f.error().code);
  EXPECT_EQ(f.error().offset, offset);
}

TEST(ElfFileTest, NotAnElfFile) {
  expect_parse_error({}, ErrorCode::kBadElf, 0);
  expect_parse_error(bytes_of("\x7f" "ELF"), ErrorCode::kBadElf, 0);
  expect_parse_error(bytes_of("#!/bin/sh\necho not an ELF file\n"), ErrorCode::kBadElf, 0);
  auto good = build_elf(ElfSpec{});
  auto bad_magic = good;
  bad_magic[3] = 'G';
  expect_parse_error(bad_magic, ErrorCode::kBadElf, 0);
  auto bad_class = good;
  bad_class[4] = 3;
  expect_parse_error(bad_class, ErrorCode::kBadElf, 4);
  bad_class[4] = 0;
  expect_parse_error(bad_class, ErrorCode::kBadElf, 4);
  auto bad_data = good;
  bad_data[5] = 0;
  expect_parse_error(bad_data, ErrorCode::kBadElf, 5);
  bad_data[5] = 3;
  expect_parse_error(bad_data, ErrorCode::kBadElf, 5);
}

TEST(ElfFileTest, TruncatedHeader) {
  for (const Flavour& f : kFlavours) {
    SCOPED_TRACE(flavour_name(f));
    ElfSpec s;
    s.is64 = f.is64;
    s.endian = f.endian;
    const auto good = build_elf(s);
    const size_t ehsize = f.is64 ? 64 : 52;
    for (size_t n = 16; n < ehsize; ++n) {
      auto cut = std::vector<uint8_t>(good.begin(), good.begin() + n);
      auto r = parse(cut);
      ASSERT_FALSE(r.ok()) << n;
      EXPECT_EQ(r.error().code, ErrorCode::kTruncated) << n;
    }
    // e.g. cut inside e_entry: the field's offset.
    auto cut = std::vector<uint8_t>(good.begin(), good.begin() + 26);
    expect_parse_error(cut, ErrorCode::kTruncated, 24);
  }
}

TEST(ElfFileTest, WrongHeaderEntrySizes) {
  for (const Flavour& f : kFlavours) {
    SCOPED_TRACE(flavour_name(f));
    ElfSpec s = basic_spec(f);
    const auto good = build_elf(s);
    const size_t shentsize_at = f.is64 ? 58 : 46, phentsize_at = f.is64 ? 54 : 42;
    auto bad_sh = good;
    patch(bad_sh, shentsize_at, f.is64 ? 40 : 64, 2, f.endian);
    expect_parse_error(bad_sh, ErrorCode::kBadElf, shentsize_at);
    auto bad_ph = good;
    patch(bad_ph, phentsize_at, 0, 2, f.endian);
    expect_parse_error(bad_ph, ErrorCode::kBadElf, phentsize_at);
  }
}

TEST(ElfFileTest, HeaderTablesOutsideTheFile) {
  for (const Flavour& f : kFlavours) {
    SCOPED_TRACE(flavour_name(f));
    ElfSpec s = basic_spec(f);
    ElfLayout layout;
    const auto good = build_elf(s, &layout);
    const unsigned asz = f.is64 ? 8 : 4;
    const size_t phoff_at = f.is64 ? 32 : 28, shoff_at = f.is64 ? 40 : 32;
    const size_t shnum_at = f.is64 ? 60 : 48, phnum_at = f.is64 ? 56 : 44;
    auto far_sh = good;
    patch(far_sh, shoff_at, good.size() + 100, asz, f.endian);
    expect_parse_error(far_sh, ErrorCode::kSectionOutOfFile, good.size() + 100);
    auto many_sh = good;
    patch(many_sh, shnum_at, 0x7fff, 2, f.endian);
    expect_parse_error(many_sh, ErrorCode::kSectionOutOfFile, layout.shoff);
    auto far_ph = good;
    patch(far_ph, phoff_at, good.size() - 8, asz, f.endian);
    expect_parse_error(far_ph, ErrorCode::kSectionOutOfFile, good.size() - 8);
    auto many_ph = good;
    patch(many_ph, phnum_at, 0xfff0, 2, f.endian);
    expect_parse_error(many_ph, ErrorCode::kSectionOutOfFile, layout.phoff);
    // The section header table cut short at the end of the file.
    auto cut = std::vector<uint8_t>(good.begin(), good.end() - 1);
    expect_parse_error(cut, ErrorCode::kSectionOutOfFile, layout.shoff);
  }
}

TEST(ElfFileTest, BadSectionNames) {
  ElfSpec s = basic_spec(kFlavours[0]);
  ElfLayout layout;
  const auto good = build_elf(s, &layout);
  // e_shstrndx out of range: no names, no crash.
  auto no_strtab = good;
  patch(no_strtab, 62, 200, 2, Endian::kLittle);
  auto a = parse_ok(no_strtab);
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(a->sections().size(), 6u);
  for (const Section& sec : a->sections()) EXPECT_EQ(sec.name, "");
  // A name offset past the string table: that name is empty.
  auto bad_name = good;
  patch(bad_name, layout.shoff + 64 * 1, 0x10000, 4, Endian::kLittle);
  auto b = parse_ok(bad_name);
  EXPECT_EQ(b->sections()[1].name, "");
  EXPECT_EQ(b->sections()[2].name, ".rodata");
  // The string table's own offset past the end of the file.
  auto strtab_far = good;
  patch(strtab_far, layout.shoff + 64 * 5 + 24, 0x100000, 8, Endian::kLittle);
  auto c = parse_ok(strtab_far);
  EXPECT_EQ(c->section_by_name(".text"), nullptr);
  // A string table without a final NUL: names stop at its end.
  auto unterminated = good;
  const uint64_t strtab_size_at = layout.shoff + 64 * 5 + 32;
  const uint64_t strtab_size = good[strtab_size_at];  // small: one byte is enough
  ASSERT_EQ(strtab_size, 39u);
  patch(unterminated, strtab_size_at, strtab_size - 2, 8, Endian::kLittle);
  auto d = parse_ok(unterminated);
  EXPECT_EQ(d->sections()[5].name, ".shstrta");
}

TEST(ElfFileTest, ExtendedSectionNumbering) {
  ElfSpec s = basic_spec(kFlavours[0]);
  ElfLayout layout;
  auto bytes = build_elf(s, &layout);
  // e_shnum = 0 and e_shstrndx = SHN_XINDEX: the real values are in section 0.
  patch(bytes, 60, 0, 2, Endian::kLittle);
  patch(bytes, 62, 0xffff, 2, Endian::kLittle);
  patch(bytes, layout.shoff + 32, 6, 8, Endian::kLittle);      // sh_size = section count
  patch(bytes, layout.shoff + 40, 5, 4, Endian::kLittle);      // sh_link = .shstrtab's index
  patch(bytes, 56, 0xffff, 2, Endian::kLittle);                // e_phnum = PN_XNUM
  patch(bytes, layout.shoff + 44, 3, 4, Endian::kLittle);      // sh_info = segment count
  auto elf = parse_ok(bytes);
  ASSERT_NE(elf, nullptr);
  EXPECT_EQ(elf->sections().size(), 6u);
  ASSERT_NE(elf->section_by_name(".rodata"), nullptr);
  EXPECT_EQ(elf->segments().size(), 3u);
  // A section 0 claiming far more sections than the file holds.
  patch(bytes, layout.shoff + 32, 0xffffffffull, 8, Endian::kLittle);
  expect_parse_error(bytes, ErrorCode::kSectionOutOfFile, layout.shoff);
}

TEST(ElfFileTest, MutatedImagesNeverCrash) {
  // Deterministic byte mutations of a rich image; every accessor must cope.
  const std::vector<uint8_t> plain = text_bytes(600);
  std::vector<uint8_t> link;
  {
    SectionBuilder l;
    l.str("x.debug").align(4).u32(0xabcd);
    link = l.finish();
  }
  for (const Flavour& f : kFlavours) {
    ElfSpec s = basic_spec(f);
    const auto [ftab, fstr] = symtab({{"f", 0x401000, 0x10}, {"g", 0x401010, 0}}, f.is64, f.endian);
    s.sections.push_back({".symtab", kShtSymtab, 0, 0, ftab, 6, 1, f.is64 ? 24u : 16u, 8});
    s.sections.push_back({".strtab", kShtStrtab, 0, 0, fstr});
    s.sections.push_back({".note.gnu.build-id", kShtNote, kShfAlloc, 0, note(f.endian, 3, "GNU", kBuildId), 0, 0, 0, 4});
    s.sections.push_back({".debug_frame", kShtProgbits, kShfCompressed, 0,
                          compressed(f.is64, f.endian, 1, plain.size(), zlib_compress(plain)), 0, 0, 0, 8});
    s.sections.push_back({".gnu_debuglink", kShtProgbits, 0, 0, link, 0, 0, 0, 4});
    const auto good = build_elf(s);
    ASSERT_NE(parse_ok(good), nullptr);
    std::mt19937 rng(f.is64 * 2 + (f.endian == Endian::kBig));
    int parsed_images = 0, with_sections = 0;
    for (int iteration = 0; iteration < 400; ++iteration) {
      auto bytes = good;
      const int flips = 1 + static_cast<int>(rng() % 8);
      for (int i = 0; i < flips; ++i) {
        // Mostly the headers, sometimes anywhere.
        const size_t limit = rng() % 2 ? std::min<size_t>(bytes.size(), 80) : bytes.size();
        bytes[rng() % limit] = static_cast<uint8_t>(rng());
      }
      if (rng() % 10 == 0) bytes.resize(rng() % bytes.size());
      auto parsed = parse(bytes);
      if (!parsed.ok()) continue;
      ++parsed_images;
      const ElfFile& elf = **parsed;
      if (elf.sections().size() > 5) ++with_sections;
      for (const Section& sec : elf.sections()) (void)elf.section_data(sec);
      (void)elf.section_by_address(0x401000);
      (void)elf.notes();
      (void)elf.build_id();
      (void)elf.debuglink();
      (void)elf.first_load_vaddr();
      (void)elf.gnu_debugdata();
      const SymbolTable t = SymbolTable::load(*parsed);
      (void)t.lookup(0x401008);
    }
    // Enough of the mutants got past the headers for this to mean something.
    EXPECT_GT(parsed_images, 150) << flavour_name(f);
    EXPECT_GT(with_sections, 100) << flavour_name(f);
  }
}

// ---- files on disk ----------------------------------------------------------------------------

TEST(ElfFileTest, OpenFromDisk) {
  char path[] = "/tmp/framewalk_elf_test_XXXXXX";
  const int fd = mkstemp(path);
  ASSERT_GE(fd, 0);
  const auto bytes = build_elf(basic_spec(kFlavours[1]));
  ASSERT_EQ(write(fd, bytes.data(), bytes.size()), static_cast<ssize_t>(bytes.size()));
  close(fd);
  auto elf = ElfFile::open(path);
  ASSERT_TRUE(elf.ok());
  EXPECT_EQ((*elf)->name(), path);
  EXPECT_EQ((*elf)->endian(), Endian::kBig);
  EXPECT_NE((*elf)->section_by_name(".text"), nullptr);
  // An empty file is not an ELF file.
  FILE* empty = std::fopen(path, "w");
  ASSERT_NE(empty, nullptr);
  std::fclose(empty);
  auto e = ElfFile::open(path);
  ASSERT_FALSE(e.ok());
  EXPECT_EQ(e.error().code, ErrorCode::kBadElf);
  unlink(path);
  // Missing files and directories: I/O errors carrying errno.
  auto missing = ElfFile::open(path);
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().code, ErrorCode::kIoError);
  EXPECT_EQ(missing.error().offset, static_cast<uint64_t>(ENOENT));
  auto dir = ElfFile::open("/tmp");
  ASSERT_FALSE(dir.ok());
  EXPECT_EQ(dir.error().code, ErrorCode::kIoError);
  EXPECT_EQ(dir.error().offset, static_cast<uint64_t>(EISDIR));
}


// ---- relocations ----------------------------------------------------------------

constexpr uint32_t kShtRela = 4, kShtRel = 9;
constexpr uint8_t kSttNotype = 0, kSttSection = 3, kSttFile = 4;

// An object file: section 1 is the target (`contents`), 2 the symbol table,
// 3 its strings, 4 the relocations aimed at section `aimed_at`.
std::vector<uint8_t> relocatable(bool is64, uint16_t machine, const std::vector<uint8_t>& contents,
                                 const std::vector<Sym>& syms, uint32_t reloc_type, const std::vector<uint8_t>& relocs,
                                 uint32_t aimed_at = 1, Endian endian = Endian::kLittle) {
  auto [table, strings] = symtab(syms, is64, endian);
  ElfSpec spec;
  spec.is64 = is64;
  spec.endian = endian;
  spec.type = kEtRel;
  spec.machine = machine;
  const uint64_t sym_size = is64 ? 24 : 16;
  spec.sections = {{".eh_frame", kShtProgbits, kShfAlloc, 0, contents},
                   {".symtab", kShtSymtab, 0, 0, table, 3, 1, sym_size, 8},
                   {".strtab", kShtStrtab, 0, 0, strings},
                   {reloc_type == kShtRela ? ".rela.eh_frame" : ".rel.eh_frame", reloc_type, 0, 0, relocs, 2,
                    aimed_at, 0, 8}};
  return build_elf(spec);
}

std::vector<uint8_t> rela64(std::initializer_list<std::array<uint64_t, 4>> entries, Endian e = Endian::kLittle) {
  SectionBuilder b(e);
  for (const auto& [offset, symbol, type, addend] : entries) b.u64(offset).u64(symbol << 32 | type).u64(addend);
  return b.finish();
}

// ELF32 RELA entries: {offset, symbol, type, addend (a signed 32-bit value)}.
std::vector<uint8_t> rela32(std::initializer_list<std::array<int64_t, 4>> entries, Endian e = Endian::kLittle) {
  SectionBuilder b(e);
  for (const auto& [offset, symbol, type, addend] : entries)
    b.u32(static_cast<uint32_t>(offset)).u32(static_cast<uint32_t>(symbol << 8 | type)).u32(static_cast<uint32_t>(addend));
  return b.finish();
}

// Relocations applied to `contents` of an object of `machine`, with their counts.
struct Relocated {
  std::vector<uint8_t> bytes;
  RelocationCounts counts;
};
Relocated apply(bool is64, uint16_t machine, Endian e, const std::vector<uint8_t>& contents, const std::vector<Sym>& syms,
                const std::vector<uint8_t>& relocs) {
  auto file = parse(relocatable(is64, machine, contents, syms, kShtRela, relocs, 1, e));
  EXPECT_TRUE(file) << to_string(file.error().code);
  if (!file) return {};
  Relocated r;
  auto out = relocated_contents(**file, *(*file)->section_by_name(".eh_frame"), contents, &r.counts);
  EXPECT_TRUE(out);
  if (out) r.bytes = std::move(*out);
  return r;
}

TEST(RelocationsTest, X86_64RelaLikeReadelf) {
  // Symbols 1: a section symbol, 2: a function at 0x40, 3: a file symbol (never a target).
  const std::vector<Sym> syms = {{"", 0, 0, kStbLocal, kSttSection}, {"f", 0x40, 8}, {"f.c", 0, 0, kStbLocal, kSttFile}};
  const std::vector<uint8_t> contents(32, 0xaa);
  const auto relocs = rela64({{4, 1, 2, 0x20},      // R_X86_64_PC32: S + A - P
                              {8, 2, 1, 1},         // R_X86_64_64:   S + A
                              {16, 2, 10, 2},       // R_X86_64_32
                              {20, 3, 10, 0},       // against the file symbol: skipped
                              {24, 1, 4, 0},        // R_X86_64_PLT32, not applied by readelf
                              {30, 1, 2, 0},        // the place runs past the section
                              {0, 9, 2, 0},         // no symbol 9
                              {0, 0, 0, 0}});       // R_X86_64_NONE
  auto file = parse(relocatable(true, kEmX86_64, contents, syms, kShtRela, relocs));
  ASSERT_TRUE(file) << to_string(file.error().code);
  const Section* target = (*file)->section_by_name(".eh_frame");
  ASSERT_NE(target, nullptr);
  RelocationCounts counts;
  auto out = relocated_contents(**file, *target, contents, &counts);
  ASSERT_TRUE(out);
  std::vector<uint8_t> expected = contents;
  patch(expected, 4, 0x20 - 4, 4, Endian::kLittle);
  patch(expected, 8, 0x41, 8, Endian::kLittle);
  patch(expected, 16, 0x42, 4, Endian::kLittle);
  EXPECT_EQ(*out, expected);
  EXPECT_EQ(counts.applied, 3u);
  EXPECT_EQ(counts.skipped, 4u);
}

TEST(RelocationsTest, I386RelTakesTheAddendFromThePlace) {
  const std::vector<Sym> syms = {{"g", 0x100, 4, kStbGlobal, kSttObject}};
  std::vector<uint8_t> contents(8, 0);
  patch(contents, 0, 0x10, 4, Endian::kLittle);
  patch(contents, 4, 0x8, 4, Endian::kLittle);
  SectionBuilder rel(Endian::kLittle);
  rel.u32(0).u32(1 << 8 | 1);  // R_386_32
  rel.u32(4).u32(1 << 8 | 2);  // R_386_PC32
  auto file = parse(relocatable(false, kEm386, contents, syms, kShtRel, rel.finish()));
  ASSERT_TRUE(file) << to_string(file.error().code);
  auto out = relocated_contents(**file, *(*file)->section_by_name(".eh_frame"), contents);
  ASSERT_TRUE(out);
  std::vector<uint8_t> expected(8, 0);
  patch(expected, 0, 0x110, 4, Endian::kLittle);
  patch(expected, 4, 0x100 + 0x8 - 4, 4, Endian::kLittle);
  EXPECT_EQ(*out, expected);
}

TEST(RelocationsTest, Aarch64RelaLikeReadelf) {
  const std::vector<Sym> syms = {{"", 0, 0, kStbLocal, kSttSection}, {"f", 0x40, 8}};
  const std::vector<uint8_t> contents(40, 0);
  const auto relocs = rela64({{0, 1, 261, 0x20},   // R_AARCH64_PREL32: S + A - P
                              {8, 2, 257, 1},      // R_AARCH64_ABS64
                              {16, 2, 258, 2},     // R_AARCH64_ABS32
                              {24, 1, 260, 0x30},  // R_AARCH64_PREL64
                              {32, 1, 256, 0},     // R_AARCH64_NONE (old number)
                              {32, 1, 275, 0}});   // ADR_PREL_PG_HI21: not a debug-section relocation
  auto file = parse(relocatable(true, kEmAarch64, contents, syms, kShtRela, relocs));
  ASSERT_TRUE(file) << to_string(file.error().code);
  RelocationCounts counts;
  auto out = relocated_contents(**file, *(*file)->section_by_name(".eh_frame"), contents, &counts);
  ASSERT_TRUE(out);
  std::vector<uint8_t> expected = contents;
  patch(expected, 0, 0x20, 4, Endian::kLittle);
  patch(expected, 8, 0x41, 8, Endian::kLittle);
  patch(expected, 16, 0x42, 4, Endian::kLittle);
  patch(expected, 24, 0x30 - 24, 8, Endian::kLittle);
  EXPECT_EQ(*out, expected);
  EXPECT_EQ(counts.applied, 4u);
  EXPECT_EQ(counts.skipped, 1u);
}

TEST(RelocationsTest, ArmRelTakesTheAddendFromThePlace) {
  const std::vector<Sym> syms = {{"g", 0x100, 4, kStbGlobal, kSttObject}};
  std::vector<uint8_t> contents(12, 0);
  patch(contents, 0, 0x10, 4, Endian::kLittle);
  patch(contents, 4, 0x8, 4, Endian::kLittle);
  SectionBuilder rel(Endian::kLittle);
  rel.u32(0).u32(1 << 8 | 2);  // R_ARM_ABS32
  rel.u32(4).u32(1 << 8 | 3);  // R_ARM_REL32
  rel.u32(8).u32(1 << 8 | 0);  // R_ARM_NONE
  auto file = parse(relocatable(false, kEmArm, contents, syms, kShtRel, rel.finish()));
  ASSERT_TRUE(file) << to_string(file.error().code);
  auto out = relocated_contents(**file, *(*file)->section_by_name(".eh_frame"), contents);
  ASSERT_TRUE(out);
  std::vector<uint8_t> expected(12, 0);
  patch(expected, 0, 0x110, 4, Endian::kLittle);
  patch(expected, 4, 0x100 + 0x8 - 4, 4, Endian::kLittle);
  EXPECT_EQ(*out, expected);
}

TEST(RelocationsTest, Ppc64AndS390xLikeReadelf) {
  struct Machine {
    uint16_t machine;
    Endian endian;
    uint64_t abs32, pc32, abs64, pc64, none, other;  // `other`: not a debug-section relocation
  };
  const Machine machines[] = {
      {kEmPpc64, Endian::kLittle, 1, 26, 38, 44, 0, 47},  // R_PPC64_ADDR32, REL32, ADDR64, REL64, NONE, TOC16
      {kEmPpc64, Endian::kBig, 1, 26, 38, 44, 0, 47},
      {kEmS390, Endian::kBig, 4, 5, 22, 23, 0, 19},  // R_390_32, PC32, 64, PC64, NONE, PC32DBL
  };
  const std::vector<Sym> syms = {{"", 0, 0, kStbLocal, kSttSection}, {"f", 0x40, 8}};
  const std::vector<uint8_t> contents(32, 0x11);
  for (const Machine& m : machines) {
    SCOPED_TRACE(testing::Message() << m.machine << (m.endian == Endian::kBig ? " big-endian" : " little-endian"));
    const auto r = apply(true, m.machine, m.endian, contents, syms,
                         rela64({{0, 1, m.pc32, 0x20},   // S + A - P
                                 {4, 2, m.abs32, 2},     // S + A
                                 {8, 2, m.abs64, 1},
                                 {16, 1, m.pc64, 0x30},
                                 {24, 1, m.none, 0},
                                 {24, 1, m.other, 0}},
                                m.endian));
    std::vector<uint8_t> expected = contents;
    patch(expected, 0, 0x20, 4, m.endian);
    patch(expected, 4, 0x42, 4, m.endian);
    patch(expected, 8, 0x41, 8, m.endian);
    patch(expected, 16, 0x30 - 16, 8, m.endian);
    EXPECT_EQ(r.bytes, expected);
    EXPECT_EQ(r.counts.applied, 4u);
    EXPECT_EQ(r.counts.skipped, 1u);
  }
}

TEST(RelocationsTest, Ppc64BigEndianStoresBigEndian) {
  const std::vector<Sym> syms = {{"f", 0x1234, 8}};
  const std::vector<uint8_t> contents(16, 0);
  const auto r = apply(true, kEmPpc64, Endian::kBig, contents, syms,
                       rela64({{0, 1, 26, 0x10},      // R_PPC64_REL32
                               {8, 1, 38, 0x100}},    // R_PPC64_ADDR64
                              Endian::kBig));
  const std::vector<uint8_t> expected = {0x00, 0x00, 0x12, 0x44, 0, 0, 0, 0,
                                         0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x13, 0x34};
  EXPECT_EQ(r.bytes, expected);
  EXPECT_EQ(r.counts.applied, 2u);
}

TEST(RelocationsTest, Ppc32AndS390ThirtyOneBitWithSignedAddends) {
  struct Machine {
    uint16_t machine;
    // `other`: a type readelf leaves alone (ppc64's ADDR64 number on 32-bit PowerPC; R_390_PC32DBL).
    int64_t abs32, pc32, other;
  };
  const Machine machines[] = {{kEmPpc, 1, 26, 38}, {kEmS390, 4, 5, 19}};
  const std::vector<Sym> syms = {{"f", 0x100, 8}};
  const std::vector<uint8_t> contents(12, 0xff);
  for (const Machine& m : machines) {
    SCOPED_TRACE(m.machine);
    const auto r = apply(false, m.machine, Endian::kBig, contents, syms,
                         rela32({{0, 1, m.abs32, -0x10},  // S + A, A negative
                                 {4, 1, m.pc32, -4},      // S + A - P
                                 {8, 1, 0, 0},            // R_PPC_NONE, R_390_NONE
                                 {8, 1, m.other, 0}},
                                Endian::kBig));
    std::vector<uint8_t> expected = contents;
    patch(expected, 0, 0xf0, 4, Endian::kBig);
    patch(expected, 4, 0x100 - 4 - 4, 4, Endian::kBig);
    EXPECT_EQ(r.bytes, expected);
    EXPECT_EQ(r.counts.applied, 2u);
    EXPECT_EQ(r.counts.skipped, 1u);
  }
}

TEST(RelocationsTest, RiscvAddSubPairsLikeReadelf) {
  // .L1 at 0x10 and .L2 at 0x5c in .text: the assembler leaves the
  // differences .L2 - .L1 to ADD/SUB pairs of relocations at one place.
  const std::vector<Sym> syms = {{".L1", 0x10, 0, kStbLocal, kSttNotype}, {".L2", 0x5c, 0, kStbLocal, kSttNotype},
                                 {"", 0, 0, kStbLocal, kSttSection}};
  std::vector<uint8_t> contents(40, 0);
  contents[20] = 0x40;  // DW_CFA_advance_loc with a zero delta: SET6/SUB6 keep the opcode bits
  contents[21] = 0xc5;  // SUB6 alone: the top bits kept, the low six bits are its minuend
  const auto r = apply(true, kEmRiscv, Endian::kLittle, contents, syms,
                       rela64({{0, 2, 35, 0},      // R_RISCV_ADD32
                               {0, 1, 39, 0},      // R_RISCV_SUB32: .L2 - .L1 = 0x4c
                               {4, 2, 36, 1},      // R_RISCV_ADD64
                               {4, 1, 40, 0},      // R_RISCV_SUB64: 0x4d
                               {12, 2, 34, 0},     // R_RISCV_ADD16
                               {12, 1, 38, 0},     // R_RISCV_SUB16
                               {14, 2, 33, 0},     // R_RISCV_ADD8
                               {14, 1, 37, 0},     // R_RISCV_SUB8
                               {15, 1, 54, 0},     // R_RISCV_SET8: .L1 = 0x10
                               {16, 2, 55, 0},     // R_RISCV_SET16: .L2 = 0x5c
                               {20, 2, 53, 0},     // R_RISCV_SET6: 0x5c & 0x3f, with 0x40's top bits
                               {20, 1, 52, 0},     // R_RISCV_SUB6: (0x1c - 0x10) & 0x3f
                               {21, 1, 52, 0},     // R_RISCV_SUB6 without a SET6: (5 - 0x10) & 0x3f
                               {24, 3, 57, 0x8},   // R_RISCV_32_PCREL: S + A - P
                               {28, 2, 1, 0},      // R_RISCV_32
                               {32, 2, 2, 0},      // R_RISCV_64
                               {28, 2, 56, 0},     // R_RISCV_SET32: readelf does not apply it
                               {0, 0, 0, 0}}));    // R_RISCV_NONE
  std::vector<uint8_t> expected = contents;
  patch(expected, 0, 0x4c, 4, Endian::kLittle);
  patch(expected, 4, 0x4d, 8, Endian::kLittle);
  patch(expected, 12, 0x4c, 2, Endian::kLittle);
  expected[14] = 0x4c;
  expected[15] = 0x10;
  patch(expected, 16, 0x5c, 2, Endian::kLittle);
  expected[20] = 0x40 | 0x0c;
  expected[21] = static_cast<uint8_t>(0xc0 | ((5 - 0x10) & 0x3f));
  patch(expected, 24, 0x8 - 24, 4, Endian::kLittle);
  patch(expected, 28, 0x5c, 4, Endian::kLittle);
  patch(expected, 32, 0x5c, 8, Endian::kLittle);
  EXPECT_EQ(r.bytes, expected);
  EXPECT_EQ(r.counts.applied, 16u);
  EXPECT_EQ(r.counts.skipped, 1u);
}

TEST(RelocationsTest, RiscvAddWithoutSubAddsInPlace) {
  // Each relocation stands alone, as in readelf: an ADD with no SUB after it
  // adds its symbol to what is there, a SUB with no ADD before it subtracts.
  const std::vector<Sym> syms = {{"f", 0x30, 0}};
  std::vector<uint8_t> contents(8, 0);
  patch(contents, 0, 0x100, 4, Endian::kLittle);
  patch(contents, 4, 0x100, 4, Endian::kLittle);
  const auto r = apply(true, kEmRiscv, Endian::kLittle, contents, syms,
                       rela64({{0, 1, 35, 2}, {4, 1, 39, 2}}));  // ADD32, SUB32
  std::vector<uint8_t> expected(8, 0);
  patch(expected, 0, 0x132, 4, Endian::kLittle);
  patch(expected, 4, 0xd2, 4, Endian::kLittle);
  EXPECT_EQ(r.bytes, expected);
}

TEST(RelocationsTest, Riscv32) {
  const std::vector<Sym> syms = {{".L1", 0x10, 0, kStbLocal, kSttNotype}, {".L2", 0x5c, 0, kStbLocal, kSttNotype}};
  const std::vector<uint8_t> contents(8, 0);
  const auto r = apply(false, kEmRiscv, Endian::kLittle, contents, syms,
                       rela32({{0, 2, 35, 0}, {0, 1, 39, 0}, {4, 1, 1, -8}}));  // ADD32, SUB32, R_RISCV_32
  std::vector<uint8_t> expected(8, 0);
  patch(expected, 0, 0x4c, 4, Endian::kLittle);
  patch(expected, 4, 0x8, 4, Endian::kLittle);
  EXPECT_EQ(r.bytes, expected);
}

TEST(RelocationsTest, HostileEntriesAreSkippedAndCounted) {
  const std::vector<Sym> syms = {{"f", 0x40, 8}, {"f.c", 0, 0, kStbLocal, kSttFile}};
  const std::vector<uint8_t> contents(16, 0x5a);
  for (const uint16_t machine : {kEmPpc64, kEmS390, kEmRiscv}) {
    const uint32_t abs64 = machine == kEmPpc64 ? 38 : machine == kEmS390 ? 22 : 2;
    const auto r = apply(true, machine, Endian::kBig, contents, syms,
                         rela64({{12, 1, abs64, 0},                   // 8 bytes at 12 of 16
                                 {~uint64_t{0} - 3, 1, abs64, 0},     // a place that wraps around
                                 {16, 1, abs64, 0},                   // at the end
                                 {0, 0xffffff, abs64, 0},             // no such symbol
                                 {0, 2, abs64, 0},                    // against STT_FILE
                                 {0, 1, 0xffffffffu, 0}},             // no such type
                                Endian::kBig));
    EXPECT_EQ(r.bytes, contents) << machine;
    EXPECT_EQ(r.counts.applied, 0u) << machine;
    EXPECT_EQ(r.counts.skipped, 6u) << machine;
  }
  // A section of relocations cut short: its whole entries are applied, the stub ignored.
  auto relocs = rela64({{0, 1, 35, 0}, {8, 1, 35, 0}});
  relocs.resize(relocs.size() - 5);
  const auto r = apply(true, kEmRiscv, Endian::kLittle, contents, syms, relocs);
  EXPECT_EQ(r.counts.applied, 1u);
}

TEST(RelocationsTest, OnlyTheSectionsAimedAtTheTarget) {
  const std::vector<Sym> syms = {{"f", 0x40, 8}};
  const std::vector<uint8_t> contents(8, 0);
  // The relocations are aimed at the symbol table (section 2), not at .eh_frame.
  auto file = parse(relocatable(true, kEmX86_64, contents, syms, kShtRela, rela64({{0, 1, 1, 0}}), 2));
  ASSERT_TRUE(file);
  RelocationCounts counts;
  auto out = relocated_contents(**file, *(*file)->section_by_name(".eh_frame"), contents, &counts);
  ASSERT_TRUE(out);
  EXPECT_EQ(*out, contents);
  EXPECT_EQ(counts.applied + counts.skipped, 0u);
}

TEST(RelocationsTest, UnreadableRelocationSectionIsAnError) {
  const std::vector<Sym> syms = {{"f", 0x40, 8}};
  const std::vector<uint8_t> contents(8, 0);
  auto bytes = relocatable(true, kEmX86_64, contents, syms, kShtRela, rela64({{0, 1, 1, 0}}));
  auto file = parse(bytes);
  ASSERT_TRUE(file);
  const Section* rela = (*file)->section_by_name(".rela.eh_frame");
  ASSERT_NE(rela, nullptr);
  // Point its sh_offset past the end of the file.
  uint64_t shoff;
  std::memcpy(&shoff, bytes.data() + 0x28, sizeof shoff);  // e_shoff of an ELF64 header
  patch(bytes, shoff + 64 * rela->index + 24, bytes.size() + 64, 8, Endian::kLittle);  // its sh_offset
  auto broken = parse(bytes);
  ASSERT_TRUE(broken) << to_string(broken.error().code);
  auto out = relocated_contents(**broken, *(*broken)->section_by_name(".eh_frame"), contents);
  ASSERT_FALSE(out);
  EXPECT_EQ(out.error().code, ErrorCode::kSectionOutOfFile);
}

}  // namespace
}  // namespace framewalk::elf

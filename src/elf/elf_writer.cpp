#include "elf/elf_writer.hpp"

#include "base/text.hpp"

#include <algorithm>
#include <cstring>

namespace framewalk::elf {

namespace {

constexpr uint16_t kPnXnum = 0xffff;
constexpr uint32_t kShnLoreserve = 0xff00, kShnXindex = 0xffff;

// The header fields the writer patches, as stored.
struct RawHeader {
  bool is_64 = true;
  Endian endian = Endian::kLittle;
  uint64_t phoff = 0, shoff = 0;
  uint16_t phentsize = 0, phnum16 = 0, shentsize = 0, shnum16 = 0, shstrndx16 = 0;
  uint64_t phnum = 0;     // resolved (PN_XNUM)
  uint64_t shnum = 0;     // resolved (extended numbering)
  uint32_t shstrndx = 0;  // resolved

  unsigned off_phoff() const { return is_64 ? 32 : 28; }
  unsigned off_shoff() const { return is_64 ? 40 : 32; }
  unsigned off_phnum() const { return is_64 ? 56 : 44; }
  unsigned off_shnum() const { return is_64 ? 60 : 48; }
  unsigned off_shstrndx() const { return is_64 ? 62 : 50; }
  unsigned word() const { return is_64 ? 8 : 4; }
};

Result<RawHeader> read_header(const ElfFile& file) {
  RawHeader h;
  h.is_64 = file.is_64();
  h.endian = file.endian();
  ByteReader r(file.image(), h.endian);
  FW_CHECK(r.seek(h.off_phoff()));
  FW_TRY(h.phoff, r.address(h.word()));
  FW_TRY(h.shoff, r.address(h.word()));
  FW_CHECK(r.seek(h.is_64 ? 54 : 42));
  FW_TRY(h.phentsize, r.u16());
  FW_TRY(h.phnum16, r.u16());
  FW_TRY(h.shentsize, r.u16());
  FW_TRY(h.shnum16, r.u16());
  FW_TRY(h.shstrndx16, r.u16());
  h.shnum = file.sections().size();
  h.phnum = file.segments().size();
  h.shstrndx = h.shstrndx16;
  if (h.shstrndx16 == kShnXindex && !file.sections().empty()) h.shstrndx = file.sections()[0].link;
  return h;
}

void put(std::vector<uint8_t>& out, uint64_t pos, uint64_t v, unsigned n, Endian e) {
  for (unsigned i = 0; i < n; ++i) {
    const unsigned shift = e == Endian::kLittle ? 8 * i : 8 * (n - 1 - i);
    out[pos + i] = static_cast<uint8_t>(v >> shift);
  }
}

uint64_t align_up(uint64_t v, uint64_t a) { return a <= 1 ? v : (v + a - 1) / a * a; }


// An ELF program header in either class, for writing.
struct Phdr {
  uint32_t type = 0, flags = 0;
  uint64_t offset = 0, vaddr = 0, paddr = 0, filesz = 0, memsz = 0, align = 0;
};

void write_phdr(std::vector<uint8_t>& out, uint64_t at, const Phdr& p, const RawHeader& h) {
  const Endian e = h.endian;
  if (h.is_64) {
    put(out, at + 0, p.type, 4, e);
    put(out, at + 4, p.flags, 4, e);
    put(out, at + 8, p.offset, 8, e);
    put(out, at + 16, p.vaddr, 8, e);
    put(out, at + 24, p.paddr, 8, e);
    put(out, at + 32, p.filesz, 8, e);
    put(out, at + 40, p.memsz, 8, e);
    put(out, at + 48, p.align, 8, e);
  } else {
    put(out, at + 0, p.type, 4, e);
    put(out, at + 4, p.offset, 4, e);
    put(out, at + 8, p.vaddr, 4, e);
    put(out, at + 12, p.paddr, 4, e);
    put(out, at + 16, p.filesz, 4, e);
    put(out, at + 20, p.memsz, 4, e);
    put(out, at + 24, p.flags, 4, e);
    put(out, at + 28, p.align, 4, e);
  }
}

Result<Phdr> read_phdr(Bytes image, uint64_t at, const RawHeader& h) {
  if (at > image.size() || h.phentsize > image.size() - at) return Error{ErrorCode::kSectionOutOfFile, at};
  ByteReader r(image.subspan(at, h.phentsize), h.endian, at);
  Phdr p;
  if (h.is_64) {
    FW_TRY(p.type, r.u32());
    FW_TRY(p.flags, r.u32());
    FW_TRY(p.offset, r.u64());
    FW_TRY(p.vaddr, r.u64());
    FW_TRY(p.paddr, r.u64());
    FW_TRY(p.filesz, r.u64());
    FW_TRY(p.memsz, r.u64());
    FW_TRY(p.align, r.u64());
  } else {
    FW_TRY(p.type, r.u32());
    FW_TRY(uint32_t offset, r.u32());
    FW_TRY(uint32_t vaddr, r.u32());
    FW_TRY(uint32_t paddr, r.u32());
    FW_TRY(uint32_t filesz, r.u32());
    FW_TRY(uint32_t memsz, r.u32());
    FW_TRY(p.flags, r.u32());
    FW_TRY(uint32_t align, r.u32());
    p.offset = offset;
    p.vaddr = vaddr;
    p.paddr = paddr;
    p.filesz = filesz;
    p.memsz = memsz;
    p.align = align;
  }
  return p;
}

}  // namespace

Result<SectionPlacement> plan_added_section(const ElfFile& file, SegmentPolicy policy, uint64_t alignment) {
  FW_TRY(RawHeader h, read_header(file));
  SectionPlacement p;
  p.alignment = std::max<uint64_t>(alignment, 1);
  const uint64_t file_size = file.image().size();
  const uint64_t addr_limit = h.is_64 ? ~uint64_t{0} : 0xffffffffu;

  // The first page past every segment, in the file's page size.
  uint64_t page = 0x1000, end = 0, bias = 0;
  bool have_load = false;
  for (const Segment& s : file.segments()) {
    if (s.type != kPtLoad) continue;
    if (!have_load) bias = s.vaddr - s.offset;  // the first PT_LOAD's
    have_load = true;
    page = std::max(page, s.align);
    if (s.memsz > addr_limit - s.vaddr) return Error{ErrorCode::kUnsupportedElf, h.phoff};
    end = std::max(end, s.vaddr + s.memsz);
  }
  const uint64_t next_page = align_up(end, page);

  std::string why_not;
  if (policy == SegmentPolicy::kNever) why_not = "no segment asked for";
  else if (!have_load) why_not = "the file has no PT_LOAD";
  else if (h.phoff == 0 || h.phentsize != (h.is_64 ? 56 : 32)) why_not = "no program header table";
  else if (h.phnum16 == kPnXnum || h.phnum + 2 >= kPnXnum) why_not = "too many program headers";
  else if (file.type() == kEtRel) why_not = "a relocatable object";

  if (why_not.empty()) {
    // Table and section in a new PT_LOAD whose offset is its address less the bias.
    uint64_t vaddr = next_page;
    if (vaddr - bias < file_size) vaddr = align_up(file_size + bias, page);
    const uint64_t offset = vaddr - bias;
    const uint64_t table = (h.phnum + 2) * h.phentsize;
    const uint64_t data_offset = align_up(offset + table, p.alignment);
    if (offset - file_size > kMaxSegmentPadding) {
      why_not = "a new segment would need " + std::to_string(offset - file_size) + " bytes of padding";
    } else if (vaddr > addr_limit - (data_offset - offset) - (uint64_t{1} << 30)) {
      why_not = "no address space left past the last segment";
    } else {
      p.in_segment = true;
      p.padding = offset - file_size;
      p.phdr_offset = offset;
      p.phdr_address = vaddr;
      p.file_offset = data_offset;
      p.address = vaddr + (data_offset - offset);
      p.note = "allocated at " + hex(p.address) + " in a new PT_LOAD with PT_GNU_SFRAME (program headers moved to file offset " +
               hex(offset) + ")";
      return p;
    }
  }
  p.file_offset = align_up(file_size, p.alignment);
  // Where it would have been loaded: the PC-relative fields are computed against it.
  p.address = have_load ? next_page + (p.file_offset % page) : 0;
  p.note = "not allocated (" + why_not + "); sh_addr " + hex(p.address) + " is the address the section was encoded for";
  return p;
}

Result<std::vector<uint8_t>> add_section(const ElfFile& file, const SectionPlacement& placement,
                                         const NewSection& section) {
  FW_TRY(RawHeader h, read_header(file));
  const Bytes image = file.image();
  const Endian e = h.endian;
  const unsigned w = h.word();
  const uint64_t shentsize = h.is_64 ? 64 : 40;
  if (placement.file_offset < image.size()) return Error{ErrorCode::kBadLength, placement.file_offset};

  std::vector<uint8_t> out(image.begin(), image.end());

  // Program headers: the old ones, the new PT_LOAD after the last PT_LOAD, the
  // section's segment last.
  if (placement.in_segment) {
    std::vector<Phdr> phdrs;
    size_t last_load = 0;
    for (uint64_t i = 0; i < h.phnum; ++i) {
      FW_TRY(Phdr ph, read_phdr(image, h.phoff + i * h.phentsize, h));
      phdrs.push_back(ph);
      if (phdrs.back().type == kPtLoad) last_load = phdrs.size();
    }
    const uint64_t table = (h.phnum + 2) * h.phentsize;
    uint64_t page = 0x1000;
    for (const Phdr& ph : phdrs)
      if (ph.type == kPtLoad) page = std::max(page, ph.align);
    for (Phdr& ph : phdrs)
      if (ph.type == kPtPhdr) {
        ph.offset = placement.phdr_offset;
        ph.vaddr = ph.paddr = placement.phdr_address;
        ph.filesz = ph.memsz = table;
      }
    Phdr load;
    load.type = kPtLoad;
    load.flags = kPfR;
    load.offset = placement.phdr_offset;
    load.vaddr = load.paddr = placement.phdr_address;
    load.filesz = load.memsz = placement.file_offset + section.data.size() - placement.phdr_offset;
    load.align = page;
    phdrs.insert(phdrs.begin() + static_cast<std::ptrdiff_t>(last_load), load);
    Phdr named;
    named.type = section.segment_type;
    named.flags = kPfR;
    named.offset = placement.file_offset;
    named.vaddr = named.paddr = placement.address;
    named.filesz = named.memsz = section.data.size();
    named.align = placement.alignment;
    phdrs.push_back(named);
    out.resize(placement.phdr_offset + table, 0);
    for (size_t i = 0; i < phdrs.size(); ++i) write_phdr(out, placement.phdr_offset + i * h.phentsize, phdrs[i], h);
    put(out, h.off_phoff(), placement.phdr_offset, w, e);
    put(out, h.off_phnum(), phdrs.size(), 2, e);
  }

  // The section data.
  if (placement.file_offset < out.size()) return Error{ErrorCode::kBadLength, placement.file_offset};
  out.resize(placement.file_offset, 0);
  out.insert(out.end(), section.data.begin(), section.data.end());

  // Section names: the old string table plus the new name (a new .shstrtab
  // section when the file had none).
  const std::vector<Section>& sections = file.sections();
  const bool have_strtab = h.shstrndx != 0 && h.shstrndx < sections.size() &&
                           sections[h.shstrndx].type != kShtNobits;
  std::vector<uint8_t> names;
  if (have_strtab) {
    FW_TRY(Bytes old, file.section_data(sections[h.shstrndx]));
    names.assign(old.begin(), old.end());
  }
  if (names.empty()) names.push_back(0);
  const uint64_t section_name = names.size();
  names.insert(names.end(), section.name.begin(), section.name.end());
  names.push_back(0);
  uint64_t strtab_name = 0;
  if (!have_strtab) {
    strtab_name = names.size();
    const char* n = ".shstrtab";
    names.insert(names.end(), n, n + std::strlen(n) + 1);
  }
  const uint64_t names_offset = out.size();
  out.insert(out.end(), names.begin(), names.end());

  // Section headers: a copy of the old table (or a null entry), patched.
  out.resize(align_up(out.size(), w), 0);
  const uint64_t shoff = out.size();
  const uint64_t old_count = sections.size();
  if (old_count > 0) {
    if (h.shoff > image.size() || old_count * shentsize > image.size() - h.shoff)
      return Error{ErrorCode::kSectionOutOfFile, h.shoff};
    out.insert(out.end(), image.begin() + static_cast<std::ptrdiff_t>(h.shoff),
               image.begin() + static_cast<std::ptrdiff_t>(h.shoff + old_count * shentsize));
  } else {
    out.resize(out.size() + shentsize, 0);
  }
  const uint64_t base_count = std::max<uint64_t>(old_count, 1);
  const uint64_t new_count = base_count + 1 + (have_strtab ? 0 : 1);
  out.resize(shoff + new_count * shentsize, 0);
  auto field = [&](uint64_t index, unsigned off64, unsigned off32) { return shoff + index * shentsize + (h.is_64 ? off64 : off32); };
  auto set_header = [&](uint64_t index, uint64_t name, uint32_t type, uint64_t flags, uint64_t addr, uint64_t offset,
                        uint64_t size, uint64_t align) {
    put(out, field(index, 0, 0), name, 4, e);
    put(out, field(index, 4, 4), type, 4, e);
    put(out, field(index, 8, 8), flags, w, e);
    put(out, field(index, 16, 12), addr, w, e);
    put(out, field(index, 24, 16), offset, w, e);
    put(out, field(index, 32, 20), size, w, e);
    put(out, field(index, 40, 24), 0, 4, e);
    put(out, field(index, 44, 28), 0, 4, e);
    put(out, field(index, 48, 32), align, w, e);
    put(out, field(index, 56, 36), 0, w, e);
  };
  const uint64_t new_index = base_count;
  set_header(new_index, section_name, section.type, placement.in_segment ? kShfAlloc : 0, placement.address,
             placement.file_offset, section.data.size(), placement.alignment);
  uint64_t strtab_index = h.shstrndx;
  if (have_strtab) {
    put(out, field(strtab_index, 24, 16), names_offset, w, e);
    put(out, field(strtab_index, 32, 20), names.size(), w, e);
  } else {
    strtab_index = new_index + 1;
    set_header(strtab_index, strtab_name, kShtStrtab, 0, 0, names_offset, names.size(), 1);
  }

  // ELF header: table offset, counts (extended numbering past SHN_LORESERVE).
  put(out, h.off_shoff(), shoff, w, e);
  put(out, h.is_64 ? 58 : 46, shentsize, 2, e);
  if (new_count >= kShnLoreserve) {
    put(out, h.off_shnum(), 0, 2, e);
    put(out, field(0, 32, 20), new_count, w, e);
  } else {
    put(out, h.off_shnum(), new_count, 2, e);
  }
  if (strtab_index >= kShnLoreserve) {
    put(out, h.off_shstrndx(), kShnXindex, 2, e);
    put(out, field(0, 40, 24), strtab_index, 4, e);
  } else {
    put(out, h.off_shstrndx(), strtab_index, 2, e);
  }
  return out;
}

}  // namespace framewalk::elf

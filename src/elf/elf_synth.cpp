#include "elf/elf_synth.hpp"

#include "elf/elf_file.hpp"

namespace framewalk::elf {

namespace {

class Writer {
 public:
  Writer(bool is64, Endian endian) : is64_(is64), endian_(endian) {}
  void u8(uint8_t v) { out_.push_back(v); }
  void uint(uint64_t v, unsigned size) {
    for (unsigned i = 0; i < size; ++i)
      out_.push_back(static_cast<uint8_t>(v >> (8 * (endian_ == Endian::kLittle ? i : size - 1 - i))));
  }
  void u16(uint64_t v) { uint(v, 2); }
  void u32(uint64_t v) { uint(v, 4); }
  void addr(uint64_t v) { uint(v, is64_ ? 8 : 4); }  // an address or an offset of the class
  void bytes(const std::vector<uint8_t>& b) { out_.insert(out_.end(), b.begin(), b.end()); }
  void align(size_t a) {
    while (out_.size() % a) out_.push_back(0);
  }
  size_t size() const { return out_.size(); }
  std::vector<uint8_t>& out() { return out_; }

 private:
  bool is64_;
  Endian endian_;
  std::vector<uint8_t> out_;
};

}  // namespace

Result<std::vector<uint8_t>> synthesize_elf(const SyntheticImage& image) {
  if (!image.code.empty() && image.code.size() != image.code_size) return Error{ErrorCode::kBadArgument, 0};
  const bool is64 = image.is64;
  if (!is64) {
    for (uint64_t a : {image.code_address, image.code_address + image.code_size, image.eh_frame_address})
      if (a > 0xffffffffu) return Error{ErrorCode::kBadArgument, a};
  }
  const unsigned ehsize = is64 ? 64 : 52, phentsize = is64 ? 56 : 32, shentsize = is64 ? 64 : 40;
  const unsigned symsize = is64 ? 24 : 16;
  // The file: header, one program header, the code, .eh_frame, .symtab,
  // .strtab, .shstrtab, section headers.
  Writer w(is64, image.endian);
  w.out().resize(ehsize + phentsize);
  w.align(16);
  const uint64_t code_offset = w.size();
  w.bytes(image.code);
  w.align(8);
  const uint64_t eh_offset = w.size();
  w.bytes(image.eh_frame);
  w.align(8);
  std::string strtab(1, '\0');
  const uint64_t sym_offset = w.size();
  for (unsigned i = 0; i < symsize; ++i) w.u8(0);  // the null symbol
  for (const SyntheticSymbol& s : image.symbols) {
    const uint32_t name = static_cast<uint32_t>(strtab.size());
    strtab += s.name;
    strtab += '\0';
    const uint8_t info = 0x12;  // STB_GLOBAL, STT_FUNC
    if (is64) {
      w.u32(name); w.u8(info); w.u8(0); w.u16(1);  // in .text
      w.addr(s.address); w.addr(s.size);
    } else {
      w.u32(name); w.addr(s.address); w.addr(s.size); w.u8(info); w.u8(0); w.u16(1);
    }
  }
  const uint64_t sym_size = w.size() - sym_offset;
  const uint64_t str_offset = w.size();
  for (char c : strtab) w.u8(static_cast<uint8_t>(c));
  const std::string shstrtab = std::string("\0.text\0.eh_frame\0.symtab\0.strtab\0.shstrtab\0", 43);
  const uint64_t shstr_offset = w.size();
  for (char c : shstrtab) w.u8(static_cast<uint8_t>(c));
  w.align(8);
  const uint64_t sh_offset = w.size();
  auto section = [&](uint32_t name, uint32_t type, uint64_t flags, uint64_t addr, uint64_t offset, uint64_t size,
                     uint32_t link, uint32_t info, uint64_t align, uint64_t entsize) {
    w.u32(name); w.u32(type);
    if (is64) {
      w.addr(flags); w.addr(addr); w.addr(offset); w.addr(size);
      w.u32(link); w.u32(info); w.addr(align); w.addr(entsize);
    } else {
      w.u32(flags); w.u32(addr); w.u32(offset); w.u32(size);
      w.u32(link); w.u32(info); w.u32(align); w.u32(entsize);
    }
  };
  section(0, kShtNull, 0, 0, 0, 0, 0, 0, 0, 0);
  section(1, image.code.empty() ? kShtNobits : kShtProgbits, kShfAlloc | kShfExecinstr, image.code_address,
          code_offset, image.code_size, 0, 0, 16, 0);
  section(7, kShtProgbits, kShfAlloc, image.eh_frame_address, eh_offset, image.eh_frame.size(), 0, 0, 8, 0);
  section(17, kShtSymtab, 0, 0, sym_offset, sym_size, 4, 1, 8, symsize);
  section(25, kShtStrtab, 0, 0, str_offset, strtab.size(), 0, 0, 1, 0);
  section(33, kShtStrtab, 0, 0, shstr_offset, shstrtab.size(), 0, 0, 1, 0);
  std::vector<uint8_t> out = std::move(w.out());
  // The header and the program header, written over the space left for them.
  Writer h(is64, image.endian);
  const uint8_t ident[16] = {0x7f, 'E', 'L', 'F', static_cast<uint8_t>(is64 ? 2 : 1),
                             static_cast<uint8_t>(image.endian == Endian::kLittle ? 1 : 2), 1};
  for (uint8_t b : ident) h.u8(b);
  h.u16(kEtDyn);
  h.u16(image.machine);
  h.u32(1);
  h.addr(0);                // e_entry
  h.addr(ehsize);           // e_phoff
  h.addr(sh_offset);        // e_shoff
  h.u32(0);                 // e_flags
  h.u16(ehsize); h.u16(phentsize); h.u16(1); h.u16(shentsize); h.u16(6); h.u16(5);
  h.u32(kPtLoad);
  if (is64) {
    h.u32(kPfR | kPfX);
    h.addr(code_offset); h.addr(image.code_address); h.addr(image.code_address);
    h.addr(image.code.size()); h.addr(image.code_size); h.addr(16);
  } else {
    h.u32(code_offset); h.u32(image.code_address); h.u32(image.code_address);
    h.u32(image.code.size()); h.u32(image.code_size); h.u32(kPfR | kPfX); h.u32(16);
  }
  std::copy(h.out().begin(), h.out().end(), out.begin());
  return out;
}

}  // namespace framewalk::elf

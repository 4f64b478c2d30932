#include "support/tiny_elf.hpp"

#include <cstring>

#include "elf/elf_file.hpp"

namespace framewalk::test {

namespace {

class Image {
 public:
  Image(bool is64, Endian e) : is64_(is64), e_(e) {}
  void put(uint64_t pos, uint64_t v, unsigned n) {
    if (bytes.size() < pos + n) bytes.resize(pos + n, 0);
    for (unsigned i = 0; i < n; ++i) bytes[pos + i] = static_cast<uint8_t>(v >> (e_ == Endian::kLittle ? 8 * i : 8 * (n - 1 - i)));
  }
  void word(uint64_t pos, uint64_t v) { put(pos, v, is64_ ? 8 : 4); }
  std::vector<uint8_t> bytes;

 private:
  bool is64_;
  Endian e_;
};

}  // namespace

std::vector<uint8_t> tiny_elf(bool is64, Endian e, bool with_sections) {
  Image m(is64, e);
  const unsigned ehsize = is64 ? 64 : 52, phentsize = is64 ? 56 : 32, shentsize = is64 ? 64 : 40;
  m.bytes.resize(0x300, 0);
  std::memcpy(m.bytes.data(), "\x7f" "ELF", 4);
  m.bytes[4] = is64 ? 2 : 1;
  m.bytes[5] = e == Endian::kLittle ? 1 : 2;
  m.bytes[6] = 1;
  m.put(16, elf::kEtDyn, 2);
  m.put(18, is64 ? 62 : 3, 2);
  m.put(20, 1, 4);
  const unsigned w = is64 ? 8 : 4;
  m.word(24 + w, ehsize);                    // e_phoff
  m.word(24 + 2 * w, with_sections ? 0x200 : 0);  // e_shoff
  const unsigned after = 24 + 3 * w + 4;
  m.put(after, ehsize, 2);
  m.put(after + 2, phentsize, 2);
  m.put(after + 4, 2, 2);
  m.put(after + 6, shentsize, 2);
  m.put(after + 8, with_sections ? 3 : 0, 2);
  m.put(after + 10, with_sections ? 2 : 0, 2);
  auto phdr = [&](unsigned i, uint32_t type, uint64_t off, uint64_t vaddr, uint64_t size, uint64_t align) {
    const uint64_t at = ehsize + i * phentsize;
    m.put(at, type, 4);
    if (is64) {
      m.put(at + 4, 4, 4);
      m.put(at + 8, off, 8);
      m.put(at + 16, vaddr, 8);
      m.put(at + 24, vaddr, 8);
      m.put(at + 32, size, 8);
      m.put(at + 40, size, 8);
      m.put(at + 48, align, 8);
    } else {
      m.put(at + 4, off, 4);
      m.put(at + 8, vaddr, 4);
      m.put(at + 12, vaddr, 4);
      m.put(at + 16, size, 4);
      m.put(at + 20, size, 4);
      m.put(at + 24, 4, 4);
      m.put(at + 28, align, 4);
    }
  };
  phdr(0, elf::kPtLoad, 0, 0x10000, 0x300, 0x1000);
  phdr(1, elf::kPtNote, 0x100, 0x10100, 0x10, 4);
  const char names[] = "\0.text\0.shstrtab";
  std::memcpy(m.bytes.data() + 0x180, names, sizeof names);
  if (with_sections) {
    auto shdr = [&](unsigned i, uint32_t name, uint32_t type, uint64_t flags, uint64_t addr, uint64_t off, uint64_t size) {
      const uint64_t at = 0x200 + i * shentsize;
      m.put(at, name, 4);
      m.put(at + 4, type, 4);
      m.word(at + 8, flags);
      m.word(at + (is64 ? 16 : 12), addr);
      m.word(at + (is64 ? 24 : 16), off);
      m.word(at + (is64 ? 32 : 20), size);
    };
    shdr(1, 1, elf::kShtProgbits, elf::kShfAlloc | elf::kShfExecinstr, 0x10100, 0x100, 0x10);
    shdr(2, 7, elf::kShtStrtab, 0, 0, 0x180, sizeof names);
  }
  return m.bytes;
}

}  // namespace framewalk::test

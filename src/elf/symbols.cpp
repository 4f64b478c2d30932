#include "elf/symbols.hpp"

#include <algorithm>
#include <cstring>

namespace framewalk::elf {

namespace {
constexpr uint8_t kSttFunc = 2, kSttGnuIfunc = 10;
constexpr uint8_t kStbLocal = 0, kStbGlobal = 1, kStbWeak = 2;

// Higher is preferred when several symbols share an address.
int binding_rank(uint8_t binding) {
  switch (binding) {
    case kStbGlobal: return 3;
    case kStbWeak: return 2;
    case kStbLocal: return 1;
    default: return 0;
  }
}
}  // namespace

SymbolTable SymbolTable::load(std::shared_ptr<const ElfFile> file) {
  SymbolTable table;
  table.merge(std::move(file));
  return table;
}

void SymbolTable::merge(std::shared_ptr<const ElfFile> file) {
  for (const Section& s : file->sections())
    if (s.type == kShtSymtab || s.type == kShtDynsym) add_from(*file, s);
  files_.push_back(std::move(file));
  finish();
}

void SymbolTable::add_from(const ElfFile& file, const Section& table) {
  if (table.link >= file.sections().size()) return;
  auto data = file.section_data(table);
  auto strings = file.section_data(file.sections()[table.link]);
  if (!data || !strings) return;
  const size_t entsize = file.is_64() ? 24 : 16;
  const size_t count = data->size() / entsize;
  symbols_.reserve(symbols_.size() + count);
  for (size_t i = 1; i < count; ++i) {
    ByteReader r(data->subspan(i * entsize, entsize), file.endian());
    uint32_t name_off = *r.u32();
    uint64_t value, size;
    uint8_t info;
    uint16_t shndx;
    if (file.is_64()) {
      info = *r.u8();
      (void)*r.u8();
      shndx = *r.u16();
      value = *r.u64();
      size = *r.u64();
    } else {
      value = *r.u32();
      size = *r.u32();
      info = *r.u8();
      (void)*r.u8();
      shndx = *r.u16();
    }
    const uint8_t type = info & 0xf;
    if ((type != kSttFunc && type != kSttGnuIfunc) || shndx == 0) continue;
    if (name_off >= strings->size()) continue;
    const char* base = reinterpret_cast<const char*>(strings->data()) + name_off;
    const std::string_view name(base, strnlen(base, strings->size() - name_off));
    if (name.empty()) continue;
    symbols_.push_back(Symbol{value, size, name, static_cast<uint8_t>(info >> 4)});
  }
}

void SymbolTable::finish() {
  // Sort by address, the preferred binding first; then drop duplicates.
  std::sort(symbols_.begin(), symbols_.end(), [](const Symbol& a, const Symbol& b) {
    if (a.address != b.address) return a.address < b.address;
    const int ra = binding_rank(a.binding), rb = binding_rank(b.binding);
    if (ra != rb) return ra > rb;
    if (a.size != b.size) return a.size > b.size;
    // Among equals, the public spelling: "malloc" before "__libc_malloc".
    const size_t ua = a.name.find_first_not_of('_'), ub = b.name.find_first_not_of('_');
    if (ua != ub) return ua < ub;
    if (a.name.size() != b.name.size()) return a.name.size() < b.name.size();
    return a.name < b.name;
  });
  symbols_.erase(std::unique(symbols_.begin(), symbols_.end(),
                             [](const Symbol& a, const Symbol& b) { return a.address == b.address; }),
                 symbols_.end());
}

std::optional<SymbolMatch> SymbolTable::lookup(uint64_t address) const {
  auto it = std::upper_bound(symbols_.begin(), symbols_.end(), address,
                             [](uint64_t a, const Symbol& s) { return a < s.address; });
  if (it == symbols_.begin()) return std::nullopt;
  const Symbol& s = *std::prev(it);
  const uint64_t offset = address - s.address;
  if (s.size != 0 && offset >= s.size) return std::nullopt;
  if (s.size == 0 && it == symbols_.end() && offset > (uint64_t{1} << 20)) return std::nullopt;
  return SymbolMatch{&s, offset};
}

}  // namespace framewalk::elf

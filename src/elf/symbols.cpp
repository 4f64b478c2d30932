#include "elf/symbols.hpp"
#include "elf/string_table.hpp"

#include "base/radix_sort.hpp"

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

SymbolTable SymbolTable::load(std::vector<std::shared_ptr<const ElfFile>> files) {
  SymbolTable table;
  for (auto& file : files) table.add_file(std::move(file));
  table.finish();
  return table;
}

void SymbolTable::merge(std::shared_ptr<const ElfFile> file) {
  add_file(std::move(file));
  finish();
}

void SymbolTable::add_file(std::shared_ptr<const ElfFile> file) {
  for (const Section& s : file->sections())
    if (s.type == kShtSymtab || s.type == kShtDynsym) add_from(*file, s);
  add_plt_stubs(*file);
  files_.push_back(std::move(file));
}

RawSymbol raw_symbol(const ElfFile& file, Bytes data, size_t index) {
  const size_t entsize = file.is_64() ? 24 : 16;
  ByteReader r(data.subspan(index * entsize, entsize), file.endian());
  RawSymbol s;
  // The entry lies in `data` (the caller's promise): every read below succeeds.
  s.name = *r.u32();
  if (file.is_64()) {
    s.info = *r.u8();
    s.other = *r.u8();
    s.shndx = *r.u16();
    s.value = *r.u64();
    s.size = *r.u64();
  } else {
    s.value = *r.u32();
    s.size = *r.u32();
    s.info = *r.u8();
    s.other = *r.u8();
    s.shndx = *r.u16();
  }
  return s;
}

std::optional<uint64_t> defined_object(const ElfFile& file, std::string_view name, uint64_t min_size) {
  ObjectQuery query{name, min_size, std::nullopt};
  find_defined_objects(file, std::span<ObjectQuery>(&query, 1));
  return query.value;
}

void find_defined_objects(const ElfFile& file, std::span<ObjectQuery> queries) {
  constexpr uint8_t kSttObject = 1;
  const size_t entsize = file.is_64() ? 24 : 16;
  uint64_t min_size = UINT64_MAX;
  for (const ObjectQuery& q : queries) min_size = std::min(min_size, q.min_size);
  for (uint32_t kind : {kShtDynsym, kShtSymtab}) {
    for (const Section& table : file.sections()) {
      if (table.type != kind || table.link >= file.sections().size()) continue;
      auto data = file.section_data(table);
      auto strings = file.section_data(file.sections()[table.link]);
      if (!data || !strings) continue;
      const size_t count = data->size() / entsize;
      const size_t info_at = file.is_64() ? 4 : 12;  // st_info: one byte, in either byte order
      for (size_t i = 1; i < count; ++i) {
        if (((*data)[i * entsize + info_at] & 0xf) != kSttObject) continue;
        const RawSymbol raw = raw_symbol(file, *data, i);
        if ((raw.info & 0xf) != kSttObject || raw.size < min_size || raw.shndx == 0) continue;
        if (raw.name >= strings->size()) continue;
        const char* at = reinterpret_cast<const char*>(strings->data() + raw.name);
        const size_t room = strings->size() - raw.name;
        for (ObjectQuery& q : queries) {
          // The name's bytes, then its terminator, within the string table.
          if (q.value || raw.size < q.min_size || room <= q.name.size()) continue;
          if (at[q.name.size()] == '\0' && std::memcmp(at, q.name.data(), q.name.size()) == 0) q.value = raw.value;
        }
      }
    }
  }
}

void SymbolTable::add_from(const ElfFile& file, const Section& table) {
  if (table.link >= file.sections().size()) return;
  auto data = file.section_data(table);
  auto strings = file.section_data(file.sections()[table.link]);
  if (!data || !strings) return;
  const size_t entsize = file.is_64() ? 24 : 16;
  const size_t count = data->size() / entsize;
  symbols_.reserve(symbols_.size() + count);
  const size_t first = symbols_.size();
  std::vector<uint32_t> name_offsets;
  for (size_t i = 1; i < count; ++i) {
    const RawSymbol raw = raw_symbol(file, *data, i);
    const uint32_t name_off = raw.name;
    uint64_t value = raw.value;
    const uint64_t size = raw.size;
    const uint8_t info = raw.info;
    const uint16_t shndx = raw.shndx;
    const uint8_t type = info & 0xf;
    if ((type != kSttFunc && type != kSttGnuIfunc) || shndx == 0) continue;
    // ARM ELF: bit 0 of a function symbol says Thumb code; the function starts at the even address.
    if (file.machine() == kEmArm) value &= ~uint64_t{1};
    if (name_off >= strings->size()) continue;
    name_offsets.push_back(name_off);
    uint64_t limit = 0;
    if (size == 0 && shndx < file.sections().size()) {
      const Section& in = file.sections()[shndx];
      if (value >= in.address && value - in.address <= in.size) limit = in.address + in.size;
    }
    symbols_.push_back(Symbol{value, size, {}, static_cast<uint8_t>(info >> 4), limit});
  }
  // The names, in one pass over the string table; unnamed symbols go.
  const auto names = strings_at(*strings, name_offsets);
  for (size_t k = 0; k < names.size(); ++k) symbols_[first + k].name = names[k];
  symbols_.erase(std::remove_if(symbols_.begin() + static_cast<std::ptrdiff_t>(first), symbols_.end(),
                                [](const Symbol& s) { return s.name.empty(); }),
                 symbols_.end());
}

void SymbolTable::add_plt_stubs(const ElfFile& file) {
  if (file.machine() != kEmX86_64 || !file.is_64()) return;
  const Section* rela = file.section_by_name(".rela.plt");
  const Section* sec = file.section_by_name(".plt.sec");
  const Section* plt = sec ? sec : file.section_by_name(".plt");
  if (!rela || !plt || rela->link >= file.sections().size() || plt->type == kShtNobits) return;
  const Section& dynsym = file.sections()[rela->link];
  if (dynsym.link >= file.sections().size()) return;
  auto relocs = file.section_data(*rela);
  auto syms = file.section_data(dynsym);
  auto strings = file.section_data(file.sections()[dynsym.link]);
  if (!relocs || !syms || !strings) return;
  // With .plt.sec (IBT), stub i is its i-th 16-byte entry; otherwise the
  // (i+1)-th entry of .plt, after the resolver stub PLT0.
  const uint64_t first = plt->address + (sec ? 0 : 16);
  const size_t count = relocs->size() / 24;
  for (size_t i = 0; i < count; ++i) {
    if (first + 16 * (i + 1) > plt->address + plt->size) break;
    ByteReader r(relocs->subspan(i * 24, 24), file.endian());
    (void)*r.u64();
    const uint64_t info = *r.u64();
    const uint64_t sym = info >> 32;
    if (sym == 0 || (sym + 1) * 24 > syms->size()) continue;  // IRELATIVE and friends: no name
    uint32_t name_off;
    std::memcpy(&name_off, syms->data() + sym * 24, 4);
    if (name_off >= strings->size()) continue;
    const char* base = reinterpret_cast<const char*>(strings->data()) + name_off;
    owned_names_.push_back(std::make_unique<std::string>(std::string(base, strnlen(base, strings->size() - name_off)) + "@plt"));
    symbols_.push_back(Symbol{first + 16 * i, 16, *owned_names_.back(), kStbGlobal, 0});
  }
}

void SymbolTable::finish() {
  // One symbol per address: the preferred binding, then the larger size,
  // then the public spelling ("malloc" before "__libc_malloc").
  const auto better = [](const Symbol& a, const Symbol& b) {
    const int ra = binding_rank(a.binding), rb = binding_rank(b.binding);
    if (ra != rb) return ra > rb;
    if (a.size != b.size) return a.size > b.size;
    const size_t ua = a.name.find_first_not_of('_'), ub = b.name.find_first_not_of('_');
    if (ua != ub) return ua < ub;
    if (a.name.size() != b.name.size()) return a.name.size() < b.name.size();
    return a.name < b.name;
  };
  // Sorted by address as small (address, index) pairs, not whole symbols.
  std::vector<std::pair<uint64_t, size_t>> order(symbols_.size());
  for (size_t i = 0; i < symbols_.size(); ++i) order[i] = {symbols_[i].address, i};
  radix_sort(order, [](const std::pair<uint64_t, size_t>& p) { return p.first; });
  std::vector<Symbol> kept;
  kept.reserve(order.size());
  for (size_t i = 0; i < order.size();) {
    size_t best = order[i].second;
    size_t j = i + 1;
    for (; j < order.size() && order[j].first == order[i].first; ++j)
      if (better(symbols_[order[j].second], symbols_[best])) best = order[j].second;
    kept.push_back(symbols_[best]);
    i = j;
  }
  symbols_ = std::move(kept);
}

std::optional<SymbolMatch> SymbolTable::lookup(uint64_t address) const {
  auto it = std::upper_bound(symbols_.begin(), symbols_.end(), address,
                             [](uint64_t a, const Symbol& s) { return a < s.address; });
  if (it == symbols_.begin()) return std::nullopt;
  const Symbol& s = *std::prev(it);
  const uint64_t offset = address - s.address;
  if (s.size != 0 && offset >= s.size) return std::nullopt;
  if (s.size == 0 && s.limit != 0 && address >= s.limit) return std::nullopt;  // not past its section
  if (s.size == 0 && it == symbols_.end() && offset > (uint64_t{1} << 20)) return std::nullopt;
  return SymbolMatch{&s, offset};
}

}  // namespace framewalk::elf

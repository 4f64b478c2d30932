#include "symbol/nearest_symbol.hpp"

#include <algorithm>

#include "elf/symbols.hpp"
#include "symbol/line_program.hpp"

namespace framewalk::symbol {

namespace {
inline constexpr uint8_t kSttNotype = 0, kSttObject = 1, kSttSection = 3, kSttFile = 4, kSttCommon = 5, kSttTls = 6;
inline constexpr uint8_t kStbLocal = 0, kStvHidden = 2;
}  // namespace

NearestSymbols NearestSymbols::load(std::shared_ptr<const elf::ElfFile> file) {
  NearestSymbols out;
  const elf::Section* table = nullptr;
  for (const elf::Section& s : file->sections())
    if (s.type == elf::kShtSymtab) table = &s;
  if (!table)
    for (const elf::Section& s : file->sections())
      if (s.type == elf::kShtDynsym) table = &s;
  if (!table || table->link >= file->sections().size()) {
    out.file_ = std::move(file);
    return out;
  }
  auto data = file->section_data(*table);
  auto strings = file->section_data(file->sections()[table->link]);
  if (!data || !strings) {
    out.file_ = std::move(file);
    return out;
  }
  const size_t entsize = file->is_64() ? 24 : 16;
  const size_t count = data->size() / entsize;
  enum { kNothingSeen, kSymbolSeen, kFileAfterSymbolSeen } state = kNothingSeen;
  std::optional<std::string_view> current_file;
  for (size_t i = 1; i < count; ++i) {
    const elf::RawSymbol raw = elf::raw_symbol(*file, *data, i);
    const uint32_t name_off = raw.name;
    const uint64_t value = raw.value, size = raw.size;
    const uint8_t info = raw.info, other = raw.other;
    const uint16_t shndx = raw.shndx;
    const uint8_t type = info & 0xf, binding = info >> 4;
    auto name = string_at(*strings, name_off);
    const std::string_view text = name ? *name : std::string_view();
    if (type == kSttFile) {
      current_file = text;
      if (state == kSymbolSeen) state = kFileAfterSymbolSeen;
      continue;
    }
    if (state == kNothingSeen) state = kSymbolSeen;
    if (type == kSttSection || type == kSttObject || type == kSttCommon || type == kSttTls) continue;
    if (shndx == 0 || shndx >= file->sections().size()) continue;  // undefined, absolute, common...
    if (size == 0 && binding == kStbLocal && type == kSttNotype && (other & 3) == kStvHidden) continue;
    Entry e{shndx, value, size ? size : 1, size, text, std::nullopt, static_cast<uint32_t>(i), text, std::nullopt};
    if (current_file && (binding == kStbLocal || state != kFileAfterSymbolSeen)) e.file = current_file;
    if (current_file && binding == kStbLocal && !current_file->empty()) e.llvm_file = current_file;
    out.entries_.push_back(e);
  }
  // At one address the larger symbol wins, then the first in the table.
  std::sort(out.entries_.begin(), out.entries_.end(), [](const Entry& a, const Entry& b) {
    if (a.section != b.section) return a.section < b.section;
    if (a.address != b.address) return a.address < b.address;
    if (a.size != b.size) return a.size > b.size;
    return a.order < b.order;
  });
  for (size_t i = 0, group = 0, chosen = 0; i < out.entries_.size(); ++i) {
    const Entry& e = out.entries_[i];
    if (e.section != out.entries_[group].section || e.address != out.entries_[group].address) {
      group = chosen = i;
      continue;
    }
    const Entry& c = out.entries_[chosen];
    if (e.st_size > c.st_size || (e.st_size == c.st_size && e.order > c.order)) {
      chosen = i;
      out.entries_[group].llvm_name = e.name;
      out.entries_[group].llvm_file = e.llvm_file;
    }
  }
  out.entries_.erase(std::unique(out.entries_.begin(), out.entries_.end(),
                                 [](const Entry& a, const Entry& b) {
                                   return a.section == b.section && a.address == b.address;
                                 }),
                     out.entries_.end());
  out.file_ = std::move(file);
  return out;
}

std::optional<NearestSymbol> NearestSymbols::lookup(uint32_t section, uint64_t address) const {
  auto it = std::upper_bound(entries_.begin(), entries_.end(), std::make_pair(section, address),
                             [](const std::pair<uint32_t, uint64_t>& key, const Entry& e) {
                               return key.first != e.section ? key.first < e.section : key.second < e.address;
                             });
  if (it == entries_.begin()) return std::nullopt;
  const Entry& e = *(it - 1);
  if (e.section != section) return std::nullopt;
  return NearestSymbol{e.name, e.file, e.address, e.st_size, e.llvm_name, e.llvm_file};
}

}  // namespace framewalk::symbol

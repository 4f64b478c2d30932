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
  out.strings_ = *strings;
  enum { kNothingSeen, kSymbolSeen, kFileAfterSymbolSeen } state = kNothingSeen;
  uint32_t current_file = kNoFile;
  struct Candidate {
    Entry e;
    uint64_t size;  // st_size, 1 for 0
    uint32_t order;
  };
  std::vector<Candidate> candidates;
  candidates.reserve(count);
  for (size_t i = 1; i < count; ++i) {
    const elf::RawSymbol raw = elf::raw_symbol(*file, *data, i);
    const uint32_t name_off = raw.name;
    const uint64_t value = raw.value, size = raw.size;
    const uint8_t info = raw.info, other = raw.other;
    const uint16_t shndx = raw.shndx;
    const uint8_t type = info & 0xf, binding = info >> 4;
    if (type == kSttFile) {
      out.files_.push_back(out.name_at(name_off));
      current_file = static_cast<uint32_t>(out.files_.size() - 1);
      if (state == kSymbolSeen) state = kFileAfterSymbolSeen;
      continue;
    }
    if (state == kNothingSeen) state = kSymbolSeen;
    if (type == kSttSection || type == kSttObject || type == kSttCommon || type == kSttTls) continue;
    if (shndx == 0 || shndx >= file->sections().size()) continue;  // undefined, absolute, common...
    if (size == 0 && binding == kStbLocal && type == kSttNotype && (other & 3) == kStvHidden) continue;
    Candidate c{Entry{shndx, name_off, name_off, kNoFile, kNoFile, value, size}, size ? size : 1,
                static_cast<uint32_t>(i)};
    if (current_file != kNoFile && (binding == kStbLocal || state != kFileAfterSymbolSeen)) c.e.file = current_file;
    if (current_file != kNoFile && binding == kStbLocal && !out.files_[current_file].empty())
      c.e.llvm_file = current_file;
    candidates.push_back(c);
  }
  // At one address the larger symbol wins, then the first in the table.
  std::sort(candidates.begin(), candidates.end(), [](const Candidate& a, const Candidate& b) {
    if (a.e.section != b.e.section) return a.e.section < b.e.section;
    if (a.e.address != b.e.address) return a.e.address < b.e.address;
    if (a.size != b.size) return a.size > b.size;
    return a.order < b.order;
  });
  for (size_t i = 0, group = 0, chosen = 0; i < candidates.size(); ++i) {
    const Candidate& c = candidates[i];
    if (c.e.section != candidates[group].e.section || c.e.address != candidates[group].e.address) {
      group = chosen = i;
      continue;
    }
    const Candidate& best = candidates[chosen];
    if (c.e.st_size > best.e.st_size || (c.e.st_size == best.e.st_size && c.order > best.order)) {
      chosen = i;
      candidates[group].e.llvm_name = c.e.name;
      candidates[group].e.llvm_file = c.e.llvm_file;
    }
  }
  for (size_t i = 0; i < candidates.size(); ++i)
    if (i == 0 || candidates[i].e.section != candidates[i - 1].e.section ||
        candidates[i].e.address != candidates[i - 1].e.address)
      out.entries_.push_back(candidates[i].e);
  out.entries_.shrink_to_fit();
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
  return NearestSymbol{name_at(e.name), file_name(e.file), e.address, e.st_size, name_at(e.llvm_name),
                       file_name(e.llvm_file)};
}

std::string_view NearestSymbols::name_at(uint32_t offset) const {
  auto name = string_at(strings_, offset);
  return name ? *name : std::string_view();
}

}  // namespace framewalk::symbol

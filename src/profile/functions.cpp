#include "profile/functions.hpp"

#include <algorithm>

namespace framewalk::profile {

FunctionTable::FunctionTable(std::vector<FunctionRange> ranges) : ranges_(std::move(ranges)) {
  std::stable_sort(ranges_.begin(), ranges_.end(),
                   [](const FunctionRange& a, const FunctionRange& b) { return a.start < b.start; });
  std::vector<FunctionRange> kept;
  kept.reserve(ranges_.size());
  for (FunctionRange& r : ranges_) {
    if (r.end <= r.start) continue;
    if (!kept.empty() && kept.back().end > r.start) {
      if (kept.back().start == r.start) continue;  // the first of one address wins
      kept.back().end = r.start;
    }
    kept.push_back(std::move(r));
  }
  ranges_ = std::move(kept);
}

FunctionTable FunctionTable::from_symbols(const elf::SymbolTable& symbols) {
  const std::vector<elf::Symbol>& s = symbols.symbols();  // sorted, one per address
  std::vector<FunctionRange> ranges;
  ranges.reserve(s.size());
  for (size_t i = 0; i < s.size(); ++i) {
    uint64_t end = 0;
    if (i + 1 < s.size()) {
      end = s[i + 1].address;
    } else {
      end = s[i].size ? s[i].address + s[i].size : s[i].limit;
      if (end <= s[i].address) end = s[i].address + 1;
    }
    ranges.push_back(FunctionRange{s[i].address, end, std::string(s[i].name)});
  }
  return FunctionTable(std::move(ranges));
}

int64_t FunctionTable::find(uint64_t address) const {
  auto it = std::upper_bound(ranges_.begin(), ranges_.end(), address,
                             [](uint64_t a, const FunctionRange& r) { return a < r.start; });
  if (it == ranges_.begin()) return -1;
  --it;
  if (address >= it->end) return -1;
  return it - ranges_.begin();
}

}  // namespace framewalk::profile

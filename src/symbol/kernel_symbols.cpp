#include "symbol/kernel_symbols.hpp"

#include <fcntl.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <string_view>

namespace framewalk::symbol {

void KernelSymbols::load_if(const std::string& recorded_release) {
  if (loaded_) return;
  loaded_ = true;
  std::string path = "/proc/kallsyms";
  if (file_) {
    path = *file_;
    if (path.empty()) return;
  } else {
    struct utsname u {};
    if (recorded_release.empty() || uname(&u) != 0 || recorded_release != u.release) return;
  }
  // Read whole (5 MB on a distribution kernel), then parsed by hand:
  // fgets and sscanf over 120,000 lines cost more than the reading.
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    problem_ = path + ": " + std::strerror(errno) + ": kernel frames are not named";
    return;
  }
  std::string text;
  std::vector<char> chunk(1 << 20);
  for (ssize_t n; (n = ::read(fd, chunk.data(), chunk.size())) > 0;) text.append(chunk.data(), static_cast<size_t>(n));
  ::close(fd);
  // "ffffffff81000000 T _text [module]": address, type, name.
  for (size_t pos = 0; pos < text.size();) {
    size_t end = text.find('\n', pos);
    if (end == std::string::npos) end = text.size();
    const std::string_view line(text.data() + pos, end - pos);
    pos = end + 1;
    const size_t sp1 = line.find(' ');
    if (sp1 == std::string_view::npos || sp1 + 3 >= line.size()) continue;
    const char type = line[sp1 + 1];
    if (type != 't' && type != 'T' && type != 'w' && type != 'W') continue;
    uint64_t address = 0;
    for (size_t i = 0; i < sp1; ++i) {
      const char c = line[i];
      address = address << 4 | static_cast<uint64_t>(c <= '9' ? c - '0' : (c | 0x20) - 'a' + 10);
    }
    if (address == 0) continue;  // addresses hidden (kptr_restrict)
    std::string_view name = line.substr(sp1 + 3);
    if (const size_t tab = name.find_first_of(" \t"); tab != std::string_view::npos) name = name.substr(0, tab);
    symbols_.emplace_back(address, std::string(name));
  }
  std::sort(symbols_.begin(), symbols_.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
}

std::string KernelSymbols::name(uint64_t pc) const {
  auto it = std::upper_bound(symbols_.begin(), symbols_.end(), pc,
                             [](uint64_t v, const auto& e) { return v < e.first; });
  if (it == symbols_.begin()) return "[unknown]";
  --it;
  char off[32];
  std::snprintf(off, sizeof off, "+0x%" PRIx64, pc - it->first);
  return it->second + off;
}

std::string KernelSymbols::function(uint64_t pc) const {
  auto it = std::upper_bound(symbols_.begin(), symbols_.end(), pc,
                             [](uint64_t v, const auto& e) { return v < e.first; });
  if (it == symbols_.begin()) return {};
  return std::prev(it)->second;
}

}  // namespace framewalk::symbol

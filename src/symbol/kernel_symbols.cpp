#include "symbol/kernel_symbols.hpp"

#include <fcntl.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cinttypes>
#include <cstdio>
#include <cstdint>
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
  // Read straight into the text (no copy of each chunk).
  std::string& text = text_;
  size_t used = 0;
  text.resize(size_t{8} << 20);
  for (ssize_t n; (n = ::read(fd, text.data() + used, text.size() - used)) > 0;) {
    used += static_cast<size_t>(n);
    if (text.size() - used < (size_t{1} << 16)) text.resize(text.size() * 2);
  }
  text.resize(used);
  ::close(fd);
  if (text.size() > UINT32_MAX) text.resize(UINT32_MAX);  // names are found by 32-bit offsets
  // "ffffffff81000000 T _text [module]": address, type, name. Names stay
  // in the text (about 200,000 of them: no string each).
  symbols_.reserve(text.size() / 40);
  // One pass over the bytes: the address's hex digits, a space, the type,
  // a space, the name up to a blank or the line's end.
  const char* const begin = text.data();
  const char* const end = begin + text.size();
  for (const char* p = begin; p < end;) {
    uint64_t address = 0;
    bool hex = true;
    const char* const line = p;
    for (; p < end && *p != ' ' && *p != '\n'; ++p) {
      const char c = *p, l = static_cast<char>(c | 0x20);
      hex &= (c >= '0' && c <= '9') || (l >= 'a' && l <= 'f');
      address = address << 4 | static_cast<uint64_t>(c <= '9' ? c - '0' : l - 'a' + 10);
    }
    const bool shaped = hex && p > line && p + 3 < end && *p == ' ' && p - line <= 16 && p[2] == ' ';
    const char type = shaped ? p[1] : 0;
    const char* name = shaped ? p + 3 : p;
    const char* q = name;
    while (q < end && *q != '\n' && *q != ' ' && *q != '\t') ++q;
    const char* next = q;
    while (next < end && *next != '\n') ++next;
    p = next + 1;
    if (!shaped || q == name || address == 0) continue;  // address 0: hidden (kptr_restrict)
    if (type != 't' && type != 'T' && type != 'w' && type != 'W') continue;
    symbols_.push_back(Entry{address, static_cast<uint32_t>(name - begin), static_cast<uint32_t>(q - name)});
  }
  // The kernel lists its own text in order, then each module's.
  auto by_address = [](const Entry& a, const Entry& b) { return a.address < b.address; };
  if (!std::is_sorted(symbols_.begin(), symbols_.end(), by_address))
    std::stable_sort(symbols_.begin(), symbols_.end(), by_address);
}

const KernelSymbols::Entry* KernelSymbols::covering(uint64_t pc) const {
  auto it = std::upper_bound(symbols_.begin(), symbols_.end(), pc,
                             [](uint64_t v, const Entry& e) { return v < e.address; });
  return it == symbols_.begin() ? nullptr : &*std::prev(it);
}

std::string KernelSymbols::name(uint64_t pc) const {
  const Entry* e = covering(pc);
  if (!e) return "[unknown]";
  char off[32];
  std::snprintf(off, sizeof off, "+0x%" PRIx64, pc - e->address);
  return std::string(name_of(*e)) + off;
}

std::string KernelSymbols::function(uint64_t pc) const {
  const Entry* e = covering(pc);
  return e ? std::string(name_of(*e)) : std::string();
}

}  // namespace framewalk::symbol

#include "symbol/perf_map.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <map>

namespace framewalk::symbol {

namespace {

// A hexadecimal number at the start of `s` (an optional 0x), moved past; false when none.
bool hex(std::string_view& s, uint64_t* out) {
  if (s.size() >= 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) s.remove_prefix(2);
  uint64_t v = 0;
  size_t n = 0;
  for (; n < s.size(); ++n) {
    const char c = s[n];
    unsigned d;
    if (c >= '0' && c <= '9') d = static_cast<unsigned>(c - '0');
    else if (c >= 'a' && c <= 'f') d = static_cast<unsigned>(c - 'a' + 10);
    else if (c >= 'A' && c <= 'F') d = static_cast<unsigned>(c - 'A' + 10);
    else break;
    if (n >= 16) return false;  // more than 64 bits
    v = v << 4 | d;
  }
  if (n == 0) return false;
  s.remove_prefix(n);
  *out = v;
  return true;
}

}  // namespace

void PerfMap::add_line(std::string_view line) {
  ++line_number_;
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  uint64_t start = 0, size = 0;
  std::string_view s = line;
  bool ok = hex(s, &start) && !s.empty() && s[0] == ' ';
  if (ok) {
    s.remove_prefix(1);
    ok = hex(s, &size) && !s.empty() && s[0] == ' ' && size > 0 && start + size > start;
  }
  if (ok) {
    s.remove_prefix(1);
    ok = !s.empty();
  }
  if (!ok) {
    if (line.empty()) return;  // a blank line is nothing
    ++malformed_;
    if (!first_malformed_) first_malformed_ = line_number_;
    return;
  }
  names_.emplace_back(s);
  raw_.push_back(Line{start, size, static_cast<uint32_t>(names_.size() - 1), static_cast<uint32_t>(raw_.size())});
  ++lines_;
  indexed_ = false;
}

void PerfMap::add_text(std::string_view text) {
  while (!text.empty()) {
    const size_t nl = text.find('\n');
    add_line(text.substr(0, nl));
    if (nl == std::string_view::npos) break;
    text.remove_prefix(nl + 1);
  }
}

Result<void> PerfMap::refresh() {
  const int fd = ::open(path_.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ENOENT) return {};
    return Error{ErrorCode::kIoError, static_cast<uint64_t>(errno)};
  }
  std::string text;
  char buffer[1 << 16];
  while (true) {
    const ssize_t n = ::pread(fd, buffer, sizeof buffer, static_cast<off_t>(offset_ + text.size()));
    if (n < 0) {
      if (errno == EINTR) continue;
      const int err = errno;
      ::close(fd);
      return Error{ErrorCode::kIoError, static_cast<uint64_t>(err)};
    }
    if (n == 0) break;
    text.append(buffer, static_cast<size_t>(n));
  }
  ::close(fd);
  // Whole lines only: the writer may be in the middle of one.
  const size_t end = text.rfind('\n');
  if (end == std::string::npos) return {};
  add_text(std::string_view(text).substr(0, end));
  offset_ += end + 1;
  return {};
}

std::string PerfMap::malformed_text() const {
  if (!malformed_) return "";
  return std::to_string(malformed_) + " malformed lines (the first is line " + std::to_string(first_malformed_) +
         "), left out";
}

void PerfMap::index() const {
  // Later lines win: each range is laid over what came before it, in line
  // order, cutting the earlier ones where they overlap.
  std::map<uint64_t, Entry> laid;  // by start, disjoint
  for (const Line& l : raw_) {
    const uint64_t start = l.start, end = l.start + l.size;
    auto it = laid.lower_bound(start);
    if (it != laid.begin()) {
      auto before = std::prev(it);
      const uint64_t b_end = before->second.start + before->second.size;
      if (b_end > start) {
        Entry tail = before->second;
        before->second.size = start - before->second.start;
        if (b_end > end) {  // the earlier range goes on after this one
          tail.start = end;
          tail.size = b_end - end;
          laid.emplace(end, tail);
        }
      }
    }
    for (it = laid.lower_bound(start); it != laid.end() && it->first < end;) {
      const uint64_t e_end = it->second.start + it->second.size;
      if (e_end > end) {
        Entry tail = it->second;
        tail.start = end;
        tail.size = e_end - end;
        it = laid.erase(it);
        laid.emplace(end, tail);
        break;
      }
      it = laid.erase(it);
    }
    laid[start] = Entry{start, l.size, names_[l.name]};
  }
  entries_.clear();
  entries_.reserve(laid.size());
  for (const auto& [_, e] : laid)
    if (e.size) entries_.push_back(e);
  indexed_ = true;
}

const PerfMap::Entry* PerfMap::find(uint64_t address) const {
  if (!indexed_) index();
  auto it = std::upper_bound(entries_.begin(), entries_.end(), address,
                             [](uint64_t a, const Entry& e) { return a < e.start; });
  if (it == entries_.begin()) return nullptr;
  --it;
  return address - it->start < it->size ? &*it : nullptr;
}

}  // namespace framewalk::symbol

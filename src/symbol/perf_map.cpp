#include "symbol/perf_map.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <unordered_map>

#include "base/radix_sort.hpp"

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
  raw_.push_back(Line{start, size, s});
  ++lines_;
  indexed_ = false;
}

void PerfMap::add_text(std::string_view text) {
  texts_.emplace_back(text);
  add_lines(texts_.back());
}

size_t PerfMap::add_jitdump(const JitDump& dump, size_t first_record) {
  // The names are copied: the entries outlive the dump's bytes.
  std::string names;
  for (const JitCodeLoad& l : dump.loads) names.append(l.name);
  texts_.push_back(std::move(names));
  const std::string& kept = texts_.back();
  std::vector<std::string_view> load_names;
  size_t at = 0;
  for (const JitCodeLoad& l : dump.loads) {
    load_names.push_back(std::string_view(kept).substr(at, l.name.size()));
    at += l.name.size();
  }
  // Loads and moves in file order; a move takes its code's latest name.
  std::unordered_map<uint64_t, std::string_view> by_index;
  size_t added = 0, li = 0, mi = 0;
  while (li < dump.loads.size() || mi < dump.moves.size()) {
    const bool load = mi == dump.moves.size() || (li < dump.loads.size() && dump.loads[li].index < dump.moves[mi].index);
    if (load) {
      const JitCodeLoad& l = dump.loads[li];
      by_index[l.code_index] = load_names[li++];
      if (l.index < first_record || l.code_size == 0 || load_names[li - 1].empty()) continue;
      raw_.push_back(Line{l.code_addr, l.code_size, load_names[li - 1]});
    } else {
      const JitCodeMove& m = dump.moves[mi++];
      auto it = by_index.find(m.code_index);
      if (m.index < first_record || it == by_index.end() || m.code_size == 0 || m.new_code_addr + m.code_size < m.new_code_addr) continue;
      raw_.push_back(Line{m.new_code_addr, m.code_size, it->second});
    }
    ++added;
  }
  if (added) indexed_ = false;
  // Source lines: each load's DEBUG_INFO entries, each up to the next (or
  // the load's end); file names copied, as the names are.
  for (const JitCodeLoad& l : dump.loads) {
    if (l.index < first_record || !l.debug_info || l.code_size == 0) continue;
    const JitDebugInfo& d = dump.debug_infos[*l.debug_info];
    std::vector<JitLine> sorted(d.lines.begin(), d.lines.end());
    std::stable_sort(sorted.begin(), sorted.end(), [](const JitLine& a, const JitLine& b) { return a.address < b.address; });
    for (size_t k = 0; k < sorted.size(); ++k) {
      const JitLine& e = sorted[k];
      if (e.address < l.code_addr || e.address >= l.code_end() || e.file.empty() || e.line <= 0) continue;
      const uint64_t end = k + 1 < sorted.size() ? std::min(sorted[k + 1].address, l.code_end()) : l.code_end();
      if (end <= e.address) continue;
      const std::string& file = *files_.emplace(e.file).first;
      source_lines_.push_back(SourceLine{e.address, end, file, static_cast<uint32_t>(e.line)});
      source_sorted_ = false;
    }
  }
  return added;
}

const PerfMap::SourceLine* PerfMap::source_line(uint64_t address) const {
  if (!source_sorted_) {
    std::stable_sort(source_lines_.begin(), source_lines_.end(), [](const SourceLine& a, const SourceLine& b) { return a.address < b.address; });
    source_sorted_ = true;
  }
  // Of those that start at or before `address`, the nearest that covers it
  // (the later added where two start there): ranges are short, so look back a few.
  auto it = std::upper_bound(source_lines_.begin(), source_lines_.end(), address,
                             [](uint64_t a, const SourceLine& l) { return a < l.address; });
  const SourceLine* found = nullptr;
  for (int back = 0; it != source_lines_.begin() && back < 64; ++back) {
    --it;
    if (address < it->end) {
      found = &*it;
      break;
    }
  }
  return found;
}

void PerfMap::add_lines(std::string_view text) {
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
  text.resize(end);
  texts_.push_back(std::move(text));
  add_lines(texts_.back());
  offset_ += end + 1;
  return {};
}

std::string PerfMap::malformed_text() const {
  if (!malformed_) return "";
  return std::to_string(malformed_) + " malformed lines (the first is line " + std::to_string(first_malformed_) +
         "), left out";
}

void PerfMap::index() const {
  // Later lines win: at every address the line that names it last. A sweep
  // over the lines by start, keeping those that hold the address swept in
  // a heap by line order: the name changes only where a line starts or
  // where the latest one ends (the others' ends change nothing).
  struct Span {
    uint64_t start, end;
    uint32_t line;
    bool operator<(const Span& o) const { return line < o.line; }  // the heap's order: the latest on top
  };
  std::vector<Span> by_start(raw_.size());
  for (uint32_t i = 0; i < by_start.size(); ++i) by_start[i] = Span{raw_[i].start, raw_[i].start + raw_[i].size, i};
  radix_sort(by_start, [](const Span& s) { return s.start; });  // stable: line order within a start
  std::vector<Span> heap;  // the latest line on top; ended ones left until they reach the top
  entries_.clear();
  size_t next = 0;
  uint64_t at = 0;
  while (next < by_start.size() || !heap.empty()) {
    if (heap.empty()) at = by_start[next].start;
    for (; next < by_start.size() && by_start[next].start <= at; ++next) {
      heap.push_back(by_start[next]);
      std::push_heap(heap.begin(), heap.end());
    }
    while (!heap.empty() && heap.front().end <= at) {
      std::pop_heap(heap.begin(), heap.end());
      heap.pop_back();
    }
    if (heap.empty()) continue;
    const Line& top = raw_[heap.front().line];
    const uint64_t top_end = heap.front().end;
    const uint64_t until = next < by_start.size() ? std::min(top_end, by_start[next].start) : top_end;
    // The same line on both sides of a boundary (another line began and ended under it) is one entry.
    if (!entries_.empty() && entries_.back().start + entries_.back().size == at &&
        entries_.back().name.data() == top.name.data() && entries_.back().start >= top.start)
      entries_.back().size += until - at;
    else
      entries_.push_back(Entry{at, until - at, top.name});
    at = until;
  }
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

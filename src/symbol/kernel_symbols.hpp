// Kernel functions by address, from /proc/kallsyms (or a file in its
// format), for the kernel frames of samples: only when the recording was
// made on the running kernel (the same release) and the addresses are shown
// (root, or kptr_restrict 0); else none, and kernel frames stay [unknown],
// as perf leaves them without symbols.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace framewalk::symbol {

class KernelSymbols {
 public:
  // `file`: a kallsyms file to read whatever the release ("" : none);
  // nullopt: /proc/kallsyms when the recording's release is the running one.
  explicit KernelSymbols(std::optional<std::string> file = std::nullopt) : file_(std::move(file)) {}
  // Loads them the first time (later calls do nothing).
  void load_if(const std::string& recorded_release);
  // "name+0xoff", or "[unknown]".
  std::string name(uint64_t pc) const;
  // The function's name alone, or "" when none covers pc.
  std::string function(uint64_t pc) const;
  // Why they could not be read ("" when they were, or were not asked for).
  const std::string& problem() const { return problem_; }
  size_t size() const { return symbols_.size(); }

 private:
  std::optional<std::string> file_;
  std::string problem_;
  bool loaded_ = false;
  // Function symbols by address; names are in text_ (the file as read).
  struct Entry {
    uint64_t address;
    uint32_t name_offset, name_size;
  };
  const Entry* covering(uint64_t pc) const;
  std::string_view name_of(const Entry& e) const { return std::string_view(text_).substr(e.name_offset, e.name_size); }
  std::string text_;
  std::vector<Entry> symbols_;
};

}  // namespace framewalk::symbol

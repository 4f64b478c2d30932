// Perf map files: the names a JIT gives its code, one `START SIZE NAME`
// line each (hexadecimal, with or without 0x; NAME the rest of the line),
// appended while the process runs, at /tmp/perf-PID.map (V8's
// --perf-basic-prof, the JVM's Compiler.perfmap, .NET, LuaJIT, CPython's
// -X perf). Frames in anonymous executable memory are named from it.
//
// A map read once keeps its place: refresh() reads only the lines appended
// since (a line not yet ended is left for the next time). Later lines win
// where ranges overlap (code moved or reused), as samply takes them.
// Malformed lines are counted, with the first one's number, never fatal.
#pragma once

#include <cstdint>
#include <deque>
#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

#include "base/result.hpp"
#include "symbol/jitdump.hpp"

namespace framewalk::symbol {

class PerfMap {
 public:
  // The conventional file of a process.
  static std::string path_of(uint32_t pid) { return "/tmp/perf-" + std::to_string(pid) + ".map"; }

  explicit PerfMap(std::string path) : path_(std::move(path)) {}
  // Reads the lines appended since the last call (all, the first time).
  // Errors: kIoError (errno in offset) when the file cannot be read; a
  // file that does not exist is no error (no lines).
  Result<void> refresh();
  // Adds the lines in `text` (whole lines; a last one without its newline
  // too), as refresh() does with the file's (for tests and fuzzing).
  void add_text(std::string_view text);
  // Adds the code a jitdump names, as lines after those read: each
  // CODE_LOAD's range with its name, and each CODE_MOVE's new range with the
  // name of the last load of its code_index, in file order (later wins);
  // and the source lines its DEBUG_INFO records give a load's code.
  // Only the records from `first_record` on (a file read again as it grew:
  // the records read before are there already). Returns how many were added.
  size_t add_jitdump(const JitDump& dump, size_t first_record = 0);

  struct Entry {
    uint64_t start = 0, size = 0;
    std::string_view name;
  };
  // A jitdump's source line (DEBUG_INFO) of the code from `address` up to
  // the next line's address or the end of its load.
  struct SourceLine {
    uint64_t address = 0, end = 0;
    std::string_view file;
    uint32_t line = 0;
  };
  // The source line of the code at `address`, from the jitdump records
  // added (of those that cover it, the one that starts nearest below it;
  // the later added of two that start there), or nullptr.
  const SourceLine* source_line(uint64_t address) const;
  // The entry whose [start, start+size) holds `address` (the last line to
  // name it), or nullptr; valid until the next refresh() or add_text().
  const Entry* find(uint64_t address) const;

  // Every name's range, sorted and disjoint (the later line's where lines
  // overlapped); valid until the next refresh() or add_text().
  const std::vector<Entry>& entries() const {
    if (!indexed_) index();
    return entries_;
  }
  const std::string& path() const { return path_; }
  size_t lines() const { return lines_; }  // well-formed lines read
  size_t malformed() const { return malformed_; }
  size_t first_malformed_line() const { return first_malformed_; }  // 1-based; 0: none
  // "N malformed lines (the first is line L), left out"; "" when none.
  std::string malformed_text() const;

 private:
  // Parses the lines of `text`, which lives in texts_.
  void add_lines(std::string_view text);
  void add_line(std::string_view line);
  void index() const;

  std::string path_;
  uint64_t offset_ = 0;            // bytes of the file read (up to the last newline)
  std::deque<std::string> texts_;  // what was read, each time (a deque: the names' views stay valid)
  struct Line {
    uint64_t start, size;
    std::string_view name;  // in texts_
  };                        // in line order: later wins
  std::vector<Line> raw_;
  mutable std::vector<SourceLine> source_lines_;  // added in order; sorted by address (stable) when looked up
  mutable bool source_sorted_ = true;
  std::unordered_set<std::string> files_;  // the source lines' file names (a node set: views stay valid)
  size_t lines_ = 0, malformed_ = 0, first_malformed_ = 0, line_number_ = 0;
  // The index: disjoint ranges, sorted, the later line's where they overlap.
  mutable std::vector<Entry> entries_;
  mutable bool indexed_ = true;
};

}  // namespace framewalk::symbol

// jitdump files (symbol/jitdump.hpp) of a process: found as perf finds
// them, through the mapping the runtime makes of the file (named
// jit-PID.dump, PID the process's), and the code they describe with its
// unwind tables made into modules, so that those frames are unwound by
// CFI instead of guessed.
#pragma once

#include <sys/types.h>

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "base/mapped_file.hpp"
#include "symbol/jitdump.hpp"
#include "target/proc_maps.hpp"
#include "unwind/module.hpp"

namespace framewalk {

// A jitdump file read whole, with the bytes its records point into.
struct JitdumpFile {
  std::string path;
  std::shared_ptr<const FileImage> image;
  symbol::JitDump dump;
};

// Whether a mapped file's path (as mapped) is process `pid`'s jitdump
// marker: a file named jit-PID.dump, not deleted.
bool is_jitdump_of(std::string_view path, pid_t pid);
// The path of the jitdump file `maps` show process `pid` mapping ("" when
// none).
std::string jitdump_marker(const std::vector<MapEntry>& maps, pid_t pid);

// Reads the jitdump at `path`. Errors: the file's (kIoError, kNotFound) or
// its header's (symbol::parse_jitdump); damage after the header is in
// dump.stopped.
Result<std::unique_ptr<JitdumpFile>> read_jitdump(const std::string& path);
// read_jitdump for a target: null when it cannot be read; problems (the
// file's, a record damaged before the last: a last one cut short is one the
// runtime is writing) as sentences naming the file and offset in `warnings`.
std::unique_ptr<JitdumpFile> load_jitdump(const std::string& path, std::vector<std::string>* warnings);

// Modules for the code of `file` that has unwind tables (an UNWINDING_INFO
// with an .eh_frame) and is still where it was loaded (no later load or
// move took its place): each an image of its code, .eh_frame and name
// (module name: the jitdump's path), bias 0. Jit modules around them keep
// what is left. Returns how many were added.
size_t add_jitdump_modules(ModuleMap& modules, const JitdumpFile& file);

// The module of one CODE_LOAD of `file` with unwind tables (an
// UNWINDING_INFO with an .eh_frame): an image of its code, .eh_frame and
// name, bias 0; nullopt when the load has none, or its machine is not one
// framewalk knows.
std::optional<Module> jitdump_module(const JitdumpFile& file, const symbol::JitCodeLoad& load);

// A process's jitdump code with unwind tables made into modules as a
// recording's samples reach the times of its records, for profilers: the
// samples come in time order while the runtime goes on writing the file,
// which is read again when all that was read of it is in force (not more
// often than every kRecheckCalls calls): only what was appended since the
// last reading (a runtime's jitdump grows to megabytes). A CODE_LOAD with
// tables adds its module (jit modules around it keep what is left); a load
// or a move over such a module's code ends it (its range is jit code again).
class JitdumpFeed {
 public:
  // Samples whose times are not the jitdump's clock (CLOCK_MONOTONIC):
  // every record read is in force at once.
  static constexpr uint64_t kAnyTime = UINT64_MAX;
  static constexpr uint32_t kRecheckCalls = 64;

  // Brings `modules` to `time`, reading `path` (the process's jitdump, as
  // its marker mapping names it); problems (the file's, a record damaged
  // before the last) as sentences naming the file and offset, once each,
  // in `warnings`. Returns how many modules it added.
  size_t advance(ModuleMap& modules, const std::string& path, uint64_t time, std::vector<std::string>* warnings);
  // Modules of the feed in the map now.
  size_t modules() const { return added_.size(); }

 private:
  struct Added {
    uint64_t id, end;
    std::string jit_name;  // the jit module it was cut from ("": none, nothing to give back)
  };
  // Ends the feed's modules that overlap [start, end): jit code again.
  void end_overlapping(ModuleMap& modules, uint64_t start, uint64_t end);
  void reread(const std::string& path, std::vector<std::string>* warnings);

  std::unique_ptr<JitdumpFile> file_;  // the records of the last reading (the part appended since the one before)
  uint64_t bytes_ = 0;            // the file's size when last read
  uint64_t consumed_ = 0;         // where the last reading ended: the next record's offset (0: none yet)
  uint64_t header_size_ = 0;
  size_t next_load_ = 0, next_move_ = 0;  // the first not yet in force
  uint32_t calls_ = kRecheckCalls;  // since the file was last looked at
  std::map<uint64_t, Added> added_;  // by start
  std::string problem_;            // the last warning given
};

}  // namespace framewalk

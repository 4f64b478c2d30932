// jitdump files (symbol/jitdump.hpp) of a process: found as perf finds
// them, through the mapping the runtime makes of the file (named
// jit-PID.dump, PID the process's), and the code they describe with its
// unwind tables made into modules, so that those frames are unwound by
// CFI instead of guessed.
#pragma once

#include <sys/types.h>

#include <memory>
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

}  // namespace framewalk

// Separate debug files: by build-id (/usr/lib/debug/.build-id/xx/yyyy.debug)
// and by .gnu_debuglink (CRC checked), searched as GDB does; then from a
// debuginfod server when that is enabled (elf/debuginfod.hpp).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "elf/debuginfod.hpp"
#include "elf/elf_file.hpp"

namespace framewalk::elf {

struct DebugFileSearch {
  std::vector<std::string> debug_roots = {"/usr/lib/debug"};
  // Ask the servers DEBUGINFOD_URLS names, last. Each search's own (a C API
  // context's), defaulting to the process's setting when it is made.
  bool debuginfod = debuginfod_enabled();
};

// The path of the separate debug file for `file` (opened from `path`), if one exists.
std::optional<std::string> find_debug_file(const ElfFile& file, const std::string& path,
                                           const DebugFileSearch& search = {});

// The dwz supplementary file that `debug_file` (opened from `debug_path`)
// names in .gnu_debugaltlink, searched as gdb searches it: the path as
// written (relative to the debug file's directory when not absolute), then by
// the supplementary file's build-id under each debug root, then from a
// debuginfod server when that is enabled. A candidate counts only when its
// build-id is the one the link names.
std::optional<std::string> find_supplementary_file(const ElfFile& debug_file, const std::string& debug_path,
                                                   const DebugFileSearch& search = {});

// The split-DWARF package of the program at `path` (`path.dwp`, as gdb and
// llvm-symbolizer look for it), if it exists.
std::optional<std::string> find_dwp_file(const std::string& path);

// The hexadecimal spelling of a build-id.
std::string build_id_hex(const std::vector<uint8_t>& id);

}  // namespace framewalk::elf

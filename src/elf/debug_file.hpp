// Separate debug files: by build-id (/usr/lib/debug/.build-id/xx/yyyy.debug)
// and by .gnu_debuglink (CRC checked), searched as GDB does; then from a
// debuginfod server when that is enabled (elf/debuginfod.hpp).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "elf/elf_file.hpp"

namespace framewalk::elf {

struct DebugFileSearch {
  std::vector<std::string> debug_roots = {"/usr/lib/debug"};
};

// The path of the separate debug file for `file` (opened from `path`), if one exists.
std::optional<std::string> find_debug_file(const ElfFile& file, const std::string& path,
                                           const DebugFileSearch& search = {});

}  // namespace framewalk::elf

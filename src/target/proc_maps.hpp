// The module map of a live process, from /proc/PID/maps.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <vector>

#include "base/memory.hpp"
#include "unwind/module.hpp"

namespace framewalk {

struct MapEntry {
  uint64_t start = 0, end = 0, offset = 0, inode = 0;
  std::string perms, device, path;
};

std::vector<MapEntry> read_proc_maps(pid_t pid);
// Parses the text of a maps file (exposed for tests).
std::vector<MapEntry> parse_proc_maps(const std::string& text);

// Modules for every file with an executable mapping, and the vDSO (read from
// `memory`). Files deleted or replaced on disk are read through
// /proc/PID/map_files. Problems are recorded in Module::problem. With pid 0
// the maps are of a process that is not here (a snapshot): each file is
// opened by its name under `sysroot`.
ModuleMap modules_from_maps(pid_t pid, const std::vector<MapEntry>& maps, ModuleCache& cache, Memory& memory,
                            const std::string& sysroot = "");

}  // namespace framewalk

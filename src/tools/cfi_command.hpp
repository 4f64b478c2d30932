// `framewalk cfi FILE...`: dump the call frame information of ELF files.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace framewalk::tools {

struct CfiCommandOptions {
  std::vector<std::string> files;
  std::string format = "text";  // text | readelf | json
  std::optional<uint64_t> pc;
  bool debug_frame = true;       // also read .debug_frame (and separate debug files)
  bool gnu_debugdata = true;
};

// Returns the exit status: 0 when everything was read cleanly, 1 otherwise.
int run_cfi_command(const CfiCommandOptions& options);

}  // namespace framewalk::tools

// `framewalk exidx FILE...`: dump the ARM EHABI tables (.ARM.exidx and the
// .ARM.extab entries it points to) of 32-bit ARM executables and shared
// libraries; `--format=readelf` prints exactly what `readelf -u` of binutils
// 2.40 prints.
#pragma once

#include <string>
#include <vector>

namespace framewalk::tools {

struct ExidxCommandOptions {
  std::vector<std::string> files;
  std::string format = "text";  // text or readelf
};

// Returns the exit status: 0 when everything was read cleanly, 1 otherwise.
int run_exidx_command(const ExidxCommandOptions& options);

}  // namespace framewalk::tools

// `framewalk report perf.data`: every sample of a `perf record` file unwound
// by framewalk (the user stack from the sample's registers and stack copy,
// the kernel frames from its callchain), printed the way `perf script` does,
// or as folded stacks.
#pragma once

#include <string>

#include "tools/report_command.hpp"

namespace framewalk::tools {

// Whether the file starts with perf.data's magic (PERFILE2).
bool is_perf_data_file(const std::string& path);

// Exit status: 0 when every record was read, 1 when the file could not be
// opened or ended in an error (the samples before it are printed; the
// message names the record and its offset), 2 for a usage error.
int run_perf_report(const ReportCommandOptions& options);

}  // namespace framewalk::tools

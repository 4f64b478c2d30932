// `framewalk record [-F HZ] [-e EVENT] [-o FILE] [--duration S] [--stack-size BYTES] [--off-cpu]
// (-p PID[,PID...] | -a | -- COMMAND ARGS)`: samples a process's threads (and those it
// creates), unwinds each sample at once and writes the resolved stacks to a
// .fwprof recording that `framewalk report` reads (docs/record.md).
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

namespace CLI {
class App;
}

namespace framewalk::tools {

struct RecordCommandOptions {
  unsigned frequency = 999;              // -F
  std::string output = "framewalk.fwprof";  // -o
  double duration = 0;                   // --duration (0: until the target ends or Ctrl-C)
  unsigned stack_size = 16384;           // --stack-size
  unsigned max_frames = 1024;            // --max-frames
  unsigned ring_pages = 1024;            // --mmap-pages
  bool no_symbols = false;               // --no-symbols
  bool compress = false;                 // --compress
  bool off_cpu = false;                  // --off-cpu
  bool quiet = false;                    // -q: no status line
  std::vector<pid_t> pids;               // -p PID[,PID...]
  bool all_cpus = false;                 // -a
  std::string event = "cpu-clock";       // -e
  std::vector<std::string> command;      // after --
};

CLI::App* add_record_command(CLI::App& app, RecordCommandOptions& options);

// Exit status: 0 when the recording was written; 1 when the target could
// not be sampled (the message names the setting to change) or the file not
// written; 2 for usage errors. A command recorded gives its own exit status
// nowhere: `framewalk record` reports it on stderr.
int run_record_command(const RecordCommandOptions& options);

}  // namespace framewalk::tools

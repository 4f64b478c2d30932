// `framewalk stack`: every thread of a live process or a core file.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <string>

namespace framewalk::tools {

struct StackCommandOptions {
  pid_t pid = 0;
  pid_t tid = 0;              // only this thread (live)
  std::string core;
  std::string snapshot;       // a snapshot directory to walk
  std::string save_snapshot;  // where to save the target's snapshot too
  std::string exe;
  std::string sysroot;
  std::string perf_map;       // names for jit code; empty: /tmp/perf-PID.map of a live process, none otherwise
  std::string jitdump;        // a core's process's jitdump, where the core does not say (no NT_FILE) or it moved
  std::string format = "text";  // text | json
  std::string freeze = "process";  // process | thread | copy
  std::string source = "auto";     // auto | cfi | sframe
  size_t max_frames = 256;
  bool verbose = false;
  bool source_lines = false;  // -s: file:line of each frame
  bool inlines = false;       // -i: inlined calls as frames of their own
  bool modules = true;        // show each frame's module
  bool debuginfod = true;     // fetch missing debug files when DEBUGINFOD_URLS is set
};

// 0: every thread walked to its natural end; 1: a walk stopped early or a
// thread could not be read; 2: the target could not be opened.
int run_stack_command(const StackCommandOptions& options);

}  // namespace framewalk::tools

// A stack dump as text (eu-stack's shape, with -v the provenance of each
// frame and why each walk stopped) or as JSON (docs/OUTPUT.md): what
// `framewalk stack` prints, for any user of StackDump.
#pragma once

#include <cstdio>
#include <string>

#include "symbol/perf_map.hpp"
#include "walk/stack_dump.hpp"

namespace framewalk {

struct StackRenderOptions {
  bool json = false;
  bool verbose = false;       // thread names, frame provenance, every stop reason, the pause
  bool source_lines = false;  // file:line of each frame (and tail-call frames)
  bool inlines = false;       // inlined calls as frames of their own
  bool modules = true;        // each frame's module
  // Names for frames in code no module holds (a JIT's perf map), or null.
  const symbol::PerfMap* perf_map = nullptr;
};

void render_stacks(std::FILE* out, const StackDump& dump, const StackRenderOptions& options);

}  // namespace framewalk

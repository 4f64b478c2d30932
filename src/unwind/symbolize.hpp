// Names for frames: function+offset and module, from a module's symbols.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "unwind/unwinder.hpp"

namespace framewalk::symbol {
class PerfMap;
}

namespace framewalk {

struct FrameSymbol {
  std::string function;  // demangled; empty when unknown
  uint64_t offset = 0;   // pc - function start
  bool found = false;
};

FrameSymbol symbolize(const Frame& frame);
// The same, and for jit code or code no module holds (what the module's
// symbols cannot name), the name `jit_names` (a perf map, with a jitdump's
// loads; may be null) gives it.
FrameSymbol symbolize(const Frame& frame, const symbol::PerfMap* jit_names);

// What the source says of a frame's PC (the call, for a return address).
struct SourceFrame {
  std::string function;  // an inlined function's name; empty for the physical frame (symbolize() names it)
  bool inlined = false;
  std::string file;      // empty: no line information covers the PC
  uint32_t line = 0;
  uint32_t column = 0;   // 0: not recorded
};

// The source frames at a physical frame, innermost first, the physical
// function's own last. Without `inlines`, that one alone, at the line the
// module's line table gives for the PC (inside the innermost inlined call,
// as addr2line without -i says); with it, each inlined call at the PC comes
// first as a frame of its own and the physical function's line is the call
// site of the outermost one.
std::vector<SourceFrame> source_frames(const Frame& frame, bool inlines);
// The same, and for code whose module has no line information (jit code, a
// jitdump's code), the line `jit_names` (a perf map with a jitdump's
// DEBUG_INFO records; may be null) gives it.
std::vector<SourceFrame> source_frames(const Frame& frame, bool inlines, const symbol::PerfMap* jit_names);

// The frames tail calls left off the stack between the physical frame
// `callee` and its caller `caller` (what gdb shows as tail-call frames),
// innermost first; rebuilt from the DWARF call sites of the caller's module
// (InlineSymbolizer::call_graph); empty unless that information is
// unambiguous, and when the caller was interrupted (a signal) rather than
// called. When the callee is in another module than its caller (a call
// through the PLT), the caller's call site must name the function called,
// that module must have exactly one function of that name, and the chain is
// searched in that module only. Each is a frame of the module it is in whose
// pc is the address after the jump (lookup_pc and symbol_pc one byte before
// it, inside the jump), for symbolize() and source_frames(); it is not part
// of the walk (sp 0, no registers).
std::vector<Frame> tail_call_frames(const Frame& callee, const Frame& caller);

// C++ demangling (the name itself when it is not a mangled name).
std::string demangle_name(const std::string& name);

}  // namespace framewalk

// Names for frames: function+offset and module, from a module's symbols.
#pragma once

#include <cstdint>
#include <string>

#include "unwind/unwinder.hpp"

namespace framewalk {

struct FrameSymbol {
  std::string function;  // demangled; empty when unknown
  uint64_t offset = 0;   // pc - function start
  bool found = false;
};

FrameSymbol symbolize(const Frame& frame);

// C++ demangling (the name itself when it is not a mangled name).
std::string demangle_name(const std::string& name);

}  // namespace framewalk

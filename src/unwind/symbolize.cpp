#include "unwind/symbolize.hpp"

#include <cxxabi.h>

#include <cstdlib>

namespace framewalk {

std::string demangle_name(const std::string& name) {
  if (name.size() < 2 || name[0] != '_' || name[1] != 'Z') return name;
  int status = 0;
  char* d = abi::__cxa_demangle(name.c_str(), nullptr, nullptr, &status);
  if (status != 0 || !d) return name;
  std::string out(d);
  std::free(d);
  return out;
}

FrameSymbol symbolize(const Frame& frame) {
  FrameSymbol s;
  if (!frame.module || !frame.module->data) return s;
  // Look up where the call was (pc - 1 for return addresses), print from pc.
  auto match = frame.module->data->symbols().lookup(frame.symbol_pc - frame.module->bias);
  if (!match) return s;
  s.found = true;
  s.function = demangle_name(std::string(match->symbol->name));
  s.offset = frame.pc - (match->symbol->address + frame.module->bias);
  return s;
}

std::vector<SourceFrame> source_frames(const Frame& frame, bool inlines) {
  (void)inlines;  // inline chains come with the .debug_info reader
  SourceFrame physical;
  if (frame.module && frame.module->data)
    if (const symbol::LineTable* lines = frame.module->data->lines())
      if (auto at = lines->lookup(frame.symbol_pc - frame.module->bias); at && !at->file.empty()) {
        physical.file = std::string(at->file);
        physical.line = at->line;
        physical.column = at->column;
      }
  return {std::move(physical)};
}

}  // namespace framewalk

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
  std::vector<symbol::SourceFrame> chain;
  if (frame.module && frame.module->data)
    if (const symbol::InlineSymbolizer* source = frame.module->data->source())
      chain = source->frames(frame.symbol_pc - frame.module->bias);
  auto located = [](const symbol::SourceFrame& from) {
    SourceFrame out;
    if (from.file.empty()) return out;
    out.file = std::string(from.file);
    out.line = from.line;
    out.column = from.column;
    return out;
  };
  if (chain.empty()) return {SourceFrame{}};
  if (!inlines) return {located(chain.front())};  // the innermost line, as addr2line without -i
  std::vector<SourceFrame> out;
  out.reserve(chain.size());
  for (size_t k = 0; k < chain.size(); ++k) {
    SourceFrame f = located(chain[k]);
    if (k + 1 < chain.size()) {
      f.inlined = true;
      f.function = chain[k].linkage_name ? demangle_name(std::string(chain[k].function)) : std::string(chain[k].function);
    }
    out.push_back(std::move(f));
  }
  return out;
}

}  // namespace framewalk

#include "unwind/symbolize.hpp"

#include "symbol/perf_map.hpp"

#include <cxxabi.h>

#include <cstdlib>

#include "symbol/inline_symbolizer.hpp"

namespace framewalk {

const symbol::InlineSymbolizer* ModuleData::source() const {
  std::call_once(source_once_, [&] {
    auto loaded = symbol::InlineSymbolizer::load(elf_, elf_->name(), symbol::PathStyle::kBinutils, search_);
    if (loaded && (loaded->lines().has_rows() || loaded->has_debug_info()))
      source_ = std::shared_ptr<const symbol::InlineSymbolizer>(std::move(loaded));
  });
  return static_cast<const symbol::InlineSymbolizer*>(source_.get());
}


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

FrameSymbol symbolize(const Frame& frame, const symbol::PerfMap* jit_names) {
  FrameSymbol s = symbolize(frame);
  if (s.found || (frame.module && !frame.module->jit) || !jit_names) return s;
  if (const symbol::PerfMap::Entry* e = jit_names->find(frame.symbol_pc)) {
    s.found = true;
    s.function = std::string(e->name);
    s.offset = frame.pc - e->start;
  }
  return s;
}

std::vector<SourceFrame> source_frames(const Frame& frame, bool inlines, const symbol::PerfMap* jit_names) {
  std::vector<SourceFrame> out = source_frames(frame, inlines);
  if (jit_names && out.size() == 1 && out[0].file.empty())
    if (const symbol::PerfMap::SourceLine* l = jit_names->source_line(frame.symbol_pc)) {
      out[0].file = std::string(l->file);
      out[0].line = l->line;
    }
  return out;
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

std::vector<Frame> tail_call_frames(const Frame& callee, const Frame& caller) {
  if (!callee.module || !caller.module || !callee.module->data || !caller.module->data) return {};
  if (caller.activation || callee.signal_trampoline || caller.signal_trampoline || caller.pc == 0) return {};
  const symbol::InlineSymbolizer* caller_source = caller.module->data->source();
  const symbol::InlineSymbolizer* callee_source = callee.module->data->source();
  if (!caller_source || !callee_source) return {};
  // Where the callee's function starts: its DWARF subprogram, else its symbol.
  const uint64_t callee_bias = callee.module->bias;
  const uint64_t callee_pc = callee.symbol_pc - callee_bias;
  uint64_t callee_entry = 0;
  const std::vector<symbol::FunctionLevel> levels = callee_source->functions().chain(callee_pc);
  if (!levels.empty()) callee_entry = levels.back().entry;
  else if (auto match = callee.module->data->symbols().lookup(callee_pc)) callee_entry = match->symbol->address;
  else return {};
  std::vector<symbol::TailCallFrame> found;
  const Module* in = caller.module;
  if (callee.module == caller.module) {
    found = caller_source->call_graph().tail_call_frames(caller.pc - caller.module->bias, callee_entry);
  } else {
    // A call into another module (through its PLT): the caller's call site
    // names the function it calls; when that module has exactly one function
    // of that name, the tail calls from it are searched there, and only there.
    const symbol::CallSite* site = caller_source->call_graph().call_site_at(caller.pc - caller.module->bias);
    if (!site || site->target != symbol::CallTargetKind::kName) return {};
    const std::optional<uint64_t> first = callee_source->function_named(site->name);
    if (!first) return {};
    found = callee_source->call_graph().tail_calls_from(*first, callee_entry);
    in = callee.module;
  }
  std::vector<Frame> out;
  for (const symbol::TailCallFrame& t : found) {
    Frame f;
    f.pc = t.pc + in->bias;
    f.activation = false;
    f.source = caller.source;
    f.module = in;
    f.lookup_pc = f.symbol_pc = f.pc - 1;
    out.push_back(f);
  }
  return out;
}

}  // namespace framewalk

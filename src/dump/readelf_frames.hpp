// `framewalk cfi --format=readelf`: the text of binutils 2.40's
// `readelf --debug-dump=frames-interp`, produced from framewalk's own parser
// and row executor.
#pragma once

#include <functional>
#include <string>

#include "arch/arch.hpp"
#include "dump/text_writer.hpp"
#include "dwarf/elf_cfi.hpp"

namespace framewalk::dump {

struct DumpProblem {
  const CfiSource* source;
  Error error;
  uint64_t entry_offset;
};
using ProblemSink = std::function<void(const DumpProblem&)>;

// Writes one section. Malformed records are reported to `on_problem` and skipped.
// readelf names the file a section came from only when it also loaded a
// separate debug file: `name_file` says whether to.
void write_readelf_frames(TextWriter& out, const CfiSource& source, const arch::ArchInfo* arch,
                          bool name_file, const ProblemSink& on_problem);

}  // namespace framewalk::dump

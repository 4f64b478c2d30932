// `framewalk addr2line -e FILE [-a] [-f] [-C] [-s] [-p] [ADDR...]`: source
// lines for link-time addresses of FILE from its .debug_line, printed as
// binutils addr2line prints them (`FILE:LINE`, `??:0` for an address outside
// every section or known nowhere, `FILE:?` / `??:?` for one with a function
// but no line, ` (discriminator N)` after a line that has one); `-f` names the
// function from .debug_info (else the ELF symbol tables, as binutils does),
// `-i` adds the functions the code was inlined into with their call sites,
// `-C` demangles, `-a` prints the address first, `-s` the file's base name,
// `-p` all on one line (` (inlined by) ` between frames). `--format=json`
// prints one JSON object per address with its inline chain. Addresses come
// from the arguments, or from standard input one per line (answered and
// flushed one by one, so that a program can drive it through a pipe).
#pragma once

#include <string>
#include <vector>

namespace CLI {
class App;
}

namespace framewalk::tools {

struct Addr2lineCommandOptions {
  std::string file = "a.out";
  bool addresses = false;  // -a
  bool functions = false;  // -f
  bool demangle = false;   // -C
  bool basenames = false;  // -s
  bool pretty = false;     // -p
  bool inlines = false;    // -i
  std::string format = "text";  // text or json
  bool no_debuginfod = false;   // do not fetch a missing debug file from DEBUGINFOD_URLS' servers
  std::vector<std::string> addresses_in;
};

// Adds the `addr2line` subcommand to `app`, parsed into `options`.
CLI::App* add_addr2line_command(CLI::App& app, Addr2lineCommandOptions& options);

// Exit status: 0; 1 when FILE cannot be read or its DWARF is broken (each
// problem reported with its section offset as it is met; the rest still
// answers); 2 for usage errors.
int run_addr2line_command(const Addr2lineCommandOptions& options);

}  // namespace framewalk::tools

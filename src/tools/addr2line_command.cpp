#include "tools/addr2line_command.hpp"

#include <CLI/CLI.hpp>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <system_error>
#include <thread>

#include <unistd.h>

#include "base/keyed_cache.hpp"
#include "base/text_arena.hpp"
#include "elf/debuginfod.hpp"
#include "elf/elf_file.hpp"
#include "elf/section_cache.hpp"
#include "render/address_text.hpp"
#include "symbol/inline_symbolizer.hpp"
#include "symbol/line_table.hpp"
#include "tools/messages.hpp"
#include "unwind/symbolize.hpp"

namespace framewalk::tools {

namespace {

// As binutils' bfd_scan_vma(text, NULL, 16): hex digits after an optional
// 0x, up to the first other character (none: 0).
uint64_t scan_hex(const std::string& text) {
  size_t i = 0;
  while (i < text.size() && (text[i] == ' ' || text[i] == '\t')) ++i;
  if (i + 1 < text.size() && text[i] == '0' && (text[i + 1] == 'x' || text[i + 1] == 'X')) i += 2;
  uint64_t v = 0;
  for (; i < text.size(); ++i) {
    const char c = text[i];
    int d;
    if (c >= '0' && c <= '9') d = c - '0';
    else if (c >= 'a' && c <= 'f') d = c - 'a' + 10;
    else if (c >= 'A' && c <= 'F') d = c - 'A' + 10;
    else break;
    v = (v << 4) | static_cast<uint64_t>(d);
  }
  return v;
}

}  // namespace

CLI::App* add_addr2line_command(CLI::App& app, Addr2lineCommandOptions& o) {
  auto* cmd = app.add_subcommand("addr2line", "Source file and line of addresses, as binutils addr2line prints them");
  cmd->add_option("-e,--exe", o.file, "the ELF file the addresses are in (link-time addresses; default a.out)");
  cmd->add_flag("-a,--addresses", o.addresses, "print each address before its answer");
  cmd->add_flag("-f,--functions", o.functions, "print the function name (from .debug_info, else the ELF symbol tables)");
  cmd->add_flag("-C,--demangle", o.demangle, "demangle C++ function names");
  cmd->add_flag("-s,--basenames", o.basenames, "print only the file's base name");
  cmd->add_flag("-p,--pretty-print", o.pretty, "print each answer on one line");
  cmd->add_flag("-i,--inlines", o.inlines, "also print the functions the address's code was inlined into, with their call sites");
  cmd->add_option("--format", o.format, "text (default, as binutils addr2line) or json (one object per address)")
      ->check(CLI::IsMember({"text", "json"}));
  cmd->add_flag("--no-debuginfod", o.no_debuginfod,
                "do not fetch a missing debug file from the servers DEBUGINFOD_URLS names");
  cmd->add_option("address", o.addresses_in, "hex addresses (default: one per line from standard input)");
  cmd->footer(
      "Names and inline chains come from .debug_info (the separate debug file's, by build-id or\n"
      ".gnu_debuglink, when FILE has none; fetched from debuginfod when DEBUGINFOD_URLS names\n"
      "servers and no local file is found), else from the ELF symbol tables. --format=json prints\n"
      "every address's inline chain (\"frames\", innermost first) whatever -i says. Compressed\n"
      "debug sections, once inflated, are kept in $XDG_CACHE_HOME/framewalk (~/.cache/framewalk;\n"
      "at most FRAMEWALK_CACHE_MAX_MB, default 1024) unless FRAMEWALK_CACHE=off.");
  return cmd;
}

int run_addr2line_command(const Addr2lineCommandOptions& o) {
  // As llvm-symbolizer and eu-stack: debuginfod when DEBUGINFOD_URLS names servers.
  elf::enable_debuginfod(!o.no_debuginfod);
  // Compressed debug sections inflated once, then mapped from
  // ~/.cache/framewalk (unless FRAMEWALK_CACHE=off): docs/addr2line.md.
  elf::set_section_cache(elf::section_cache_from_environment());
  auto file = elf::ElfFile::open(o.file);
  if (!file) {
    report(o.file, open_error_text(file.error()));
    return 1;
  }
  // Left to the process's end, not destroyed: freeing a large file's index
  // (tens of MB in millions of pieces) cost more than a whole answer, and
  // the command's caller exits right after it.
  AddressAnswerOptions ao;
  ao.json = o.format == "json";
  ao.addresses = o.addresses;
  ao.functions = o.functions;
  ao.demangle = o.demangle;
  ao.basenames = o.basenames;
  ao.pretty = o.pretty;
  ao.inlines = o.inlines;
  AddressAnswerer& symbolizer = *new AddressAnswerer(ao, *file, o.file);
  size_t reported = 0;
  std::string out;
  auto flush = [&] {
    std::fwrite(out.data(), 1, out.size(), stdout);
    std::fflush(stdout);
    out.clear();
  };
  auto report_problems = [&] {
    const std::vector<symbol::DwarfProblem> problems = symbolizer.dwarf().problems();
    if (reported < problems.size()) flush();  // the answers before a problem come before its message
    for (; reported < problems.size(); ++reported) {
      const symbol::DwarfProblem& p = problems[reported];
      // A problem in a .dwo or .dwp names that file too.
      report(o.file, (p.file.empty() ? std::string() : p.file + ": ") + to_string(p.error.code) + " at offset " +
                         hex(p.error.offset) + " of " + p.section);
    }
  };
  report_problems();
  if (!o.addresses_in.empty()) {
    for (const std::string& text : o.addresses_in) {
      symbolizer.answer(scan_hex(text), out);
      report_problems();
    }
    flush();
  } else {
    // A stream of addresses: the line table's units are made on a thread
    // beside this one, which finds them made when an address falls in them
    // (they report no problems: those were found when the programs were scanned).
    std::atomic<bool> stop_making{false};
    std::thread making;
    try {
      making = std::thread([&] { symbolizer.dwarf().lines().make_units(stop_making); });
    } catch (const std::system_error&) {  // no thread to be had: each unit is made when first asked for
    }
    struct Joined {
      std::atomic<bool>& stop;
      std::thread& thread;
      ~Joined() {
        stop = true;
        if (thread.joinable()) thread.join();
      }
    } joined{stop_making, making};
    // Lines as std::getline splits them (the last one may lack its newline).
    // The answers so far are written whenever every line read is answered,
    // before waiting for more: a program on the other end of a pipe gets
    // each answer to its question, and a stream of addresses is answered
    // in large writes, not one per address.
    // A line longer than kLongestLine keeps its first kLongestLine bytes
    // (the address is at its start): endless input without a newline costs
    // no more memory than that.
    constexpr size_t kLongestLine = 64 * 1024;
    std::string input, line;
    char buffer[64 * 1024];
    size_t start = 0;
    bool cutting = false;  // dropping the rest of a long line, up to its newline
    for (bool eof = false; !eof;) {
      for (size_t end; (end = input.find('\n', start)) != std::string::npos; start = end + 1) {
        line.assign(input, start, end - start);
        symbolizer.answer(scan_hex(line), out);
        report_problems();
        if (out.size() >= sizeof buffer) flush();  // answers are long beside their questions
      }
      input.erase(0, start);
      start = 0;
      if (input.size() > kLongestLine) {
        input.resize(kLongestLine);
        cutting = true;
      }
      flush();
      ssize_t n;
      do n = ::read(STDIN_FILENO, buffer, sizeof buffer);
      while (n < 0 && errno == EINTR);
      if (n > 0) {
        std::string_view got(buffer, static_cast<size_t>(n));
        if (cutting) {
          const size_t newline = got.find('\n');
          if (newline == std::string_view::npos) continue;
          got.remove_prefix(newline);
          cutting = false;
        }
        input.append(got);
        continue;
      }
      eof = true;
      if (!input.empty()) {
        symbolizer.answer(scan_hex(input), out);
        report_problems();
      }
    }
    flush();
  }
  std::fflush(stdout);
  return reported == 0 ? 0 : 1;
}

}  // namespace framewalk::tools

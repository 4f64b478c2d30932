#include "tools/addr2line_command.hpp"

#include <CLI/CLI.hpp>

#include <cstdio>
#include <cstring>
#include <iostream>
#include <memory>
#include <optional>
#include <string>

#include "elf/elf_file.hpp"
#include "symbol/line_table.hpp"
#include "symbol/nearest_symbol.hpp"
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

void json_string(std::string& out, std::string_view s) {
  out += '"';
  for (char c : s) {
    const auto u = static_cast<unsigned char>(c);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (u < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", u);
      out += buf;
    } else {
      out += c;
    }
  }
  out += '"';
}

class Symbolizer {
 public:
  Symbolizer(const Addr2lineCommandOptions& o, std::shared_ptr<const elf::ElfFile> file)
      : o_(o), file_(file), lines_(symbol::LineTable::load(file)), symbols_(symbol::NearestSymbols::load(file)) {}

  const symbol::LineTable& lines() const { return lines_; }

  void answer(uint64_t address, std::string& out) const {
    // As binutils: an address outside every allocated section is known nowhere.
    const elf::Section* section = file_->section_by_address(address);
    const bool in_section = section && address >= section->address && address - section->address < section->size;
    std::optional<symbol::LineLocation> line;
    std::optional<symbol::NearestSymbol> symbol;
    if (in_section) {
      line = lines_.lookup(address);
      symbol = symbols_.lookup(section->index, address);
    }
    std::string function;
    if (symbol) function = o_.demangle ? demangle_name(std::string(symbol->name)) : std::string(symbol->name);
    // The line's file; without a line, the STT_FILE name binutils takes from the symbol table.
    std::optional<std::string> path;
    if (line && !line->file.empty()) path = std::string(line->file);
    else if (!line && symbol && symbol->file) path = std::string(*symbol->file);
    if (o_.basenames && path) {
      const size_t slash = path->rfind('/');
      if (slash != std::string::npos) *path = path->substr(slash + 1);
    }
    if (o_.format == "json") {
      out += "{\"address\":";
      json_string(out, hex(address));
      out += ",\"function\":";
      if (symbol) json_string(out, function); else out += "null";
      out += ",\"file\":";
      if (path) json_string(out, *path); else out += "null";
      out += ",\"line\":" + std::to_string(line ? line->line : 0);
      out += ",\"column\":" + std::to_string(line ? line->column : 0);
      out += ",\"discriminator\":" + std::to_string(line ? line->discriminator : 0);
      out += "}\n";
      return;
    }
    if (o_.addresses) {
      out += hex(address, file_->is_64() ? 16 : 8);
      out += o_.pretty ? ": " : "\n";
    }
    if (!line && !symbol) {
      if (o_.functions) out += o_.pretty ? "?? " : "??\n";
      out += "??:0\n";
      return;
    }
    if (o_.functions) {
      out += function.empty() ? "??" : function;
      out += o_.pretty ? " at " : "\n";
    }
    out += path ? *path : std::string("??");
    out += ':';
    if (line && line->line != 0) {
      out += std::to_string(line->line);
      if (line->discriminator != 0) out += " (discriminator " + std::to_string(line->discriminator) + ")";
    } else {
      out += '?';
    }
    out += '\n';
  }

 private:
  const Addr2lineCommandOptions& o_;
  std::shared_ptr<const elf::ElfFile> file_;
  symbol::LineTable lines_;
  symbol::NearestSymbols symbols_;
};

}  // namespace

CLI::App* add_addr2line_command(CLI::App& app, Addr2lineCommandOptions& o) {
  auto* cmd = app.add_subcommand("addr2line", "Source file and line of addresses, as binutils addr2line prints them");
  cmd->add_option("-e,--exe", o.file, "the ELF file the addresses are in (link-time addresses; default a.out)");
  cmd->add_flag("-a,--addresses", o.addresses, "print each address before its answer");
  cmd->add_flag("-f,--functions", o.functions, "print the function name (from the ELF symbol tables)");
  cmd->add_flag("-C,--demangle", o.demangle, "demangle C++ function names");
  cmd->add_flag("-s,--basenames", o.basenames, "print only the file's base name");
  cmd->add_flag("-p,--pretty-print", o.pretty, "print each answer on one line");
  cmd->add_flag("-i,--inlines", o.inlines, "inline frames: not supported yet (refused)");
  cmd->add_option("--format", o.format, "text (default, as binutils addr2line) or json (one object per address)")
      ->check(CLI::IsMember({"text", "json"}));
  cmd->add_option("address", o.addresses_in, "hex addresses (default: one per line from standard input)");
  cmd->footer(
      "Inline frames (-i) are not supported yet: names come from the symbol tables, not from .debug_info,\n"
      "so an address in inlined code is named by the function it was inlined into.");
  return cmd;
}

int run_addr2line_command(const Addr2lineCommandOptions& o) {
  if (o.inlines) {
    std::fprintf(stderr, "framewalk addr2line: -i (inline frames) is not supported yet\n");
    return 2;
  }
  auto file = elf::ElfFile::open(o.file);
  if (!file) {
    report(o.file, open_error_text(file.error()));
    return 1;
  }
  const Symbolizer symbolizer(o, *file);
  for (const symbol::LineProblem& p : symbolizer.lines().problems())
    report(o.file, std::string(to_string(p.error.code)) + " at offset " + hex(p.error.offset) + " of " + p.section);
  std::string out;
  if (!o.addresses_in.empty()) {
    for (const std::string& text : o.addresses_in) symbolizer.answer(scan_hex(text), out);
    std::fwrite(out.data(), 1, out.size(), stdout);
  } else {
    std::string text;
    while (std::getline(std::cin, text)) {
      out.clear();
      symbolizer.answer(scan_hex(text), out);
      std::fwrite(out.data(), 1, out.size(), stdout);
      std::fflush(stdout);  // one answer per question, for a program on the other end of a pipe
    }
  }
  std::fflush(stdout);
  return symbolizer.lines().problems().empty() ? 0 : 1;
}

}  // namespace framewalk::tools

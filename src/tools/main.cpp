// The `framewalk` command: one binary, one subcommand per job.
#include <CLI/CLI.hpp>

#include <cstdio>
#include <string>

#include "tools/cfi_command.hpp"

namespace {

bool parse_address(const std::string& text, uint64_t* out) {
  if (text.empty()) return false;
  char* end = nullptr;
  errno = 0;
  const unsigned long long v = std::strtoull(text.c_str(), &end, 0);
  if (errno != 0 || *end != '\0') return false;
  *out = v;
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"framewalk: how did this program get here?"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "framewalk 0.1.0");

  framewalk::tools::CfiCommandOptions cfi;
  std::string pc_text;
  bool no_debug_frame = false;
  auto* cfi_cmd = app.add_subcommand("cfi", "Dump DWARF call frame information (.eh_frame, .debug_frame)");
  cfi_cmd->add_option("files", cfi.files, "ELF files")->required();
  cfi_cmd->add_option("--format", cfi.format, "text (default), readelf (as readelf --debug-dump=frames-interp) or json")
      ->check(CLI::IsMember({"text", "readelf", "json"}));
  cfi_cmd->add_option("--pc", pc_text, "show only the FDE, symbol and row in force at this address");
  cfi_cmd->add_flag("--no-debug-frame", no_debug_frame, "ignore .debug_frame and separate debug files");

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int rc = app.exit(e);
    return rc == 0 ? 0 : 2;
  }

  if (cfi_cmd->parsed()) {
    if (!pc_text.empty()) {
      uint64_t pc;
      if (!parse_address(pc_text, &pc)) {
        std::fprintf(stderr, "framewalk: --pc: not an address: %s\n", pc_text.c_str());
        return 2;
      }
      cfi.pc = pc;
    }
    cfi.debug_frame = !no_debug_frame;
    return framewalk::tools::run_cfi_command(cfi);
  }
  return 2;
}

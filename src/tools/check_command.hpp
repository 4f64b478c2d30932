// The two SFrame-from-CFI jobs of the `framewalk` command:
//
// `framewalk check FILE [--sframe FILE2]`: compares the CFI rows and the SFrame
// rows of FILE at every PC (sframe/sframe_check), lists disagreements
// (address, function, both rules) and coverage holes both ways, and ends with
// a summary line. SFrame comes from FILE's own .sframe section, or from FILE2:
// an ELF file's .sframe (a copy made by --generate), or a bare section
// (--sframe-address gives its address). Exit 0 when nothing disagrees.
//
// `framewalk sframe --generate IN -o OUT [--sframe-version=3|2|1]`: writes a
// copy of IN with an .sframe section made from its CFI (sframe/sframe_generate,
// elf/elf_writer) and reports what was represented and why the rest was not.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace framewalk::tools {

struct CheckCommandOptions {
  std::string file;
  std::string sframe_file;                 // empty: FILE's own .sframe
  std::optional<uint64_t> sframe_address;  // for a bare section in sframe_file
  size_t limit = 50;                       // listed disagreements and holes of each kind (0: all)
  bool summary_only = false;
};

int run_check_command(const CheckCommandOptions& options);

struct GenerateCommandOptions {
  std::string input;
  std::string output;
  int version = 3;
  bool no_segment = false;  // keep .sframe non-allocated (no PT_LOAD / PT_GNU_SFRAME)
};

int run_sframe_generate(const GenerateCommandOptions& options);

}  // namespace framewalk::tools

// `framewalk sframe FILE...`: dump the .sframe section of ELF files exactly as
// `objdump --sframe` of the binutils release matching the section's version
// (2.40 for V1, 2.45 for V2, 2.46 for V3) prints it.
// `framewalk sframe --raw FILE --address ADDR`: the same for a bare section.
// --rows prints every FDE's rows in framewalk's row model; --pc ADDR the row in
// force at one address.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace framewalk::tools {

struct SframeCommandOptions {
  std::vector<std::string> files;
  bool raw = false;                 // files are bare .sframe sections
  std::optional<uint64_t> address;  // --raw: the section's load address
  std::string binutils;             // "", or the release whose dump to reproduce ("2.40".."2.46")
  bool rows = false;
  std::optional<uint64_t> pc;
};

// Returns the exit status: 0 when everything was read cleanly, 1 otherwise.
int run_sframe_command(const SframeCommandOptions& options);

}  // namespace framewalk::tools

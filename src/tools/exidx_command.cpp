#include "tools/exidx_command.hpp"

#include <cstdio>
#include <cstring>

#include "dump/arm_unwind.hpp"
#include "elf/elf_file.hpp"
#include "tools/messages.hpp"

namespace framewalk::tools {

namespace {

int dump_file(const std::string& path, bool readelf, bool name_file) {
  auto file = elf::ElfFile::open(path);
  if (!file) {
    report(path, open_error_text(file.error()));
    return 1;
  }
  const elf::ElfFile& f = **file;
  if (f.machine() != elf::kEmArm) {
    report(path, "a file of " + machine_name(f.machine_key()) +
                     ": framewalk exidx reads the EHABI tables of 32-bit ARM files only");
    return 1;
  }
  if (f.type() == elf::kEtRel) {
    // An object's index words are relocated by R_ARM_PREL31 against its own
    // sections; framewalk exidx does not apply those relocations yet.
    report(path, "a relocatable object: framewalk exidx reads executables and shared libraries only");
    return 1;
  }
  if (name_file && readelf) std::printf("\nFile: %s\n", path.c_str());
  const dump::ArmUnwindDump dump = readelf ? dump::readelf_arm_unwind(f) : dump::arm_unwind_text(f);
  std::fwrite(dump.text.data(), 1, dump.text.size(), stdout);
  for (const dump::ArmUnwindProblem& p : dump.problems)
    report(path, std::string(to_string(p.error.code)) + " at offset " + hex(p.error.offset) + " of " + p.section +
                     " (file offset " + hex(p.file_offset + p.error.offset) + ")");
  return dump.problems.empty() ? 0 : 1;
}

}  // namespace

int run_exidx_command(const ExidxCommandOptions& options) {
  int status = 0;
  const bool readelf = options.format == "readelf";
  for (const std::string& path : options.files) status |= dump_file(path, readelf, options.files.size() > 1);
  std::fflush(stdout);
  return status;
}

}  // namespace framewalk::tools

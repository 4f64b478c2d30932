// Renderings of an ARM file's EHABI tables (every SHT_ARM_EXIDX section and
// the .ARM.extab entries it points to): the text of binutils 2.40's
// `readelf -u`, and a readable one-line-per-entry text.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "base/result.hpp"
#include "ehabi/unwind_instructions.hpp"
#include "elf/elf_file.hpp"

namespace framewalk::dump {

struct ArmUnwindProblem {
  Error error;           // offset: within `section`
  std::string section;   // the section the offset is in
  uint64_t file_offset;  // of that section
};

struct ArmUnwindDump {
  std::string text;
  std::vector<ArmUnwindProblem> problems;
};

// `readelf -u FILE` for an EM_ARM executable or shared library (the caller
// checks the machine). Problems readelf warns about, or stops an entry at,
// are listed as well.
ArmUnwindDump readelf_arm_unwind(const elf::ElfFile& file);

// One line per entry: `0x1e284 <sym+0x4>: pr1 @0x106da8: vsp = vsp + 52; pop {r14}; finish`.
ArmUnwindDump arm_unwind_text(const elf::ElfFile& file);

// readelf's text for one instruction ("pop {r4, r14}", "vsp = vsp + 16", "[Spare]").
std::string instruction_text(const ehabi::Instruction& instruction);

}  // namespace framewalk::dump

// An ELF image made for code that has no file: a JIT's functions, a bare
// .eh_frame, a symbol list. One PT_LOAD over the code (its bytes when given,
// else nothing in the file), .eh_frame at its run-time address, and the
// functions in .symtab, so that everything that reads modules (unwind
// tables, symbols, code for the fallbacks) reads these too.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "base/byte_reader.hpp"
#include "base/result.hpp"

namespace framewalk::elf {

struct SyntheticSymbol {
  std::string name;
  uint64_t address = 0;  // run-time (= link-time: the image's bias is 0)
  uint64_t size = 0;
};

struct SyntheticImage {
  uint16_t machine = 0;  // ELF e_machine
  bool is64 = true;
  Endian endian = Endian::kLittle;
  uint64_t code_address = 0, code_size = 0;
  std::vector<uint8_t> code;        // empty, or code_size bytes
  std::vector<uint8_t> eh_frame;    // empty: none
  uint64_t eh_frame_address = 0;    // where the .eh_frame's pc-relative pointers were computed
  std::vector<SyntheticSymbol> symbols;
};

// The image's bytes. Errors: kBadArgument (code of another size than
// code_size, an address that does not fit a 32-bit image).
Result<std::vector<uint8_t>> synthesize_elf(const SyntheticImage& image);

}  // namespace framewalk::elf

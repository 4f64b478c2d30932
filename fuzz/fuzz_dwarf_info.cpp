// libFuzzer entry point of fuzz_dwarf_info; the body is in fuzz_dwarf_info_body.cpp.
#include "fuzz_bodies.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  return framewalk::fuzz::fuzz_dwarf_info(data, size);
}

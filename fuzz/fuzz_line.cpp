// libFuzzer entry point of fuzz_line; the body is in fuzz_line_body.cpp.
#include "fuzz_bodies.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  return framewalk::fuzz::fuzz_line(data, size);
}

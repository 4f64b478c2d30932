// libFuzzer entry point of fuzz_sframe_generate; the body is in fuzz_sframe_generate_body.cpp.
#include "fuzz_bodies.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  return framewalk::fuzz::fuzz_sframe_generate(data, size);
}

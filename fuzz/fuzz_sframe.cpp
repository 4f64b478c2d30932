// libFuzzer entry point of fuzz_sframe; the body is in fuzz_sframe_body.cpp.
#include "fuzz_bodies.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  return framewalk::fuzz::fuzz_sframe(data, size);
}

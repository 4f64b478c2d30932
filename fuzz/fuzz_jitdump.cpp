// libFuzzer entry point of fuzz_jitdump; the body is in fuzz_jitdump_body.cpp.
#include "fuzz_bodies.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  return framewalk::fuzz::fuzz_jitdump(data, size);
}

// libFuzzer entry point of fuzz_profile_file; the body is in fuzz_profile_file_body.cpp.
#include "fuzz_bodies.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  return framewalk::fuzz::fuzz_profile_file(data, size);
}

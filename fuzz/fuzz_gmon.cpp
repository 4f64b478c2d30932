// libFuzzer entry point of fuzz_gmon; the body is in fuzz_gmon_body.cpp.
#include "fuzz_bodies.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  return framewalk::fuzz::fuzz_gmon(data, size);
}

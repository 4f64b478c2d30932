// libFuzzer entry point of fuzz_backend; the body is in fuzz_backend_body.cpp.
#include "fuzz_bodies.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  return framewalk::fuzz::fuzz_backend(data, size);
}

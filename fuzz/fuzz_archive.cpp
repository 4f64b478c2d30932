// libFuzzer entry point of fuzz_archive; the body is in fuzz_archive_body.cpp.
#include "fuzz_bodies.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  return framewalk::fuzz::fuzz_archive(data, size);
}

// libFuzzer entry point of fuzz_cu_index; the body is in fuzz_cu_index_body.cpp.
#include "fuzz_bodies.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  return framewalk::fuzz::fuzz_cu_index(data, size);
}

// libFuzzer entry point of fuzz_perf_map; the body is in fuzz_perf_map_body.cpp.
#include "fuzz_bodies.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  return framewalk::fuzz::fuzz_perf_map(data, size);
}

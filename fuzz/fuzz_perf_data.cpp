// libFuzzer entry point of fuzz_perf_data; the body is in fuzz_perf_data_body.cpp.
#include "fuzz_bodies.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  return framewalk::fuzz::fuzz_perf_data(data, size);
}

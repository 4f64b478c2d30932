// libFuzzer entry point of fuzz_eh_frame_hdr; the body is in fuzz_eh_frame_hdr_body.cpp.
#include "fuzz_bodies.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  return framewalk::fuzz::fuzz_eh_frame_hdr(data, size);
}

// libFuzzer entry point of fuzz_gdb_jit; the body is in fuzz_gdb_jit_body.cpp.
#include "fuzz_bodies.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  return framewalk::fuzz::fuzz_gdb_jit(data, size);
}

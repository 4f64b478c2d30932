// Monotonic time in nanoseconds, for the phases framewalk times (the
// --freeze=copy pause, FRAMEWALK_TIMING).
#pragma once

#include <time.h>

#include <cstdint>

namespace framewalk {

inline uint64_t monotonic_ns() {
  timespec t{};
  clock_gettime(CLOCK_MONOTONIC, &t);
  return static_cast<uint64_t>(t.tv_sec) * 1000000000u + static_cast<uint64_t>(t.tv_nsec);
}

}  // namespace framewalk

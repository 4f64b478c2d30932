#include <cstdio>
#include <cstdlib>

#include "fuzz_bodies.hpp"

namespace framewalk::fuzz {

void check(bool ok, const char* what, const char* file, int line) {
  if (ok) return;
  std::fprintf(stderr, "%s:%d: FUZZ_CHECK failed: %s\n", file, line, what);
  std::abort();
}

}  // namespace framewalk::fuzz

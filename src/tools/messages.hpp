// What every command prints the same way: a problem with a file, and an
// address or offset in hex.
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>

namespace framewalk::tools {

// "framewalk: FILE: WHAT" on stderr, after whatever stdout still holds.
inline void report(const std::string& file, const std::string& what) {
  std::fflush(stdout);
  std::fprintf(stderr, "framewalk: %s: %s\n", file.c_str(), what.c_str());
}

// "0x" and at least `width` lower-case hex digits.
inline std::string hex(uint64_t v, int width = 0) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "0x%0*llx", width, static_cast<unsigned long long>(v));
  return buf;
}

}  // namespace framewalk::tools

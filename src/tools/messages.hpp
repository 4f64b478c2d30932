// What every command prints the same way: a problem with a file, and an
// address or offset in hex.
#pragma once

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>

#include "base/result.hpp"
#include "base/text.hpp"

namespace framewalk::tools {

// "framewalk: FILE: WHAT" on stderr, after whatever stdout still holds.
inline void report(const std::string& file, const std::string& what) {
  std::fflush(stdout);
  std::fprintf(stderr, "framewalk: %s: %s\n", file.c_str(), what.c_str());
}

using framewalk::hex;

// Why a file could not be opened or read: the system's words for an I/O
// error (its errno travels in the offset), else the code and its offset.
inline std::string open_error_text(const Error& e) {
  if (e.code == ErrorCode::kIoError) return std::strerror(static_cast<int>(e.offset));
  return std::string(to_string(e.code)) + " at offset " + hex(e.offset);
}

}  // namespace framewalk::tools

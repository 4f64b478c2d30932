// LEB128 of bytes framewalk packs itself: encoders (what ByteReader's
// uleb128()/sleb128() read back) and, for bytes only these wrote (packed
// line rows, function nodes), decoders with no bounds to check.
#pragma once

#include <cstdint>
#include <vector>

namespace framewalk {

inline void put_uleb(std::vector<uint8_t>& out, uint64_t v) {
  do {
    uint8_t byte = v & 0x7f;
    v >>= 7;
    if (v) byte |= 0x80;
    out.push_back(byte);
  } while (v);
}

inline void put_sleb(std::vector<uint8_t>& out, int64_t v) {
  bool more = true;
  while (more) {
    uint8_t byte = v & 0x7f;
    v >>= 7;  // arithmetic: C++20 defines >> of negative values
    if ((v == 0 && !(byte & 0x40)) || (v == -1 && (byte & 0x40))) more = false;
    else byte |= 0x80;
    out.push_back(byte);
  }
}

inline uint64_t get_uleb(const uint8_t*& p) {
  uint64_t v = 0;
  for (unsigned shift = 0;; shift += 7) {
    const uint8_t byte = *p++;
    v |= uint64_t{byte & 0x7fu} << shift;
    if (!(byte & 0x80)) return v;
  }
}

inline int64_t get_sleb(const uint8_t*& p) {
  uint64_t v = 0;
  unsigned shift = 0;
  uint8_t byte;
  do {
    byte = *p++;
    v |= uint64_t{byte & 0x7fu} << shift;
    shift += 7;
  } while (byte & 0x80);
  if (shift < 64 && (byte & 0x40)) v |= ~uint64_t{0} << shift;
  return static_cast<int64_t>(v);
}

}  // namespace framewalk

// LEB128 encoders: what ByteReader's uleb128()/sleb128() read back.
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

}  // namespace framewalk

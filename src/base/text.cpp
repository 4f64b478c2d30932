#include "base/text.hpp"

#include <cinttypes>
#include <cstdio>

namespace framewalk {

std::string hex(uint64_t v, int width) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "0x%0*" PRIx64, width, v);
  return buf;
}

std::string hex_digits(uint64_t v) {
  char buf[20];
  std::snprintf(buf, sizeof buf, "%" PRIx64, v);
  return buf;
}

std::string hex_bytes(const std::vector<uint8_t>& bytes) {
  static const char kDigits[] = "0123456789abcdef";
  std::string s;
  s.reserve(2 * bytes.size());
  for (uint8_t b : bytes) {
    s += kDigits[b >> 4];
    s += kDigits[b & 15];
  }
  return s;
}

namespace {

// Length of the well-formed UTF-8 sequence at the start of `s`, or 0.
size_t utf8_sequence(std::string_view s) {
  const auto byte = [&](size_t i) { return static_cast<unsigned char>(s[i]); };
  const unsigned char c = byte(0);
  size_t n;
  uint32_t cp;
  if (c >= 0xc2 && c <= 0xdf) { n = 2; cp = c & 0x1f; }
  else if (c >= 0xe0 && c <= 0xef) { n = 3; cp = c & 0x0f; }
  else if (c >= 0xf0 && c <= 0xf4) { n = 4; cp = c & 0x07; }
  else return 0;
  if (s.size() < n) return 0;
  for (size_t i = 1; i < n; ++i) {
    if ((byte(i) & 0xc0) != 0x80) return 0;
    cp = (cp << 6) | (byte(i) & 0x3f);
  }
  if (n == 3 && (cp < 0x800 || (cp >= 0xd800 && cp <= 0xdfff))) return 0;
  if (n == 4 && (cp < 0x10000 || cp > 0x10ffff)) return 0;
  return n;
}

}  // namespace

std::string json_escape(std::string_view s) {
  std::string out;
  out.reserve(s.size() + 2);
  for (size_t i = 0; i < s.size(); ++i) {
    const char c = s[i];
    const auto u = static_cast<unsigned char>(c);
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      default:
        if (u >= 0x80) {
          if (const size_t n = utf8_sequence(s.substr(i))) {
            out.append(s.substr(i, n));
            i += n - 1;
            break;
          }
        }
        if (u < 0x20 || u >= 0x80) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", u);
          out += buf;
        } else {
          out += c;
        }
    }
  }
  return out;
}

}  // namespace framewalk

#include "json_check.hpp"

#include <cstddef>
#include <cstdint>

namespace framewalk::fuzz {

namespace {

class Checker {
 public:
  explicit Checker(std::string_view s) : s_(s) {}

  bool document() {
    space();
    if (!value(0)) return false;
    space();
    return i_ == s_.size();
  }

 private:
  static constexpr int kMaxDepth = 64;

  bool at_end() const { return i_ >= s_.size(); }
  unsigned char peek() const { return static_cast<unsigned char>(s_[i_]); }
  void space() {
    while (!at_end() && (peek() == ' ' || peek() == '\t' || peek() == '\n' || peek() == '\r')) ++i_;
  }
  bool literal(std::string_view word) {
    if (s_.substr(i_, word.size()) != word) return false;
    i_ += word.size();
    return true;
  }
  bool value(int depth) {
    if (at_end() || depth > kMaxDepth) return false;
    switch (peek()) {
      case '{': return object(depth + 1);
      case '[': return array(depth + 1);
      case '"': return string();
      case 't': return literal("true");
      case 'f': return literal("false");
      case 'n': return literal("null");
      default: return number();
    }
  }
  bool object(int depth) {
    ++i_;  // {
    space();
    if (!at_end() && peek() == '}') return ++i_, true;
    for (;;) {
      space();
      if (at_end() || peek() != '"' || !string()) return false;
      space();
      if (at_end() || peek() != ':') return false;
      ++i_;
      space();
      if (!value(depth)) return false;
      space();
      if (at_end()) return false;
      if (peek() == '}') return ++i_, true;
      if (peek() != ',') return false;
      ++i_;
    }
  }
  bool array(int depth) {
    ++i_;  // [
    space();
    if (!at_end() && peek() == ']') return ++i_, true;
    for (;;) {
      space();
      if (!value(depth)) return false;
      space();
      if (at_end()) return false;
      if (peek() == ']') return ++i_, true;
      if (peek() != ',') return false;
      ++i_;
    }
  }
  bool digits() {
    const size_t start = i_;
    while (!at_end() && peek() >= '0' && peek() <= '9') ++i_;
    return i_ > start;
  }
  bool number() {
    if (!at_end() && peek() == '-') ++i_;
    if (at_end()) return false;
    if (peek() == '0') {
      ++i_;
    } else if (!digits()) {
      return false;
    }
    if (!at_end() && peek() == '.') {
      ++i_;
      if (!digits()) return false;
    }
    if (!at_end() && (peek() == 'e' || peek() == 'E')) {
      ++i_;
      if (!at_end() && (peek() == '+' || peek() == '-')) ++i_;
      if (!digits()) return false;
    }
    return true;
  }
  static bool hex_digit(unsigned char c) {
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
  }
  bool string() {
    ++i_;  // "
    while (!at_end()) {
      const unsigned char c = peek();
      if (c == '"') return ++i_, true;
      if (c < 0x20) return false;
      if (c == '\\') {
        ++i_;
        if (at_end()) return false;
        const unsigned char e = peek();
        ++i_;
        if (e == 'u') {
          for (int k = 0; k < 4; ++k, ++i_)
            if (at_end() || !hex_digit(peek())) return false;
        } else if (e != '"' && e != '\\' && e != '/' && e != 'b' && e != 'f' && e != 'n' && e != 'r' && e != 't') {
          return false;
        }
        continue;
      }
      if (c < 0x80) {
        ++i_;
        continue;
      }
      if (!utf8()) return false;
    }
    return false;
  }
  // One multi-byte UTF-8 sequence: no overlong forms, no surrogates, <= U+10FFFF.
  bool utf8() {
    const unsigned char c = peek();
    int n;
    uint32_t cp;
    if (c >= 0xc2 && c <= 0xdf) { n = 1; cp = c & 0x1f; }
    else if (c >= 0xe0 && c <= 0xef) { n = 2; cp = c & 0x0f; }
    else if (c >= 0xf0 && c <= 0xf4) { n = 3; cp = c & 0x07; }
    else return false;
    ++i_;
    for (int k = 0; k < n; ++k, ++i_) {
      if (at_end() || (peek() & 0xc0) != 0x80) return false;
      cp = (cp << 6) | (peek() & 0x3f);
    }
    if (n == 2 && (cp < 0x800 || (cp >= 0xd800 && cp <= 0xdfff))) return false;
    if (n == 3 && (cp < 0x10000 || cp > 0x10ffff)) return false;
    return true;
  }

  std::string_view s_;
  size_t i_ = 0;
};

}  // namespace

bool valid_json(std::string_view text) { return Checker(text).document(); }

}  // namespace framewalk::fuzz

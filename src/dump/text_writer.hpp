// A buffered text writer with fast integer formatting: the dumpers print
// millions of rows, and stdio's printf is the bottleneck there.
#pragma once

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <string_view>

namespace framewalk::dump {

class TextWriter {
 public:
  explicit TextWriter(std::FILE* out) : out_(out) { buf_.reserve(kFlushAt + 4096); }
  // Collects into a string (for tests) when no FILE is given.
  TextWriter() { buf_.reserve(4096); }
  ~TextWriter() { flush(); }
  TextWriter(const TextWriter&) = delete;
  TextWriter& operator=(const TextWriter&) = delete;

  TextWriter& str(std::string_view s) {
    buf_.append(s.data(), s.size());
    if (!s.empty() && s.back() == '\n') maybe_flush();
    return *this;
  }
  TextWriter& ch(char c) {
    buf_.push_back(c);
    if (c == '\n') maybe_flush();
    return *this;
  }
  // Lower-case hex, zero-padded to at least `digits`.
  TextWriter& hex(uint64_t v, int digits = 1) {
    char tmp[17];
    int n = 0;
    do {
      tmp[16 - n++] = "0123456789abcdef"[v & 0xf];
      v >>= 4;
    } while (v);
    while (n < digits && n < 16) tmp[16 - n++] = '0';
    buf_.append(tmp + 17 - n, static_cast<size_t>(n));
    return *this;
  }
  // The low `bytes` bytes of v as 2*bytes hex digits (binutils' print_dwarf_vma).
  TextWriter& hex_bytes(uint64_t v, unsigned bytes) {
    if (bytes < 8) v &= (uint64_t{1} << (8 * bytes)) - 1;
    return hex(v, static_cast<int>(2 * (bytes > 8 ? 8 : bytes)));
  }
  TextWriter& dec(int64_t v) {
    char tmp[24];
    const int n = format_dec(tmp, v, false);
    buf_.append(tmp, static_cast<size_t>(n));
    return *this;
  }
  TextWriter& udec(uint64_t v) {
    char tmp[24];
    int n = 0;
    do {
      tmp[23 - n++] = static_cast<char>('0' + v % 10);
      v /= 10;
    } while (v);
    buf_.append(tmp + 24 - n, static_cast<size_t>(n));
    return *this;
  }
  // printf("%+d")-style signed decimal.
  TextWriter& signed_dec(int64_t v) {
    char tmp[24];
    const int n = format_dec(tmp, v, true);
    buf_.append(tmp, static_cast<size_t>(n));
    return *this;
  }
  // Pads the text written since `mark` with spaces to `width` (printf "%-Ns").
  size_t mark() const { return buf_.size(); }
  TextWriter& pad_from(size_t mark, size_t width) {
    const size_t len = buf_.size() - mark;
    if (len < width) buf_.append(width - len, ' ');
    return *this;
  }

  void flush() {
    if (out_ && !buf_.empty()) {
      std::fwrite(buf_.data(), 1, buf_.size(), out_);
      buf_.clear();
    }
  }
  // For writers without a FILE: everything written so far.
  const std::string& text() const { return buf_; }

 private:
  // Flushes happen only at line ends, so that pad_from() marks stay valid.
  static constexpr size_t kFlushAt = 1 << 20;
  void maybe_flush() {
    if (out_ && buf_.size() >= kFlushAt) flush();
  }
  static int format_dec(char* out, int64_t v, bool plus) {
    char tmp[24];
    int n = 0;
    const bool neg = v < 0;
    uint64_t u = neg ? 0 - static_cast<uint64_t>(v) : static_cast<uint64_t>(v);
    do {
      tmp[23 - n++] = static_cast<char>('0' + u % 10);
      u /= 10;
    } while (u);
    int k = 0;
    if (neg) out[k++] = '-';
    else if (plus) out[k++] = '+';
    std::memcpy(out + k, tmp + 24 - n, static_cast<size_t>(n));
    return k + n;
  }

  std::FILE* out_ = nullptr;
  std::string buf_;
};

}  // namespace framewalk::dump

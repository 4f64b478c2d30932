// A buffered text writer with fast integer formatting: the dumpers print
// millions of rows, and stdio's printf is the bottleneck there.
#pragma once

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string_view>

namespace framewalk::dump {

class TextWriter {
 public:
  explicit TextWriter(std::FILE* out) : out_(out) { grow(kFlushAt + 64 * 1024); }
  // Collects into memory (tests, fuzzers) when no FILE is given.
  TextWriter() { grow(4096); }
  ~TextWriter() { flush(); }
  TextWriter(const TextWriter&) = delete;
  TextWriter& operator=(const TextWriter&) = delete;

  TextWriter& str(std::string_view s) {
    reserve(s.size());
    std::memcpy(buf_.get() + len_, s.data(), s.size());
    len_ += s.size();
    if (!s.empty() && s.back() == '\n') maybe_flush();
    return *this;
  }
  TextWriter& ch(char c) {
    reserve(1);
    buf_[len_++] = c;
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
    return str(std::string_view(tmp + 17 - n, static_cast<size_t>(n)));
  }
  // The low `bytes` bytes of v as 2*bytes hex digits (binutils' print_dwarf_vma).
  TextWriter& hex_bytes(uint64_t v, unsigned bytes) {
    if (bytes > 8) bytes = 8;
    if (bytes < 8) v &= (uint64_t{1} << (8 * bytes)) - 1;
    return hex(v, static_cast<int>(2 * bytes));
  }
  TextWriter& dec(int64_t v) {
    char tmp[24];
    return str(std::string_view(tmp, static_cast<size_t>(format_dec(tmp, v, false))));
  }
  TextWriter& udec(uint64_t v) {
    char tmp[24];
    int n = 0;
    do {
      tmp[23 - n++] = static_cast<char>('0' + v % 10);
      v /= 10;
    } while (v);
    return str(std::string_view(tmp + 24 - n, static_cast<size_t>(n)));
  }
  // printf("%+d")-style signed decimal.
  TextWriter& signed_dec(int64_t v) {
    char tmp[24];
    return str(std::string_view(tmp, static_cast<size_t>(format_dec(tmp, v, true))));
  }
  // Pads the text written since `mark` with spaces to `width` (printf "%-Ns").
  // Flushes happen only at line ends, so a mark stays valid within a line.
  size_t mark() const { return len_; }
  TextWriter& pad_from(size_t mark, size_t width) {
    const size_t len = len_ - mark;
    if (len < width) {
      reserve(width - len);
      std::memset(buf_.get() + len_, ' ', width - len);
      len_ += width - len;
    }
    return *this;
  }

  // Direct access for formatters that build a line in place: reserve room for
  // `max` bytes, write them at the returned pointer, then commit the end.
  char* raw_begin(size_t max) {
    reserve(max);
    return buf_.get() + len_;
  }
  void raw_commit(const char* end) {
    len_ = static_cast<size_t>(end - buf_.get());
    if (len_ && buf_[len_ - 1] == '\n') maybe_flush();
  }

  void flush() {
    if (out_ && len_) {
      std::fwrite(buf_.get(), 1, len_, out_);
      len_ = 0;
    }
  }
  // Appends a large block: written straight to the FILE when there is one
  // (after what is buffered), copied otherwise.
  void write_through(std::string_view block) {
    if (!out_) {
      str(block);
      return;
    }
    flush();
    std::fwrite(block.data(), 1, block.size(), out_);
  }

  // Forgets the collected text, keeping the buffer for reuse.
  void clear() { len_ = 0; }
  // For writers without a FILE: everything written so far.
  std::string_view text() const { return {buf_.get(), len_}; }

 private:
  static constexpr size_t kFlushAt = 1 << 20;
  void maybe_flush() {
    if (out_ && len_ >= kFlushAt) flush();
  }
  void reserve(size_t n) {
    if (cap_ - len_ < n) grow(len_ + n);
  }
  void grow(size_t need) {
    size_t cap = cap_ ? cap_ : 4096;
    while (cap < need) cap *= 2;
    std::unique_ptr<char[]> nb(new char[cap]);
    if (len_) std::memcpy(nb.get(), buf_.get(), len_);
    buf_ = std::move(nb);
    cap_ = cap;
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
  std::unique_ptr<char[]> buf_;
  size_t len_ = 0;
  size_t cap_ = 0;
};

}  // namespace framewalk::dump

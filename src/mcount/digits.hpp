// Decimal digits without stdio, for the runtime's text (a line on stderr,
// the times' side file), which a dump in a signal handler may write.
#pragma once

#include <cstdint>

namespace framewalk::mcount {

// The digits of `v`, least significant first, in `digits`; their number.
inline unsigned decimal_digits_reversed(uint64_t v, char (&digits)[20]) {
  unsigned n = 0;
  do {
    digits[n++] = static_cast<char>('0' + v % 10);
    v /= 10;
  } while (v != 0);
  return n;
}

}  // namespace framewalk::mcount

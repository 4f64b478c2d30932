// A strict JSON checker (RFC 8259, UTF-8) for the fuzz bodies and the CLI
// tests: framewalk's JSON must parse whatever bytes it was made from.
#pragma once

#include <string_view>

namespace framewalk::fuzz {

// True if `text` is exactly one JSON value (surrounding whitespace allowed),
// with every string valid UTF-8 and properly escaped.
bool valid_json(std::string_view text);

}  // namespace framewalk::fuzz

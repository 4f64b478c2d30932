// Text every layer writes the same way: addresses in hex, bytes in hex,
// strings escaped for JSON.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace framewalk {

// "0x" and at least `width` lower-case hex digits.
std::string hex(uint64_t v, int width = 0);
// Lower-case hex digits without a prefix (/proc/PID/map_files names).
std::string hex_digits(uint64_t v);
// Two lower-case hex digits a byte (build-ids).
std::string hex_bytes(const std::vector<uint8_t>& bytes);
// `s` as the inside of a JSON string: quotes, backslashes and control
// characters escaped; well-formed UTF-8 kept, other bytes as \u00XX.
std::string json_escape(std::string_view s);

}  // namespace framewalk

// `objdump --sframe` / `readelf --sframe` text of an SFrame section, as the
// binutils release that matches the section's version prints it:
//   2.40 for V1 (the only release that dumps V1 functions; it prints the
//        AMD64 RA column as "u"),
//   2.45 for V2 (the 2.41-2.44 dumpers print V2 sections the same way),
//   2.46 for V3 (FLEX FDEs, "RA undefined", attr = "S"/"F").
// Each flavor reproduces its release's libsframe accessors, quirks included
// (2.40's flag string, "%s+%d" CFA offsets, -1 for an absent CFA word, the
// FDE start computed without sfh_fdeoff), so that the output is byte-identical.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "sframe/sframe_section.hpp"

namespace framewalk::sframe {

enum class Binutils : uint8_t { k2_40, k2_45, k2_46 };

// The release whose dump matches a section version (1, 2, 3).
Binutils binutils_for_version(uint8_t version);
// "2.40" -> 2.40; "2.41" .. "2.45" -> 2.45; "2.46" and later -> 2.46.
std::optional<Binutils> parse_binutils(std::string_view release);
const char* to_string(Binutils b);

// The text objdump prints after its "FILE: file format ..." banner, starting
// with "Contents of the SFrame section NAME:". Errc::kUnsupportedByDumper when
// that release cannot decode the section's version (2.40: V2/V3; 2.45: V3;
// 2.46: V1); 2.45 on V1 prints the header and "SFrame version not supported".
Result<std::string> objdump_text(const Section& section, Binutils release,
                                 std::string_view section_name = ".sframe");

}  // namespace framewalk::sframe

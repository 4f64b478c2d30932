// Separate debug files fetched from debuginfod servers (DEBUGINFOD_URLS), as
// gdb and eu-stack do. libdebuginfod is loaded on first use (dlopen), so a
// program that never asks pays nothing for it and its network libraries.
// Off by default in the library: `framewalk stack` turns it on.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace framewalk::elf {

// The default of DebugFileSearch::debuginfod (elf/debug_file.hpp) for the
// searches made from now on; each search then says for itself. Off until a
// program turns it on (the command does, unless --no-debuginfod).
void enable_debuginfod(bool on);
bool debuginfod_enabled();

// The path (in debuginfod's client cache) of the debug file with this
// build-id, when DEBUGINFOD_URLS names a server, libdebuginfod is
// installed and a server has the file. May take as long as
// DEBUGINFOD_TIMEOUT on an unreachable server. Thread-safe.
std::optional<std::string> debuginfod_find_debuginfo(const std::vector<uint8_t>& build_id);

}  // namespace framewalk::elf

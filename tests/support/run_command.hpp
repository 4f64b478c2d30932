// Running a shell command from a test and collecting what it prints.
#pragma once

#include <string>

namespace framewalk::test {

// Runs `command` with /bin/sh, returns its stdout (and stderr, when
// `with_stderr`), and stores its exit status (-1 when it did not exit).
std::string run_command(const std::string& command, int* exit_status, bool with_stderr = true);

// A small C program with a leaf, an alloca frame and a large frame: the
// tests that compile something with gas's SFrame output build this.
extern const char* const kSframeSampleProgram;

}  // namespace framewalk::test

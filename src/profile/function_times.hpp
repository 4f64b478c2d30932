// The exact per-function times libframewalk_mcount writes beside gmon.out
// for code built with -finstrument-functions (src/mcount/function_times.hpp
// describes the file: `<gmon file>.times`, text, one "ADDRESS CALLS
// INCLUSIVE_NS SELF_NS [MODULE]" line per function, MODULE the path of the
// shared library it is in; versions 1 and 2), read strictly and charged to
// a CallGraph's functions, a library's to CallGraph::module_functions.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "profile/call_graph.hpp"
#include "profile/functions.hpp"

namespace framewalk::profile {

struct FunctionTime {
  uint64_t address = 0;  // link-time start of the function
  uint64_t calls = 0;
  uint64_t inclusive_ns = 0;
  uint64_t self_ns = 0;
  std::string module;    // a shared library's path; empty: the executable
};

struct FunctionTimes {
  std::string clock;  // "monotonic" or "thread", from the header
  std::vector<FunctionTime> functions;
};

struct FunctionTimesError {
  size_t line = 0;  // 1-based
  std::string what;
};

// Parses the file's text; on failure `error` says which line and why.
std::optional<FunctionTimes> read_function_times(std::string_view text, FunctionTimesError* error);

// Charges each line of the executable to the function that starts at its
// address minus `bias` (ProfileFunction::exact); a function of `table` the
// graph does not have yet (one whose only caller is outside the executable,
// a thread's start routine) is added to it. Returns how many of those lines
// named no function's start. Lines of shared libraries are not looked at.
size_t attach_function_times(const FunctionTimes& times, const FunctionTable& table, uint64_t bias,
                             CallGraph* graph);

// The functions of one library, by its path: nullptr when it cannot be read.
using ModuleTables = std::function<const FunctionTable*(const std::string& module)>;

// Adds each line of a shared library to graph->module_functions, named by
// the function of `tables(module)` that starts at its address (by the
// address when none does, or the library cannot be read). Returns how many
// lines were named by their address only.
size_t attach_module_times(const FunctionTimes& times, const ModuleTables& tables, CallGraph* graph);

}  // namespace framewalk::profile

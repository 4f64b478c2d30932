// The exact per-function times libframewalk_mcount writes beside gmon.out
// for code built with -finstrument-functions (src/mcount/function_times.hpp
// describes the file: `<gmon file>.times`, text, one "ADDRESS CALLS
// INCLUSIVE_NS SELF_NS" line per function of the main executable), read
// strictly and charged to a CallGraph's functions.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "profile/call_graph.hpp"

namespace framewalk::profile {

struct FunctionTime {
  uint64_t address = 0;  // link-time start of the function
  uint64_t calls = 0;
  uint64_t inclusive_ns = 0;
  uint64_t self_ns = 0;
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

// Charges each line to the function that starts at its address minus `bias`
// (ProfileFunction::exact); a function of `table` the graph does not have
// yet (one whose only caller is outside the executable, a thread's start
// routine) is added to it. Returns how many lines named no function's start.
size_t attach_function_times(const FunctionTimes& times, const FunctionTable& table, uint64_t bias,
                             CallGraph* graph);

}  // namespace framewalk::profile

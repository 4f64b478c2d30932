// The call-graph model of a profile: functions with their self time (from a
// PC histogram) and call counts, the arcs between them with exact counts, and
// gprof's estimate of each function's time in its callees (self time
// propagated up the arcs in proportion to the calls, cycles of mutual
// recursion taken as one node). Made from gmon.out by build_call_graph, and
// shaped so that any profiler's report can fill it.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "profile/functions.hpp"
#include "profile/gmon.hpp"

namespace framewalk::profile {

// Exact times from -finstrument-functions' hooks (profile/function_times).
struct ExactTime {
  uint64_t calls = 0;
  uint64_t inclusive_ns = 0;  // entry to exit, the outermost activation of a recursion only
  uint64_t self_ns = 0;       // inclusive minus the callees', every activation
};

struct ProfileFunction {
  std::string name;
  uint64_t address = 0;   // link-time start
  uint64_t end = 0;
  double self_ticks = 0;  // histogram counts charged to it (fractions where a bin straddles two functions)
  double child_ticks = 0; // estimated time in its callees, in ticks (gprof's "children")
  uint64_t calls = 0;     // calls from other functions (gprof's "called"; self-recursion not included)
  uint64_t self_calls = 0;  // calls to itself
  int cycle = 0;          // 1, 2, ...: the cycle of mutual recursion it belongs to; 0: none
  std::optional<ExactTime> exact;  // from the runtime's .times file, when there is one
};

// A shared library's function with exact times (the .times file's lines
// with a module): kept apart from `functions`, whose addresses are the
// executable's.
struct ModuleFunction {
  std::string module;   // the library's path as the process loaded it
  std::string name;     // from the library's symbols; "0x<address>" when none names it
  uint64_t address = 0; // the library's link-time address
  ExactTime exact;
};

struct ProfileArc {
  size_t caller = 0;  // indexes into CallGraph::functions
  size_t callee = 0;
  uint64_t count = 0;
  // The callee's (or its cycle's) self and child ticks credited to this arc;
  // zero for self-recursion and arcs inside a cycle.
  double self_ticks = 0;
  double child_ticks = 0;
  // Where the calls were made: the return addresses in the caller (link-time,
  // as gmon.out's from_pc less the bias) and the calls from each, by address;
  // only from a file whose call sites are exact (GmonFile::exact_call_sites).
  std::vector<std::pair<uint64_t, uint64_t>> call_sites;
};

struct ProfileCycle {
  int number = 0;
  std::vector<size_t> members;
  uint64_t calls = 0;           // from outside the cycle
  uint64_t internal_calls = 0;  // between members (self-recursion not included)
  double self_ticks = 0;
  double child_ticks = 0;
};

struct CallGraph {
  std::vector<ProfileFunction> functions;  // ordered by address
  std::vector<ProfileArc> arcs;            // ordered by caller, then callee
  std::vector<ProfileCycle> cycles;
  bool has_histogram = false;
  bool has_arcs = false;
  uint32_t rate = 0;          // ticks per second
  std::string dimension;      // "seconds"
  char abbreviation = 0;
  double total_ticks = 0;     // every count of every bin
  double unattributed_ticks = 0;  // counts in no function's range
  uint64_t dropped_arcs = 0;  // arcs whose caller or callee is in no function's range (gprof drops them too)
  uint64_t dropped_calls = 0;
  uint64_t bias = 0;          // subtracted from the file's addresses (a PIE's load address)
  bool has_exact_times = false;  // a .times file was read (ProfileFunction::exact)
  std::string exact_clock;       // its clock: "monotonic" (wall) or "thread" (CPU)
  std::vector<ModuleFunction> module_functions;  // the shared libraries' timed functions

  double seconds_per_tick() const { return rate ? 1.0 / rate : 0.0; }
  // Arcs into and out of function `f`, as indexes into `arcs`.
  std::vector<size_t> arcs_into(size_t f) const;
  std::vector<size_t> arcs_out_of(size_t f) const;
};

// Charges the histograms and arcs of `file` to the functions of `functions`.
// Addresses in the file minus `bias` are the table's addresses.
CallGraph build_call_graph(const GmonFile& file, const FunctionTable& functions, uint64_t bias = 0);

}  // namespace framewalk::profile

#include "profile/function_times.hpp"

#include <algorithm>
#include <charconv>
#include <cstdio>

namespace framewalk::profile {

namespace {

// Version 1 has only the executable's lines; 2 adds the libraries' (a fifth field).
constexpr std::string_view kMagic1 = "# framewalk mcount function times 1";
constexpr std::string_view kMagic2 = "# framewalk mcount function times 2";

bool parse_number(std::string_view text, int base, uint64_t* out) {
  if (text.empty()) return false;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), *out, base);
  return ec == std::errc() && end == text.data() + text.size();
}

// Splits on single spaces: the writer never puts two.
std::vector<std::string_view> fields_of(std::string_view line) {
  std::vector<std::string_view> fields;
  size_t start = 0;
  while (start <= line.size()) {
    const size_t space = line.find(' ', start);
    const size_t end = space == std::string_view::npos ? line.size() : space;
    fields.push_back(line.substr(start, end - start));
    if (space == std::string_view::npos) break;
    start = space + 1;
  }
  return fields;
}

}  // namespace

std::optional<FunctionTimes> read_function_times(std::string_view text, FunctionTimesError* error) {
  FunctionTimes times;
  size_t number = 0;
  auto fail = [&](std::string what) -> std::optional<FunctionTimes> {
    if (error) *error = FunctionTimesError{number, std::move(what)};
    return std::nullopt;
  };
  bool seen_magic = false;
  int version = 0;
  while (!text.empty()) {
    const size_t newline = text.find('\n');
    if (newline == std::string_view::npos) {
      ++number;
      return fail("the last line has no newline (a file cut short?)");
    }
    const std::string_view line = text.substr(0, newline);
    text.remove_prefix(newline + 1);
    ++number;
    if (number == 1) {
      if (line == kMagic1) {
        version = 1;
      } else if (line == kMagic2) {
        version = 2;
      } else {
        return fail("not a framewalk function-times file (expected \"" + std::string(kMagic2) + "\" or version 1)");
      }
      seen_magic = true;
      continue;
    }
    if (line.starts_with("# clock ")) {
      times.clock = std::string(line.substr(8));
      continue;
    }
    if (line.starts_with("#")) continue;  // the column names and the closing counts
    // Four fields, and in version 2 the rest of the line as a library's path.
    auto fields = fields_of(line);
    std::string_view module;
    if (version >= 2 && fields.size() > 4) {
      module = line.substr(static_cast<size_t>(fields[4].data() - line.data()));
      fields.resize(4);
      if (module.empty()) return fail("a space at the end of the line and no library's path");
    }
    if (fields.size() != 4 || !fields[0].starts_with("0x"))
      return fail(version >= 2 ? "expected \"0xADDRESS CALLS INCLUSIVE_NS SELF_NS [MODULE]\""
                               : "expected \"0xADDRESS CALLS INCLUSIVE_NS SELF_NS\"");
    FunctionTime t;
    t.module = std::string(module);
    if (!parse_number(fields[0].substr(2), 16, &t.address) || !parse_number(fields[1], 10, &t.calls) ||
        !parse_number(fields[2], 10, &t.inclusive_ns) || !parse_number(fields[3], 10, &t.self_ns))
      return fail("a field is not a number");
    times.functions.push_back(t);
  }
  if (!seen_magic) return fail("empty file");
  return times;
}

size_t attach_function_times(const FunctionTimes& times, const FunctionTable& table, uint64_t bias,
                             CallGraph* graph) {
  size_t unmatched = 0;
  std::vector<ProfileFunction> added;
  for (const FunctionTime& t : times.functions) {
    if (!t.module.empty()) continue;  // attach_module_times
    const uint64_t address = t.address - bias;
    const ExactTime exact{t.calls, t.inclusive_ns, t.self_ns};
    auto it = std::lower_bound(graph->functions.begin(), graph->functions.end(), address,
                               [](const ProfileFunction& f, uint64_t a) { return f.address < a; });
    if (it != graph->functions.end() && it->address == address) {
      it->exact = exact;
      continue;
    }
    const int64_t index = table.find(address);
    if (index < 0 || table.ranges()[static_cast<size_t>(index)].start != address) {
      ++unmatched;
      continue;
    }
    const FunctionRange& r = table.ranges()[static_cast<size_t>(index)];
    ProfileFunction f;
    f.name = r.name;
    f.address = r.start;
    f.end = r.end;
    f.exact = exact;
    added.push_back(std::move(f));
  }
  if (!added.empty()) {
    // Merged in address order; arcs and cycles follow their functions' new indexes.
    std::vector<ProfileFunction> merged;
    std::vector<size_t> new_index(graph->functions.size());
    std::sort(added.begin(), added.end(), [](const ProfileFunction& a, const ProfileFunction& b) {
      return a.address < b.address;
    });
    size_t i = 0, j = 0;
    while (i < graph->functions.size() || j < added.size()) {
      if (j == added.size() || (i < graph->functions.size() && graph->functions[i].address < added[j].address)) {
        new_index[i] = merged.size();
        merged.push_back(std::move(graph->functions[i++]));
      } else {
        merged.push_back(std::move(added[j++]));
      }
    }
    graph->functions = std::move(merged);
    for (ProfileArc& a : graph->arcs) {
      a.caller = new_index[a.caller];
      a.callee = new_index[a.callee];
    }
    for (ProfileCycle& c : graph->cycles)
      for (size_t& m : c.members) m = new_index[m];
  }
  graph->exact_clock = times.clock.empty() ? "monotonic" : times.clock;
  graph->has_exact_times = true;
  return unmatched;
}

size_t attach_module_times(const FunctionTimes& times, const ModuleTables& tables, CallGraph* graph) {
  size_t unnamed = 0;
  for (const FunctionTime& t : times.functions) {
    if (t.module.empty()) continue;
    ModuleFunction f;
    f.module = t.module;
    f.address = t.address;
    f.exact = ExactTime{t.calls, t.inclusive_ns, t.self_ns};
    const FunctionTable* table = tables(t.module);
    const int64_t index = table != nullptr ? table->find(t.address) : -1;
    if (index >= 0 && table->ranges()[static_cast<size_t>(index)].start == t.address) {
      f.name = table->ranges()[static_cast<size_t>(index)].name;
    } else {
      char hex[24];
      std::snprintf(hex, sizeof hex, "0x%llx", static_cast<unsigned long long>(t.address));
      f.name = hex;
      ++unnamed;
    }
    graph->module_functions.push_back(std::move(f));
  }
  return unnamed;
}

}  // namespace framewalk::profile

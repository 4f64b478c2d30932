// A pprof profile (profile.proto, package perftools.profiles) built up table
// by table: strings, functions and locations are deduplicated and given ids,
// samples name their locations leaf first. Serialized with Debian's protobuf
// library and gzip-compressed as pprof files are on disk. Nothing of a
// particular profiler here: any report can use it (see pprof_report.hpp for
// gmon.out's).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

namespace perftools::profiles {
class Profile;
}

namespace framewalk::profile::pprof {

struct Mapping {
  uint64_t memory_start = 0;
  uint64_t memory_limit = 0;
  uint64_t file_offset = 0;
  std::string_view filename;
  std::string_view build_id;  // hex
  bool has_functions = true;
};

struct Label {
  std::string_view key;
  std::string_view str;  // or
  int64_t num = 0;
  std::string_view num_unit;
};

class ProfileBuilder {
 public:
  ProfileBuilder();
  ~ProfileBuilder();
  ProfileBuilder(const ProfileBuilder&) = delete;
  ProfileBuilder& operator=(const ProfileBuilder&) = delete;

  // The string's index in string_table (0 is the empty string).
  int64_t string_id(std::string_view s);

  // One per value of every sample, in order; the first should be a count.
  void add_sample_type(std::string_view type, std::string_view unit);
  void set_default_sample_type(std::string_view type);
  void set_period(std::string_view type, std::string_view unit, int64_t period);
  void set_time(int64_t time_nanos, int64_t duration_nanos);
  void add_comment(std::string_view comment);

  uint64_t add_mapping(const Mapping& mapping);
  // The id of the function of this name (and file), made on first use.
  uint64_t function_id(std::string_view name, std::string_view system_name = {}, std::string_view filename = {},
                       int64_t start_line = 0);
  // The id of the location at `address` in function `function` (mapping 0: none).
  uint64_t location_id(uint64_t mapping_id, uint64_t address, uint64_t function, int64_t line = 0);
  // One line of a location: a function and the line in it.
  struct LineOf {
    uint64_t function = 0;
    int64_t line = 0;
  };
  // The id of the location at `address` whose code is `lines`: inlined
  // functions first (innermost), the function they were inlined into last,
  // as profile.proto orders them.
  uint64_t location_id(uint64_t mapping_id, uint64_t address, std::span<const LineOf> lines);
  // Locations leaf first; one value per sample type.
  void add_sample(std::span<const uint64_t> locations, std::span<const int64_t> values,
                  std::span<const Label> labels = {});

  size_t sample_types() const;
  // The profile's bytes, gzip-compressed unless `gzip` is false.
  std::string serialize(bool gzip = true) const;

 private:
  uint64_t new_location(uint64_t mapping_id, uint64_t address, std::span<const LineOf> lines);

  std::unique_ptr<perftools::profiles::Profile> profile_;
  std::map<std::string, int64_t, std::less<>> strings_;
  std::map<std::tuple<int64_t, int64_t, int64_t>, uint64_t> functions_;
  std::map<std::tuple<uint64_t, uint64_t, uint64_t, int64_t>, uint64_t> locations_;
  std::map<std::tuple<uint64_t, uint64_t, std::vector<std::pair<uint64_t, int64_t>>>, uint64_t> inline_locations_;
};

}  // namespace framewalk::profile::pprof

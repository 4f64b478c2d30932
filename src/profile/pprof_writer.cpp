#include "profile/pprof_writer.hpp"

#include <google/protobuf/io/gzip_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>

#include "profile.pb.h"

namespace framewalk::profile::pprof {

ProfileBuilder::ProfileBuilder() : profile_(std::make_unique<perftools::profiles::Profile>()) { string_id(""); }

ProfileBuilder::~ProfileBuilder() = default;

int64_t ProfileBuilder::string_id(std::string_view s) {
  if (auto it = strings_.find(s); it != strings_.end()) return it->second;
  const auto id = static_cast<int64_t>(profile_->string_table_size());
  profile_->add_string_table(std::string(s));
  strings_.emplace(std::string(s), id);
  return id;
}

void ProfileBuilder::add_sample_type(std::string_view type, std::string_view unit) {
  perftools::profiles::ValueType* v = profile_->add_sample_type();
  v->set_type(string_id(type));
  v->set_unit(string_id(unit));
}

void ProfileBuilder::set_default_sample_type(std::string_view type) {
  profile_->set_default_sample_type(string_id(type));
}

void ProfileBuilder::set_period(std::string_view type, std::string_view unit, int64_t period) {
  profile_->mutable_period_type()->set_type(string_id(type));
  profile_->mutable_period_type()->set_unit(string_id(unit));
  profile_->set_period(period);
}

void ProfileBuilder::set_time(int64_t time_nanos, int64_t duration_nanos) {
  profile_->set_time_nanos(time_nanos);
  profile_->set_duration_nanos(duration_nanos);
}

void ProfileBuilder::add_comment(std::string_view comment) { profile_->add_comment(string_id(comment)); }

uint64_t ProfileBuilder::add_mapping(const Mapping& m) {
  perftools::profiles::Mapping* out = profile_->add_mapping();
  const auto id = static_cast<uint64_t>(profile_->mapping_size());
  out->set_id(id);
  out->set_memory_start(m.memory_start);
  out->set_memory_limit(m.memory_limit);
  out->set_file_offset(m.file_offset);
  out->set_filename(string_id(m.filename));
  out->set_build_id(string_id(m.build_id));
  out->set_has_functions(m.has_functions);
  return id;
}

uint64_t ProfileBuilder::function_id(std::string_view name, std::string_view system_name, std::string_view filename,
                                     int64_t start_line) {
  const int64_t n = string_id(name), sn = string_id(system_name.empty() ? name : system_name),
                file = string_id(filename);
  const auto key = std::make_tuple(n, sn, file);
  if (auto it = functions_.find(key); it != functions_.end()) return it->second;
  perftools::profiles::Function* f = profile_->add_function();
  const auto id = static_cast<uint64_t>(profile_->function_size());
  f->set_id(id);
  f->set_name(n);
  f->set_system_name(sn);
  f->set_filename(file);
  f->set_start_line(start_line);
  functions_.emplace(key, id);
  return id;
}

uint64_t ProfileBuilder::location_id(uint64_t mapping_id, uint64_t address, uint64_t function, int64_t line) {
  const auto key = std::make_tuple(mapping_id, address, function, line);
  if (auto it = locations_.find(key); it != locations_.end()) return it->second;
  const LineOf only{function, line};
  const uint64_t id = new_location(mapping_id, address, std::span<const LineOf>(&only, 1));
  locations_.emplace(key, id);
  return id;
}

uint64_t ProfileBuilder::new_location(uint64_t mapping_id, uint64_t address, std::span<const LineOf> lines) {
  perftools::profiles::Location* l = profile_->add_location();
  const auto id = static_cast<uint64_t>(profile_->location_size());
  l->set_id(id);
  l->set_mapping_id(mapping_id);
  l->set_address(address);
  for (const LineOf& line : lines) {
    perftools::profiles::Line* ln = l->add_line();
    ln->set_function_id(line.function);
    ln->set_line(line.line);
  }
  return id;
}

uint64_t ProfileBuilder::location_id(uint64_t mapping_id, uint64_t address, std::span<const LineOf> lines) {
  if (lines.size() == 1) return location_id(mapping_id, address, lines[0].function, lines[0].line);
  std::vector<std::pair<uint64_t, int64_t>> key_lines;
  for (const LineOf& l : lines) key_lines.emplace_back(l.function, l.line);
  auto key = std::make_tuple(mapping_id, address, std::move(key_lines));
  if (auto it = inline_locations_.find(key); it != inline_locations_.end()) return it->second;
  const uint64_t id = new_location(mapping_id, address, lines);
  inline_locations_.emplace(std::move(key), id);
  return id;
}

void ProfileBuilder::add_sample(std::span<const uint64_t> locations, std::span<const int64_t> values,
                                std::span<const Label> labels) {
  perftools::profiles::Sample* s = profile_->add_sample();
  for (uint64_t l : locations) s->add_location_id(l);
  for (int64_t v : values) s->add_value(v);
  for (const Label& label : labels) {
    perftools::profiles::Label* out = s->add_label();
    out->set_key(string_id(label.key));
    if (!label.str.empty()) out->set_str(string_id(label.str));
    out->set_num(label.num);
    if (!label.num_unit.empty()) out->set_num_unit(string_id(label.num_unit));
  }
}

size_t ProfileBuilder::sample_types() const { return static_cast<size_t>(profile_->sample_type_size()); }

std::string ProfileBuilder::serialize(bool gzip) const {
  std::string out;
  if (!gzip) {
    profile_->SerializeToString(&out);
    return out;
  }
  {
    google::protobuf::io::StringOutputStream raw(&out);
    google::protobuf::io::GzipOutputStream::Options options;
    options.format = google::protobuf::io::GzipOutputStream::GZIP;
    google::protobuf::io::GzipOutputStream zipped(&raw, options);
    profile_->SerializeToZeroCopyStream(&zipped);
    zipped.Close();
  }
  return out;
}

}  // namespace framewalk::profile::pprof

// A sampled profile as pprof's profile.proto (through pprof_writer): a
// mapping per module (its build-id), a location per frame at its runtime
// address (link-time address + the module's bias) whose lines are the
// frame's named frames, inlined ones first as profile.proto orders them; a
// function per (name, file). One pprof sample per distinct (stack, thread,
// kind), labelled with the thread; values: samples/count, cpu/nanoseconds
// (on-CPU weight) and off_cpu/nanoseconds (off-CPU weight). cpu is the
// default sample type.
#include <map>
#include <tuple>

#include "profile/pprof_writer.hpp"
#include "profile/sample_reports.hpp"

namespace framewalk::profile {

std::string write_sample_pprof(const SampleProfile& p, const SampleReportOptions& o) {
  pprof::ProfileBuilder b;
  const std::string unit = weight_unit(p);
  b.add_sample_type("samples", "count");
  b.add_sample_type("cpu", unit);
  b.add_sample_type("off_cpu", unit);
  b.set_default_sample_type("cpu");
  const RecordingInfo& in = p.info();
  if (in.period) b.set_period(in.event ? p.string(in.event) : "cpu", unit, static_cast<int64_t>(in.period));
  b.set_time(static_cast<int64_t>(in.start_time_ns), static_cast<int64_t>(in.duration_ns));
  b.add_comment("framewalk report " + o.profile_path);
  std::vector<uint64_t> mapping(p.modules().size(), 0);
  for (size_t i = 0; i < p.modules().size(); ++i) {
    const SampleModule& m = p.modules()[i];
    mapping[i] = b.add_mapping(pprof::Mapping{m.start, m.end, m.file_offset, p.string(m.path), p.string(m.build_id),
                                              true});
  }
  // A location per frame, made on first use.
  std::vector<uint64_t> location(p.frames().size(), 0);
  std::vector<pprof::ProfileBuilder::LineOf> lines;
  const auto location_of = [&](uint32_t frame) {
    if (location[frame]) return location[frame];
    const SampleFrame& f = p.frames()[frame];
    lines.clear();
    const std::span<const SourceLine> ls = p.lines_of(f);
    const size_t n = std::max<size_t>(ls.size(), 1);
    for (size_t i = 0; i < n; ++i) {
      const std::string name = frame_name(p, f, i);
      const std::string_view file = i < ls.size() ? p.string(ls[i].file) : std::string_view();
      lines.push_back({b.function_id(name, name, file), i < ls.size() ? int64_t{ls[i].line} : 0});
    }
    const bool has_module = f.module < p.modules().size();
    const uint64_t address = has_module ? f.address + p.modules()[f.module].bias : f.address;
    location[frame] = b.location_id(has_module ? mapping[f.module] : 0, address, lines);
    return location[frame];
  };
  // Samples merged by (stack, thread, kind).
  std::map<std::tuple<uint32_t, uint32_t, SampleKind>, std::pair<uint64_t, uint64_t>> merged;
  for (const Sample& s : p.samples()) {
    if (o.tid && s.tid != *o.tid) continue;
    auto& v = merged[{s.stack, s.tid, s.kind}];
    ++v.first;
    v.second += s.weight;
  }
  std::vector<uint64_t> stack;
  for (const auto& [key, v] : merged) {
    const auto& [node, tid, kind] = key;
    stack.clear();
    for (uint32_t n = node; n != kNoNode; n = p.nodes()[n].parent) stack.push_back(location_of(p.nodes()[n].frame));
    const int64_t values[3] = {static_cast<int64_t>(v.first),
                               kind == SampleKind::kOnCpu ? static_cast<int64_t>(v.second) : 0,
                               kind == SampleKind::kOffCpu ? static_cast<int64_t>(v.second) : 0};
    const SampleThread* t = p.thread(tid);
    const std::string thread_name = t ? std::string(p.string(t->name)) : std::string();
    const pprof::Label labels[2] = {pprof::Label{"thread", thread_name, 0, {}},
                                    pprof::Label{"tid", {}, static_cast<int64_t>(tid), {}}};
    const std::span<const pprof::Label> ls = thread_name.empty() ? std::span<const pprof::Label>(labels + 1, 1)
                                                                  : std::span<const pprof::Label>(labels, 2);
    b.add_sample(stack, values, ls);
  }
  return b.serialize();
}

}  // namespace framewalk::profile

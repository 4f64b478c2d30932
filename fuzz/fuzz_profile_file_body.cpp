// fuzz_profile_file: the bytes as a .fwprof recording. What reads must hold
// together (every id defined, parents before their nodes), be reported in
// every format (the JSON ones must be valid JSON, the folded lines well
// formed, pprof serializable), and written again read back the same.
#include <string>

#include "fuzz_bodies.hpp"
#include "json_check.hpp"
#include "profile/profile_file.hpp"
#include "profile/sample_reports.hpp"

namespace framewalk::fuzz {

namespace {

std::string render(void (*writer)(const profile::SampleProfile&, const profile::SampleReportOptions&,
                                  dump::TextWriter&),
                   const profile::SampleProfile& p, const profile::SampleReportOptions& o) {
  dump::TextWriter w;
  writer(p, o, w);
  return std::string(w.text());
}

}  // namespace

int fuzz_profile_file(const uint8_t* data, size_t size) {
  const profile::ProfileFileResult r = profile::read_profile_file(Bytes(data, size));
  if (!r.read) return 0;
  const profile::SampleProfile& p = r.read->profile;
  for (size_t i = 0; i < p.nodes().size(); ++i) {
    FUZZ_CHECK(p.nodes()[i].parent == profile::kNoNode || p.nodes()[i].parent < i);
    FUZZ_CHECK(p.nodes()[i].frame < p.frames().size());
  }
  for (const profile::SampleFrame& f : p.frames()) {
    FUZZ_CHECK(f.module == profile::kNoModule || f.module < p.modules().size());
    FUZZ_CHECK(uint64_t{f.first_line} + f.line_count <= p.lines().size());
  }
  for (const profile::Sample& s : p.samples()) FUZZ_CHECK(s.stack == profile::kNoNode || s.stack < p.nodes().size());
  if (r.read->damage) FUZZ_CHECK(r.read->damage->offset <= size);

  profile::SampleReportOptions o;
  o.profile_path = "fuzz.fwprof";
  o.tree = true;
  o.function = "main";
  o.top = 0;
  (void)render(profile::write_sample_text, p, o);
  FUZZ_CHECK(valid_json(render(profile::write_sample_json, p, o)));
  FUZZ_CHECK(valid_json(render(profile::write_sample_speedscope, p, o)));
  FUZZ_CHECK(valid_json(render(profile::write_sample_firefox, p, o)));
  (void)render(profile::write_sample_html, p, o);
  const std::string folded = render(profile::write_sample_folded, p, o);
  for (size_t at = 0; at < folded.size();) {
    const size_t end = folded.find('\n', at);
    FUZZ_CHECK(end != std::string::npos);
    const size_t space = folded.rfind(' ', end);
    FUZZ_CHECK(space != std::string::npos && space > at && space + 1 < end);
    at = end + 1;
  }
#if FRAMEWALK_PPROF
  (void)profile::write_sample_pprof(p, o);
#endif

  // Written again, it reads back whole and the same.
  const std::string again = profile::write_profile_file(p);
  const profile::ProfileFileResult r2 =
      profile::read_profile_file(Bytes(reinterpret_cast<const uint8_t*>(again.data()), again.size()));
  FUZZ_CHECK(r2.read && r2.read->complete && !r2.read->damage);
  const profile::SampleProfile& q = r2.read->profile;
  FUZZ_CHECK(q.string_count() == p.string_count() && q.frames().size() == p.frames().size() &&
             q.nodes().size() == p.nodes().size() && q.samples().size() == p.samples().size());
  for (size_t i = 0; i < p.samples().size(); ++i) {
    FUZZ_CHECK(q.samples()[i].stack == p.samples()[i].stack && q.samples()[i].time_ns == p.samples()[i].time_ns &&
               q.samples()[i].weight == p.samples()[i].weight && q.samples()[i].tid == p.samples()[i].tid);
  }
  return 0;
}

}  // namespace framewalk::fuzz

// The sampled-profile model (builder API), the .fwprof file (round trip,
// incremental writing, every cut-short prefix readable, damage named by
// offset) and the reports' figures, exact by construction
// (sample_fixture.hpp). The consumers' own checks (speedscope's schema,
// Firefox tables, pprof through protoc, HTML in Chromium) are in
// sample_reports.sh and sample_html.sh.
#include <gtest/gtest.h>

#include <map>
#include <set>
#include <sstream>

#include "elf/elf_file.hpp"
#include "profile/profile_file.hpp"
#include "profile/sample_fixture.hpp"
#include "profile/sample_reports.hpp"
#if FRAMEWALK_PPROF
#include <google/protobuf/io/gzip_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>

#include "profile.pb.h"
#endif

namespace framewalk::profile {
namespace {

Bytes as_bytes(const std::string& s) { return Bytes(reinterpret_cast<const uint8_t*>(s.data()), s.size()); }

std::string render(void (*writer)(const SampleProfile&, const SampleReportOptions&, dump::TextWriter&),
                   const SampleProfile& p, SampleReportOptions o = {}) {
  dump::TextWriter w;
  writer(p, o, w);
  return std::string(w.text());
}

TEST(SampleProfile, StacksAndFramesAreDeduplicated) {
  SampleProfile p;
  const uint32_t m = p.add_module("/bin/x", "", 0x1000, 0x2000, 0, 0);
  const uint32_t a = p.intern_frame(m, 0x10), b = p.intern_frame(m, 0x20), c = p.intern_frame(m, 0x30);
  EXPECT_EQ(p.intern_frame(m, 0x10), a);
  EXPECT_NE(p.intern_frame(kNoModule, 0x10), a);
  const uint32_t s1 = p.push_stack(std::vector<uint32_t>{c, b, a});  // a calls b calls c
  const uint32_t s2 = p.push_stack(std::vector<uint32_t>{b, a});
  EXPECT_EQ(p.push_stack(std::vector<uint32_t>{c, b, a}), s1);
  EXPECT_EQ(p.nodes().size(), 3u);  // a, a;b, a;b;c
  EXPECT_EQ(p.nodes()[s1].parent, s2);
  EXPECT_EQ(p.nodes()[p.nodes()[s2].parent].parent, kNoNode);
  EXPECT_EQ(p.push_stack({}), kNoNode);
  // Many nodes: the index grows and keeps every one.
  std::vector<uint32_t> frames;
  for (uint32_t i = 0; i < 5000; ++i) frames.push_back(p.intern_frame(m, 0x100 + i));
  const uint32_t deep = p.push_stack(frames);
  EXPECT_EQ(p.push_stack(frames), deep);
  EXPECT_EQ(p.nodes().size(), 5003u);
  p.add_thread(1, 2, "a");
  p.add_thread(1, 2, "b");  // renamed
  ASSERT_EQ(p.threads().size(), 1u);
  EXPECT_EQ(p.string(p.thread(2)->name), "b");
  p.add_stop_reason("outermost");
  p.add_stop_reason("outermost", 2);
  ASSERT_EQ(p.stop_reasons().size(), 1u);
  EXPECT_EQ(p.stop_reasons()[0].count, 3u);
}

void expect_same(const SampleProfile& a, const SampleProfile& b) {
  ASSERT_EQ(a.string_count(), b.string_count());
  for (StringId i = 0; i < a.string_count(); ++i) EXPECT_EQ(a.string(i), b.string(i));
  ASSERT_EQ(a.modules().size(), b.modules().size());
  for (size_t i = 0; i < a.modules().size(); ++i) {
    EXPECT_EQ(a.modules()[i].path, b.modules()[i].path);
    EXPECT_EQ(a.modules()[i].build_id, b.modules()[i].build_id);
    EXPECT_EQ(a.modules()[i].start, b.modules()[i].start);
    EXPECT_EQ(a.modules()[i].end, b.modules()[i].end);
    EXPECT_EQ(a.modules()[i].bias, b.modules()[i].bias);
  }
  ASSERT_EQ(a.frames().size(), b.frames().size());
  for (size_t i = 0; i < a.frames().size(); ++i) {
    EXPECT_EQ(a.frames()[i].module, b.frames()[i].module);
    EXPECT_EQ(a.frames()[i].address, b.frames()[i].address);
    const auto la = a.lines_of(a.frames()[i]), lb = b.lines_of(b.frames()[i]);
    ASSERT_EQ(la.size(), lb.size());
    for (size_t k = 0; k < la.size(); ++k) {
      EXPECT_EQ(la[k].function, lb[k].function);
      EXPECT_EQ(la[k].file, lb[k].file);
      EXPECT_EQ(la[k].line, lb[k].line);
    }
  }
  ASSERT_EQ(a.nodes().size(), b.nodes().size());
  for (size_t i = 0; i < a.nodes().size(); ++i) {
    EXPECT_EQ(a.nodes()[i].parent, b.nodes()[i].parent);
    EXPECT_EQ(a.nodes()[i].frame, b.nodes()[i].frame);
  }
  ASSERT_EQ(a.samples().size(), b.samples().size());
  for (size_t i = 0; i < a.samples().size(); ++i) {
    const Sample &x = a.samples()[i], &y = b.samples()[i];
    EXPECT_EQ(x.stack, y.stack);
    EXPECT_EQ(x.time_ns, y.time_ns);
    EXPECT_EQ(x.tid, y.tid);
    EXPECT_EQ(x.cpu, y.cpu);
    EXPECT_EQ(x.weight, y.weight);
    EXPECT_EQ(x.kind, y.kind);
  }
  ASSERT_EQ(a.threads().size(), b.threads().size());
  EXPECT_EQ(a.lost_samples(), b.lost_samples());
  ASSERT_EQ(a.stop_reasons().size(), b.stop_reasons().size());
  for (size_t i = 0; i < a.stop_reasons().size(); ++i) {
    EXPECT_EQ(a.string(a.stop_reasons()[i].reason), b.string(b.stop_reasons()[i].reason));
    EXPECT_EQ(a.stop_reasons()[i].count, b.stop_reasons()[i].count);
  }
  EXPECT_EQ(a.info().duration_ns, b.info().duration_ns);
  EXPECT_EQ(a.info().command_line, b.info().command_line);
}

TEST(ProfileFile, RoundTrip) {
  const SampleProfile p = fixture::make_profile();
  const std::string bytes = write_profile_file(p);
  ASSERT_TRUE(is_profile_file(as_bytes(bytes)));
  ProfileFileResult r = read_profile_file(as_bytes(bytes));
  ASSERT_TRUE(r.read);
  EXPECT_TRUE(r.read->complete);
  EXPECT_FALSE(r.read->damage);
  expect_same(p, r.read->profile);
}

#if FRAMEWALK_COMPRESSION
TEST(ProfileFile, RoundTripCompressed) {
  const SampleProfile p = fixture::make_profile();
  ProfileWriterOptions o;
  o.compress = true;
  const std::string packed = write_profile_file(p, o), plain = write_profile_file(p);
  EXPECT_LT(packed.size(), plain.size());
  ProfileFileResult r = read_profile_file(as_bytes(packed));
  ASSERT_TRUE(r.read);
  EXPECT_TRUE(r.read->complete);
  EXPECT_FALSE(r.read->damage);
  expect_same(p, r.read->profile);
}
#endif

// Written as a recorder does: flushes as the profile grows (frames named
// late, a thread renamed), the end last; the same profile comes back.
TEST(ProfileFile, IncrementalWriting) {
  SampleProfile p;
  ProfileFileWriter w;
  std::string out;
  const uint32_t m = p.add_module("/bin/x", "aa", 0x1000, 0x2000, 0, 0x1000);
  p.add_thread(5, 5, "x");
  uint64_t t = 0;
  for (int round = 0; round < 5; ++round) {
    for (int i = 0; i < 100; ++i) {
      const uint32_t f1 = p.intern_frame(m, 0x10 + i % 7), f2 = p.intern_frame(m, 0x100 + round);
      p.add_sample(p.push_stack(std::vector<uint32_t>{f1, f2}), t += 1000 + i, 5, static_cast<uint16_t>(i % 3),
                   round == 3 ? 7 : 1000);
    }
    if (round == 2) p.add_thread(5, 5, "renamed");
    p.add_stop_reason("outermost", 100);
    w.flush(p, &out);
  }
  for (uint32_t f = 0; f < p.frames().size(); ++f) {
    const SourceLine l{p.intern("f" + std::to_string(f)), 0, 1, 2};
    p.set_frame_lines(f, std::span<const SourceLine>(&l, 1));
  }
  p.info().duration_ns = t;
  w.finish(p, &out);
  ProfileFileResult r = read_profile_file(as_bytes(out));
  ASSERT_TRUE(r.read);
  EXPECT_TRUE(r.read->complete);
  EXPECT_FALSE(r.read->damage);
  expect_same(p, r.read->profile);
  EXPECT_EQ(r.read->profile.string(r.read->profile.thread(5)->name), "renamed");
}

// A recording cut short anywhere reads up to its last whole chunk: the
// samples read only grow with the length, the damage names where the cut
// chunk starts, and only the whole file is complete.
TEST(ProfileFile, EveryPrefixIsReadable) {
  const std::string bytes = write_profile_file(fixture::make_profile());
  size_t last_samples = 0;
  for (size_t n = 0; n <= bytes.size(); ++n) {
    ProfileFileResult r = read_profile_file(as_bytes(bytes).first(n));
    if (n < kProfileFileHeaderSize) {
      ASSERT_FALSE(r.read) << n;
      EXPECT_EQ(r.error.code, ProfileFileErrc::kBadMagic);
      continue;
    }
    ASSERT_TRUE(r.read) << n;
    const size_t samples = r.read->profile.samples().size();
    EXPECT_GE(samples, last_samples);
    last_samples = samples;
    EXPECT_EQ(r.read->complete, n == bytes.size()) << n;
    if (r.read->damage) {
      EXPECT_EQ(r.read->damage->code, ProfileFileErrc::kTruncated) << n;
      EXPECT_LE(r.read->damage->offset, n);
    }
  }
  EXPECT_EQ(last_samples, 1010u);
}

// The file offsets of the chunks.
std::vector<size_t> chunks(const std::string& bytes) {
  std::vector<size_t> out;
  for (size_t at = kProfileFileHeaderSize; at + kChunkHeaderSize <= bytes.size();) {
    out.push_back(at);
    uint32_t size;
    std::memcpy(&size, bytes.data() + at + 2, 4);
    at += kChunkHeaderSize + size;
  }
  return out;
}

TEST(ProfileFile, DamageIsNamedAndWhatCameBeforeKept) {
  const std::string good = write_profile_file(fixture::make_profile());
  const std::vector<size_t> at = chunks(good);
  size_t samples_chunk = 0;
  for (size_t c : at)
    if (good[c] == static_cast<char>(ChunkType::kSamples)) samples_chunk = c;
  ASSERT_NE(samples_chunk, 0u);
  std::string bad = good;
  bad[samples_chunk + kChunkHeaderSize + 5] ^= 0x40;
  ProfileFileResult r = read_profile_file(as_bytes(bad));
  ASSERT_TRUE(r.read && r.read->damage);
  EXPECT_EQ(r.read->damage->code, ProfileFileErrc::kBadChecksum);
  EXPECT_EQ(r.read->damage->offset, samples_chunk);
  EXPECT_EQ(describe(*r.read->damage).find("bad checksum"), 0u);
  EXPECT_NE(describe(*r.read->damage).find("samples"), std::string::npos);
  EXPECT_FALSE(r.read->complete);
  EXPECT_EQ(r.read->profile.samples().size(), 0u);
  EXPECT_EQ(r.read->profile.nodes().size(), fixture::make_profile().nodes().size());  // the chunks before it

  // Not a profile; a later version.
  EXPECT_EQ(read_profile_file(as_bytes(std::string("GMON\0\0\0\0", 8))).error.code, ProfileFileErrc::kBadMagic);
  std::string v2 = good;
  v2[7] = 2;
  ProfileFileResult r2 = read_profile_file(as_bytes(v2));
  ASSERT_FALSE(r2.read);
  EXPECT_EQ(r2.error.code, ProfileFileErrc::kUnsupportedVersion);
  EXPECT_EQ(r2.error.value, 2u);
  // A chunk of an unknown type.
  std::string t = good;
  t[at[1]] = 99;
  ProfileFileResult r3 = read_profile_file(as_bytes(t));
  ASSERT_TRUE(r3.read && r3.read->damage);
  EXPECT_EQ(r3.read->damage->code, ProfileFileErrc::kBadChunkType);
  EXPECT_EQ(r3.read->damage->offset, at[1]);
  EXPECT_EQ(r3.read->chunks, 1u);
}

// Hand-written chunks: ids must name what earlier chunks defined.
std::string file_of(std::initializer_list<std::pair<ChunkType, std::string>> chunks) {
  std::string out("FWPROF\0\1", 8);
  for (const auto& [type, payload] : chunks) {
    out.push_back(static_cast<char>(type));
    out.push_back(0);
    const uint32_t size = static_cast<uint32_t>(payload.size());
    out.append(reinterpret_cast<const char*>(&size), 4);
    const uint32_t crc = elf::gnu_debuglink_crc32(as_bytes(payload));
    out.append(reinterpret_cast<const char*>(&crc), 4);
    out += payload;
  }
  return out;
}

TEST(ProfileFile, UndefinedIdsAreErrors) {
  // frames: 1 frame, module 0 (none), address 0x10; nodes: a node whose frame is 1 (undefined).
  const std::string f = file_of({{ChunkType::kFrames, std::string("\x01\x00\x10", 3)},
                                 {ChunkType::kNodes, std::string("\x01\x00\x01", 3)}});
  ProfileFileResult r = read_profile_file(as_bytes(f));
  ASSERT_TRUE(r.read && r.read->damage);
  EXPECT_EQ(r.read->damage->code, ProfileFileErrc::kBadId);
  EXPECT_EQ(r.read->damage->value, 1u);
  EXPECT_EQ(r.read->damage->offset, 8u + 10 + 3 + 10 + 2);  // the node's frame field
  EXPECT_EQ(r.read->profile.frames().size(), 1u);
  EXPECT_EQ(r.read->profile.nodes().size(), 0u);
  // A node whose parent is itself or later.
  const std::string g = file_of({{ChunkType::kFrames, std::string("\x01\x00\x10", 3)},
                                 {ChunkType::kNodes, std::string("\x02\x00\x00\x03\x00", 5)}});
  ProfileFileResult r2 = read_profile_file(as_bytes(g));
  ASSERT_TRUE(r2.read && r2.read->damage);
  EXPECT_EQ(r2.read->damage->code, ProfileFileErrc::kBadId);
  // A count larger than the chunk.
  const std::string h = file_of({{ChunkType::kStrings, std::string("\xff\xff\x03", 3)}});
  ProfileFileResult r3 = read_profile_file(as_bytes(h));
  ASSERT_TRUE(r3.read && r3.read->damage);
  EXPECT_EQ(r3.read->damage->code, ProfileFileErrc::kBadCount);
  EXPECT_EQ(r3.read->damage->value, 0xffffu);
  // A sample of an undefined stack node.
  const std::string s = file_of({{ChunkType::kSamples, std::string("\x01\x0e\x00\x00\x01\x00\x01", 7)}});
  ProfileFileResult r4 = read_profile_file(as_bytes(s));
  ASSERT_TRUE(r4.read && r4.read->damage);
  EXPECT_EQ(r4.read->damage->code, ProfileFileErrc::kBadId);
  // Totals that disagree with the chunks.
  const std::string e = file_of({{ChunkType::kEnd, std::string("\x01\x00\x00\x05", 4)}});
  ProfileFileResult r5 = read_profile_file(as_bytes(e));
  ASSERT_TRUE(r5.read && r5.read->damage);
  EXPECT_EQ(r5.read->damage->code, ProfileFileErrc::kTotalsDiffer);
}

// ---------------------------------------------------------------- reports

// "  60.00%  ...  name" rows of the text report, by function, for one section.
std::map<std::string, std::pair<std::string, std::string>> text_rows(const std::string& text, const std::string& section) {
  std::map<std::string, std::pair<std::string, std::string>> rows;
  std::istringstream in(text);
  std::string line;
  bool inside = false;
  while (std::getline(in, line)) {
    if (line.rfind(section, 0) == 0) {
      inside = true;
      continue;
    }
    if (inside && line.empty()) break;
    if (!inside || line.find('%') == std::string::npos || line.find("self%") != std::string::npos) continue;
    std::istringstream f(line);
    std::string self_pct, self, total_pct, total, name;
    f >> self_pct >> self >> total_pct >> total >> name;
    rows[name] = {self_pct, total_pct};
  }
  return rows;
}

TEST(SampleReports, TextPercentagesByConstruction) {
  const SampleProfile p = fixture::make_profile();
  SampleReportOptions o;
  o.profile_path = "fixture.fwprof";
  const std::string text = render(write_sample_text, p, o);
  const auto on = text_rows(text, "on-CPU, all threads");
  EXPECT_EQ(on.at("square"), std::make_pair(std::string("60.00%"), std::string("60.00%")));
  EXPECT_EQ(on.at("compute"), std::make_pair(std::string("0.00%"), std::string("60.00%")));
  EXPECT_EQ(on.at("memcpy"), std::make_pair(std::string("30.00%"), std::string("30.00%")));
  EXPECT_EQ(on.at("parse"), std::make_pair(std::string("0.00%"), std::string("30.00%")));
  EXPECT_EQ(on.at("recurse"), std::make_pair(std::string("10.00%"), std::string("10.00%")));
  EXPECT_EQ(on.at("main"), std::make_pair(std::string("0.00%"), std::string("90.00%")));
  EXPECT_EQ(on.at("worker"), std::make_pair(std::string("0.00%"), std::string("10.00%")));
  const auto off = text_rows(text, "off-CPU, all threads");
  EXPECT_EQ(off.at("read"), std::make_pair(std::string("70.00%"), std::string("70.00%")));
  EXPECT_EQ(off.at("parse"), std::make_pair(std::string("0.00%"), std::string("70.00%")));
  EXPECT_EQ(off.at("pthread_cond_wait"), std::make_pair(std::string("30.00%"), std::string("30.00%")));
  EXPECT_NE(text.find("lost samples: 3; walks stopped: outermost 990, no-unwind-info at 0x7ffff7c9a123 6, "
                      "stack copy ended 4\n"),
            std::string::npos);
  EXPECT_NE(text.find("command: ./demo --work"), std::string::npos);
  // One thread: the worker's samples only.
  o.tid = fixture::kWorkerTid;
  const auto worker = text_rows(render(write_sample_text, p, o), "on-CPU, thread 101 (worker)");
  EXPECT_EQ(worker.at("recurse"), std::make_pair(std::string("100.00%"), std::string("100.00%")));
  EXPECT_EQ(worker.count("main"), 0u);
}

TEST(SampleReports, TreeAndNeighbours) {
  const SampleProfile p = fixture::make_profile();
  SampleReportOptions o;
  o.tree = true;
  o.function = "parse";
  o.top = 0;
  const std::string text = render(write_sample_text, p, o);
  EXPECT_NE(text.find("  90.00%    0.00%"), std::string::npos);  // main
  EXPECT_NE(text.find("square (demo) [inlined]"), std::string::npos);
  EXPECT_NE(text.find("[299] recurse (demo)"), std::string::npos);  // the deepest frame
  EXPECT_NE(text.find("function parse: self 0.00% (0.000ms), total 30.00% (300.000ms)"), std::string::npos);
  EXPECT_NE(text.find("function parse: self 0.00% (0.000ms), total 70.00% (700.000ms)"), std::string::npos);
  EXPECT_NE(text.find("  callers:\n      30.00%  run (demo)\n  callees:\n      30.00%  memcpy (libc.so.6)\n"),
            std::string::npos);
  const CallTree tree(p, FunctionIndex(p), SampleFilter{});
  EXPECT_EQ(tree.total(), 1000 * fixture::kOnWeight);
}

TEST(SampleReports, JsonIsValidAndExact) {
  const SampleProfile p = fixture::make_profile();
  SampleReportOptions o;
  o.tree = true;
  o.function = "recurse";
  const std::string json = render(write_sample_json, p, o);
  EXPECT_NE(json.find("\"name\":\"square\",\"self\":600000000,\"total\":600000000,\"self_percent\":60.00,"
                      "\"total_percent\":60.00"),
            std::string::npos);
  EXPECT_NE(json.find("\"name\":\"read\",\"self\":700000000,\"total\":700000000,\"self_percent\":70.00"),
            std::string::npos);
  EXPECT_NE(json.find("\"lost_samples\":3"), std::string::npos);
}

TEST(SampleReports, FoldedByConstruction) {
  const SampleProfile p = fixture::make_profile();
  SampleReportOptions o;
  const std::string folded = render(write_sample_folded, p, o);
  std::string deep = "thread_start;worker";
  for (int i = 0; i < fixture::kRecurseDepth; ++i) deep += ";recurse";
  EXPECT_EQ(folded, "main;run;compute;square_[i] 600000000\nmain;run;parse;memcpy 300000000\n" + deep + " 100000000\n");
  o.kind = SampleKind::kOffCpu;
  EXPECT_EQ(render(write_sample_folded, p, o),
            "main;run;parse;read 700000000\nthread_start;worker;pthread_cond_wait 300000000\n");
}

#if FRAMEWALK_PPROF
TEST(SampleReports, PprofReadsBackWithTheSameTotals) {
  const SampleProfile p = fixture::make_profile();
  const std::string bytes = write_sample_pprof(p, SampleReportOptions{});
  perftools::profiles::Profile pb;
  google::protobuf::io::ArrayInputStream raw(bytes.data(), static_cast<int>(bytes.size()));
  google::protobuf::io::GzipInputStream unzipped(&raw);
  ASSERT_TRUE(pb.ParseFromZeroCopyStream(&unzipped));
  const auto str = [&](int64_t i) { return pb.string_table(static_cast<int>(i)); };
  ASSERT_EQ(pb.sample_type_size(), 3);
  EXPECT_EQ(str(pb.sample_type(1).type()), "cpu");
  EXPECT_EQ(str(pb.sample_type(1).unit()), "nanoseconds");
  EXPECT_EQ(str(pb.default_sample_type()), "cpu");
  ASSERT_EQ(pb.mapping_size(), 2);
  EXPECT_EQ(str(pb.mapping(0).build_id()), "0123456789abcdef0123456789abcdef01234567");
  std::map<uint64_t, const perftools::profiles::Location*> locations;
  for (const auto& l : pb.location()) locations[l.id()] = &l;
  std::map<uint64_t, std::string> functions;
  for (const auto& f : pb.function()) functions[f.id()] = str(f.name());
  // Self (the leaf location's first line) and total (anywhere, once a sample) by function, on-CPU.
  std::map<std::string, int64_t> self, total;
  int64_t all = 0, samples = 0, off = 0;
  bool inline_location = false;
  for (const auto& s : pb.sample()) {
    samples += s.value(0);
    off += s.value(2);
    all += s.value(1);
    const auto& leaf = *locations.at(s.location_id(0));
    self[functions.at(leaf.line(0).function_id())] += s.value(1);
    std::set<std::string> seen;
    for (uint64_t id : s.location_id())
      for (const auto& line : locations.at(id)->line()) seen.insert(functions.at(line.function_id()));
    for (const std::string& f : seen) total[f] += s.value(1);
  }
  for (const auto& l : pb.location())
    if (l.line_size() == 2) {
      inline_location = true;
      EXPECT_EQ(functions.at(l.line(0).function_id()), "square");  // innermost first
      EXPECT_EQ(functions.at(l.line(1).function_id()), "compute");
    }
  EXPECT_TRUE(inline_location);
  EXPECT_EQ(samples, 1010);
  EXPECT_EQ(all, 1000 * static_cast<int64_t>(fixture::kOnWeight));
  EXPECT_EQ(off, 10 * static_cast<int64_t>(fixture::kOffWeight));
  EXPECT_EQ(self["square"] * 100, all * 60);
  EXPECT_EQ(total["compute"] * 100, all * 60);
  EXPECT_EQ(self["memcpy"] * 100, all * 30);
  EXPECT_EQ(total["main"] * 100, all * 90);
  EXPECT_EQ(total["recurse"] * 100, all * 10);
}
#endif

// Every writer on a profile with awkward names and a sample without frames
// writes something, and the JSON formats are JSON (checked in the scripts).
TEST(SampleReports, EmptyAndAwkwardProfiles) {
  SampleProfile p;
  const uint32_t f = p.intern_frame(kNoModule, 0x1234);
  const SourceLine l{p.intern("a;b</script>\"\n"), 0, 0, 0};
  p.set_frame_lines(f, std::span<const SourceLine>(&l, 1));
  p.add_sample(p.push_stack(std::vector<uint32_t>{f}), 1, 7, 0, 5);
  p.add_sample(kNoNode, 2, 7, 0, 5);
  for (auto* w : {write_sample_text, write_sample_json, write_sample_folded, write_sample_speedscope,
                  write_sample_firefox, write_sample_html}) {
    EXPECT_FALSE(render(w, p).empty());
    if (w != write_sample_folded) {
      EXPECT_FALSE(render(w, SampleProfile()).empty());
    }
  }
  EXPECT_EQ(render(write_sample_folded, p), "[no frames] 5\na:b</script>\"  5\n");
  EXPECT_EQ(render(write_sample_html, p).find("</script>\""), std::string::npos);
}

}  // namespace
}  // namespace framewalk::profile

// unwind_perf_samples on hand-written files: records reordered by time
// within their round (a mapping written after a later sample of another
// CPU still names that sample's module), kernel frames from the callchain
// first and of their own kind, user frames from the callchain without a
// stack copy, lost samples counted, an error after the samples before it.
#include <gtest/gtest.h>
#include <unistd.h>

#include <climits>
#include <string>
#include <vector>

#include "arch/machine.hpp"
#include "perf/perf_data.hpp"
#include "perf/perf_data_builder.hpp"
#include "walk/perf_samples.hpp"

namespace framewalk {
namespace {

using perf::test::Attr;
using perf::test::Rec;

std::string self_path() {
  char buf[PATH_MAX];
  const ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
  return n > 0 ? std::string(buf, static_cast<size_t>(n)) : std::string();
}

struct Seen {
  std::vector<std::vector<SampleFrame>> frames;  // their modules valid during the callback only:
  std::vector<std::vector<uint64_t>> module_ids;  // the ids of each frame's module then (0: none)
  std::vector<std::string> modules;  // of each sample's first user frame
  PerfUnwindResult result;
};

Seen run(const std::vector<uint8_t>& file, bool order) {
  Seen seen;
  perf::BufferSource source(Bytes(file.data(), file.size()));
  PerfUnwindOptions o;
  o.order_by_time = order;
  o.files.buildid_dir = "";
  seen.result = unwind_perf_samples(source, o, [&](const UnwoundSample& u) {
    seen.frames.emplace_back(u.frames.begin(), u.frames.end());
    auto& ids = seen.module_ids.emplace_back();
    for (const SampleFrame& f : u.frames) ids.push_back(f.frame.module ? f.frame.module->id : 0);
    std::string module;
    for (const SampleFrame& f : u.frames)
      if (f.kind != SampleFrameKind::kKernel) {
        module = f.frame.module ? f.frame.module->name : "";
        break;
      }
    seen.modules.push_back(module);
    return true;
  });
  return seen;
}

// Sample ids: pid/tid and time in the trailer (sample_id_all).
Rec& trailer(Rec& r, uint32_t pid, uint64_t time) {
  r.u32(pid).u32(pid).u64(time);
  return r;
}

TEST(PerfSamples, ReorderedWithinTheirRound) {
  const std::string self = self_path();
  Attr a;
  a.sample_type = perf::sample::kIp | perf::sample::kTid | perf::sample::kTime | perf::sample::kCallchain;
  a.ids = {1};
  Rec mmap(perf::kMmap2, perf::misc::kUser);
  mmap.u32(9).u32(9).u64(0x100000).u64(0x100000).u64(0).u32(0).u32(0).u64(0).u64(0).u32(5).u32(2).name(self);
  trailer(mmap, 9, 10);
  // Written before the mapping (another CPU's buffer came first) but later in time.
  Rec sample(perf::kSample, perf::misc::kKernel);
  sample.u64(0xffffffff81000010).u32(9).u32(9).u64(20);
  sample.u64(6).u64(perf::context::kKernel).u64(0xffffffff81000010).u64(0xffffffff81000020)
      .u64(perf::context::kUser).u64(0x100100).u64(0x100200);
  Rec lost(perf::kLost);
  lost.u64(1).u64(5);
  trailer(lost, 9, 30);
  const auto file = perf::test::perf_file({a}, {sample.done(), mmap.done(), Rec(perf::kFinishedRound).done(), lost.done()});

  const Seen ordered = run(file, true);
  ASSERT_FALSE(ordered.result.read.error) << perf::describe(*ordered.result.read.error);
  ASSERT_EQ(ordered.frames.size(), 1u);
  EXPECT_EQ(ordered.modules[0], self);
  const auto& f = ordered.frames[0];
  ASSERT_EQ(f.size(), 4u);
  EXPECT_EQ(f[0].kind, SampleFrameKind::kKernel);
  EXPECT_TRUE(f[0].frame.activation);
  EXPECT_EQ(f[1].kind, SampleFrameKind::kKernel);
  EXPECT_FALSE(f[1].frame.activation);
  EXPECT_EQ(f[2].kind, SampleFrameKind::kCallchain);
  EXPECT_EQ(f[2].frame.pc, 0x100100u);
  EXPECT_TRUE(f[2].frame.activation);
  EXPECT_EQ(f[3].frame.pc, 0x100200u);
  EXPECT_FALSE(f[3].frame.activation);
  EXPECT_EQ(ordered.result.stats.samples, 1u);
  EXPECT_EQ(ordered.result.stats.from_callchain, 1u);
  EXPECT_EQ(ordered.result.stats.lost_samples, 5u);
  EXPECT_EQ(ordered.result.event_names, std::vector<std::string>{"cpu-clock"});

  // In file order, the sample comes before its mapping: no module.
  const Seen unordered = run(file, false);
  ASSERT_EQ(unordered.frames.size(), 1u);
  EXPECT_EQ(unordered.modules[0], "");
}

// Samples whose callchains share their callers: each one's frames are as
// if it came alone (the shared frames taken from the chain before it; the
// leaf an activation only where it is the leaf), also across a new mapping.
TEST(PerfSamples, ChainsSharingTheirCallers) {
  const std::string self = self_path();
  Attr a;
  a.sample_type = perf::sample::kIp | perf::sample::kTid | perf::sample::kTime | perf::sample::kCallchain;
  a.ids = {1};
  auto mapping = [&](uint64_t at, uint64_t time) {
    Rec m(perf::kMmap2, perf::misc::kUser);
    m.u32(9).u32(9).u64(at).u64(0x100000).u64(0).u32(0).u32(0).u64(0).u64(0).u32(5).u32(2).name(self);
    trailer(m, 9, time);
    return m.done();
  };
  const std::vector<std::vector<uint64_t>> chains = {
      {0x100100, 0x100200, 0x100300},            // leaf first
      {0x100110, 0x100200, 0x100300},            // another leaf, the same callers
      {0x100200, 0x100300},                      // the callers alone: 0x100200 now the leaf
      {0x100100, 0x100200, 0x100300},            // 0x100200 a caller again
      {0x100400, 0x100100, 0x100200, 0x100300},  // one deeper
      {0x100100, 0x100200, 0x100300},            // after the mapping below: the new module
  };
  std::vector<std::vector<uint8_t>> records = {mapping(0x100000, 1)};
  uint64_t time = 10;
  for (size_t i = 0; i < chains.size(); ++i) {
    if (i == 5) records.push_back(mapping(0x100000, time++));
    Rec sample(perf::kSample, perf::misc::kUser);
    sample.u64(chains[i][0]).u32(9).u32(9).u64(time++);
    sample.u64(chains[i].size() + 1).u64(perf::context::kUser);
    for (uint64_t pc : chains[i]) sample.u64(pc);
    records.push_back(sample.done());
  }
  const Seen seen = run(perf::test::perf_file({a}, records), true);
  ASSERT_FALSE(seen.result.read.error) << perf::describe(*seen.result.read.error);
  ASSERT_EQ(seen.frames.size(), chains.size());
  uint64_t last_module = 0;
  for (size_t i = 0; i < chains.size(); ++i) {
    SCOPED_TRACE("sample " + std::to_string(i));
    const auto& f = seen.frames[i];
    const auto& ids = seen.module_ids[i];
    ASSERT_EQ(f.size(), chains[i].size());
    for (size_t k = 0; k < f.size(); ++k) {
      EXPECT_EQ(f[k].frame.pc, chains[i][k]);
      EXPECT_EQ(f[k].frame.activation, k == 0);
      EXPECT_EQ(f[k].frame.lookup_pc, arch::host_machine().lookup_pc(chains[i][k], k == 0));
      EXPECT_NE(ids[k], 0u);
      EXPECT_EQ(ids[k], ids[0]);
    }
    if (i == 5) {
      EXPECT_NE(ids[0], last_module) << "the mapping replaced the module";
    } else if (i > 0) {
      EXPECT_EQ(ids[0], last_module);
    }
    last_module = ids[0];
  }
}

TEST(PerfSamples, DamageAfterSamples) {
  Attr a;
  a.sample_type = perf::sample::kIp | perf::sample::kTid | perf::sample::kTime;
  a.ids = {1};
  std::vector<std::vector<uint8_t>> records;
  for (uint64_t t = 1; t <= 3; ++t) {
    Rec s(perf::kSample, perf::misc::kUser);
    s.u64(0x1000 + t).u32(4).u32(4).u64(t);
    records.push_back(s.done());
  }
  records.back()[6] = 0;  // the third: size 0
  const Seen seen = run(perf::test::perf_file({a}, records), true);
  ASSERT_TRUE(seen.result.read.error);
  EXPECT_EQ(seen.result.read.error->record, 2u);
  EXPECT_EQ(seen.frames.size(), 2u);  // the two before it, unwound all the same
  EXPECT_EQ(seen.result.stats.ip_only, 2u);
}

}  // namespace
}  // namespace framewalk

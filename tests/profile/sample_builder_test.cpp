// SampleProfileBuilder's off-CPU time, on a hand-written perf.data: a
// sample of the context-switches event (a thread leaving its CPU) becomes
// an off-CPU sample weighing the time until the thread's next switch in; a
// preempted switch out is dropped (runnable, not blocked); a thread still
// away at the end weighs until the recording's last event; a second switch
// out without a switch in between is counted, not timed; a thread's last
// switch out, after its EXIT, is not time blocked; on-CPU samples stay
// apart.
#include "profile/sample_builder.hpp"

#include <gtest/gtest.h>

#include <vector>

#include "perf/perf_data.hpp"
#include "perf/perf_data_builder.hpp"
#include "walk/perf_samples.hpp"

namespace framewalk::profile {
namespace {

using perf::test::Attr;
using perf::test::Rec;

constexpr uint64_t kType = perf::sample::kIdentifier | perf::sample::kIp | perf::sample::kTid |
                           perf::sample::kTime | perf::sample::kCpu | perf::sample::kPeriod;
constexpr uint64_t kClockId = 10, kSwitchId = 20;

std::vector<uint8_t> sample(uint64_t id, uint64_t ip, uint32_t tid, uint64_t time, uint64_t period) {
  Rec r(perf::kSample, perf::misc::kUser);
  r.u64(id).u64(ip).u32(1).u32(tid).u64(time).u32(0).u32(0).u64(period);
  return r.done();
}

// A SWITCH record; its sample_id trailer: tid, time, cpu, identifier.
std::vector<uint8_t> switch_record(uint32_t tid, uint64_t time, bool out, bool preempt) {
  uint16_t misc = perf::misc::kUser;
  if (out) misc |= perf::misc::kSwitchOut;
  if (preempt) misc |= perf::misc::kSwitchOutPreempt;
  Rec r(perf::kSwitch, misc);
  r.u32(1).u32(tid).u64(time).u32(0).u32(0).u64(kSwitchId);
  return r.done();
}

// FORK or EXIT of `tid` at `time`, with the trailer.
std::vector<uint8_t> task_record(uint32_t type, uint32_t tid, uint64_t time) {
  Rec r(type);
  r.u32(1).u32(1).u32(tid).u32(1).u64(time);
  r.u32(1).u32(tid).u64(time).u32(0).u32(0).u64(kClockId);
  return r.done();
}

TEST(SampleBuilder, OffCpuTimeFromSwitchSamplesAndRecords) {
  Attr clock, switches;
  clock.sample_type = switches.sample_type = kType;
  clock.ids = {kClockId};
  switches.config = 3;  // context-switches
  switches.ids = {kSwitchId};
  const std::vector<uint8_t> file = perf::test::perf_file(
      {clock, switches},
      {
          sample(kClockId, 0x1000, 5, 50, 1000000),                                 // on-CPU
          sample(kSwitchId, 0x2000, 5, 100, 1), switch_record(5, 101, true, false),  // blocks
          switch_record(5, 600, false, false),                                       // back: 500 ns away
          sample(kSwitchId, 0x3000, 5, 700, 1), switch_record(5, 701, true, true),   // preempted
          switch_record(5, 800, false, false),
          sample(kSwitchId, 0x4000, 6, 900, 1), switch_record(6, 901, true, false),  // never back
          sample(kSwitchId, 0x5000, 7, 910, 1),                                       // its switches lost:
          sample(kSwitchId, 0x6000, 7, 920, 1),                                       // counted, not timed
          switch_record(7, 930, false, false),
          task_record(perf::kExit, 9, 950), sample(kSwitchId, 0x7000, 9, 960, 1),  // its end: dropped
          task_record(perf::kFork, 9, 970), sample(kSwitchId, 0x8000, 9, 980, 1),  // a new thread 9
          sample(kClockId, 0x1000, 8, 1000, 1000000),                               // the last event
      });
  perf::BufferSource source(Bytes(file.data(), file.size()));
  symbol::KernelSymbols kernel(std::string("none"));
  SampleProfileBuilder builder(kernel, /*symbols=*/false);
  PerfUnwindOptions o;
  o.files.buildid_dir = "";
  const PerfUnwindResult result = unwind_perf_samples(
      source, o, [&](const UnwoundSample& u) {
        builder.add(u);
        return true;
      },
      [&](const ThreadSwitch& t) { builder.add_switch(t); });
  ASSERT_FALSE(result.read.error) << perf::describe(*result.read.error);
  EXPECT_EQ(result.stats.switches, 6u);
  builder.finish(result);
  const SampleProfile& p = builder.profile();
  struct Got {
    SampleKind kind;
    uint32_t tid;
    uint64_t weight, address;
  };
  std::vector<Got> got;
  for (const Sample& s : p.samples())
    got.push_back({s.kind, s.tid, s.weight, p.frames()[p.nodes()[s.stack].frame].address});
  ASSERT_EQ(got.size(), 6u);
  EXPECT_EQ(got[0].kind, SampleKind::kOnCpu);
  EXPECT_EQ(got[0].weight, 1000000u);
  EXPECT_EQ(got[1].kind, SampleKind::kOffCpu);
  EXPECT_EQ(got[1].tid, 5u);
  EXPECT_EQ(got[1].weight, 500u);
  EXPECT_EQ(got[1].address, 0x2000u);
  EXPECT_EQ(got[2].kind, SampleKind::kOffCpu);  // tid 7's second one, timed by its switch in
  EXPECT_EQ(got[2].tid, 7u);
  EXPECT_EQ(got[2].weight, 10u);
  EXPECT_EQ(got[2].address, 0x6000u);
  EXPECT_EQ(got[3].kind, SampleKind::kOnCpu);
  EXPECT_EQ(got[3].tid, 8u);
  EXPECT_EQ(got[4].kind, SampleKind::kOffCpu);  // away until the recording's end
  EXPECT_EQ(got[4].tid, 6u);
  EXPECT_EQ(got[4].weight, 100u);
  EXPECT_EQ(got[4].address, 0x4000u);
  EXPECT_EQ(got[5].kind, SampleKind::kOffCpu);  // the new thread 9, not the one that ended
  EXPECT_EQ(got[5].tid, 9u);
  EXPECT_EQ(got[5].weight, 20u);
  EXPECT_EQ(got[5].address, 0x8000u);
  // The event is the clock's, not the switches'; the untimed one counted.
  EXPECT_EQ(p.string(p.info().event), "cpu-clock");
  bool counted = false;
  for (const StopReasonCount& r : p.stop_reasons())
    if (p.string(r.reason).find("not timed") != std::string_view::npos) counted = r.count == 1;
  EXPECT_TRUE(counted);
}

// perf record -c N: the samples carry no period; each weighs the event's N.
TEST(SampleBuilder, AFixedPeriodWeighsEachSample) {
  Attr clock;  // sample_period 4000, not in frequency mode
  clock.sample_type = perf::sample::kIp | perf::sample::kTid | perf::sample::kTime;
  Rec r(perf::kSample, perf::misc::kUser);
  r.u64(0x1000).u32(1).u32(2).u64(10);
  const std::vector<uint8_t> file = perf::test::perf_file({clock}, {r.done()});
  perf::BufferSource source(Bytes(file.data(), file.size()));
  symbol::KernelSymbols kernel(std::string("none"));
  SampleProfileBuilder builder(kernel, /*symbols=*/false);
  PerfUnwindOptions o;
  o.files.buildid_dir = "";
  unwind_perf_samples(source, o, [&](const UnwoundSample& u) {
    builder.add(u);
    return true;
  });
  ASSERT_EQ(builder.profile().samples().size(), 1u);
  EXPECT_EQ(builder.profile().samples()[0].weight, 4000u);
}

}  // namespace
}  // namespace framewalk::profile

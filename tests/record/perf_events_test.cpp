// perf_event_open sampling of a child process: samples of its threads with
// user registers and stack copies, its mappings, comm and exit records; a
// command held before exec; errors as values.
#include <gtest/gtest.h>
#include <linux/perf_event.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <map>
#include <thread>

#include "record/perf_events.hpp"

namespace framewalk::record {
namespace {

struct Counts {
  std::map<uint32_t, int> by_type;
  int samples_of_child = 0;
  uint64_t stack_bytes_seen = 0;
};

// A sample's pid/tid follow IDENTIFIER and IP (the attributes Sampler uses).
void count(const uint8_t* record, size_t size, pid_t child, Counts* c) {
  perf_event_header h;
  ASSERT_GE(size, sizeof h);
  std::memcpy(&h, record, sizeof h);
  ASSERT_EQ(h.size, size);
  ++c->by_type[h.type];
  if (h.type == PERF_RECORD_SAMPLE) {
    uint32_t pid = 0;
    ASSERT_GE(size, sizeof h + 20);
    std::memcpy(&pid, record + sizeof h + 16, 4);
    if (static_cast<pid_t>(pid) == child) ++c->samples_of_child;
  }
}

bool perf_events_usable() {
  perf_event_attr a{};
  a.size = sizeof a;
  a.type = PERF_TYPE_SOFTWARE;
  a.config = PERF_COUNT_SW_CPU_CLOCK;
  a.exclude_kernel = 1;
  const int fd = static_cast<int>(syscall(SYS_perf_event_open, &a, 0, -1, -1, 0));
  if (fd < 0) return false;
  close(fd);
  return true;
}

TEST(Sampler, SamplesABusyCommandFromItsExec) {
  if (!perf_events_usable()) GTEST_SKIP() << "perf_event_open refused here";
  auto command = Command::start({"sh", "-c", "i=0; while [ $i -lt 400000 ]; do i=$((i+1)); done"});
  ASSERT_TRUE(command.ok());
  SamplingOptions o;
  o.frequency = 1000;
  o.stack_bytes = 4096;
  o.user_registers = 0xff;  // any machine has its first eight
  o.enable_on_exec = true;
  o.ring_pages = 16;
  auto sampler = Sampler::open((*command)->pid(), o);
  ASSERT_TRUE(sampler.ok()) << sampling_error_text(sampler.error());
  EXPECT_GE((*sampler)->event_count(), 1u);
  EXPECT_EQ((*command)->release(), 0);
  Counts c;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  bool open = true;
  while (open && std::chrono::steady_clock::now() < deadline) {
    open = (*sampler)->read(100, [&](const uint8_t* r, size_t n) { count(r, n, (*command)->pid(), &c); });
    if ((*command)->poll() != -1) break;
  }
  (*sampler)->read(0, [&](const uint8_t* r, size_t n) { count(r, n, (*command)->pid(), &c); });
  const int status = (*command)->wait();
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
  EXPECT_GT(c.samples_of_child, 5) << "samples of the busy shell";
  EXPECT_GT(c.by_type[PERF_RECORD_MMAP2], 0) << "the shell's mappings after exec";
  EXPECT_GT(c.by_type[PERF_RECORD_COMM], 0) << "the exec's new name";
  EXPECT_GT(c.by_type[PERF_RECORD_EXIT], 0) << "its exit";
}

// --off-cpu: a second event (context switches, every one) with its own
// ids, sampling the command each time it sleeps, and the switch records.
TEST(Sampler, OffCpuSamplesEachSwitchOut) {
  if (!perf_events_usable()) GTEST_SKIP() << "perf_event_open refused here";
  auto command = Command::start({"sh", "-c", "for i in 1 2 3 4 5; do sleep 0.01; done"});
  ASSERT_TRUE(command.ok());
  SamplingOptions o;
  o.stack_bytes = 1024;
  o.user_registers = 0xff;
  o.enable_on_exec = true;
  o.ring_pages = 16;
  o.off_cpu = true;
  auto sampler = Sampler::open((*command)->pid(), o);
  ASSERT_TRUE(sampler.ok()) << sampling_error_text(sampler.error());
  const auto& events = (*sampler)->events();
  ASSERT_EQ(events.size(), 2u);
  EXPECT_EQ(events[1].attr.config, uint64_t{PERF_COUNT_SW_CONTEXT_SWITCHES});
  EXPECT_EQ(events[1].attr.sample_period, 1u);
  EXPECT_EQ(events[1].attr.context_switch, 1u);
  EXPECT_EQ(events[1].attr.sample_type, events[0].attr.sample_type);  // one decoder for both
  ASSERT_FALSE(events[0].ids.empty());
  ASSERT_FALSE(events[1].ids.empty());
  EXPECT_NE(events[0].ids[0], events[1].ids[0]);
  EXPECT_EQ((*command)->release(), 0);
  Counts c;
  int switch_samples = 0;
  auto on_record = [&](const uint8_t* r, size_t n) {
    count(r, n, (*command)->pid(), &c);
    uint64_t id = 0;
    perf_event_header h;
    std::memcpy(&h, r, sizeof h);
    if (h.type == PERF_RECORD_SAMPLE && n >= sizeof h + 8) {
      std::memcpy(&id, r + sizeof h, 8);  // IDENTIFIER comes first
      for (uint64_t e : events[1].ids) switch_samples += id == e;
    }
  };
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while ((*command)->poll() == -1 && std::chrono::steady_clock::now() < deadline) (*sampler)->read(100, on_record);
  (*sampler)->read(0, on_record);
  (*command)->wait();
  EXPECT_GE(switch_samples, 5) << "a sample at each of the five sleeps";
  EXPECT_GE(c.by_type[PERF_RECORD_SWITCH], 10) << "out and back in, five times";
}

TEST(Sampler, AProcessThatDoesNotExistIsAnError) {
  if (!perf_events_usable()) GTEST_SKIP() << "perf_event_open refused here";
  SamplingOptions o;
  auto sampler = Sampler::open(0x7ffffff0, o);
  ASSERT_FALSE(sampler.ok());
  EXPECT_EQ(sampler.error().code, ErrorCode::kNoSuchProcess);
  EXPECT_EQ(sampling_error_text(sampler.error()), "no such process");
}

TEST(Command, AnExecThatFailsTellsItsErrno) {
  auto command = Command::start({"/nonexistent/framewalk-no-such-program"});
  ASSERT_TRUE(command.ok());
  EXPECT_EQ((*command)->release(), ENOENT);
  const int status = (*command)->wait();
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 127);
}

TEST(Command, NeverReleasedItNeverRuns) {
  const std::string marker = "/tmp/fw_command_ran_" + std::to_string(getpid());
  unlink(marker.c_str());
  {
    auto command = Command::start({"touch", marker});
    ASSERT_TRUE(command.ok());
  }
  EXPECT_NE(access(marker.c_str(), F_OK), 0);
}

}  // namespace
}  // namespace framewalk::record

// PtraceSnapshot: every thread of a live process stopped at once, copied, and
// left exactly as it was: untraced, running (or still group-stopped), and
// with no signal lost that arrived during the stop.
#include "target/ptrace_snapshot.hpp"

#include <gtest/gtest.h>
#include <pthread.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <fstream>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "arch/x86_64/registers.hpp"
#include "target/proc_maps.hpp"
#include "support/proc_status.hpp"
#include "target/ptrace_target.hpp"

namespace framewalk {
namespace {

// Shared with the target process.
struct Shared {
  std::atomic<long> signals_handled{0};
  std::atomic<int> threads_ready{0};
  uint64_t marker_address[4] = {};  // a stack word of each worker, holding kMarker
};
constexpr uint64_t kMarker = 0x5eed5eed5eed5eedull;
Shared* g_shared = nullptr;

void on_rt_signal(int) { g_shared->signals_handled.fetch_add(1); }

void* worker(void* arg) {
  volatile uint64_t marker = kMarker;
  g_shared->marker_address[reinterpret_cast<intptr_t>(arg)] = reinterpret_cast<uint64_t>(&marker);
  g_shared->threads_ready.fetch_add(1);
  for (;;) pause();
  return nullptr;
}

// A child with the main thread and four workers, each blocked with a marker
// on its stack. SIGRTMIN is counted by a handler (real-time signals queue, so
// every one sent must be handled once).
pid_t start_target() {
  const pid_t pid = fork();
  if (pid != 0) return pid;
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  struct sigaction sa {};
  sa.sa_handler = on_rt_signal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESTART;
  sigaction(SIGRTMIN, &sa, nullptr);
  for (intptr_t i = 0; i < 4; ++i) {
    pthread_t t;
    pthread_create(&t, nullptr, worker, reinterpret_cast<void*>(i));
  }
  for (;;) pause();
}

std::string status_field(pid_t pid, pid_t tid, const std::string& field) {
  return test::task_status_field(pid, tid, field);
}
using test::wait_until;

class PtraceSnapshotTest : public ::testing::Test {
 protected:
  void SetUp() override {
    g_shared = static_cast<Shared*>(
        mmap(nullptr, sizeof(Shared), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0));
    ASSERT_NE(g_shared, MAP_FAILED);
    new (g_shared) Shared;
    pid_ = start_target();
    ASSERT_GT(pid_, 0);
    ASSERT_TRUE(wait_until([] { return g_shared->threads_ready.load() == 4; }));
    PtraceSession probe(pid_);
    tids_ = probe.threads();
    ASSERT_EQ(tids_.size(), 5u);
  }
  void TearDown() override {
    if (pid_ > 0) {
      kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
    }
    munmap(g_shared, sizeof(Shared));
  }
  // Untraced at once; back in `state_letter` (S sleeping, T stopped) after
  // the moment a released thread runs to get there.
  void expect_untraced(char state_letter) {
    for (pid_t tid : tids_) {
      EXPECT_EQ(status_field(pid_, tid, "TracerPid"), "\t0") << "thread " << tid;
      EXPECT_TRUE(wait_until([&] { return status_field(pid_, tid, "State").find(state_letter) != std::string::npos; }))
          << "thread " << tid << ": " << status_field(pid_, tid, "State");
    }
  }
  pid_t pid_ = 0;
  std::vector<pid_t> tids_;
};

TEST_F(PtraceSnapshotTest, CopiesRegistersAndStacksThenReleasesEveryThread) {
  const auto maps = read_proc_maps(pid_);
  const PtraceSnapshot snap = PtraceSnapshot::take(pid_, tids_, maps);
  if (!snap.threads().empty() && snap.threads()[0].error == AttachError::kNotPermitted)
    GTEST_SKIP() << "ptrace is not permitted here";
  ASSERT_EQ(snap.threads().size(), tids_.size());
  EXPECT_GT(snap.pause_ns(), 0u);
  for (const SnapshotThread& t : snap.threads()) {
    ASSERT_EQ(t.error, AttachError::kNone) << "thread " << t.tid;
    const uint64_t sp = t.registers.value_or(arch::x86_64::kRsp, 0);
    EXPECT_GT(t.stack_size, 128u);
    EXPECT_EQ(t.stack_address, sp - 128);
  }
  // Every worker's marker is read from the copy, not from the (still running) process.
  struct NoMemory final : Memory {
    size_t read(uint64_t, void*, size_t) override { return 0; }
  } no_live;
  auto memory = snap.memory(no_live);
  for (uint64_t address : g_shared->marker_address) {
    uint64_t value = 0;
    ASSERT_EQ(memory->read(address, &value, 8), 8u);
    EXPECT_EQ(value, kMarker);
  }
  expect_untraced('S');
}

TEST_F(PtraceSnapshotTest, SignalsArrivingDuringTheStopAreDeliveredAfterwards) {
  const auto maps = read_proc_maps(pid_);
  std::atomic<bool> sending{true};
  std::atomic<long> sent{0};
  std::thread sender([&] {
    // Real-time signals to every thread in turn, queued one by one.
    size_t i = 0;
    while (sending.load()) {
      if (syscall(SYS_tgkill, pid_, tids_[i++ % tids_.size()], SIGRTMIN) == 0) sent.fetch_add(1);
      std::this_thread::sleep_for(std::chrono::microseconds(20));
    }
  });
  bool permitted = true;
  for (int round = 0; round < 30 && permitted; ++round) {
    const PtraceSnapshot snap = PtraceSnapshot::take(pid_, tids_, maps);
    permitted = snap.threads()[0].error != AttachError::kNotPermitted;
  }
  sending.store(false);
  sender.join();
  if (!permitted) GTEST_SKIP() << "ptrace is not permitted here";
  EXPECT_TRUE(wait_until([&] { return g_shared->signals_handled.load() == sent.load(); }))
      << g_shared->signals_handled.load() << " of " << sent.load() << " signals handled";
  expect_untraced('S');
}

TEST_F(PtraceSnapshotTest, AStoppedProcessStaysStopped) {
  ASSERT_EQ(kill(pid_, SIGSTOP), 0);
  ASSERT_TRUE(wait_until([&] {
    for (pid_t tid : tids_)
      if (status_field(pid_, tid, "State").find('T') == std::string::npos) return false;
    return true;
  }));
  const PtraceSnapshot snap = PtraceSnapshot::take(pid_, tids_, read_proc_maps(pid_));
  if (snap.threads()[0].error == AttachError::kNotPermitted) GTEST_SKIP() << "ptrace is not permitted here";
  for (const SnapshotThread& t : snap.threads()) EXPECT_EQ(t.error, AttachError::kNone) << "thread " << t.tid;
  expect_untraced('T');
  ASSERT_EQ(kill(pid_, SIGCONT), 0);
  EXPECT_TRUE(wait_until([&] {
    for (pid_t tid : tids_)
      if (status_field(pid_, tid, "State").find('S') == std::string::npos) return false;
    return true;
  }));
}

TEST_F(PtraceSnapshotTest, AThreadThatIsGoneIsReported) {
  std::vector<pid_t> tids = tids_;
  tids.push_back(999999999);  // no such thread
  const PtraceSnapshot snap = PtraceSnapshot::take(pid_, tids, read_proc_maps(pid_));
  if (snap.threads()[0].error == AttachError::kNotPermitted) GTEST_SKIP() << "ptrace is not permitted here";
  ASSERT_EQ(snap.threads().size(), tids.size());
  EXPECT_EQ(snap.threads().back().error, AttachError::kGone);
  for (size_t i = 0; i + 1 < tids.size(); ++i) EXPECT_EQ(snap.threads()[i].error, AttachError::kNone);
  expect_untraced('S');
}

}  // namespace
}  // namespace framewalk

// PtraceSession interrupted by SIGTERM (a handler calling release_held_threads): every held
// thread is detached, and a signal that arrived while framewalk held the
// thread is handed back as on a normal detach, also after more seizes in one
// process than the handler's table has slots.
#include "target/ptrace_target.hpp"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <string>

#include "support/proc_status.hpp"

namespace framewalk {
namespace {

std::atomic<long>* g_handled = nullptr;  // shared with the target
void on_usr1(int) { g_handled->fetch_add(1); }

pid_t start_target() {
  const pid_t pid = fork();
  if (pid != 0) return pid;
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  struct sigaction sa {};
  sa.sa_handler = on_usr1;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESTART;
  sigaction(SIGUSR1, &sa, nullptr);
  for (;;) pause();
}

std::string status_field(pid_t pid, const std::string& field) { return test::task_status_field(pid, pid, field); }

// What a program that opts in installs (framewalk's command does the same).
void release_and_exit(int sig) {
  release_held_threads();
  _exit(128 + sig);
}

void release_on_sigterm() {
  struct sigaction sa {};
  sa.sa_handler = release_and_exit;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGTERM, &sa, nullptr);
}

bool wait_until(const std::function<bool()>& done) { return test::wait_until(done, std::chrono::seconds(10)); }

// A tracer process: `cycles` stops and detaches of the target first, then a
// stop with SIGUSR1 sent between the seize and the interrupt (so the thread
// stops in signal-delivery-stop with it), then it says so on `ready` and
// waits for the SIGTERM that interrupts its dump.
pid_t start_tracer(pid_t target, int cycles, int ready) {
  const pid_t pid = fork();
  if (pid != 0) return pid;
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  release_on_sigterm();
  PtraceSession session(target);
  for (int i = 0; i < cycles; ++i) {
    if (session.stop(target).error != AttachError::kNone) _exit(3);
    session.detach(target);
  }
  std::vector<ThreadStop> stops = session.seize_all({target});
  kill(target, SIGUSR1);
  // Let the signal stop the thread (signal-delivery-stop) before the interrupt does.
  for (int i = 0; i < 10000 && status_field(target, "State").find("tracing stop") == std::string::npos; ++i)
    usleep(100);
  session.interrupt_all(stops);
  const char answer = stops[0].pending_signal == SIGUSR1 ? 'S' : 'N';
  if (write(ready, &answer, 1) != 1) _exit(4);
  for (;;) pause();
}

class PtraceSessionTest : public ::testing::TestWithParam<int> {
 protected:
  void SetUp() override {
    g_handled = static_cast<std::atomic<long>*>(
        mmap(nullptr, sizeof(std::atomic<long>), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0));
    ASSERT_NE(g_handled, MAP_FAILED);
    new (g_handled) std::atomic<long>(0);
    target_ = start_target();
    ASSERT_GT(target_, 0);
    ASSERT_TRUE(wait_until([&] { return status_field(target_, "State").find('S') != std::string::npos; }));
  }
  void TearDown() override {
    if (tracer_ > 0) {
      kill(tracer_, SIGKILL);
      waitpid(tracer_, nullptr, 0);
    }
    kill(target_, SIGKILL);
    waitpid(target_, nullptr, 0);
    munmap(g_handled, sizeof(std::atomic<long>));
  }
  pid_t target_ = 0, tracer_ = 0;
};

TEST_P(PtraceSessionTest, SignalDuringAnInterruptedDumpIsDelivered) {
  int pipe_fds[2];
  ASSERT_EQ(pipe(pipe_fds), 0);
  tracer_ = start_tracer(target_, GetParam(), pipe_fds[1]);
  close(pipe_fds[1]);
  char answer = 0;
  ASSERT_EQ(read(pipe_fds[0], &answer, 1), 1) << "the tracer failed";
  close(pipe_fds[0]);
  if (answer != 'S') GTEST_SKIP() << "the interrupt reached the thread before the signal did";
  EXPECT_EQ(g_handled->load(), 0);  // held: not yet handled
  kill(tracer_, SIGTERM);
  int status = 0;
  ASSERT_EQ(waitpid(tracer_, &status, 0), tracer_);
  tracer_ = 0;
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 128 + SIGTERM);
  EXPECT_EQ(status_field(target_, "TracerPid"), "\t0");
  EXPECT_TRUE(wait_until([] { return g_handled->load() == 1; })) << "SIGUSR1 was lost";
  EXPECT_TRUE(wait_until([&] { return status_field(target_, "State").find('S') != std::string::npos; }))
      << status_field(target_, "State");
}

// 0: the first seize of the process; 70000: past the 65,536 slots of the
// handler's table, which only reuse keeps recording.
INSTANTIATE_TEST_SUITE_P(AfterSeizes, PtraceSessionTest, ::testing::Values(0, 70000));

}  // namespace
}  // namespace framewalk

#include "record/perf_events.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <set>

namespace framewalk::record {

namespace {

int perf_event_open(perf_event_attr* attr, pid_t pid, int cpu, int group, unsigned long flags) {
  return static_cast<int>(syscall(SYS_perf_event_open, attr, pid, cpu, group, flags));
}

// The CPUs events may be opened on (sysconf counts those configured; one
// offline gives ENODEV and is skipped).
int cpu_count() {
  const long n = sysconf(_SC_NPROCESSORS_CONF);
  return n > 0 ? static_cast<int>(n) : 1;
}

int paranoid_level() {
  std::ifstream f("/proc/sys/kernel/perf_event_paranoid");
  int level = 2;
  f >> level;
  return level;
}

}  // namespace

namespace {

// The numeric entries of a /proc directory, in order.
std::vector<pid_t> numbered_entries(const std::string& path) {
  std::vector<pid_t> out;
  DIR* dir = opendir(path.c_str());
  if (!dir) return out;
  while (dirent* e = readdir(dir)) {
    char* end = nullptr;
    const long tid = std::strtol(e->d_name, &end, 10);
    if (end != e->d_name && *end == 0 && tid > 0) out.push_back(static_cast<pid_t>(tid));
  }
  closedir(dir);
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace

std::vector<pid_t> threads_of(pid_t pid) { return numbered_entries("/proc/" + std::to_string(pid) + "/task"); }

std::vector<pid_t> all_processes() { return numbered_entries("/proc"); }

namespace {

struct NamedEvent {
  const char* name;
  EventChoice event;
};
constexpr NamedEvent kEvents[] = {
    {"cpu-clock", {PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK, "cpu-clock", true}},
    {"task-clock", {PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK, "task-clock", true}},
    {"page-faults", {PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS, "page-faults", false}},
    {"faults", {PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS, "page-faults", false}},
    {"context-switches", {PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CONTEXT_SWITCHES, "context-switches", false}},
    {"cs", {PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CONTEXT_SWITCHES, "context-switches", false}},
    {"cycles", {PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES, "cycles", false}},
    {"instructions", {PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS, "instructions", false}},
    {"cache-misses", {PERF_TYPE_HARDWARE, PERF_COUNT_HW_CACHE_MISSES, "cache-misses", false}},
    {"branch-misses", {PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_MISSES, "branch-misses", false}},
};

}  // namespace

std::optional<EventChoice> event_by_name(std::string_view name) {
  for (const NamedEvent& e : kEvents)
    if (name == e.name) return e.event;
  return std::nullopt;
}

std::string event_names() {
  std::string out;
  for (const NamedEvent& e : kEvents) out += std::string(out.empty() ? "" : ", ") + e.name;
  return out;
}

std::string sampling_error_text(const Error& error, const char* event) {
  const int err = static_cast<int>(error.offset);
  switch (error.code) {
    case ErrorCode::kNoSuchProcess: return "no such process";
    case ErrorCode::kIoError:
      if (err == ENOENT || err == EOPNOTSUPP)
        return std::string("the event ") + event + " is not available on this machine (" + std::strerror(err) +
               "; hardware events need a PMU, which virtual machines often lack): try -e cpu-clock";
      return std::string("perf_event_open failed: ") + std::strerror(err);
    case ErrorCode::kNotPermitted:
      return std::string("perf_event_open not permitted (") + std::strerror(err) +
             "): /proc/sys/kernel/perf_event_paranoid is " + std::to_string(paranoid_level()) +
             "; sampling another user's process needs CAP_PERFMON (or root), and a value of 2 or less lets a user "
             "sample their own processes (sysctl kernel.perf_event_paranoid=1 also allows kernel frames; "
             "recording every CPU with -a needs 0 or less, or CAP_PERFMON)";
    default: return std::string("perf_event_open failed: ") + std::strerror(err);
  }
}

Result<std::unique_ptr<Sampler>> Sampler::open(const std::vector<pid_t>& pids, const SamplingOptions& options) {
  std::unique_ptr<Sampler> s(new Sampler());
  s->page_ = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  s->kinds_.resize(options.off_cpu ? 2 : 1);
  perf_event_attr& a = s->kinds_[0].attr;
  std::memset(&a, 0, sizeof a);
  a.size = sizeof a;
  a.type = options.event.type;
  a.config = options.event.config;
  a.freq = 1;
  a.sample_freq = options.frequency;
  a.sample_type = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CPU |
                  PERF_SAMPLE_PERIOD;
  if (options.callchain) a.sample_type |= PERF_SAMPLE_CALLCHAIN;
  if (options.user_registers) {
    a.sample_type |= PERF_SAMPLE_REGS_USER;
    a.sample_regs_user = options.user_registers;
  }
  if (options.stack_bytes) {
    a.sample_type |= PERF_SAMPLE_STACK_USER;
    a.sample_stack_user = options.stack_bytes & ~7u;
  }
  a.disabled = 1;
  a.inherit = options.system_wide ? 0 : 1;  // a CPU's event sees every task already
  a.mmap = 1;
  a.mmap2 = 1;
  a.comm = 1;
  a.comm_exec = 1;
  a.task = 1;
  a.sample_id_all = 1;
  a.exclude_hv = 1;
  a.exclude_callchain_kernel = 0;
  a.exclude_callchain_user = options.user_callchain ? 0 : 1;
  a.enable_on_exec = options.enable_on_exec ? 1 : 0;
  a.watermark = 1;
  // Times on CLOCK_MONOTONIC, the jitdump's clock (`perf record -k mono`):
  // a sample's jit code is what the jitdump's records had made it by then.
  a.use_clockid = 1;
  a.clockid = CLOCK_MONOTONIC;
  const uint32_t pages = std::max<uint32_t>(options.ring_pages, 2);
  a.wakeup_watermark = static_cast<uint32_t>(pages * s->page_ / 4);

  const int cpus = cpu_count();
  s->rings_.resize(static_cast<size_t>(cpus));
  if (pids.empty() != options.system_wide) return Error{ErrorCode::kBadArgument, 0};
  for (pid_t pid : pids)
    if (threads_of(pid).empty()) return Error{ErrorCode::kNoSuchProcess, static_cast<uint64_t>(pid)};
  // Kernel frames where perf_event_paranoid allows them: asked once, on a
  // probe event, so that every event has the same attributes. (A machine
  // without the event says so here: ENOENT.)
  {
    const std::vector<pid_t> first = options.system_wide ? std::vector<pid_t>{-1} : threads_of(pids[0]);
    if (first.empty()) return Error{ErrorCode::kNoSuchProcess, static_cast<uint64_t>(pids[0])};
    const pid_t probe_pid = first.front();
    const int probe = perf_event_open(&a, probe_pid, options.system_wide ? 0 : -1, -1, PERF_FLAG_FD_CLOEXEC);
    if (probe >= 0) {
      close(probe);
    } else if ((errno == EACCES || errno == EPERM) && !options.system_wide) {
      a.exclude_kernel = 1;
      a.exclude_callchain_kernel = 1;
    } else if (errno == ENOENT || errno == EOPNOTSUPP) {
      return Error{ErrorCode::kIoError, static_cast<uint64_t>(errno)};
    }
  }
  if (options.off_cpu) {
    // A sample at every switch away from the CPU (taken as the thread
    // leaves: its user registers and stack are where it blocked), and the
    // switch records; the mappings and names come with the clock's.
    perf_event_attr& c = s->kinds_[1].attr;
    c = a;
    c.type = PERF_TYPE_SOFTWARE;
    c.config = PERF_COUNT_SW_CONTEXT_SWITCHES;
    c.freq = 0;
    c.sample_period = 1;
    c.mmap = c.mmap2 = c.comm = c.comm_exec = c.task = 0;
    c.context_switch = 1;
  }
  // One thread's events (tid -1: every task on the CPU), one a CPU and
  // kind of event, each CPU's into its ring; false when the thread is gone.
  auto open_thread = [&](pid_t tid) -> Result<bool> {
    for (int cpu = 0; cpu < cpus; ++cpu) {
      for (Event& kind : s->kinds_) {
        const int fd = perf_event_open(&kind.attr, tid, cpu, -1, PERF_FLAG_FD_CLOEXEC);
        if (fd < 0) {
          const int err = errno;
          if (err == ENODEV) break;                    // an offline CPU
          if (err == ESRCH && tid >= 0) return false;  // the thread ended meanwhile
          if (err == EACCES || err == EPERM) return Error{ErrorCode::kNotPermitted, static_cast<uint64_t>(err)};
          return Error{ErrorCode::kIoError, static_cast<uint64_t>(err)};
        }
        s->events_.push_back(fd);
        uint64_t id = 0;
        if (ioctl(fd, PERF_EVENT_IOC_ID, &id) == 0) kind.ids.push_back(id);
        Ring& ring = s->rings_[static_cast<size_t>(cpu)];
        if (ring.fd < 0) {
          const size_t bytes = (pages + 1) * s->page_;
          void* base = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
          if (base == MAP_FAILED) return Error{ErrorCode::kIoError, static_cast<uint64_t>(errno)};
          ring.fd = fd;
          ring.base = base;
          ring.size = pages * s->page_;
        } else if (ioctl(fd, PERF_EVENT_IOC_SET_OUTPUT, ring.fd) != 0) {
          return Error{ErrorCode::kIoError, static_cast<uint64_t>(errno)};
        }
      }
    }
    return true;
  };
  if (options.system_wide) {
    if (auto opened = open_thread(-1); !opened) return opened.error();
  }
  for (pid_t pid : pids) {
    std::set<pid_t> opened;
    std::vector<pid_t> tids = threads_of(pid);
    // Threads created while the events are opened are found by listing
    // again (a thread made by one already opened inherits its events).
    for (int round = 0; round < 100 && !tids.empty(); ++round, tids = threads_of(pid)) {
      bool any_new = false;
      for (pid_t tid : tids) {
        if (!opened.insert(tid).second) continue;
        any_new = true;
        if (auto done = open_thread(tid); !done) return done.error();
      }
      if (!any_new) break;
    }
  }
  if (s->events_.empty()) return Error{ErrorCode::kNoSuchProcess, static_cast<uint64_t>(ESRCH)};
  s->rings_.erase(std::remove_if(s->rings_.begin(), s->rings_.end(), [](const Ring& r) { return r.fd < 0; }),
                  s->rings_.end());
  if (!options.enable_on_exec)
    for (int fd : s->events_) ioctl(fd, PERF_EVENT_IOC_ENABLE, 0);
  return s;
}

Sampler::~Sampler() {
  for (int fd : events_) ioctl(fd, PERF_EVENT_IOC_DISABLE, 0);
  for (Ring& r : rings_)
    if (r.base) munmap(r.base, r.size + page_);
  for (int fd : events_) close(fd);
}

size_t Sampler::ring_bytes() const {
  size_t n = 0;
  for (const Ring& r : rings_) n += r.size + page_;
  return n;
}

bool Sampler::drain(Ring& ring, FunctionRef<void(const uint8_t*, size_t)> on_record) {
  auto* header = static_cast<perf_event_mmap_page*>(ring.base);
  const uint8_t* data = static_cast<const uint8_t*>(ring.base) + page_;
  const uint64_t head = __atomic_load_n(&header->data_head, __ATOMIC_ACQUIRE);
  uint64_t tail = header->data_tail;
  bool any = false;
  while (tail + sizeof(perf_event_header) <= head) {
    perf_event_header h;
    const size_t at = static_cast<size_t>(tail % ring.size);
    // The header itself may wrap (it is 8 bytes; records are 8-aligned, so it never does in practice).
    for (size_t i = 0; i < sizeof h; ++i)
      reinterpret_cast<uint8_t*>(&h)[i] = data[(at + i) % ring.size];
    if (h.size < sizeof h || tail + h.size > head) break;  // a record the kernel is still writing: next time
    if (at + h.size <= ring.size) {
      on_record(data + at, h.size);
    } else {
      scratch_.resize(h.size);
      const size_t first = ring.size - at;
      std::memcpy(scratch_.data(), data + at, first);
      std::memcpy(scratch_.data() + first, data, h.size - first);
      on_record(scratch_.data(), h.size);
    }
    tail += h.size;
    any = true;
  }
  __atomic_store_n(&header->data_tail, tail, __ATOMIC_RELEASE);
  return any;
}

bool Sampler::read(int timeout_ms, FunctionRef<void(const uint8_t*, size_t)> on_record) {
  std::vector<pollfd> fds;
  fds.reserve(events_.size());
  for (int fd : events_) fds.push_back({fd, POLLIN, 0});
  const int ready = ::poll(fds.data(), fds.size(), timeout_ms);
  bool all_hung_up = ready > 0;
  if (ready > 0)
    for (const pollfd& p : fds)
      if (!(p.revents & POLLHUP)) all_hung_up = false;
  for (Ring& r : rings_) drain(r, on_record);
  return !all_hung_up;
}

Result<std::unique_ptr<Command>> Command::start(const std::vector<std::string>& argv) {
  if (argv.empty()) return Error{ErrorCode::kBadArgument, 0};
  int go[2], failed[2];
  if (pipe2(go, O_CLOEXEC) != 0) return Error{ErrorCode::kIoError, static_cast<uint64_t>(errno)};
  if (pipe2(failed, O_CLOEXEC) != 0) {
    close(go[0]);
    close(go[1]);
    return Error{ErrorCode::kIoError, static_cast<uint64_t>(errno)};
  }
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  const pid_t pid = fork();
  if (pid < 0) return Error{ErrorCode::kIoError, static_cast<uint64_t>(errno)};
  if (pid == 0) {
    close(go[1]);
    close(failed[0]);
    char c;
    while (::read(go[0], &c, 1) < 0 && errno == EINTR) {
    }
    execvp(args[0], args.data());
    const int err = errno;
    (void)!write(failed[1], &err, sizeof err);
    _exit(127);
  }
  close(go[0]);
  close(failed[1]);
  std::unique_ptr<Command> c(new Command());
  c->pid_ = pid;
  c->go_ = go[1];
  c->failed_ = failed[0];
  return c;
}

int Command::release() {
  if (go_ >= 0) {
    close(go_);
    go_ = -1;
  }
  int err = 0;
  if (failed_ >= 0) {
    ssize_t n;
    while ((n = ::read(failed_, &err, sizeof err)) < 0 && errno == EINTR) {
    }
    close(failed_);
    failed_ = -1;
    if (n != static_cast<ssize_t>(sizeof err)) err = 0;
  }
  return err;
}

int Command::poll() {
  if (exited_) return status_;
  int status = 0;
  if (waitpid(pid_, &status, WNOHANG) == pid_) {
    exited_ = true;
    status_ = status;
    return status_;
  }
  return -1;
}

int Command::wait() {
  if (exited_) return status_;
  int status = 0;
  while (waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
  }
  exited_ = true;
  status_ = status;
  return status_;
}

Command::~Command() {
  if (go_ >= 0) {
    // Never released: it must not run. It is our child, still before exec.
    kill(pid_, SIGKILL);
    close(go_);
    wait();
  }
  if (failed_ >= 0) close(failed_);
  if (!exited_) poll();  // reaped if it has ended; left running otherwise
}

}  // namespace framewalk::record

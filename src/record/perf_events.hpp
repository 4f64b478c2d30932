// Sampling a process with perf_event_open: an event on each of its threads
// and CPUs, inherited by the threads and processes they create, whose
// records (samples with user registers, a copy of the user stack and the
// kernel's callchain; mmap, comm, fork, exit, context switches, lost
// counts) are gathered into one ring buffer per CPU and read in batches.
// The records have perf.data's layout: perf/ decodes both alike.
//
// A Sampler is used from one thread. It changes nothing in the process it
// samples; closing it (or the sampler's own exit) stops the events.
#pragma once

#include <linux/perf_event.h>
#include <sys/types.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/function_ref.hpp"
#include "base/result.hpp"

namespace framewalk::record {

// An event to sample on: perf_event_attr's type and config, and its name.
struct EventChoice {
  uint32_t type = PERF_TYPE_SOFTWARE;
  uint64_t config = PERF_COUNT_SW_CPU_CLOCK;
  const char* name = "cpu-clock";
  // Counts nanoseconds (the software clocks): a sample weighs its period in ns.
  bool clock = true;
};
// The events `-e` takes, by perf's names: cpu-clock, task-clock,
// page-faults (and faults), context-switches (cs), cycles, instructions,
// cache-misses, branch-misses (the last four need a hardware PMU).
std::optional<EventChoice> event_by_name(std::string_view name);
// The names event_by_name knows, for a usage message.
std::string event_names();

struct SamplingOptions {
  // What to sample on; cpu-clock: each thread's CPU time.
  EventChoice event;
  // Samples per second (of each thread's CPU time, for cpu-clock; the
  // kernel's own rate cap applies).
  uint64_t frequency = 1000;
  // Every process of the machine, an event per CPU (-a): needs
  // CAP_PERFMON, root, or perf_event_paranoid <= 0.
  bool system_wide = false;
  // Time off the CPU: a second event samples each thread as it leaves the
  // CPU (the context-switches software event, every switch), and
  // context-switch records say when it comes back and whether it was
  // preempted (still runnable) or blocked.
  bool off_cpu = false;
  // Bytes of user stack copied into each sample (a multiple of 8, at most
  // 65,528): the deeper a walk must go from the copy alone, the more.
  uint32_t stack_bytes = 16384;
  // The user registers each sample carries, as the kernel's perf register
  // mask of the machine (arch::Machine::perf_sample_register_mask).
  uint64_t user_registers = 0;
  // The kernel's callchain: its kernel frames (where perf_event_paranoid
  // lets us) and, with user_callchain, the user frame-pointer chain the
  // kernel walks too (of no use where the stack copy is unwound: perf's
  // dwarf mode leaves it out as well; it costs the sampled thread a read a
  // frame, up to 127, and the ring their bytes).
  bool callchain = true;
  bool user_callchain = false;
  // Pages of each CPU's ring buffer (a power of two).
  uint32_t ring_pages = 256;
  // Start counting when the process calls exec (a command started stopped
  // for it: see start_command).
  bool enable_on_exec = false;
};

// The threads of a process now (/proc/PID/task), in order; none when it is gone.
std::vector<pid_t> threads_of(pid_t pid);
// Every process now (/proc), in order.
std::vector<pid_t> all_processes();

// What could not be opened, with errno (Error::offset): kNoSuchProcess,
// kNotPermitted (perf_event_paranoid or capabilities), kIoError (ENOENT or
// EOPNOTSUPP: the event does not exist here, as hardware events without a
// PMU). `event` names the event in the message.
std::string sampling_error_text(const Error& error, const char* event = "cpu-clock");

class Sampler {
 public:
  // Every thread of each of `pids` now (listed from /proc/PID/task until no
  // new one appears), and what they create from then on; with
  // options.system_wide (and no pids), every CPU.
  static Result<std::unique_ptr<Sampler>> open(const std::vector<pid_t>& pids, const SamplingOptions& options);
  static Result<std::unique_ptr<Sampler>> open(pid_t pid, const SamplingOptions& options) {
    return open(std::vector<pid_t>{pid}, options);
  }
  ~Sampler();
  Sampler(const Sampler&) = delete;
  Sampler& operator=(const Sampler&) = delete;

  // Waits up to `timeout_ms` for records, then hands every record there is
  // to `on_record` (header and body contiguous, valid during the call).
  // False once every event has hung up (the processes sampled are gone)
  // and no record is left.
  bool read(int timeout_ms, FunctionRef<void(const uint8_t* record, size_t size)> on_record);

  // The events opened: the CPU clock first, then (off_cpu) the context
  // switches; their attributes (to decode the samples: every event has the
  // same sample_type) and the sample ids of their instances.
  struct Event {
    perf_event_attr attr{};
    std::vector<uint64_t> ids;
  };
  const std::vector<Event>& events() const { return kinds_; }
  const perf_event_attr& attr() const { return kinds_[0].attr; }
  // Whether kernel frames are sampled (perf_event_paranoid allowed it).
  bool kernel_frames() const { return !attr().exclude_kernel; }
  size_t event_count() const { return events_.size(); }
  // Bytes the ring buffers take.
  size_t ring_bytes() const;

 private:
  Sampler() = default;
  struct Ring {
    int fd = -1;
    void* base = nullptr;
    size_t size = 0;  // the data area's
    bool hung_up = false;
  };
  bool drain(Ring& ring, FunctionRef<void(const uint8_t*, size_t)> on_record);

  std::vector<Event> kinds_;
  std::vector<int> events_;  // every event's fd; the rings' own among them
  std::vector<Ring> rings_;  // one per CPU
  std::vector<uint8_t> scratch_;  // a record that wraps around its ring's end
  size_t page_ = 4096;
};

// A command started for sampling: forked and held before exec until
// release() (so that events opened on it with enable_on_exec count from the
// exec on). Errors: kIoError (errno).
class Command {
 public:
  static Result<std::unique_ptr<Command>> start(const std::vector<std::string>& argv);
  ~Command();
  pid_t pid() const { return pid_; }
  // Lets the command exec: 0, or the errno of an exec that failed.
  int release();
  // Waits for it to end (its wait status), or polls (-1: running).
  // Destroyed before release(), it is killed; after, left to run.
  int wait();
  int poll();
  bool exited() const { return exited_; }

 private:
  Command() = default;
  pid_t pid_ = -1;
  int go_ = -1;      // the pipe end whose closing lets the child exec
  int failed_ = -1;  // where the child writes exec's errno (closed by a successful exec)
  bool exited_ = false;
  int status_ = 0;
};

}  // namespace framewalk::record

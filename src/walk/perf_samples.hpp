// Every sample of a perf.data unwound by framewalk's engine: the records in
// time order (perf writes each ring buffer's records in turn, so a mapping
// may come after a later sample of another CPU: they are reordered round by
// round, FINISHED_ROUND to FINISHED_ROUND, as perf does), the mappings
// tracked per process (ModuleTracker), and each sample's user stack walked
// from its registers and stack copy (SampleTarget, walk_thread). A kernel
// callchain (PERF_SAMPLE_CALLCHAIN) gives the kernel frames first, as
// frames of their own kind; a sample without a stack copy (`perf record
// --call-graph fp`) takes its user frames from the callchain.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "perf/perf_data.hpp"
#include "target/sample_target.hpp"
#include "unwind/unwinder.hpp"

namespace framewalk {

enum class SampleFrameKind : uint8_t {
  kUser,       // unwound by framewalk from the registers and the stack copy
  kKernel,     // the kernel's callchain (above PERF_CONTEXT_KERNEL)
  kCallchain,  // a user frame of the kernel's callchain (frame pointers; --call-graph fp)
};
const char* to_string(SampleFrameKind kind);

struct SampleFrame {
  Frame frame;  // pc, activation, source, module (null: none); registers null
  SampleFrameKind kind = SampleFrameKind::kUser;
};

// One unwound sample; valid during the callback only (its frames point at
// the modules mapped at the sample's time).
struct UnwoundSample {
  const perf::Sample* sample = nullptr;
  const perf::FileInfo* file = nullptr;  // the recording's header (its machine, kernel release, ...)
  const perf::EventAttr* event = nullptr;
  size_t event_index = 0;
  uint32_t pid = 0, tid = 0, cpu = 0;
  uint64_t time = 0, period = 0;
  const std::string* comm = nullptr;  // the thread's name ("" when no COMM named it)
  const std::string* jitdump = nullptr;  // the process's jitdump (its marker mapping's path), or null
  std::span<const SampleFrame> frames;
  bool walked = false;  // the user stack was unwound from registers and stack copy
  WalkResult walk;      // when walked
  std::optional<Error> walk_error;  // why the user stack could not be walked (no registers)
};

// A thread leaving its CPU or coming back (PERF_RECORD_SWITCH, recorded
// with context_switch), starting (FORK) or ending (EXIT): what off-CPU time
// is measured by.
struct ThreadSwitch {
  enum class Kind : uint8_t { kOut, kIn, kExit, kFork };
  Kind kind = Kind::kOut;
  bool preempted = false;  // out: taken off while still runnable
  uint32_t pid = 0, tid = 0, cpu = 0;
  uint64_t time = 0;
};

// The context-switches software event: its samples are taken as a thread
// leaves its CPU (where it blocked, for off-CPU time).
inline bool is_context_switch_event(const perf::EventAttr& e) {
  return e.type == 1 /* PERF_TYPE_SOFTWARE */ && e.config == 3 /* PERF_COUNT_SW_CONTEXT_SWITCHES */;
}

inline constexpr size_t kStopReasonCount = static_cast<size_t>(StopReason::kCannotUnwind) + 1;

struct PerfUnwindStats {
  uint64_t samples = 0;
  uint64_t walked = 0;          // user stacks unwound from registers and stack
  uint64_t from_callchain = 0;  // user frames taken from the callchain
  uint64_t ip_only = 0;         // neither: the sample's IP alone (or only kernel frames)
  uint64_t lost_samples = 0;    // LOST and LOST_SAMPLES, added up
  uint64_t lost_records = 0;    // how many such records
  uint64_t throttled = 0;       // THROTTLE records
  uint64_t switches = 0;        // SWITCH records
  uint64_t by_reason[kStopReasonCount] = {};  // walks by why they stopped
  uint64_t frames = 0;          // all frames handed out
};

struct PerfUnwindOptions {
  size_t max_frames = 256;
  SourceOrder sources = SourceOrder::kAuto;
  bool kernel_frames = true;  // the callchain's kernel frames first
  bool order_by_time = true;  // reorder by time, round by round (else file order)
  ModuleTracker::Options files;  // sysroot, perf's build-id cache
  std::shared_ptr<ModuleCache> cache;  // optional
  // The machine when the file does not say (HEADER_ARCH); 0: the host's.
  uint16_t machine = 0;
  // The processes run on this machine now (a live recording): a walk that
  // ends in jit code reads the code their memory describes (GDB JIT
  // objects, libgcc's registered tables; ModuleTracker::read_memory_jit).
  bool live = false;
};

struct PerfUnwindResult {
  perf::ReadSummary read;  // records read, and the error the file ended with
  PerfUnwindStats stats;
  std::vector<std::string> warnings;  // files missing or changed, features unreadable; once each
  uint16_t machine = 0;
  std::vector<std::string> event_names;
  std::string arch, hostname, osrelease;
  std::vector<std::string> cmdline;
};

class PerfSampleDriver;

// The same engine fed record by record, by a caller that reads the records
// itself (the live recorder, from its ring buffers): begin() with what the
// stream's header would say, then each record as decode_record made it (its
// bytes are copied when it must wait for its round), end_round() after each
// batch of every ring buffer, and finish() at the end.
class PerfSampleUnwinder {
 public:
  PerfSampleUnwinder(const PerfUnwindOptions& options, FunctionRef<bool(const UnwoundSample&)> on_sample,
                     FunctionRef<void(const ThreadSwitch&)> on_switch);
  ~PerfSampleUnwinder();
  PerfSampleUnwinder(const PerfSampleUnwinder&) = delete;
  PerfSampleUnwinder& operator=(const PerfSampleUnwinder&) = delete;

  // `info` (the events, the machine, the kernel release) must outlive this.
  void begin(const perf::FileInfo& info);
  // False once on_sample has said to stop.
  bool record(const perf::Record& r);
  bool end_round();
  // Unwinds what is held. The accounting and the warnings, once each.
  void finish();
  const PerfUnwindStats& stats() const;
  std::vector<std::string> warnings() const;
  uint16_t machine() const;

 private:
  std::unique_ptr<PerfSampleDriver> driver_;
};

// Reads `source` and unwinds each sample, calling `on_sample` (false stops).
PerfUnwindResult unwind_perf_samples(perf::ByteSource& source, const PerfUnwindOptions& options,
                                     FunctionRef<bool(const UnwoundSample&)> on_sample);
// The same, with the threads' switches and exits, in time order among the samples.
PerfUnwindResult unwind_perf_samples(perf::ByteSource& source, const PerfUnwindOptions& options,
                                     FunctionRef<bool(const UnwoundSample&)> on_sample,
                                     FunctionRef<void(const ThreadSwitch&)> on_switch);

}  // namespace framewalk

#include "walk/perf_samples.hpp"

#include <algorithm>
#include <cstdlib>
#include <cstring>

#include "arch/machine.hpp"
#include "walk/stack_dump.hpp"

namespace framewalk {

const char* to_string(SampleFrameKind kind) {
  switch (kind) {
    case SampleFrameKind::kUser: return "user";
    case SampleFrameKind::kKernel: return "kernel";
    case SampleFrameKind::kCallchain: return "callchain";
  }
  return "?";
}

namespace {

// Records held back until their round is complete: bytes in one arena. A
// file without rounds (or with huge ones) is sorted and half processed
// whenever this much is held, as perf's ordered events do.
constexpr size_t kMaxQueued = size_t{16} << 20;
constexpr size_t kMaxQueuedRecords = size_t{1} << 17;

}  // namespace

class PerfSampleDriver {
 public:
  PerfSampleDriver(const PerfUnwindOptions& options, FunctionRef<bool(const UnwoundSample&)> on_sample,
         FunctionRef<void(const ThreadSwitch&)> on_switch)
      : options_(options), on_sample_(on_sample), on_switch_(on_switch), tracker_(options.cache, options.files) {}

  bool on_info(const perf::FileInfo& info) {
    info_ = &info;
    machine_ = machine_of_perf_arch(info.arch);
    if (machine_ == 0) machine_ = options_.machine ? options_.machine : arch::host_machine().elf_machine();
    descriptor_ = arch::machine_for(usual_machine_key(machine_));
    target_ = std::make_unique<SampleTarget>(machine_);
    tracker_.set_build_ids(info.build_ids);
    tracker_.set_recorded_kernel(info.osrelease);
    return true;
  }

  bool on_record(const perf::Record& r) {
    if (stopped_) return false;
    if (!info_) return true;  // the reader calls on_info first; nothing to unwind with otherwise
    if (!options_.order_by_time) return process(r);
    if (r.type == perf::kFinishedRound) {
      flush(previous_round_max_);
      previous_round_max_ = max_time_;
      return !stopped_;
    }
    if (r.type == perf::kHeaderBuildId) {
      tracker_.set_build_ids(info_->build_ids);  // pipe mode: they come as records
      return true;
    }
    bool has_time;
    uint64_t time;
    if (r.type == perf::kSample) {
      has_time = r.sample.sample_type & perf::sample::kTime;
      time = r.sample.time;
    } else {
      has_time = r.sample_id.has_time();
      time = r.sample_id.time;
    }
    if (!has_time) {
      if (queue_.empty()) return process(r);
      time = max_time_;  // in place, after what came before it
    }
    // Kept until its round is over, a sample's stack copy cut to its valid bytes.
    std::vector<uint8_t>& arena = arenas_[current_];
    const size_t at = arena.size();
    perf::append_compacted(r, &arena);
    queue_.push_back(Queued{time, seq_++, at, arena.size() - at, r.index, r.file_offset, current_});
    max_time_ = std::max(max_time_, time);
    if (arenas_[0].size() + arenas_[1].size() > kMaxQueued || queue_.size() > kMaxQueuedRecords) flush_half();
    return !stopped_;
  }

  void finish() {
    if (!stopped_) flush(~uint64_t{0});
  }

  PerfUnwindStats stats;
  ModuleTracker& tracker() { return tracker_; }
  uint16_t machine() const { return machine_; }

 private:
  struct Queued {
    uint64_t time, seq;
    size_t offset, size;
    uint64_t index, file_offset;
    unsigned arena;  // which of arenas_ holds its bytes
  };

  // In time order, records of the same time in the order they came (seq).
  // They come in runs already in order (one CPU's ring buffer at a time):
  // the runs are merged, a few at most; many are sorted.
  void sort_queue() {
    auto before = [](const Queued& a, const Queued& b) { return a.time != b.time ? a.time < b.time : a.seq < b.seq; };
    runs_.clear();
    runs_.push_back(0);
    for (size_t i = 1; i < queue_.size(); ++i)
      if (before(queue_[i], queue_[i - 1])) runs_.push_back(i);
    if (runs_.size() == 1) return;
    if (runs_.size() > 16) {
      std::sort(queue_.begin(), queue_.end(), before);
      return;
    }
    runs_.push_back(queue_.size());
    while (runs_.size() > 2) {  // boundaries of the runs, the end last
      size_t kept = 0;
      for (size_t r = 0; r + 2 < runs_.size(); r += 2) {
        std::inplace_merge(queue_.begin() + static_cast<std::ptrdiff_t>(runs_[r]),
                           queue_.begin() + static_cast<std::ptrdiff_t>(runs_[r + 1]),
                           queue_.begin() + static_cast<std::ptrdiff_t>(runs_[r + 2]), before);
        runs_[kept++] = runs_[r];
      }
      if (runs_.size() % 2 == 0) runs_[kept++] = runs_[runs_.size() - 2];  // an odd run out waits
      runs_[kept++] = runs_.back();
      runs_.resize(kept);
    }
  }
  // Processes the queued records up to `limit` in time order; keeps the rest.
  void flush(uint64_t limit) {
    sort_queue();
    size_t n = 0;
    while (n < queue_.size() && queue_[n].time <= limit) ++n;
    run(n);
  }
  void flush_half() {
    sort_queue();
    run(queue_.size() / 2);
  }
  // Processes the first `n` queued records, then frees the arena that
  // receives no records now: what is left of it moves to the other one,
  // which then stops receiving. With rounds, the records a flush leaves
  // are all of the last round (its arena's), so nothing moves.
  void run(size_t n) {
    for (size_t i = 0; i < n && !stopped_; ++i) {
      const Queued& q = queue_[i];
      // Decoded once already: a record that reached the queue decodes again.
      if (!perf::decode_record(Bytes(arenas_[q.arena].data() + q.offset, q.size), info_->attrs, &record_)) continue;
      record_.index = q.index;
      record_.file_offset = q.file_offset;
      if (!process(record_)) stopped_ = true;
    }
    if (stopped_) return;
    const unsigned older = 1 - current_;
    std::vector<uint8_t>& from = arenas_[older];
    std::vector<uint8_t>& to = arenas_[current_];
    queue_.erase(queue_.begin(), queue_.begin() + static_cast<std::ptrdiff_t>(n));
    for (Queued& q : queue_) {
      if (q.arena != older) continue;
      to.insert(to.end(), from.begin() + static_cast<std::ptrdiff_t>(q.offset),
                from.begin() + static_cast<std::ptrdiff_t>(q.offset + q.size));
      q.offset = to.size() - q.size;
      q.arena = current_;
    }
    from.clear();
    current_ = older;
  }

  bool process(const perf::Record& r) {
    switch (r.type) {
      case perf::kMmap:
      case perf::kMmap2: tracker_.on_mmap(r.mmap, r.misc); return true;
      case perf::kComm: tracker_.on_comm(r.comm); return true;
      case perf::kFork:
        tracker_.on_fork(r.task);
        on_switch_(ThreadSwitch{ThreadSwitch::Kind::kFork, false, r.task.pid, r.task.tid, r.sample_id.cpu, r.task.time});
        return true;
      case perf::kExit:
        tracker_.on_exit(r.task);
        on_switch_(ThreadSwitch{ThreadSwitch::Kind::kExit, false, r.task.pid, r.task.tid, r.sample_id.cpu, r.task.time});
        return true;
      case perf::kSwitch:
      case perf::kSwitchCpuWide: {  // a CPU's event (-a): the trailer's task is the one switching
        ++stats.switches;
        ThreadSwitch t;
        t.kind = (r.misc & perf::misc::kSwitchOut) ? ThreadSwitch::Kind::kOut : ThreadSwitch::Kind::kIn;
        t.preempted = (r.misc & perf::misc::kSwitchOutPreempt) != 0;
        t.pid = r.sample_id.pid;
        t.tid = r.sample_id.tid;
        t.cpu = r.sample_id.cpu;
        t.time = r.sample_id.time;
        on_switch_(t);
        return true;
      }
      case perf::kLost:
      case perf::kLostSamples:
        stats.lost_samples += r.lost.lost;
        ++stats.lost_records;
        return true;
      case perf::kThrottle: ++stats.throttled; return true;
      case perf::kSample: return sample(r);
      default: return true;
    }
  }

  void add_frame(uint64_t pc, bool activation, SampleFrameKind kind, const ModuleMap* modules) {
    SampleFrame& f = frames_.emplace_back();
    f.kind = kind;
    f.frame.pc = pc;
    f.frame.activation = activation;
    f.frame.lookup_pc = descriptor_ ? descriptor_->lookup_pc(pc, activation) : pc;
    f.frame.symbol_pc = f.frame.lookup_pc;
    f.frame.source = activation ? FrameSource::kContext : FrameSource::kFramePointer;
    f.frame.module = modules ? modules->find(f.frame.lookup_pc, &module_hint_) : nullptr;
  }

  // The frames of a user callchain (entries [start, end), the leaf first).
  // Those it shares from the root with the previous chain of the same
  // modules are that chain's frames (a program's samples share their
  // callers): only the rest are looked up.
  void add_chain(const perf::Sample& s, size_t start, size_t end, const ModuleMap& modules) {
    const size_t n = end - start, before = chain_.size();
    size_t common = 0;
    if (chain_map_ == &modules && chain_generation_ == modules.generation()) {
      while (common < n && common < before && s.callchain_at(end - 1 - common) == chain_[before - 1 - common].frame.pc)
        ++common;
      // The leaf is an activation: shared only as the leaf of both.
      if ((common == n || common == before) && n != before) common = std::min(n, before) - 1;
    }
    for (size_t i = start; i < end - common; ++i)
      add_frame(s.callchain_at(i), i == start, SampleFrameKind::kCallchain, &modules);
    frames_.insert(frames_.end(), chain_.end() - static_cast<std::ptrdiff_t>(common), chain_.end());
    chain_.assign(frames_.end() - static_cast<std::ptrdiff_t>(n), frames_.end());
    chain_map_ = &modules;
    chain_generation_ = modules.generation();
  }

  bool sample(const perf::Record& r) {
    const perf::Sample& s = r.sample;
    ++stats.samples;
    frames_.clear();
    ModuleTracker::Process& process = tracker_.process(s.pid);
    UnwoundSample u;
    u.sample = &s;
    u.file = info_;
    u.event_index = s.attr;
    u.event = &info_->attrs.attrs()[s.attr];
    u.pid = s.pid;
    u.tid = s.tid;
    u.cpu = s.cpu;
    u.time = s.time;
    u.period = s.period;
    u.comm = &tracker_.thread_name(s.pid, s.tid);
    if (!process.jitdump.empty()) {
      u.jitdump = &process.jitdump;
      // The jitdump's code with unwind tables, as of the sample where the
      // clocks agree (jitdump times are CLOCK_MONOTONIC, as `perf record -k
      // mono` samples), else as far as the file was read.
      const bool same_clock = (s.sample_type & perf::sample::kTime) && u.event->use_clockid() &&
                              u.event->clockid == 1 /* CLOCK_MONOTONIC */;
      tracker_.advance_jitdump(process, same_clock ? s.time : JitdumpFeed::kAnyTime);
    }

    // The callchain: kernel frames, and the user frames perf's own walk found.
    size_t user_chain_start = 0, user_chain_end = 0;
    if (s.sample_type & perf::sample::kCallchain) {
      uint64_t context = 0;
      bool first_kernel = true;
      bool any_marker = false;
      for (size_t i = 0; i < s.callchain_size; ++i) {
        const uint64_t pc = s.callchain_at(i);
        if (pc >= perf::context::kMax) {
          context = pc;
          any_marker = true;
          if (context == perf::context::kUser) user_chain_start = user_chain_end = i + 1;
          continue;
        }
        if (!any_marker) context = (s.misc & perf::misc::kCpuModeMask) == perf::misc::kKernel ? perf::context::kKernel
                                                                                                : perf::context::kUser;
        if (context == perf::context::kKernel && options_.kernel_frames) {
          add_frame(pc, first_kernel, SampleFrameKind::kKernel, nullptr);
          first_kernel = false;
        } else if (context == perf::context::kUser) {
          if (user_chain_end == 0) user_chain_start = i;
          user_chain_end = i + 1;
        }
      }
    }
    const size_t kernel_frames = frames_.size();

    bool walked = false;
    if ((s.sample_type & perf::sample::kRegsUser) && s.regs_user_abi != 0 && target_) {
      target_->set_sample(s, &process.modules);
      UnwindOptions o;
      o.max_frames = options_.max_frames;
      o.sources = options_.sources;
      o.row_cache = &row_cache_;
      // walk_thread's steps, with an Unwinder that takes a register saved
      // below the stack copy as unknown (libdw's way, which perf uses).
      Result<WalkResult> result = Error{ErrorCode::kNoRegisters, 0};
      arch::RegisterFile regs;
      if (auto got = target_->initial_registers(static_cast<pid_t>(s.tid), &regs); !got) {
        result = got.error();
      } else {
        auto walk = [&] {
          Unwinder unwinder(target_->modules(), target_->memory(), target_->machine());
          unwinder.set_unreadable_saved_registers_unknown(true);
          return unwinder.walk(regs, [&](const Frame& f) {
              SampleFrame& sf = frames_.emplace_back();
              sf.frame = f;
              sf.frame.registers = nullptr;
              sf.kind = SampleFrameKind::kUser;
              return true;
            }, o);
        };
        result = walk();
        // A walk that ended in jit code of a process running now: the code
        // its memory describes (GDB JIT objects, __register_frame tables),
        // read again (not more often than the tracker allows), and the walk
        // made again where that added modules.
        if (options_.live && result && result->reason != StopReason::kOutermost && frames_.size() > kernel_frames &&
            (!frames_.back().frame.module || frames_.back().frame.module->jit) &&
            tracker_.read_memory_jit(process, s.pid, s.time) > 0) {
          frames_.resize(kernel_frames);
          target_->set_sample(s, &process.modules);
          result = walk();
        }
      }
      if (result) {
        walked = true;
        u.walk = *result;
        ++stats.walked;
        ++stats.by_reason[static_cast<size_t>(result->reason)];
      } else {
        u.walk_error = result.error();
      }
    }
    // A stack copy of no use (none, or nothing walked past the first
    // frame) and a user callchain: frame pointers (--call-graph fp).
    if (!walked || (frames_.size() - kernel_frames <= 1 && !(s.sample_type & perf::sample::kStackUser))) {
      if (user_chain_end > user_chain_start) {
        frames_.resize(kernel_frames);
        walked = false;
        add_chain(s, user_chain_start, user_chain_end, process.modules);
        ++stats.from_callchain;
      } else if (!walked) {
        if ((s.sample_type & perf::sample::kIp) && (s.misc & perf::misc::kCpuModeMask) != perf::misc::kKernel)
          add_frame(s.ip, true, SampleFrameKind::kCallchain, &process.modules);
        ++stats.ip_only;
      }
    }
    u.walked = walked;
    u.frames = frames_;
    stats.frames += frames_.size();
    return on_sample_(u);
  }

  const PerfUnwindOptions& options_;
  FunctionRef<bool(const UnwoundSample&)> on_sample_;
  FunctionRef<void(const ThreadSwitch&)> on_switch_;
  ModuleTracker tracker_;
  const perf::FileInfo* info_ = nullptr;
  uint16_t machine_ = 0;
  const arch::Machine* descriptor_ = nullptr;
  std::unique_ptr<SampleTarget> target_;
  RowCache row_cache_{1024};
  std::vector<SampleFrame> frames_;
  ModuleMap::FindHint module_hint_;  // the module of the last frame
  std::vector<SampleFrame> chain_;     // add_chain's last chain, of chain_map_ at chain_generation_
  const ModuleMap* chain_map_ = nullptr;
  uint64_t chain_generation_ = 0;
  perf::Record record_;
  // Queued records' bytes: new ones go to arenas_[current_].
  std::vector<uint8_t> arenas_[2];
  unsigned current_ = 0;
  std::vector<Queued> queue_;
  std::vector<size_t> runs_;  // sort_queue's
  uint64_t seq_ = 0, max_time_ = 0, previous_round_max_ = 0;
  bool stopped_ = false;
};

PerfSampleUnwinder::PerfSampleUnwinder(const PerfUnwindOptions& options,
                                       FunctionRef<bool(const UnwoundSample&)> on_sample,
                                       FunctionRef<void(const ThreadSwitch&)> on_switch)
    : driver_(std::make_unique<PerfSampleDriver>(options, on_sample, on_switch)) {}

PerfSampleUnwinder::~PerfSampleUnwinder() = default;

void PerfSampleUnwinder::begin(const perf::FileInfo& info) { driver_->on_info(info); }

bool PerfSampleUnwinder::record(const perf::Record& r) { return driver_->on_record(r); }

bool PerfSampleUnwinder::end_round() {
  perf::Record round;
  round.type = perf::kFinishedRound;
  return driver_->on_record(round);
}

void PerfSampleUnwinder::finish() { driver_->finish(); }

const PerfUnwindStats& PerfSampleUnwinder::stats() const { return driver_->stats; }

std::vector<std::string> PerfSampleUnwinder::warnings() const { return driver_->tracker().warnings(); }

uint16_t PerfSampleUnwinder::machine() const { return driver_->machine(); }

PerfUnwindResult unwind_perf_samples(perf::ByteSource& source, const PerfUnwindOptions& options,
                                     FunctionRef<bool(const UnwoundSample&)> on_sample) {
  auto ignore = [](const ThreadSwitch&) {};
  return unwind_perf_samples(source, options, on_sample, ignore);
}

PerfUnwindResult unwind_perf_samples(perf::ByteSource& source, const PerfUnwindOptions& options,
                                     FunctionRef<bool(const UnwoundSample&)> on_sample,
                                     FunctionRef<void(const ThreadSwitch&)> on_switch) {
  PerfUnwindResult result;
  auto driver = std::make_unique<PerfSampleDriver>(options, on_sample, on_switch);
  perf::PerfDataReader reader(source);
  bool started = false;
  result.read = reader.read(
      [&](const perf::FileInfo& i) {
        started = true;
        return driver->on_info(i);
      },
      [&](const perf::Record& r) { return driver->on_record(r); });
  const perf::FileInfo* info = &reader.info();
  if (started) {
    // Before the error (if any) ends the stream: what was read is unwound.
    driver->finish();
    for (const perf::EventAttr& a : info->attrs.attrs()) result.event_names.push_back(a.name);
    result.arch = info->arch;
    result.hostname = info->hostname;
    result.osrelease = info->osrelease;
    result.cmdline = info->cmdline;
    for (const std::string& p : info->feature_problems) result.warnings.push_back("feature " + p);
  }
  result.stats = driver->stats;
  result.machine = driver->machine();
  for (const std::string& w : driver->tracker().warnings()) result.warnings.push_back(w);
  return result;
}

}  // namespace framewalk

// Unwound samples (a perf.data's, or the live recorder's: walk/perf_samples)
// into a sampled profile (sample_profile.hpp): modules with their build-ids
// and load ranges, frames by (module, link-time address) named once each
// with their inline frames and lines, kernel frames named from kallsyms,
// threads with their names, the event and the walks' stop reasons.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "profile/sample_profile.hpp"
#include "symbol/kernel_symbols.hpp"
#include "symbol/perf_map.hpp"
#include "walk/perf_samples.hpp"

namespace framewalk::profile {

class SampleProfileBuilder {
 public:
  // `kernel` names kernel frames (loaded at the first one); `symbols`:
  // name the frames (else addresses only, for a smaller file).
  // `defer_names`: frames are named by name_pending() rather than as
  // they first come (a recorder keeps up with the ring buffers that way:
  // loading a library's debug information takes tens of milliseconds).
  explicit SampleProfileBuilder(symbol::KernelSymbols& kernel, bool symbols = true, bool defer_names = false);
  SampleProfile& profile() { return profile_; }

  // A sample. One of the context-switches event (a thread leaving its
  // CPU) is held until the thread comes back (add_switch), and becomes an
  // off-CPU sample weighing the time it was away; one taken off the CPU
  // while runnable (preempted) is dropped, as time waiting for a CPU is
  // not time blocked.
  void add(const UnwoundSample& u);
  void add_switch(const ThreadSwitch& s);
  // The accounting of the whole run: lost samples, the recording's length.
  void finish(const PerfUnwindResult& result);
  void finish(uint64_t lost_samples);
  // Names the frames met since the last call (defer_names), and those the
  // background thread had not named yet (it is stopped first).
  void name_pending();
  size_t pending_names() const { return pending_.size(); }
  // What naming met that the user should know (perf maps with malformed
  // lines); after name_pending() or for a builder that does not defer.
  std::vector<std::string> warnings() const;

  // defer_names: a thread of low priority (SCHED_IDLE: it takes what the
  // program leaves of the CPUs) names the frames as they come, and
  // collect_names() puts its names in the profile, so that the file's
  // chunks carry names while the recording goes on (a recorder killed
  // with SIGKILL leaves the names of what it flushed). It alone uses the
  // KernelSymbols until name_pending(). `idle`: at idle priority (a
  // recorder, beside the program); else at the caller's (a report, which
  // names on a second CPU while it reads).
  void start_background_naming(bool idle = true);
  // Hands the frames met since the last call to the thread and puts the
  // names it has made in the profile. Called by the recorder between batches.
  void collect_names();
  ~SampleProfileBuilder();
  SampleProfileBuilder(const SampleProfileBuilder&) = delete;
  SampleProfileBuilder& operator=(const SampleProfileBuilder&) = delete;

 private:
  uint32_t module(const Module* m);
  uint32_t frame(const framewalk::SampleFrame& f, const UnwoundSample& u);
  struct Pending {
    uint32_t frame = 0;
    bool kernel = false, activation = false;
    std::shared_ptr<const Module> module;  // kept alive until named (null: none)
    uint32_t jit_pid = 0;  // code in no module: named from this process's perf map
    std::string jitdump;   // and its jitdump (the path), if it writes one
    uint64_t pc = 0, lookup_pc = 0, symbol_pc = 0;
  };
  // A frame's names as strings, innermost first (made on any thread).
  struct NamedLine {
    std::string function, file;
    uint32_t line = 0, column = 0;
  };
  struct Named {
    uint32_t frame = 0;
    std::vector<NamedLine> lines;
  };
  Named names_of(const Pending& p, const std::string& osrelease);
  void apply(const Named& named);
  void stop_background_naming();
  class Background;

  // The perf maps (/tmp/perf-PID.map) of the processes with frames in no
  // module, and the names their jitdumps give (added after the map's), by
  // pid: used where the KernelSymbols are (names_of). Both are read again
  // for an address they do not name (the jitdump when it has grown).
  struct JitNames {
    std::unique_ptr<symbol::PerfMap> map;
    size_t jitdump_records = 0;  // of the jitdump, read into `map`
    uint64_t jitdump_bytes = 0;  // its size then
    std::string jitdump_problem;
  };
  const symbol::PerfMap* perf_map(uint32_t pid, uint64_t address, const std::string& jitdump);
  std::unordered_map<uint32_t, JitNames> perf_maps_;
  // Jit frames their process had not named yet when they were named (a
  // runtime writes its map and jitdump as it goes, and buffers): named
  // again once the recording ends (name_pending). Of the naming thread.
  std::vector<Pending> unnamed_jit_;
  bool retrying_ = false;

  symbol::KernelSymbols& kernel_;
  bool symbols_;
  bool defer_names_;
  std::vector<Pending> pending_;
  std::unordered_map<uint64_t, std::shared_ptr<const Module>> kept_modules_;  // by id: the modules pending frames are in
  std::unique_ptr<Background> background_;
  std::string osrelease_;
  SampleProfile profile_;
  std::unordered_map<uint64_t, uint32_t> modules_;  // Module id (0: the kernel) -> profile module
  std::unordered_map<uint32_t, std::string> thread_names_;
  std::vector<uint8_t> named_;  // by frame id: named, or being named
  // The previous samples' frames by depth from the root (add()).
  struct FrameKey {
    uint64_t pc = ~uint64_t{0};
    uint64_t module = 0;  // Module id
    SampleFrameKind kind = SampleFrameKind::kUser;
    bool activation = false;
    bool operator==(const FrameKey&) const = default;
  };
  struct PreviousFrame {
    FrameKey key;
    uint32_t id = 0;
    uint32_t node = kNoNode;  // the stack node of the frames from the root to this one
  };
  std::vector<PreviousFrame> previous_;
  size_t previous_depth_ = 0;
  uint64_t last_module_key_ = ~uint64_t{0};  // module()'s last answer
  uint32_t last_module_ = kNoModule;
  std::vector<SourceLine> lines_;
  uint64_t relative(uint64_t time) const { return first_time_ && time >= *first_time_ ? time - *first_time_ : 0; }
  void end_off_cpu();
  struct Away {
    uint32_t stack = kNoNode;
    uint64_t time = 0;
    uint16_t cpu = 0;
  };
  std::unordered_map<uint32_t, Away> away_;  // tid -> where it left the CPU, until it comes back
  // Threads that have ended, and when: their last switch out (seen by a
  // CPU's event, -a) is not time blocked. Until a thread of that id starts.
  std::unordered_map<uint32_t, uint64_t> exited_;
  uint64_t untimed_off_cpu_ = 0;  // switched out twice without a switch in between (records lost)
  std::optional<uint64_t> first_time_;
  uint64_t last_time_ = 0;
  bool event_set_ = false;
};

}  // namespace framewalk::profile

// A live process as a Target: threads frozen with ptrace under one of three
// freeze policies, chosen by the caller and carried out here:
//   kProcess  every thread stopped at the first next_thread, until detach():
//             a consistent snapshot (threads started meanwhile are stopped too);
//   kThread   each thread stopped only from initial_registers to thread_detach;
//   kCopy     every thread stopped at once, its registers and the live part of
//             its stack copied, and all released together (PtraceSnapshot); the
//             walks read the copies. Threads started meanwhile are stopped one
//             at a time, as with kThread.
// The process is left as it was: every thread is detached by detach() and by
// the destructor; signals that arrived meanwhile are delivered afterwards.
// Interruption (SIGINT...) is the program's business: release_held_threads()
// (target/ptrace_target.hpp) is async-signal-safe, for a handler it installs.
#pragma once

#include <sys/types.h>

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "target/cached_memory.hpp"
#include "target/jitdump_modules.hpp"
#include "target/proc_maps.hpp"
#include "target/ptrace_snapshot.hpp"
#include "target/ptrace_target.hpp"
#include "target/target.hpp"

namespace framewalk {

enum class FreezePolicy : uint8_t { kProcess, kThread, kCopy };

struct LiveOptions {
  FreezePolicy freeze = FreezePolicy::kProcess;
  pid_t only_thread = 0;  // one thread of the process, not all
  // Load every module's unwind tables before anything is stopped (a
  // debuginfod download must not lengthen the pause).
  bool load_before_stop = false;
  // Told when each step of opening and freezing ends ("maps", "debuginfod",
  // "seize", "stop", "snapshot", "modules", "detach"), with a note (the
  // snapshot's pause in parts): where a dump spends its time.
  std::function<void(const char* step, const std::string& note)> on_step;
};

class LiveTarget final : public Target {
 public:
  // Errors: kNoSuchProcess (offset: the pid).
  static Result<std::unique_ptr<LiveTarget>> open(pid_t pid, const LiveOptions& options,
                                                  std::shared_ptr<ModuleCache> cache);
  ~LiveTarget() override;

  MachineKey machine() const override;
  pid_t pid() const override { return pid_; }
  std::string process_name() const override;
  Result<pid_t> next_thread(pid_t after) override;
  void detach() override;
  Result<void> initial_registers(pid_t tid, arch::RegisterFile* out) override;
  void thread_detach(pid_t tid) override;
  std::string thread_name(pid_t tid) const override;
  Memory& memory() override;
  const ModuleMap& modules() override;
  std::optional<uint64_t> pointer_auth_mask() override { return pointer_auth_mask_; }
  uint64_t pause_ns() const override { return pause_ns_; }
  // Problems met reading the modules (a GDB JIT list that breaks, a jitdump damaged).
  const std::vector<std::string>& warnings() const override { return warnings_; }
  // The jitdump the process writes (found by its marker mapping), or null:
  // its code with unwind tables is among the modules; the names of all of
  // it are for the caller (symbol::PerfMap::add_jitdump).
  const JitdumpFile* jitdump() const { return jitdump_.get(); }

 private:
  LiveTarget(pid_t pid, const LiveOptions& options, std::shared_ptr<ModuleCache> cache);
  void start();  // the freeze the policy does at the first next_thread
  // A thread not in the first list (started while the others were stopped).
  void add_late_threads();
  Result<void> read_registers(pid_t tid, arch::RegisterFile* out);

  struct Thread {
    pid_t tid = 0;
    bool late = false;       // stopped on its own (kCopy), not in the snapshot
    Result<void> stop = Result<void>();  // how stopping it went
    arch::RegisterFile registers;
    bool have_registers = false;
  };
  Thread* thread(pid_t tid);

  pid_t pid_;
  LiveOptions options_;
  std::shared_ptr<ModuleCache> cache_;
  PtraceSession session_;
  CachedMemory live_memory_;
  std::vector<MapEntry> maps_;
  ModuleMap modules_;
  std::vector<std::string> warnings_;
  std::unique_ptr<JitdumpFile> jitdump_;
  // The modules of the maps, and the GDB JIT objects (read from `memory`).
  void build_modules(Memory& memory);
  bool modules_built_ = false;
  bool started_ = false;
  bool detached_ = false;
  bool reading_live_ = false;  // the thread last given registers was stopped on its own
  std::vector<Thread> threads_;
  std::unique_ptr<PtraceSnapshot> snapshot_;
  std::unique_ptr<Memory> snapshot_memory_;
  std::unique_ptr<CachedMemory> snapshot_cached_;
  std::optional<uint64_t> pointer_auth_mask_;
  uint64_t pause_ns_ = 0;
  uint64_t freeze_start_ns_ = 0;
};


}  // namespace framewalk

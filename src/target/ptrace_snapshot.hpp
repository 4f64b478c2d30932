// A snapshot of a live process's threads with the shortest pause: every
// thread is stopped at once, its registers and the live part of its stack are
// copied, and the process runs on; unwinding then reads the copies.
//
// The stopping is done by tracer tasks of our own (clone(CLONE_VM), so they
// write straight into our memory), each for a share of the threads, in
// parallel. A tracer never detaches thread by thread: it exits, and the
// kernel releases all its tracees at once (one pass under one lock, against
// one PTRACE_DETACH call per thread). As a tracer never reaps its tracees'
// stop notifications, a signal that arrived during the stop is delivered
// afterwards, and a thread that was in a group-stop stays stopped: the
// process is left as it was, also if framewalk dies meanwhile (a tracer dies
// with its parent, and its exit releases the threads).
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <map>
#include <memory>
#include <vector>

#include "arch/registers.hpp"
#include "base/memory.hpp"
#include "arch/machine.hpp"
#include "target/proc_maps.hpp"
#include "target/ptrace_target.hpp"

namespace framewalk {

struct SnapshotThread {
  pid_t tid = 0;
  AttachError error = AttachError::kNone;
  int error_number = 0;
  arch::RegisterFile registers;
  uint64_t stack_address = 0;  // the copy of [stack_address, + stack_size)
  size_t stack_size = 0;
};

struct SnapshotOptions {
  int tracers = 2;                       // tasks stopping threads in parallel
  size_t max_stack_copy = 512u << 10;    // per thread, from sp - 128 up to the end of its mapping
  size_t reserved_per_thread = 16u << 10;  // copy space faulted in before the stop
  // The process's machine (process_machine), whose elf_gregset_t its threads
  // hand back; null: the host's.
  const arch::Machine* machine = nullptr;
};

class PtraceSnapshot {
 public:
  // Stops the threads `tids` of `pid`, copies, releases. `maps` bound each
  // stack copy (read them before: that is not part of the pause).
  static PtraceSnapshot take(pid_t pid, const std::vector<pid_t>& tids, const std::vector<MapEntry>& maps,
                             const SnapshotOptions& options = {});

  const std::vector<SnapshotThread>& threads() const { return threads_; }
  // From the first thread stopped to the last one running again.
  uint64_t pause_ns() const { return pause_ns_; }
  // The pause in three parts: until every thread had stopped and its
  // registers were read, until every stack was copied, until all ran again.
  struct Phases {
    uint64_t stop_ns = 0, copy_ns = 0, release_ns = 0;
  };
  const Phases& phases() const { return phases_; }
  // Reads from the stack copies, and from `live` for anything else.
  std::unique_ptr<Memory> memory(Memory& live) const;

 private:
  struct Arena;
  std::vector<SnapshotThread> threads_;
  std::shared_ptr<Arena> arena_;
  std::map<uint64_t, std::pair<const uint8_t*, size_t>> copies_;  // by stack address
  uint64_t pause_ns_ = 0;
  Phases phases_;
};

}  // namespace framewalk

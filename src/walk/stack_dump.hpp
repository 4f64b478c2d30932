// Every thread's stack of a target: the target's threads in its order, each
// walked from its initial registers with the target's memory and modules.
// What `framewalk stack` prints and the C API's pstack gives.
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

#include "target/target.hpp"
#include "unwind/unwinder.hpp"

namespace framewalk {

struct ThreadStack {
  pid_t tid = 0;
  std::string name;
  std::vector<Frame> frames;  // Frame::registers is null here (valid only during a walk)
  WalkResult walk;
  std::string error;  // the thread could not be read at all (thread_error_text)
};

struct StackDump {
  pid_t pid = 0;
  std::string process_name;
  MachineKey machine{0};
  std::vector<ThreadStack> threads;
  uint64_t pause_ns = 0;
  // The thread list could not be read to its end (the error's sentence).
  std::string threads_error;
};

struct DumpOptions {
  size_t max_frames = 256;
  SourceOrder sources = SourceOrder::kAuto;
  RowCache* row_cache = nullptr;  // optional; shared by the threads
};

// Walks one thread of `target` (its registers from initial_registers, which
// freezes it, until thread_detach), calling `on_frame` for each frame.
// Errors: those of initial_registers.
Result<WalkResult> walk_thread(Target& target, pid_t tid, FunctionRef<bool(const Frame&)> on_frame,
                               const UnwindOptions& options);

// Every thread, then target.detach(). Frames point at the target's modules:
// use the dump while the target lives.
StackDump dump_stacks(Target& target, const DumpOptions& options);

// Why a walk ended, as a sentence: "bad-memory at 0x...", "no-unwind-info
// for 0x... (why SFrame had no row)", ...
std::string stop_text(const WalkResult& walk);

// An undefined return address, or a function the tables declare cannot be
// unwound (a thread's start on ARM): the stack's end as its code declares it.
bool natural_end(const ThreadStack& thread);

}  // namespace framewalk

// The live back-end: threads of another process, frozen with PTRACE_SEIZE and
// PTRACE_INTERRUPT, memory read with process_vm_readv (PEEKDATA fallback).
// Every thread is detached and left as it was: on the normal path, when a
// thread or the process dies, and when the program is interrupted if it
// calls release_held_threads (below) from its handler.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <optional>
#include <vector>

#include "arch/machine.hpp"
#include "arch/registers.hpp"
#include "base/memory.hpp"

namespace framewalk {

class ProcessMemory final : public Memory {
 public:
  explicit ProcessMemory(pid_t pid) : pid_(pid) {}
  size_t read(uint64_t address, void* out, size_t size) override;

 private:
  size_t peek(uint64_t address, void* out, size_t size);
  pid_t pid_;
  bool use_peek_ = false;
};

enum class AttachError : uint8_t { kNone, kNoSuchProcess, kNotPermitted, kGone, kOther };

struct ThreadStop {
  pid_t tid = 0;
  AttachError error = AttachError::kNone;
  int error_number = 0;
  int pending_signal = 0;   // a signal that arrived while we held it: re-delivered on detach
  bool group_stopped = false;  // it was already stopped (SIGSTOP): stays stopped
};

class PtraceSession {
 public:
  explicit PtraceSession(pid_t pid);
  ~PtraceSession();  // detaches every thread still held
  PtraceSession(const PtraceSession&) = delete;
  PtraceSession& operator=(const PtraceSession&) = delete;

  pid_t pid() const { return pid_; }
  // The process's machine (process_machine): its threads' registers are read
  // in that machine's layout.
  const arch::Machine& machine() const { return machine_; }
  // The process's threads now (from /proc/PID/task).
  std::vector<pid_t> threads() const;

  // Seizes and stops one thread; waits until it is stopped.
  ThreadStop stop(pid_t tid);
  // Stops many threads at once: every interrupt is sent before the first wait,
  // so the threads stop in parallel (the pause is not the sum of their wake-ups).
  std::vector<ThreadStop> stop_all(const std::vector<pid_t>& tids);
  // stop_all in two halves. Seizing does not stop a thread, so seize_all can
  // run before the pause begins; interrupt_all then stops the threads seized
  // (entries with an error are left alone).
  std::vector<ThreadStop> seize_all(const std::vector<pid_t>& tids);
  void interrupt_all(std::vector<ThreadStop>& stops);
  // The general registers of a stopped thread.
  bool registers(pid_t tid, arch::RegisterFile* out, int* error_number);
  // The bits pointer authentication codes occupy in a stopped thread's code
  // addresses (AArch64's NT_ARM_PAC_MASK regset, its insn_mask); nullopt
  // where the machine has none or the kernel does not say.
  std::optional<uint64_t> pointer_auth_mask(pid_t tid);
  // Lets one thread run again as it was.
  void detach(pid_t tid);
  void detach_all();

  Memory& memory() { return memory_; }

 private:
  bool seize(ThreadStop& s);
  bool interrupt(ThreadStop& s);
  void finish_stop(ThreadStop& s);

  pid_t pid_;
  const arch::Machine& machine_;
  ProcessMemory memory_;
  std::vector<ThreadStop> held_;
};

// Async-signal-safe: detaches every thread any session holds (each gets back
// the signal it stopped with) and ends the tracer tasks below, waiting until
// they are gone, which releases their threads. For a SIGINT/SIGTERM handler
// the program installs (framewalk's command does); the library installs none.
void release_held_threads();
// Tracer tasks (the --freeze=copy snapshot's) that hold threads:
// release_held_threads kills them and waits until they are gone, which
// releases their threads. Register a task before its first seize.
void hold_tracer_task(pid_t task);
void forget_tracer_task(pid_t task);

// The machine a process's code is for, from its executable's ELF header
// (/proc/PID/exe): a 32-bit x86 process under a 64-bit kernel is i386, and
// ptrace hands back its registers in the 32-bit layout. The host's machine
// where the header cannot be read or names no machine framewalk unwinds in
// that word size.
const arch::Machine& process_machine(pid_t pid);

// Whether `pid` exists, and a message if not.
bool process_exists(pid_t pid, std::string* why);
std::string thread_name(pid_t pid, pid_t tid);

}  // namespace framewalk

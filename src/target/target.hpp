// The one target interface: what a stack walk reads, whatever it comes from.
// Shaped like the elfutils design of pluggable unwinding back-ends: a
// process level (the next thread after a given one, detach) and a thread
// level (its initial registers, from which call it is frozen until
// thread_detach; memory; the modules mapped). A live process (ptrace, with
// its freeze policy inside), a core file, a snapshot read from files and a
// user's own callbacks differ only here.
//
// A target is used from one thread at a time (a live one from the thread
// that created it: Linux ties ptrace to the tracing thread).
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>

#include "arch/registers.hpp"
#include "base/memory.hpp"
#include "base/result.hpp"
#include "unwind/module.hpp"

namespace framewalk {

class Target {
 public:
  virtual ~Target() = default;

  // ELF e_machine of the target's code (EM_X86_64, EM_AARCH64, EM_ARM).
  virtual MachineKey machine() const = 0;
  virtual pid_t pid() const = 0;
  virtual std::string process_name() const { return {}; }

  // Process level. The thread after `after` (0: the first); 0 when there is
  // none. An error ends the iteration (no thread can be listed at all).
  virtual Result<pid_t> next_thread(pid_t after) = 0;
  // Lets the whole process go (every thread still held); idempotent, and
  // done by the destructor of targets that hold anything.
  virtual void detach() {}

  // Thread level. The registers the thread's walk starts from (DWARF
  // numbers). From this call until thread_detach the thread is frozen.
  // Errors: kNoSuchProcess, kThreadGone, kNotPermitted (offset: errno),
  // kIoError (offset: errno), kNoRegisters (offset: errno or 0).
  virtual Result<void> initial_registers(pid_t tid, arch::RegisterFile* out) = 0;
  virtual void thread_detach(pid_t tid) { (void)tid; }
  virtual std::string thread_name(pid_t tid) const {
    (void)tid;
    return process_name();
  }

  // The target's memory (its stacks; code is read from module images first).
  virtual Memory& memory() = 0;
  // The modules mapped. Valid until the target is destroyed; a target of a
  // running process may add and remove modules between walks (never during one).
  virtual const ModuleMap& modules() = 0;
  // The bits pointer authentication codes occupy in return addresses, when
  // the target knows (AArch64); nullopt: the machine's default.
  virtual std::optional<uint64_t> pointer_auth_mask() { return std::nullopt; }
  // How long the process was stopped, for targets that stop one (0 until
  // detach() for a process frozen as a whole).
  virtual uint64_t pause_ns() const { return 0; }
  // Problems met opening the target that did not stop it (missing files,
  // build-id mismatches), one message each.
  virtual const std::vector<std::string>& warnings() const {
    static const std::vector<std::string> none;
    return none;
  }
};

// A thread-level error as a sentence (for messages and the C API):
// "thread exited", "ptrace not permitted (...)", "cannot read registers: ...".
std::string thread_error_text(const Error& error);

}  // namespace framewalk

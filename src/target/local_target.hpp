// The local back-end: the calling process unwinds itself. Modules come from a
// snapshot taken with dl_iterate_phdr (call refresh() after dlopen/dlclose);
// memory is read with process_vm_readv on ourselves, so a bad pointer ends
// the walk instead of faulting. The snapshot (instance(), refresh()) loads and
// indexes every module's CFI, SFrame and symbols; after it, backtrace() and
// walk() do not allocate and take no lock that a signal could interrupt, so
// they may be called from a signal handler.
#pragma once

#include <ucontext.h>

#include <cstdint>
#include <atomic>
#include <memory>
#include <mutex>

#include "unwind/unwinder.hpp"

namespace framewalk {

// The calling process's modules as the dynamic linker lists them
// (dl_iterate_phdr): one per loaded object, from its lowest to its highest
// PT_LOAD, the vDSO's image read from `memory`. Brings `map` up to date:
// modules still loaded as they were keep their ids (and what is cached
// under them), the others are removed, new ones added. True when anything
// changed. Not async-signal-safe (it allocates and opens files).
bool update_own_modules(ModuleMap& map, ModuleCache& cache, Memory& memory);

class LocalUnwinder {
 public:
  // The process-wide instance; built on first use (not async-signal-safe:
  // call it once at start-up if you will unwind from signal handlers).
  static LocalUnwinder& instance();

  // Re-reads the module list (after dlopen/dlclose). Not async-signal-safe.
  // Walks running meanwhile, on other threads or in signal handlers, keep
  // the list they began with; refresh() returns once none does.
  void refresh();

  // Return addresses of the caller's stack, like glibc's backtrace(): the
  // first entry is the return address into the caller of backtrace().
  int backtrace(void** buffer, int size);
  // From a signal handler's context: the first entry is the interrupted PC.
  int backtrace(const ucontext_t* context, void** buffer, int size);

  // Full frames (module, source) from a context; see Unwinder::walk.
  WalkResult walk(const ucontext_t* context, FunctionRef<bool(const Frame&)> on_frame, size_t max_frames = 256);

  // Valid until the next refresh().
  const ModuleMap& modules() const;

 private:
  LocalUnwinder();
  ~LocalUnwinder();
  struct State;
  class Hold;
  ModuleCache cache_;
  std::mutex refresh_mutex_;
  std::atomic<State*> current_{nullptr};
  std::atomic<uint64_t> epoch_{0};
  std::atomic<int> walking_[2] = {0, 0};
};

// Shorthands for LocalUnwinder::instance().backtrace(...).
int backtrace(void** buffer, int size);
int backtrace(const ucontext_t* context, void** buffer, int size);

}  // namespace framewalk

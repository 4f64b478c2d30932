#include "target/live_target.hpp"

#include <algorithm>
#include <cstring>

#include "arch/machine.hpp"
#include "base/clock.hpp"
#include "base/text.hpp"
#include "target/gdb_jit.hpp"
#include "target/libgcc_frames.hpp"

namespace framewalk {

namespace {

Error stop_error(AttachError error, int error_number, pid_t tid) {
  switch (error) {
    case AttachError::kNone: break;
    case AttachError::kNotPermitted: return Error{ErrorCode::kNotPermitted, static_cast<uint64_t>(error_number)};
    case AttachError::kGone: return Error{ErrorCode::kThreadGone, static_cast<uint64_t>(tid)};
    case AttachError::kNoSuchProcess: return Error{ErrorCode::kNoSuchProcess, static_cast<uint64_t>(tid)};
    case AttachError::kOther: break;
  }
  return Error{ErrorCode::kIoError, static_cast<uint64_t>(error_number)};
}

Result<void> stop_result(const ThreadStop& s) {
  if (s.error == AttachError::kNone) return ok();
  return stop_error(s.error, s.error_number, s.tid);
}

}  // namespace

std::string thread_error_text(const Error& e) {
  const int error_number = static_cast<int>(e.offset);
  switch (e.code) {
    case ErrorCode::kNotPermitted:
      return "ptrace not permitted (" + std::string(std::strerror(error_number)) +
             "; see /proc/sys/kernel/yama/ptrace_scope, or run as the process's owner or root)";
    case ErrorCode::kThreadGone: return "thread exited";
    case ErrorCode::kNoSuchProcess: return "no such process";
    case ErrorCode::kIoError: return std::strerror(error_number);
    case ErrorCode::kNoRegisters:
      return error_number ? std::string("cannot read registers: ") + std::strerror(error_number)
                          : std::string("cannot read registers");
    default: return to_string(e.code);
  }
}

Result<std::unique_ptr<LiveTarget>> LiveTarget::open(pid_t pid, const LiveOptions& options,
                                                     std::shared_ptr<ModuleCache> cache) {
  if (pid <= 0 || !process_exists(pid, nullptr)) return Error{ErrorCode::kNoSuchProcess, static_cast<uint64_t>(pid)};
  if (!cache) cache = std::make_shared<ModuleCache>();
  return std::unique_ptr<LiveTarget>(new LiveTarget(pid, options, std::move(cache)));
}

LiveTarget::LiveTarget(pid_t pid, const LiveOptions& options, std::shared_ptr<ModuleCache> cache)
    : pid_(pid), options_(options), cache_(std::move(cache)), session_(pid), live_memory_(session_.memory()) {
  const std::vector<pid_t> tids = options_.only_thread ? std::vector<pid_t>{options_.only_thread} : session_.threads();
  for (pid_t t : tids) { Thread th; th.tid = t; threads_.push_back(th); }
  // The mappings are read before anything is stopped: they rarely change, and
  // reading them costs more than anything else in the pause.
  maps_ = read_proc_maps(pid_);
  if (options_.on_step) options_.on_step("maps", "");
  // A jitdump the process writes (perf's marker mapping), read now too.
  if (const std::string path = jitdump_marker(maps_, pid_); !path.empty()) jitdump_ = load_jitdump(path, &warnings_);
  // The files are opened, and searched for a GDB JIT descriptor, before
  // anything is stopped too: the pause then finds them in the cache.
  const ModuleMap early = modules_from_maps(pid_, maps_, *cache_, live_memory_);
  for (const auto& m : early.modules())
    if (m->data) m->data->gdb_jit_descriptor();
  if (options_.on_step) options_.on_step("open", "");
  if (options_.load_before_stop) {
    for (const auto& m : early.modules())
      if (m->data) m->data->cfi();
    if (options_.on_step) options_.on_step("debuginfod", "");
  }
}

LiveTarget::~LiveTarget() { detach(); }

MachineKey LiveTarget::machine() const { return session_.machine().key(); }

std::string LiveTarget::process_name() const { return framewalk::thread_name(pid_, pid_); }

std::string LiveTarget::thread_name(pid_t tid) const { return framewalk::thread_name(pid_, tid); }

LiveTarget::Thread* LiveTarget::thread(pid_t tid) {
  for (Thread& t : threads_)
    if (t.tid == tid) return &t;
  return nullptr;
}

Result<void> LiveTarget::read_registers(pid_t tid, arch::RegisterFile* out) {
  int err = 0;
  if (!session_.registers(tid, out, &err)) return Error{ErrorCode::kNoRegisters, static_cast<uint64_t>(err)};
  // A process's pointer authentication mask, from the first thread whose
  // registers are read (AArch64; the machine's default otherwise).
  if (!pointer_auth_mask_) pointer_auth_mask_ = session_.pointer_auth_mask(tid);
  return ok();
}

void LiveTarget::start() {
  started_ = true;
  auto step = [&](const char* name, const std::string& note = "") {
    if (options_.on_step) options_.on_step(name, note);
  };
  std::vector<pid_t> tids;
  for (const Thread& t : threads_) tids.push_back(t.tid);
  switch (options_.freeze) {
    case FreezePolicy::kThread:
      // Least disturbance: each thread is stopped only while it is unwound.
      build_modules(live_memory_);
      break;
    case FreezePolicy::kCopy: {
      SnapshotOptions snapshot_options;
      snapshot_options.machine = &session_.machine();
      snapshot_ = std::make_unique<PtraceSnapshot>(PtraceSnapshot::take(pid_, tids, maps_, snapshot_options));
      pause_ns_ = snapshot_->pause_ns();
      const auto& parts = snapshot_->phases();
      step("snapshot", " (stopped " + std::to_string(pause_ns_ / 1000) + " us: stop " +
                           std::to_string(parts.stop_ns / 1000) + ", copy " + std::to_string(parts.copy_ns / 1000) +
                           ", release " + std::to_string(parts.release_ns / 1000) + ")");
      for (size_t i = 0; i < threads_.size(); ++i) {
        const SnapshotThread& t = snapshot_->threads()[i];
        if (t.error != AttachError::kNone) {
          threads_[i].stop = stop_error(t.error, t.error_number, t.tid);
          continue;
        }
        threads_[i].registers = t.registers;
        threads_[i].have_registers = true;
      }
      snapshot_memory_ = snapshot_->memory(session_.memory());
      snapshot_cached_ = std::make_unique<CachedMemory>(*snapshot_memory_);
      build_modules(*snapshot_cached_);
      step("modules");
      break;
    }
    case FreezePolicy::kProcess: {
      // A consistent snapshot: every thread stays stopped until detach().
      // Seizing does not stop a thread: the pause starts with the interrupts.
      auto stops = session_.seize_all(tids);
      step("seize");
      freeze_start_ns_ = monotonic_ns();
      session_.interrupt_all(stops);
      for (size_t i = 0; i < threads_.size(); ++i) {
        threads_[i].stop = stop_result(stops[i]);
        if (threads_[i].stop) {
          threads_[i].stop = read_registers(threads_[i].tid, &threads_[i].registers);
          threads_[i].have_registers = threads_[i].stop.ok();
        }
      }
      // Threads started while we were stopping the others.
      if (!options_.only_thread) {
        std::vector<pid_t> late;
        for (pid_t t : session_.threads())
          if (!thread(t)) late.push_back(t);
        const auto late_stops = session_.stop_all(late);
        for (size_t k = 0; k < late.size(); ++k) {
          Thread t;
          t.tid = late[k];
          t.stop = stop_result(late_stops[k]);
          if (t.stop) {
            t.stop = read_registers(t.tid, &t.registers);
            t.have_registers = t.stop.ok();
          }
          threads_.push_back(t);
        }
      }
      step("stop");
      build_modules(live_memory_);
      step("modules");
      break;
    }
  }
}

void LiveTarget::add_late_threads() {
  // Threads started after the snapshot was taken: each is stopped and
  // unwound on its own (kCopy).
  if (options_.only_thread || options_.freeze != FreezePolicy::kCopy) return;
  for (pid_t t : session_.threads())
    if (!thread(t)) {
      Thread th;
      th.tid = t;
      th.late = true;
      threads_.push_back(th);
    }
}

Result<pid_t> LiveTarget::next_thread(pid_t after) {
  if (detached_) return Error{ErrorCode::kInvalidState, 0};
  if (!started_) start();
  size_t i = 0;
  if (after) {
    while (i < threads_.size() && threads_[i].tid != after) ++i;
    if (i == threads_.size()) return Error{ErrorCode::kNotFound, static_cast<uint64_t>(after)};
    ++i;
  }
  if (i == threads_.size()) add_late_threads();
  return i < threads_.size() ? threads_[i].tid : 0;
}

Result<void> LiveTarget::initial_registers(pid_t tid, arch::RegisterFile* out) {
  if (detached_) return Error{ErrorCode::kInvalidState, 0};
  if (!started_) start();
  Thread* t = thread(tid);
  if (!t) return Error{ErrorCode::kNoSuchProcess, static_cast<uint64_t>(tid)};
  const bool on_its_own = options_.freeze == FreezePolicy::kThread || t->late;
  reading_live_ = on_its_own;
  if (on_its_own) {
    const uint64_t t0 = monotonic_ns();
    if (auto stopped = stop_result(session_.stop(tid)); !stopped) return stopped;
    live_memory_.invalidate();
    auto regs = read_registers(tid, out);
    if (options_.freeze == FreezePolicy::kThread) freeze_start_ns_ = t0;
    if (!regs) session_.detach(tid);
    return regs;
  }
  if (!t->stop) return t->stop;
  *out = t->registers;
  return ok();
}

void LiveTarget::thread_detach(pid_t tid) {
  Thread* t = thread(tid);
  if (!t) return;
  if (options_.freeze == FreezePolicy::kThread) {
    session_.detach(tid);
    pause_ns_ += monotonic_ns() - freeze_start_ns_;
  } else if (t->late) {
    session_.detach(tid);
  }
}

Memory& LiveTarget::memory() {
  // The snapshot's threads read their stack copies; threads stopped on
  // their own, the live process.
  if (snapshot_cached_ && !reading_live_) return *snapshot_cached_;
  return live_memory_;
}

const ModuleMap& LiveTarget::modules() {
  if (!modules_built_) {
    build_modules(live_memory_);
  }
  return modules_;
}

void LiveTarget::build_modules(Memory& memory) {
  modules_ = modules_from_maps(pid_, maps_, *cache_, memory);
  add_gdb_jit_modules(modules_, memory, session_.machine(), *cache_, &warnings_);
  add_libgcc_frame_modules(modules_, memory, session_.machine(), &warnings_);
  if (jitdump_) add_jitdump_modules(modules_, *jitdump_);
  modules_built_ = true;
}

void LiveTarget::detach() {
  if (detached_) return;
  detached_ = true;
  if (!started_) return;
  session_.detach_all();
  if (options_.freeze == FreezePolicy::kProcess) pause_ns_ = monotonic_ns() - freeze_start_ns_;
  if (options_.on_step) options_.on_step("detach", "");
}

}  // namespace framewalk

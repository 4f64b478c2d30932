// The C API (include/framewalk/framewalk.h) over the library's targets,
// walk and symbolization: handles, errors as fw_status with a per-thread
// message, no exceptions across the boundary.
#include "framewalk/framewalk.h"

#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <new>
#include <string>
#include <vector>

#include "arch/capture.hpp"
#include "arch/machine.hpp"
#include "base/own_memory.hpp"
#include "base/text.hpp"
#include "elf/debuginfod.hpp"
#include "symbol/perf_map.hpp"
#include "target/core_target.hpp"
#include "target/gdb_jit.hpp"
#include "target/libgcc_frames.hpp"
#include "target/live_target.hpp"
#include "target/local_target.hpp"
#include "target/proc_maps.hpp"
#include "target/snapshot_target.hpp"
#include "unwind/symbolize.hpp"
#include "walk/stack_dump.hpp"

using namespace framewalk;

namespace {

thread_local std::string t_error;

fw_status fail(fw_status status, std::string message) {
  t_error = std::move(message);
  return status;
}

fw_status status_of(ErrorCode code) {
  switch (code) {
    case ErrorCode::kNoSuchProcess: return FW_ERR_NO_PROCESS;
    case ErrorCode::kNotPermitted: return FW_ERR_PERMISSION;
    case ErrorCode::kThreadGone: return FW_ERR_THREAD_GONE;
    case ErrorCode::kIoError: return FW_ERR_IO;
    case ErrorCode::kUnsupportedMachine: return FW_ERR_UNSUPPORTED;
    case ErrorCode::kInvalidState: return FW_ERR_STATE;
    case ErrorCode::kBadArgument: return FW_ERR_ARGUMENT;
    default: return FW_ERR_FORMAT;
  }
}

// What every call catches: nothing may leave through the C boundary.
template <typename F>
fw_status guarded(F&& f) {
  try {
    return f();
  } catch (const std::bad_alloc&) {
    return fail(FW_ERR_NO_MEMORY, "out of memory");
  } catch (const std::exception& e) {
    return fail(FW_ERR_STATE, e.what());
  } catch (...) {
    return fail(FW_ERR_STATE, "unexpected failure");
  }
}

struct ContextState {
  std::shared_ptr<ModuleCache> cache = std::make_shared<ModuleCache>();
  std::string sysroot;
};

// ---- the user back-end --------------------------------------------------

class BackendTarget final : public Target {
 public:
  BackendTarget(const fw_backend& backend, void* arg, std::shared_ptr<ModuleCache> cache)
      : backend_(backend), arg_(arg), cache_(std::move(cache)), memory_(*this) {}
  ~BackendTarget() override { detach(); }

  MachineKey machine() const override { return usual_machine_key(static_cast<uint16_t>(backend_.machine)); }
  pid_t pid() const override { return backend_.pid; }
  Result<pid_t> next_thread(pid_t after) override {
    const int tid = backend_.next_thread(arg_, after);
    if (tid < 0) {
      problem_ = "the back-end's next_thread failed (" + std::to_string(tid) + ")";
      backend_failed_ = true;
      return Error{ErrorCode::kInvalidState, static_cast<uint64_t>(-static_cast<int64_t>(tid))};
    }
    return static_cast<pid_t>(tid);
  }
  void detach() override {
    if (detached_) return;
    detached_ = true;
    if (backend_.detach) backend_.detach(arg_);
  }
  Result<void> initial_registers(pid_t tid, arch::RegisterFile* out) override;
  void thread_detach(pid_t tid) override {
    if (backend_.thread_detach) backend_.thread_detach(arg_, tid);
  }
  Memory& memory() override { return memory_; }
  const ModuleMap& modules() override;

  std::string problem_;  // why the last back-end call failed
  bool backend_failed_ = false;  // a callback said it failed (FW_ERR_BACKEND)
  std::vector<MapEntry> mappings_;
  arch::RegisterFile* filling_ = nullptr;  // during set_initial_registers
  std::string register_problem_;

 private:
  class CallbackMemory final : public Memory {
   public:
    explicit CallbackMemory(BackendTarget& t) : t_(t) {}
    size_t read(uint64_t address, void* out, size_t size) override {
      const size_t n = t_.backend_.memory_read(t_.arg_, address, out, size);
      return std::min(n, size);  // a back-end that claims more than it was asked for is not believed
    }

   private:
    BackendTarget& t_;
  };
  fw_backend backend_;
  void* arg_;
  std::shared_ptr<ModuleCache> cache_;
  CallbackMemory memory_;
  ModuleMap modules_;
  bool modules_built_ = false;
  bool detached_ = false;
};

// ---- the calling thread ---------------------------------------------------

class SelfTarget final : public Target {
 public:
  explicit SelfTarget(std::shared_ptr<ModuleCache> cache) : cache_(std::move(cache)) {}
  MachineKey machine() const override { return arch::host_machine().key(); }
  pid_t pid() const override { return getpid(); }
  Result<pid_t> next_thread(pid_t after) override {
    const pid_t self = static_cast<pid_t>(syscall(SYS_gettid));
    return after == 0 ? self : 0;
  }
  Result<void> initial_registers(pid_t tid, arch::RegisterFile* out) override {
    if (tid != static_cast<pid_t>(syscall(SYS_gettid)))
      return Error{ErrorCode::kNoSuchProcess, static_cast<uint64_t>(tid)};
    if (!captured_) return Error{ErrorCode::kInvalidState, 0};
    *out = *captured_;
    return ok();
  }
  std::string thread_name(pid_t tid) const override { return framewalk::thread_name(getpid(), tid); }
  Memory& memory() override { return memory_; }
  const ModuleMap& modules() override {
    // Brought up to date at each walk: libraries come and go (dlopen,
    // dlclose); those that stay keep their ids and cached rows.
    const bool changed = update_own_modules(files_, *cache_, memory_);
    // Jit code, where the process has some: its anonymous executable
    // mappings (walked by frame pointer, named from its perf map), GDB JIT
    // objects and the tables registered with libgcc, read at each walk then.
    if (has_jit()) {
      modules_ = files_;
      for (const MapEntry& e : read_proc_maps(getpid())) {
        if (e.perms.size() < 3 || e.perms[2] != 'x' || !is_anonymous_mapping(e.path) || e.end <= e.start) continue;
        if (const Module* m = modules_.find(e.start); m && m->end > e.start) continue;
        modules_.add(jit_module(e.start, e.end, e.path.empty() ? "[anon]" : e.path));
      }
      const arch::Machine& machine = arch::host_machine();
      add_gdb_jit_modules(modules_, memory_, machine, *cache_, &warnings_);
      add_libgcc_frame_modules(modules_, memory_, machine, &warnings_);
      with_jit_ = true;
    } else if (changed || with_jit_ || modules_.generation() != files_.generation()) {
      modules_ = files_;
      with_jit_ = false;
    }
    return modules_;
  }
  const std::vector<std::string>& warnings() const override { return warnings_; }
  const arch::RegisterFile* captured_ = nullptr;

 private:
  // Whether the process says it has jit code: a perf map of its own, a GDB
  // JIT list with entries, or tables registered with libgcc where its lists
  // are known. (A stat and a few words of memory: a walk without jit code
  // pays no more.)
  bool has_jit() {
    struct stat st {};
    if (::stat(symbol::PerfMap::path_of(static_cast<uint32_t>(getpid())).c_str(), &st) == 0) return true;
    const unsigned pointer = arch::host_machine().address_size();
    auto non_zero = [&](uint64_t address) {
      uint64_t v = 0;
      return read_own_memory(address, &v, pointer) == pointer && v != 0;
    };
    for (const auto& m : files_.modules()) {
      if (!m->data) continue;
      if (auto d = m->data->gdb_jit_descriptor(); d && non_zero(*d + m->bias + 8 + pointer)) return true;
      const ModuleData::LibgccHeads heads = m->data->libgcc_object_heads();
      if ((heads.unseen && non_zero(*heads.unseen + m->bias)) || (heads.seen && non_zero(*heads.seen + m->bias)))
        return true;
    }
    return false;
  }

  class SelfMemory final : public Memory {
   public:
    size_t read(uint64_t address, void* out, size_t size) override { return read_own_memory(address, out, size); }
  };
  std::shared_ptr<ModuleCache> cache_;
  SelfMemory memory_;
  ModuleMap files_;    // what the dynamic linker lists
  ModuleMap modules_;  // those, and the jit code where there is some
  bool with_jit_ = false;
  std::vector<std::string> warnings_;
};

}  // namespace

struct fw_context {
  std::shared_ptr<ContextState> state = std::make_shared<ContextState>();
};

struct fw_target {
  std::shared_ptr<ContextState> context;
  std::unique_ptr<Target> target;
  RowCache rows;
  SelfTarget* self = nullptr;
  std::string name;
  std::string pid_text;  // for messages
  // Names of jit code (a live process's perf map and jitdump, a core's
  // jitdump), read when a frame first needs one; the map read again for an
  // address it does not name.
  std::unique_ptr<symbol::PerfMap> jit_names;
};

struct fw_thread_state {
  BackendTarget* target;
};

struct fw_mappings {
  std::vector<MapEntry>* out;
};

// What a frame's accessors hand out lives here until the callback returns:
// one per walk, reused frame after frame.
struct FrameScratch {
  std::string function, path, build_id;
  std::vector<SourceFrame> sources;
  const Frame* sources_of = nullptr;
};

struct fw_frame {
  const Frame* frame;
  size_t index;
  FrameScratch* scratch;
  fw_target* target;
};

namespace {

Result<void> BackendTarget::initial_registers(pid_t tid, arch::RegisterFile* out) {
  out->clear();
  fw_thread_state state{this};
  filling_ = out;
  register_problem_.clear();
  const int r = backend_.set_initial_registers(arg_, tid, &state);
  filling_ = nullptr;
  if (!register_problem_.empty()) {
    problem_ = register_problem_;
    if (r == 0) thread_detach(tid);
    return Error{ErrorCode::kTooManyRegisters, 0};
  }
  if (r != 0) {
    problem_ = "the back-end's set_initial_registers failed for thread " + std::to_string(tid) + " (" +
               std::to_string(r) + ")";
    backend_failed_ = true;
    return Error{ErrorCode::kNoRegisters, 0};
  }
  return ok();
}

const ModuleMap& BackendTarget::modules() {
  if (modules_built_) return modules_;
  modules_built_ = true;
  if (backend_.report_mappings) {
    mappings_.clear();
    fw_mappings m{&mappings_};
    if (backend_.report_mappings(arg_, &m) != 0) {
      problem_ = "the back-end's report_mappings failed";
      mappings_.clear();
    }
    std::stable_sort(mappings_.begin(), mappings_.end(),
                     [](const MapEntry& a, const MapEntry& b) { return a.start < b.start; });
    modules_ = modules_from_maps(0, mappings_, *cache_, memory_);
  } else if (backend_.pid > 0) {
    modules_ = modules_from_maps(backend_.pid, read_proc_maps(backend_.pid), *cache_, memory_);
  }
  return modules_;
}

fw_status new_target(fw_context* context, std::unique_ptr<Target> target, std::string pid_text, fw_target** out) {
  auto* t = new fw_target;
  t->context = context->state;
  t->target = std::move(target);
  t->pid_text = std::move(pid_text);
  *out = t;
  t_error.clear();
  return FW_OK;
}

fw_stop_reason reason_of(StopReason r) {
  switch (r) {
    case StopReason::kOutermost: return FW_STOP_OUTERMOST;
    case StopReason::kCannotUnwind: return FW_STOP_CANNOT_UNWIND;
    case StopReason::kCallback: return FW_STOP_CALLBACK;
    case StopReason::kMaxFrames: return FW_STOP_MAX_FRAMES;
    case StopReason::kNoUnwindInfo: return FW_STOP_NO_UNWIND_INFO;
    case StopReason::kBadMemory: return FW_STOP_BAD_MEMORY;
    case StopReason::kCfaDidNotAdvance: return FW_STOP_CFA_DID_NOT_ADVANCE;
    case StopReason::kBadUnwindInfo: return FW_STOP_BAD_UNWIND_INFO;
    case StopReason::kNoRegisters: return FW_STOP_NO_REGISTERS;
    case StopReason::kUnsupportedMachine: return FW_STOP_UNSUPPORTED_MACHINE;
  }
  return FW_STOP_BAD_UNWIND_INFO;
}

fw_end end_of(StopReason r) {
  switch (r) {
    case StopReason::kOutermost:
    case StopReason::kCannotUnwind: return FW_END_OUTERMOST;
    case StopReason::kCallback: return FW_END_CALLBACK;
    case StopReason::kMaxFrames: return FW_END_TRUNCATED;
    default: return FW_END_FAILED;
  }
}

fw_frame_source source_of(FrameSource s) {
  switch (s) {
    case FrameSource::kContext: return FW_SOURCE_CONTEXT;
    case FrameSource::kEhFrame: return FW_SOURCE_CFI;
    case FrameSource::kDebugFrame: return FW_SOURCE_DEBUG_FRAME;
    case FrameSource::kExidx: return FW_SOURCE_EXIDX;
    case FrameSource::kSframe: return FW_SOURCE_SFRAME;
    case FrameSource::kSignal: return FW_SOURCE_SIGNAL;
    case FrameSource::kFramePointer: return FW_SOURCE_FRAME_POINTER;
    case FrameSource::kPrologue: return FW_SOURCE_PROLOGUE;
    case FrameSource::kJit: return FW_SOURCE_JIT;
  }
  return FW_SOURCE_CONTEXT;
}

// A back-end's own account of a failure, when it has one.
fw_status backend_failure(fw_target* target, fw_status status, std::string* why) {
  auto* b = dynamic_cast<BackendTarget*>(target->target.get());
  if (!b || b->problem_.empty()) return status;
  *why = b->problem_;
  b->problem_.clear();
  const fw_status s = b->backend_failed_ ? FW_ERR_BACKEND : status;
  b->backend_failed_ = false;
  return s;
}

fw_status thread_failure(fw_target* target, int tid, const Error& e) {
  std::string why = thread_error_text(e);
  const fw_status s = backend_failure(target, status_of(e.code), &why);
  return fail(s, target->pid_text + ": thread " + std::to_string(tid) + ": " + why);
}

// The walk behind fw_walk and fw_backtrace. `captured`: the calling thread's
// registers (a self target), taken in the public function, whose own frame
// (the first) is not reported.
fw_status walk(fw_target* target, int tid, fw_frame_callback callback, void* arg, const fw_walk_options* options,
               fw_walk_end* end, const arch::RegisterFile* captured) {
  UnwindOptions o;
  o.max_frames = 256;
  if (options && options->struct_size >= offsetof(fw_walk_options, max_frames) + sizeof(size_t) &&
      options->max_frames)
    o.max_frames = options->max_frames;
  o.row_cache = &target->rows;
  size_t skip = 0;
  if (options && options->struct_size >= offsetof(fw_walk_options, skip_frames) + sizeof(size_t)) {
    skip = options->skip_frames;
    o.max_frames += skip;
  }
  if (target->self) {
    target->self->captured_ = captured;
    o.first_is_return_address = true;
    ++skip;
    ++o.max_frames;
  }
  size_t index = 0;
  FrameScratch scratch;
  auto result = walk_thread(*target->target, tid, [&](const Frame& f) {
    if (skip) {
      --skip;
      return true;
    }
    scratch.sources_of = nullptr;
    fw_frame frame{&f, index++, &scratch, target};
    return callback(&frame, arg) == FW_CONTINUE;
  }, o);
  if (target->self) target->self->captured_ = nullptr;
  if (!result) return thread_failure(target, tid, result.error());
  if (end) {
    *end = fw_walk_end{};
    end->end = end_of(result->reason);
    end->reason = reason_of(result->reason);
    end->address = result->address;
    end->frames = index;
    const std::string text = stop_text(*result);
    std::snprintf(end->message, sizeof end->message, "%s", text.c_str());
  }
  t_error.clear();
  return FW_OK;
}

}  // namespace

extern "C" {

int fw_api_version(void) { return FRAMEWALK_API_VERSION; }

const char* fw_last_error(void) { return t_error.c_str(); }

fw_context* fw_context_new(void) { return new (std::nothrow) fw_context; }

void fw_context_free(fw_context* context) { delete context; }

fw_status fw_context_set_sysroot(fw_context* context, const char* sysroot) {
  if (!context) return fail(FW_ERR_ARGUMENT, "fw_context_set_sysroot: no context");
  return guarded([&] {
    context->state->sysroot = sysroot ? sysroot : "";
    return FW_OK;
  });
}

fw_status fw_context_add_debug_directory(fw_context* context, const char* directory) {
  if (!context || !directory || !*directory) return fail(FW_ERR_ARGUMENT, "fw_context_add_debug_directory: no context or directory");
  return guarded([&] {
    context->state->cache->add_debug_root(directory);
    return FW_OK;
  });
}

void fw_set_debuginfod(int enabled) { elf::enable_debuginfod(enabled != 0); }

fw_status fw_context_set_debuginfod(fw_context* context, int enabled) {
  if (!context) return fail(FW_ERR_ARGUMENT, "fw_context_set_debuginfod: no context");
  return guarded([&] {
    context->state->cache->set_debuginfod(enabled != 0);
    return FW_OK;
  });
}

fw_status fw_target_attach_thread(fw_context* context, int pid, int tid, fw_freeze freeze, fw_target** out) {
  if (!context || !out) return fail(FW_ERR_ARGUMENT, "fw_target_attach: no context or no place for the target");
  if (freeze < FW_FREEZE_PROCESS || freeze > FW_FREEZE_COPY)
    return fail(FW_ERR_ARGUMENT, "fw_target_attach: unknown freeze policy " + std::to_string(freeze));
  if (tid < 0) return fail(FW_ERR_ARGUMENT, "fw_target_attach: thread id " + std::to_string(tid));
  return guarded([&] {
    LiveOptions lo;
    lo.freeze = freeze == FW_FREEZE_THREAD ? FreezePolicy::kThread
                : freeze == FW_FREEZE_COPY ? FreezePolicy::kCopy
                                           : FreezePolicy::kProcess;
    lo.only_thread = tid;
    lo.load_before_stop = context->state->cache->debuginfod() && std::getenv("DEBUGINFOD_URLS");
    auto t = LiveTarget::open(pid, lo, context->state->cache);
    if (!t) return fail(status_of(t.error().code), std::to_string(pid) + ": " + thread_error_text(t.error()));
    return new_target(context, std::move(*t), std::to_string(pid), out);
  });
}

fw_status fw_target_attach(fw_context* context, int pid, fw_freeze freeze, fw_target** out) {
  return fw_target_attach_thread(context, pid, 0, freeze, out);
}

fw_status fw_target_core(fw_context* context, const char* core, const char* executable, fw_target** out) {
  if (!context || !core || !out) return fail(FW_ERR_ARGUMENT, "fw_target_core: no context, core path or place for the target");
  return guarded([&] {
    CoreOptions co;
    co.exe = executable ? executable : "";
    co.sysroot = context->state->sysroot;
    if (!co.exe.empty()) {
      if (auto exe = elf::ElfFile::open(co.exe); !exe)
        return fail(status_of(exe.error().code), co.exe + ": cannot open the executable (" +
                                                     (exe.error().code == ErrorCode::kIoError
                                                          ? std::string(std::strerror(static_cast<int>(exe.error().offset)))
                                                          : std::string(to_string(exe.error().code))) + ")");
    }
    auto c = CoreFile::open(core, co);
    if (!c) {
      const fw_status s = c.error().code == ErrorCode::kNotFound ? FW_ERR_FORMAT : status_of(c.error().code);
      return fail(s, std::string(core) + ": " + core_open_error_text(core, c.error()));
    }
    auto target = std::make_unique<CoreTarget>(std::move(*c), context->state->cache);
    return new_target(context, std::move(target), core, out);
  });
}

fw_status fw_target_snapshot(fw_context* context, const char* directory, fw_target** out) {
  if (!context || !directory || !out) return fail(FW_ERR_ARGUMENT, "fw_target_snapshot: no context, directory or place for the target");
  return guarded([&] {
    std::string problem;
    auto data = read_snapshot(directory, &problem);
    if (!data) return fail(data.error().code == ErrorCode::kIoError ? FW_ERR_IO : FW_ERR_FORMAT, problem);
    auto target = std::make_unique<SnapshotTarget>(std::move(*data), context->state->cache, context->state->sysroot);
    return new_target(context, std::move(target), directory, out);
  });
}

fw_status fw_target_self(fw_context* context, fw_target** out) {
  if (!context || !out) return fail(FW_ERR_ARGUMENT, "fw_target_self: no context or no place for the target");
  return guarded([&] {
    auto target = std::make_unique<SelfTarget>(context->state->cache);
    SelfTarget* self = target.get();
    const fw_status s = new_target(context, std::move(target), std::to_string(getpid()), out);
    if (s == FW_OK) (*out)->self = self;
    return s;
  });
}

fw_status fw_target_backend(fw_context* context, const fw_backend* backend, void* arg, fw_target** out) {
  if (!context || !backend || !out) return fail(FW_ERR_ARGUMENT, "fw_target_backend: no context, back-end or place for the target");
  if (backend->struct_size < offsetof(fw_backend, report_mappings) + sizeof backend->report_mappings)
    return fail(FW_ERR_ARGUMENT, "fw_target_backend: struct_size " + std::to_string(backend->struct_size) +
                                     " is smaller than this library's fw_backend");
  if (!backend->next_thread || !backend->set_initial_registers || !backend->memory_read)
    return fail(FW_ERR_ARGUMENT, "fw_target_backend: next_thread, set_initial_registers and memory_read are required");
  if (!arch::machine_for(usual_machine_key(static_cast<uint16_t>(backend->machine))))
    return fail(FW_ERR_UNSUPPORTED, "fw_target_backend: machine " + std::to_string(backend->machine) +
                                        " is not one framewalk unwinds (" + arch::supported_machine_names() + ")");
  return guarded([&] {
    auto target = std::make_unique<BackendTarget>(*backend, arg, context->state->cache);
    return new_target(context, std::move(target),
                      backend->pid > 0 ? "back-end of process " + std::to_string(backend->pid) : "user back-end", out);
  });
}

fw_status fw_thread_state_set_registers(fw_thread_state* state, unsigned first_register, unsigned count,
                                        const uint64_t* values) {
  if (!state || !state->target || !state->target->filling_)
    return fail(FW_ERR_STATE, "fw_thread_state_set_registers: called outside set_initial_registers");
  if (count && !values) return fail(FW_ERR_ARGUMENT, "fw_thread_state_set_registers: no values");
  BackendTarget& t = *state->target;
  for (unsigned i = 0; i < count; ++i) {
    const uint64_t reg = uint64_t{first_register} + i;
    if (reg > 0xffff || !t.filling_->set(static_cast<unsigned>(reg), values[i])) {
      t.register_problem_ = "register " + std::to_string(reg) + ": more registers than the register file holds";
      return fail(FW_ERR_ARGUMENT, t.register_problem_);
    }
  }
  return FW_OK;
}

fw_status fw_mappings_add(fw_mappings* mappings, uint64_t start, uint64_t end, uint64_t file_offset, const char* path) {
  if (!mappings || !mappings->out) return fail(FW_ERR_STATE, "fw_mappings_add: called outside report_mappings");
  if (!path || end <= start) return fail(FW_ERR_ARGUMENT, "fw_mappings_add: no path, or an empty range");
  return guarded([&] {
    MapEntry e;
    e.start = start;
    e.end = end;
    e.offset = file_offset;
    e.perms = "r-xp";
    e.path = path;
    mappings->out->push_back(std::move(e));
    return FW_OK;
  });
}

fw_status fw_target_detach(fw_target* target) {
  if (!target) return fail(FW_ERR_ARGUMENT, "fw_target_detach: no target");
  return guarded([&] {
    target->target->detach();
    return FW_OK;
  });
}

void fw_target_free(fw_target* target) {
  if (!target) return;
  try {
    target->target->detach();
  } catch (...) {
  }
  delete target;
}

int fw_target_pid(const fw_target* target) { return target ? target->target->pid() : 0; }

int fw_target_machine(const fw_target* target) { return target ? target->target->machine().elf_machine : 0; }

const char* fw_target_warning(const fw_target* target, size_t i) {
  if (!target) return nullptr;
  const auto& w = target->target->warnings();
  return i < w.size() ? w[i].c_str() : nullptr;
}

void fw_release_held_threads(void) { release_held_threads(); }

fw_status fw_next_thread(fw_target* target, int after_tid, int* tid) {
  if (!target || !tid) return fail(FW_ERR_ARGUMENT, "fw_next_thread: no target or no place for the thread");
  return guarded([&] {
    auto next = target->target->next_thread(after_tid);
    if (!next) {
      std::string why = thread_error_text(next.error());
      fw_status s = next.error().code == ErrorCode::kNotFound ? FW_ERR_ARGUMENT : status_of(next.error().code);
      if (next.error().code == ErrorCode::kNotFound)
        why = "thread " + std::to_string(after_tid) + " is not one of the target's";
      s = backend_failure(target, s, &why);
      return fail(s, target->pid_text + ": " + why);
    }
    *tid = *next;
    t_error.clear();
    return FW_OK;
  });
}

const char* fw_thread_name(fw_target* target, int tid) {
  if (!target) return "";
  try {
    target->name = target->target->thread_name(tid);
  } catch (...) {
    target->name.clear();
  }
  return target->name.c_str();
}

__attribute__((noinline)) fw_status fw_walk(fw_target* target, int tid, fw_frame_callback callback, void* arg,
                                             const fw_walk_options* options, fw_walk_end* end) {
  if (!target || !callback) return fail(FW_ERR_ARGUMENT, "fw_walk: no target or no callback");
  arch::RegisterFile regs;
  if (target->self) {
    uint64_t raw[arch::kCaptureWords];
    arch::framewalk_capture(raw);
    regs = arch::from_host_capture(raw);
  }
  const fw_status s = guarded([&] { return walk(target, tid, callback, arg, options, end, &regs); });
  asm volatile("" ::: "memory");  // this frame stays until the walk is over
  return s;
}

__attribute__((noinline)) fw_status fw_backtrace(fw_target* target, int tid, fw_frame_info* frames, size_t max,
                                                  size_t* count, fw_walk_end* end) {
  if (!target || (!frames && max) || !count) return fail(FW_ERR_ARGUMENT, "fw_backtrace: no target, array or count");
  arch::RegisterFile regs;
  if (target->self) {
    uint64_t raw[arch::kCaptureWords];
    arch::framewalk_capture(raw);
    regs = arch::from_host_capture(raw);
  }
  struct Fill {
    fw_frame_info* frames;
    size_t max, n;
  } fill{frames, max, 0};
  fw_walk_options o{sizeof o, max ? max : 1, 0};
  const fw_status s = guarded([&] {
    return walk(
        target, tid,
        [](const fw_frame* f, void* a) {
          auto* fill = static_cast<Fill*>(a);
          if (fill->n == fill->max) return FW_STOP;
          fw_frame_get_info(f, &fill->frames[fill->n++]);
          return FW_CONTINUE;
        },
        &fill, &o, end, &regs);
  });
  asm volatile("" ::: "memory");
  *count = fill.n;
  return s;
}

size_t fw_frame_index(const fw_frame* frame) { return frame ? frame->index : 0; }
uint64_t fw_frame_pc(const fw_frame* frame) { return frame ? frame->frame->pc : 0; }
uint64_t fw_frame_sp(const fw_frame* frame) { return frame ? frame->frame->sp : 0; }
int fw_frame_is_activation(const fw_frame* frame) { return frame && frame->frame->activation ? 1 : 0; }
fw_frame_source fw_frame_get_source(const fw_frame* frame) {
  return frame ? source_of(frame->frame->source) : FW_SOURCE_CONTEXT;
}

const char* fw_frame_source_name(fw_frame_source source) {
  switch (source) {
    case FW_SOURCE_CONTEXT: return to_string(FrameSource::kContext);
    case FW_SOURCE_CFI: return to_string(FrameSource::kEhFrame);
    case FW_SOURCE_DEBUG_FRAME: return to_string(FrameSource::kDebugFrame);
    case FW_SOURCE_EXIDX: return to_string(FrameSource::kExidx);
    case FW_SOURCE_SFRAME: return to_string(FrameSource::kSframe);
    case FW_SOURCE_SIGNAL: return to_string(FrameSource::kSignal);
    case FW_SOURCE_FRAME_POINTER: return to_string(FrameSource::kFramePointer);
    case FW_SOURCE_PROLOGUE: return to_string(FrameSource::kPrologue);
    case FW_SOURCE_JIT: return to_string(FrameSource::kJit);
  }
  return "?";
}

void fw_frame_get_info(const fw_frame* frame, fw_frame_info* out) {
  if (!frame || !out) return;
  const Frame& f = *frame->frame;
  *out = fw_frame_info{};
  out->pc = f.pc;
  out->sp = f.sp;
  out->activation = f.activation ? 1 : 0;
  out->source = source_of(f.source);
  if (f.module) {
    out->module_id = f.module->id;
    out->module_offset = f.pc - f.module->bias;
  }
}

int fw_frame_register(const fw_frame* frame, unsigned dwarf_register, uint64_t* value) {
  if (!frame || !frame->frame->registers) return 0;
  auto v = frame->frame->registers->get(dwarf_register);
  if (!v) return 0;
  if (value) *value = *v;
  return 1;
}

size_t fw_frame_registers(const fw_frame* frame, unsigned* numbers, uint64_t* values, size_t max) {
  if (!frame || !frame->frame->registers) return 0;
  const arch::RegisterFile& r = *frame->frame->registers;
  std::vector<unsigned> known;
  for (unsigned reg = 0; reg < arch::RegisterFile::kMaxRegisters; ++reg)
    if (r.known(reg)) known.push_back(reg);
  std::vector<unsigned> high;
  for (unsigned i = 0; i < r.high_count(); ++i) high.push_back(r.high_number(i));
  std::sort(high.begin(), high.end());
  known.insert(known.end(), high.begin(), high.end());
  for (size_t i = 0; i < known.size() && i < max; ++i) {
    if (numbers) numbers[i] = known[i];
    if (values) values[i] = *r.get(known[i]);
  }
  return known.size();
}

int fw_frame_module(const fw_frame* frame, fw_module_info* out) {
  if (!frame || !out || !frame->frame->module) return 0;
  const Module& m = *frame->frame->module;
  FrameScratch& s = *frame->scratch;
  try {
    s.path = m.name;
    s.build_id.clear();
    if (m.data)
      if (auto id = m.data->elf().build_id()) s.build_id = hex_bytes(*id);
  } catch (...) {
    return 0;
  }
  out->id = m.id;
  out->path = s.path.c_str();
  out->build_id = s.build_id.c_str();
  out->start = m.start;
  out->end = m.end;
  out->bias = m.bias;
  return 1;
}

namespace {

// The names of jit code in the target's process: its perf map and jitdump,
// read at the first frame that needs them, the map read again for a frame
// it does not name yet.
const symbol::PerfMap* jit_names(fw_target& t, const Frame& frame) {
  if (!t.jit_names) {
    const JitdumpFile* jitdump = nullptr;
    std::string map_path;
    if (auto* live = dynamic_cast<LiveTarget*>(t.target.get())) {
      map_path = symbol::PerfMap::path_of(static_cast<uint32_t>(live->pid()));
      jitdump = live->jitdump();
    } else if (auto* core = dynamic_cast<CoreTarget*>(t.target.get())) {
      jitdump = core->jitdump();
    } else if (t.self) {
      map_path = symbol::PerfMap::path_of(static_cast<uint32_t>(getpid()));
    } else if (auto* snapshot = dynamic_cast<SnapshotTarget*>(t.target.get())) {
      struct stat st {};
      if (!snapshot->directory().empty() && ::stat(snapshot_perf_map(snapshot->directory()).c_str(), &st) == 0)
        map_path = snapshot_perf_map(snapshot->directory());
    }
    t.jit_names = std::make_unique<symbol::PerfMap>(map_path);
    if (!map_path.empty()) (void)t.jit_names->refresh();
    if (jitdump) t.jit_names->add_jitdump(jitdump->dump);
  } else if (!t.jit_names->path().empty() && !t.jit_names->find(frame.symbol_pc)) {
    (void)t.jit_names->refresh();  // lines appended since
  }
  return t.jit_names.get();
}

}  // namespace

const char* fw_frame_function(const fw_frame* frame, uint64_t* offset) {
  if (!frame) return nullptr;
  try {
    FrameSymbol s = symbolize(*frame->frame);
    const Module* m = frame->frame->module;
    if (!s.found && frame->target && (!m || m->jit))
      s = symbolize(*frame->frame, jit_names(*frame->target, *frame->frame));
    if (!s.found) return nullptr;
    frame->scratch->function = std::move(s.function);
    if (offset) *offset = s.offset;
    return frame->scratch->function.c_str();
  } catch (...) {
    return nullptr;
  }
}

size_t fw_frame_source_locations(const fw_frame* frame, fw_source_location* out, size_t max) {
  if (!frame) return 0;
  FrameScratch& scratch = *frame->scratch;
  try {
    if (scratch.sources_of != frame->frame) {
      scratch.sources = source_frames(*frame->frame, true);
      // Code without line information (jit code): a jitdump's DEBUG_INFO lines.
      if (frame->target && scratch.sources.size() == 1 && scratch.sources[0].file.empty())
        scratch.sources = source_frames(*frame->frame, true, jit_names(*frame->target, *frame->frame));
      scratch.sources_of = frame->frame;
    }
  } catch (...) {
    return 0;
  }
  const auto& s = scratch.sources;
  for (size_t i = 0; i < s.size() && i < max && out; ++i) {
    out[i].function = s[i].function.empty() ? nullptr : s[i].function.c_str();
    out[i].file = s[i].file.empty() ? nullptr : s[i].file.c_str();
    out[i].line = s[i].line;
    out[i].column = s[i].column;
    out[i].inlined = s[i].inlined ? 1 : 0;
  }
  return s.size();
}

}  // extern "C"

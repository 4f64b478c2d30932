#include "target/core_target.hpp"

#include <cstring>

#include "arch/machine.hpp"
#include "base/text.hpp"
#include "target/gdb_jit.hpp"
#include "target/libgcc_frames.hpp"
#include "target/jitdump_modules.hpp"

namespace framewalk {

namespace {

// A core of a machine framewalk does not unwind: which machine it is.
std::string foreign_core_text(const std::string& path, const Error& e) {
  std::string machine = "e_machine " + std::to_string(e.offset);
  if (auto f = elf::ElfFile::open(path)) machine = machine_name((*f)->machine_key());
  return "a core file of " + machine + ": framewalk cannot unwind " + machine + " yet (it unwinds " +
         arch::supported_machine_names() + ")";
}

}  // namespace

std::string core_open_error_text(const std::string& path, const Error& e) {
  if (e.code == ErrorCode::kIoError) return std::strerror(static_cast<int>(e.offset));
  if (e.code == ErrorCode::kUnsupportedElf || e.code == ErrorCode::kBadElf) return "not a core file";
  if (e.code == ErrorCode::kUnsupportedMachine) return foreign_core_text(path, e);
  if (e.code == ErrorCode::kNotFound) return "no threads (NT_PRSTATUS) in the core";
  return std::string(to_string(e.code)) + " at offset " + hex(e.offset);
}

Result<std::unique_ptr<CoreTarget>> CoreTarget::open(const std::string& path, const CoreOptions& options,
                                                     std::shared_ptr<ModuleCache> cache) {
  FW_TRY(auto core, CoreFile::open(path, options));
  return std::make_unique<CoreTarget>(std::move(core), std::move(cache));
}

CoreTarget::CoreTarget(std::unique_ptr<CoreFile> core, std::shared_ptr<ModuleCache> cache)
    : core_(std::move(core)), cache_(cache ? std::move(cache) : std::make_shared<ModuleCache>()),
      memory_(core_->memory()) {
  // The modules are read now, so that their problems are known before any walk.
  modules();
}

const ModuleMap& CoreTarget::modules() {
  if (!modules_built_) {
    modules_ = core_->modules(*cache_, &warnings_);
    if (const arch::Machine* machine = arch::machine_for(core_->machine())) {
      add_gdb_jit_modules(modules_, memory_, *machine, *cache_, &warnings_);
      add_libgcc_frame_modules(modules_, memory_, *machine, &warnings_);
    }
    // The jitdump the process wrote: the one given, else the one NT_FILE
    // lists (its marker), where it is here.
    std::string path = core_->options().jitdump;
    for (const CoreMapping& m : core_->mappings()) {
      if (!path.empty()) break;
      if (is_jitdump_of(m.path, core_->pid()))
        path = m.host_path.empty() ? core_->options().sysroot + m.path : m.host_path;
    }
    if (!path.empty()) {
      jitdump_ = load_jitdump(path, &warnings_);
      if (jitdump_) add_jitdump_modules(modules_, *jitdump_);
    }
    modules_built_ = true;
  }
  return modules_;
}

Result<pid_t> CoreTarget::next_thread(pid_t after) {
  const auto& threads = core_->threads();
  size_t i = 0;
  if (after && last_ < threads.size() && threads[last_].tid == after) {
    i = last_ + 1;  // in order, also where a core lists a thread id twice
  } else if (after) {
    while (i < threads.size() && threads[i].tid != after) ++i;
    if (i == threads.size()) return Error{ErrorCode::kNotFound, static_cast<uint64_t>(after)};
    ++i;
  }
  last_ = i;
  return i < threads.size() ? threads[i].tid : 0;
}

Result<void> CoreTarget::initial_registers(pid_t tid, arch::RegisterFile* out) {
  const auto& threads = core_->threads();
  if (last_ < threads.size() && threads[last_].tid == tid) {
    *out = threads[last_].registers;
    return ok();
  }
  for (const CoreThread& t : threads) {
    if (t.tid == tid) {
      *out = t.registers;
      return ok();
    }
  }
  return Error{ErrorCode::kNoSuchProcess, static_cast<uint64_t>(tid)};
}

}  // namespace framewalk

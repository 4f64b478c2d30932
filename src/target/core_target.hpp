// A core file as a Target: its threads (NT_PRSTATUS), its memory, its
// mapped files (NT_FILE, or the dynamic linker's list), read with the
// executable and sysroot the caller names. Nothing to freeze or detach.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "target/cached_memory.hpp"
#include "target/core_file.hpp"
#include "target/jitdump_modules.hpp"
#include "target/target.hpp"

namespace framewalk {

// Why CoreFile::open failed, as a sentence ("not a core file", "a core file
// of s390x: framewalk cannot unwind s390x yet (it unwinds ...)").
std::string core_open_error_text(const std::string& path, const Error& error);

class CoreTarget final : public Target {
 public:
  // Errors as CoreFile::open gives them (kIoError with errno, kBadElf,
  // kUnsupportedElf, kUnsupportedMachine with e_machine, kNotFound: no threads).
  static Result<std::unique_ptr<CoreTarget>> open(const std::string& path, const CoreOptions& options,
                                                  std::shared_ptr<ModuleCache> cache);
  // A core already parsed (tests, a core in memory).
  CoreTarget(std::unique_ptr<CoreFile> core, std::shared_ptr<ModuleCache> cache);

  MachineKey machine() const override { return core_->machine(); }
  pid_t pid() const override { return core_->pid(); }
  std::string process_name() const override { return core_->process_name(); }
  Result<pid_t> next_thread(pid_t after) override;
  Result<void> initial_registers(pid_t tid, arch::RegisterFile* out) override;
  Memory& memory() override { return memory_; }
  const ModuleMap& modules() override;
  std::optional<uint64_t> pointer_auth_mask() override { return core_->pointer_auth_mask(); }
  const std::vector<std::string>& warnings() const override { return warnings_; }

  const CoreFile& core() const { return *core_; }
  // The jitdump the process wrote (its marker in NT_FILE, the file found
  // here), or null: as LiveTarget::jitdump().
  const JitdumpFile* jitdump() const { return jitdump_.get(); }

 private:
  std::unique_ptr<CoreFile> core_;
  std::shared_ptr<ModuleCache> cache_;
  CachedMemory memory_;
  ModuleMap modules_;
  bool modules_built_ = false;
  std::vector<std::string> warnings_;
  std::unique_ptr<JitdumpFile> jitdump_;
  size_t last_ = ~size_t{0};  // the thread next_thread gave last
};

}  // namespace framewalk

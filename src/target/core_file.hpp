// The core-file back-end: threads from NT_PRSTATUS, the process from
// NT_PRPSINFO, modules from NT_FILE (and the vDSO from NT_AUXV), memory from
// the core's segments and, where a segment was not dumped, from the mapped
// files themselves.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <optional>
#include <memory>
#include <string>
#include <vector>

#include "arch/machine.hpp"
#include "arch/registers.hpp"
#include "base/memory.hpp"
#include "elf/elf_file.hpp"
#include "unwind/module.hpp"

namespace framewalk {

struct CoreThread {
  pid_t tid = 0;
  int signal = 0;  // pr_cursig
  arch::RegisterFile registers;
};

struct CoreMapping {
  uint64_t start = 0, end = 0, file_offset = 0;
  std::string path;       // as the process named it
  std::string host_path;  // the file it was found as here; empty: the sysroot + path (or the path, without a sysroot)
};

struct CoreOptions {
  std::string exe;      // the executable, when the core's path is not right
  std::string sysroot;  // prefix for every mapped file's path
  // The process's jitdump (jit-PID.dump), where NT_FILE does not list its
  // marker (qemu-user's cores have no NT_FILE) or the file is elsewhere now.
  std::string jitdump;
};

class CoreFile {
 public:
  static Result<std::unique_ptr<CoreFile>> open(const std::string& path, const CoreOptions& options);
  // A core already in memory (tests, fuzzing); `name` is for messages.
  static Result<std::unique_ptr<CoreFile>> parse(std::shared_ptr<const FileImage> image, const std::string& name,
                                                 const CoreOptions& options);

  pid_t pid() const { return pid_; }
  const std::string& process_name() const { return process_name_; }
  const std::vector<CoreThread>& threads() const { return threads_; }
  const std::vector<CoreMapping>& mappings() const { return mappings_; }
  MachineKey machine() const { return core_->machine_key(); }
  // The bits a pointer authentication code occupies in code addresses, from
  // NT_ARM_PAC_MASK; nullopt when the core has no such note.
  std::optional<uint64_t> pointer_auth_mask() const { return pointer_auth_mask_; }
  Memory& memory() { return *memory_; }
  const CoreOptions& options() const { return options_; }

  // Modules of every mapped ELF file and the vDSO. `warnings` collects
  // problems: missing files, build-id mismatches between core and files.
  ModuleMap modules(ModuleCache& cache, std::vector<std::string>* warnings);

  // Bytes of the core that the segments promise but the file lacks (a truncated core).
  uint64_t missing_bytes() const { return missing_bytes_; }

 private:
  CoreFile() = default;
  Result<void> parse_notes();
  // For a core without NT_FILE: the executable from AT_PHDR/AT_EXECFN (or
  // --exe), its libraries from the dynamic linker's r_debug/link_map list in
  // the core's memory, else the dynamic linker from AT_BASE.
  void mappings_from_link_map();
  // A file the process mapped as `path`: under the sysroot, else as named
  // (relative: beside the core), and only if of the core's machine.
  std::shared_ptr<elf::ElfFile> open_mapped_file(const std::string& path, std::string* host_path) const;

  std::shared_ptr<elf::ElfFile> core_;
  std::string name_;
  const arch::Machine* machine_ = nullptr;  // never null once parsed
  bool has_file_note_ = false;
  std::optional<uint64_t> pointer_auth_mask_;
  std::vector<std::string> link_map_warnings_;
  std::function<bool(uint64_t)> dumped_;  // whether the core itself holds an address
  CoreOptions options_;
  pid_t pid_ = 0;
  std::string process_name_;
  std::vector<CoreThread> threads_;
  std::vector<CoreMapping> mappings_;
  std::vector<std::pair<uint64_t, uint64_t>> auxv_;
  std::unique_ptr<Memory> memory_;
  uint64_t missing_bytes_ = 0;
};

}  // namespace framewalk

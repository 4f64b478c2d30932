// One perf sample as a Target: one thread, its user registers
// (PERF_SAMPLE_REGS_USER), the copy of its stack the kernel took
// (PERF_SAMPLE_STACK_USER: [sp, sp + dyn_size), nothing else; a read past it
// fails with the address) and the modules its process had mapped then, kept
// by a ModuleTracker fed with the recording's MMAP, MMAP2, COMM, FORK and
// EXIT records. Code and unwind tables come from the module files
// (CodeMemory), as the unwinder reads them anyway.
//
// Made once and pointed at each sample in turn (set_sample): no allocation
// per sample, and the modules are the tracker's own map, not a copy.
#pragma once

#include <sys/types.h>

#include <map>
#include <memory>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "arch/machine.hpp"
#include "perf/perf_data.hpp"
#include "target/jitdump_modules.hpp"
#include "target/target.hpp"

namespace framewalk {

// The executable mappings of each process of a recording, over time.
class ModuleTracker {
 public:
  struct Options {
    // Prefixed to every path (files of another machine's root).
    std::string sysroot;
    // perf's build-id cache (perf record copies the files it saw there):
    // $HOME/.debug by default; "" for none.
    std::string buildid_dir;
  };
  struct Process {
    ModuleMap modules;
    std::string comm;  // the main thread's name
    std::string jitdump;  // the jitdump it writes (its marker mapping's path), or ""
    JitdumpFeed jit;      // its code with unwind tables, as modules
    uint64_t memory_jit_time = 0;  // when read_memory_jit last read its memory
    bool memory_jit_read = false;
  };

  ModuleTracker(std::shared_ptr<ModuleCache> cache, Options options);

  // The build-ids HEADER_BUILD_ID gives, by path (a mapping's own build-id,
  // MMAP2 with the build-id, comes first).
  void set_build_ids(const std::vector<perf::BuildIdEntry>& entries);
  // The kernel release the recording was made on (HEADER_OSRELEASE): a
  // [vdso] without a recorded build-id is this machine's own when the
  // release is this machine's.
  void set_recorded_kernel(const std::string& osrelease) { recorded_kernel_ = osrelease; }

  // Records, in time order. `misc` is the record header's. A COMM of an
  // exec empties the process's map (the new program's mappings follow).
  void on_mmap(const perf::Mmap& mmap, uint16_t misc);
  void on_comm(const perf::Comm& comm);
  void on_fork(const perf::Task& task);
  void on_exit(const perf::Task& task);

  // The process (created empty when unknown: samples of a process whose
  // maps were not recorded still get their registers' first frame).
  Process& process(uint32_t pid);
  // Brings the process's jitdump code with unwind tables (JitdumpFeed) to
  // a sample's `time` (JitdumpFeed::kAnyTime: the samples' clock is not
  // the jitdump's).
  void advance_jitdump(Process& process, uint64_t time) {
    if (!process.jitdump.empty()) process.jit.advance(process.modules, process.jitdump, time, &warnings_);
  }
  // For a process running on this machine now (a live recording): the
  // code its memory describes, GDB JIT objects and the tables registered
  // with libgcc (target/gdb_jit.hpp, target/libgcc_frames.hpp), added to its
  // modules (those already there are kept). Reads the memory at most once
  // every kMemoryJitInterval of sample time; a process whose memory cannot
  // be read is said once. Returns how many modules were added.
  static constexpr uint64_t kMemoryJitInterval = 100'000'000;  // ns
  size_t read_memory_jit(Process& process, uint32_t pid, uint64_t time);
  // A thread's name: its own COMM, else its process's.
  const std::string& thread_name(uint32_t pid, uint32_t tid);
  // Files that could not be read or did not match their build-id, once each.
  const std::vector<std::string>& warnings() const { return warnings_; }
  size_t processes() const { return processes_.size(); }

 private:
  Result<std::shared_ptr<const ModuleData>> open(const perf::Mmap& mmap, const std::string& name, std::string* problem);
  void warn_once(const std::string& key, const std::string& text);

  std::shared_ptr<ModuleCache> cache_;
  Options options_;
  std::map<std::string, std::vector<uint8_t>> build_ids_;  // path -> build-id
  std::unordered_map<uint32_t, std::unique_ptr<Process>> processes_;
  std::unordered_map<uint32_t, std::string> thread_names_;
  std::set<std::string> warned_;
  std::vector<std::string> warnings_;
  std::string recorded_kernel_;
  std::shared_ptr<const ModuleData> own_vdso_;
  bool own_vdso_tried_ = false;
};

// The ELF e_machine of a perf.data's HEADER_ARCH ("x86_64", "aarch64", ...);
// 0 when unknown.
uint16_t machine_of_perf_arch(const std::string& arch);

class SampleTarget final : public Target {
 public:
  explicit SampleTarget(uint16_t elf_machine);

  // Points the target at one sample (its registers and stack copy, which
  // must stay valid while it is walked) of a process with `modules`.
  void set_sample(const perf::Sample& sample, const ModuleMap* modules);

  // The machine of the sample set: the recording's, or the 32-bit one of
  // a 32-bit task's sample (arch::compat_machine).
  MachineKey machine() const override;
  pid_t pid() const override { return static_cast<pid_t>(pid_); }
  Result<pid_t> next_thread(pid_t after) override { return after == 0 ? static_cast<pid_t>(tid_) : 0; }
  // kNoRegisters when the sample has none (no REGS_USER, or a kernel thread's).
  Result<void> initial_registers(pid_t tid, arch::RegisterFile* out) override;
  Memory& memory() override { return stack_; }
  const ModuleMap& modules() override { return modules_ ? *modules_ : empty_; }

 private:
  uint16_t machine_;
  const arch::Machine* descriptor_;  // the recording's machine
  const arch::Machine* compat_;      // its 32-bit tasks'
  const arch::Machine* current_;     // the sample's
  uint32_t pid_ = 0, tid_ = 0;
  const perf::Sample* sample_ = nullptr;
  const ModuleMap* modules_ = nullptr;
  ModuleMap empty_;
  BufferMemory stack_{Bytes(), 0};
};

}  // namespace framewalk

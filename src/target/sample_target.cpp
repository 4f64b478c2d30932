#include "target/sample_target.hpp"

#include <signal.h>
#include <sys/auxv.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "arch/machine.hpp"
#include "base/text.hpp"
#include "elf/debug_file.hpp"
#include "elf/elf_file.hpp"
#include "target/gdb_jit.hpp"
#include "target/libgcc_frames.hpp"
#include "target/proc_maps.hpp"
#include "target/ptrace_target.hpp"

namespace framewalk {

namespace {

bool ends_with(const std::string& s, const std::string& tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

}  // namespace

uint16_t machine_of_perf_arch(const std::string& arch) {
  if (arch == "x86_64" || arch == "amd64") return elf::kEmX86_64;
  if (arch == "aarch64" || arch == "arm64") return elf::kEmAarch64;
  if (arch.rfind("arm", 0) == 0) return elf::kEmArm;
  return 0;
}

ModuleTracker::ModuleTracker(std::shared_ptr<ModuleCache> cache, Options options)
    : cache_(cache ? std::move(cache) : std::make_shared<ModuleCache>()), options_(std::move(options)) {}

void ModuleTracker::set_build_ids(const std::vector<perf::BuildIdEntry>& entries) {
  for (const perf::BuildIdEntry& e : entries)
    if (!e.build_id.empty()) build_ids_[e.filename] = e.build_id;
}

void ModuleTracker::warn_once(const std::string& key, const std::string& text) {
  if (warned_.insert(key).second) warnings_.push_back(text);
}

ModuleTracker::Process& ModuleTracker::process(uint32_t pid) {
  auto& p = processes_[pid];
  if (!p) p = std::make_unique<Process>();
  return *p;
}

const std::string& ModuleTracker::thread_name(uint32_t pid, uint32_t tid) {
  if (auto it = thread_names_.find(tid); it != thread_names_.end()) return it->second;
  return process(pid).comm;
}

void ModuleTracker::on_comm(const perf::Comm& comm) {
  thread_names_[comm.tid] = std::string(comm.comm);
  if (comm.pid == comm.tid) process(comm.pid).comm = std::string(comm.comm);
  // An exec names the task before the new program's mappings come: the old
  // program's are gone (a fork's copy of its parent's, above all).
  if (comm.exec) {
    Process& p = process(comm.pid);
    p.modules.remove_range(0, ~uint64_t{0});
    p.jitdump.clear();
    p.jit = JitdumpFeed();
  }
}

void ModuleTracker::on_fork(const perf::Task& task) {
  if (task.pid != task.ppid) {
    // A new process: it starts with its parent's mappings (the same modules,
    // which stay valid in either when the other maps over them).
    Process& child = process(task.pid);
    auto parent = processes_.find(task.ppid);
    if (parent != processes_.end() && parent->second.get() != &child) {
      child.modules = parent->second->modules;
      child.comm = parent->second->comm;
    }
  }
  if (auto name = thread_names_.find(task.ptid); name != thread_names_.end() && task.tid != task.ptid)
    thread_names_[task.tid] = name->second;
}

void ModuleTracker::on_exit(const perf::Task& task) {
  // Samples of a process come before its exit; its modules are kept (a
  // sample reordered past the EXIT would lose them otherwise), its threads'
  // names forgotten with their ids, which the kernel reuses.
  (void)task;
}

Result<std::shared_ptr<const ModuleData>> ModuleTracker::open(const perf::Mmap& m, const std::string& name,
                                                             std::string* problem) {
  std::vector<uint8_t> wanted;
  if (m.has_build_id) {
    wanted.assign(m.build_id, m.build_id + m.build_id_size);
  } else if (auto it = build_ids_.find(name); it != build_ids_.end()) {
    wanted = it->second;
  }
  const std::string wanted_hex = wanted.empty() ? std::string() : elf::build_id_hex(wanted);
  auto matches = [&](const ModuleData& d) {
    if (wanted.empty()) return true;
    auto id = d.elf().build_id();
    return id && *id == wanted;
  };
  std::string identity = name + ":" + (wanted.empty() ? std::to_string(m.major) + ":" + std::to_string(m.minor) + ":" +
                                                            std::to_string(m.inode)
                                                      : wanted_hex);
  if (name == "[vdso]") {
    // The vDSO of this machine's kernel, when it is the one recorded (the
    // same build-id; a recording made here, since the last boot).
    if (!own_vdso_tried_) {
      own_vdso_tried_ = true;
      const uint64_t start = getauxval(AT_SYSINFO_EHDR);
      for (const MapEntry& e : read_proc_maps(getpid())) {
        if (e.path != "[vdso]" || e.start != start) continue;
        std::vector<uint8_t> bytes(reinterpret_cast<const uint8_t*>(start),
                                   reinterpret_cast<const uint8_t*>(start) + (e.end - e.start));
        if (auto d = cache_->from_bytes(std::move(bytes), "[vdso]", "[vdso]:self")) own_vdso_ = *d;
      }
    }
    if (own_vdso_ && !wanted.empty() && matches(*own_vdso_)) return own_vdso_;
    struct utsname u {};
    if (own_vdso_ && wanted.empty() && !recorded_kernel_.empty() && uname(&u) == 0 && recorded_kernel_ == u.release)
      return own_vdso_;
  } else {
    const std::string path = options_.sysroot + name;
    auto data = cache_->get(path, name, identity);
    if (data && matches(**data)) return data;
    if (!data) *problem = std::string("cannot read it: ") + (data.error().code == ErrorCode::kIoError
                                                                 ? std::strerror(static_cast<int>(data.error().offset))
                                                                 : to_string(data.error().code));
    else *problem = "its build-id is not the recorded one (" + wanted_hex + "): the file changed since the recording";
  }
  // perf's build-id cache: DIR/.build-id/ab/cdef.../elf (perf record copies the files there).
  if (!wanted.empty() && !options_.buildid_dir.empty()) {
    const std::string cached = options_.buildid_dir + "/.build-id/" + wanted_hex.substr(0, 2) + "/" +
                               wanted_hex.substr(2) + "/" + (name == "[vdso]" ? "vdso" : "elf");
    struct stat st {};
    if (::stat(cached.c_str(), &st) == 0) {
      auto data = cache_->get(cached, name, identity);
      if (data && matches(**data)) return data;
    }
  }
  if (problem->empty()) *problem = name == "[vdso]" ? "not this machine's vDSO, and not in perf's build-id cache"
                                                    : "not found";
  return Error{ErrorCode::kNotFound, 0};
}

void ModuleTracker::on_mmap(const perf::Mmap& m, uint16_t misc) {
  const uint16_t mode = misc & perf::misc::kCpuModeMask;
  if (mode == perf::misc::kKernel || mode == perf::misc::kGuestKernel || m.pid == static_cast<uint32_t>(-1)) return;
  if (m.length == 0 || m.address + m.length < m.address) return;
  Process& p = process(m.pid);
  // A mapping over old ones replaces them (their modules go, with their ids).
  p.modules.remove_range(m.address, m.address + m.length);
  if (!m.executable) return;
  std::string name(m.filename);
  if (is_jitdump_marker(name)) {
    // perf's convention: the runtime maps the jitdump it writes.
    if (ends_with(name, " (deleted)")) name.resize(name.size() - 10);
    if (ends_with(name, "/jit-" + std::to_string(m.pid) + ".dump")) p.jitdump = name;
    return;
  }
  // Anonymous code (a JIT's; V8's code space is "//anon" to perf) and
  // in-memory files (memfd_create): nothing to read them from.
  if (is_anonymous_mapping(name)) {
    p.modules.add(jit_module(m.address, m.address + m.length, name));
    return;
  }
  const bool is_file = !name.empty() && name[0] == '/';
  if (!is_file && name != "[vdso]") return;
  if (ends_with(name, " (deleted)")) name.resize(name.size() - 10);
  Module module;
  module.start = m.address;
  module.end = m.address + m.length;
  module.name = name;
  std::string problem;
  auto data = open(m, name, &problem);
  if (data) {
    module.data = *data;
    auto bias = load_bias(*module.data, m.address, m.pgoff);
    module.bias = bias ? *bias : m.address - m.pgoff;
  } else {
    module.problem = problem;
    module.bias = m.address - m.pgoff;
    warn_once(name, name + ": " + problem + ": its frames are not unwound");
  }
  p.modules.add(std::move(module));
}

size_t ModuleTracker::read_memory_jit(Process& p, uint32_t pid, uint64_t time) {
  if (p.memory_jit_read && time - p.memory_jit_time < kMemoryJitInterval) return 0;
  p.memory_jit_read = true;
  p.memory_jit_time = time;
  // Samples taken before the process ended are unwound after it too: there
  // is no memory left to read then, and nothing to say of it.
  if (pid == 0 || static_cast<pid_t>(pid) < 0) return 0;  // the kernel's, no process
  if (::kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH) return 0;
  ProcessMemory memory(static_cast<pid_t>(pid));
  std::vector<std::string> problems;
  const arch::Machine& machine = arch::host_machine();
  const size_t added = add_gdb_jit_modules(p.modules, memory, machine, *cache_, &problems) +
                       add_libgcc_frame_modules(p.modules, memory, machine, &problems);
  for (const std::string& problem : problems) warn_once(problem, problem);
  return added;
}

SampleTarget::SampleTarget(uint16_t elf_machine)
    : machine_(elf_machine), descriptor_(arch::machine_for(usual_machine_key(elf_machine))),
      compat_(descriptor_ ? arch::compat_machine(*descriptor_) : nullptr), current_(descriptor_) {}

MachineKey SampleTarget::machine() const { return current_ ? current_->key() : usual_machine_key(machine_); }

void SampleTarget::set_sample(const perf::Sample& sample, const ModuleMap* modules) {
  sample_ = &sample;
  pid_ = sample.pid;
  tid_ = sample.tid;
  modules_ = modules;
  // PERF_SAMPLE_REGS_ABI_32 in a recording of a 64-bit machine: a 32-bit
  // task (an i386 program on x86-64, an AArch32 one on AArch64), unwound as
  // its own machine.
  current_ = descriptor_;
  if (descriptor_ && descriptor_->address_size() == 8 && sample.regs_user_abi == 1) current_ = compat_;
  uint64_t sp = 0;
  if (current_ && sample.regs_user_abi != 0) {
    const arch::RegisterFile regs = current_->registers_from_perf_sample(
        sample.regs_user_mask, std::span<const uint64_t>(sample.regs_user, sample.regs_user_count));
    sp = regs.value_or(current_->stack_pointer(), 0);
  }
  stack_ = BufferMemory(sample.stack(), sp);
}

Result<void> SampleTarget::initial_registers(pid_t tid, arch::RegisterFile* out) {
  if (!sample_ || static_cast<uint32_t>(tid) != tid_) return Error{ErrorCode::kNoSuchProcess, static_cast<uint64_t>(tid)};
  if (!descriptor_) return Error{ErrorCode::kUnsupportedMachine, machine_};
  // ABI 0: no user registers (a kernel thread); 1 (PERF_SAMPLE_REGS_ABI_32)
  // in a 64-bit recording: a 32-bit task, whose machine has none here.
  const uint64_t abi = sample_->regs_user_abi;
  const bool word64 = current_ && current_->address_size() == 8;
  if (abi == 0 || !current_ || (word64 && abi != 2) || (!word64 && abi != 1))
    return Error{ErrorCode::kNoRegisters, 0};
  *out = current_->registers_from_perf_sample(sample_->regs_user_mask,
                                              std::span<const uint64_t>(sample_->regs_user, sample_->regs_user_count));
  return {};
}

}  // namespace framewalk

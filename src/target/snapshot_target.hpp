// A snapshot as a Target: registers, stack bytes and mappings saved from a
// process (a crash reporter's minidump, an offline replay as libunwindstack's
// tests keep them), walked wherever the mapped files are.
//
// On disk, a directory:
//   machine     x86_64, aarch64, arm, i386, ppc64le, s390x or riscv64
//   maps        the process's /proc/PID/maps lines
//   TID.regs    one register a line: its DWARF number and its value in hex
//   TID.stack   blocks of the thread's memory, each its address and its size
//               (8 bytes each, little-endian), then its bytes
//   code        optional, blocks as in TID.stack: the code of modules that
//               have no file (the vDSO, where the kernel's signal return
//               code lives on AArch64 and ARM)
//   objects/    optional: ELF objects that were in the process's memory only
//               (the GDB JIT interface's, a jitdump's code with its tables),
//               each a file that `maps` names by its absolute path, so that
//               they are read as any mapped file (the snapshot directory is
//               then not to be moved)
//   perf.map    optional: names of jit code, perf-map lines (START SIZE NAME)
//               for the jit frames that were walked, from the process's perf
//               map and jitdump (save_jit_names)
// Threads in the order of their ids. Optional: `pid` (the process's id) and
// `name` (its name).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "symbol/perf_map.hpp"
#include "target/proc_maps.hpp"
#include "target/target.hpp"

namespace framewalk {

struct SnapshotData {
  MachineKey machine{0};
  pid_t pid = 0;
  std::string name;
  std::vector<MapEntry> maps;
  struct Block {
    uint64_t address = 0;
    std::vector<uint8_t> bytes;
  };
  struct Thread {
    pid_t tid = 0;
    arch::RegisterFile registers;
    std::vector<Block> stack;
  };
  std::vector<Thread> threads;
  std::vector<Block> code;  // modules without a file: the vDSO
  // Objects in memory only, saved as files: `file` is the name under
  // objects/, and the maps entry whose path is `file` gets the saved
  // file's absolute path when written.
  struct Object {
    std::string file;
    std::vector<uint8_t> bytes;
  };
  std::vector<Object> objects;
  // Where read_snapshot read it from ("" otherwise): maps entries under its
  // objects/ are opened there, never under a sysroot.
  std::string directory;
};

// Reads a snapshot directory. On failure, `problem` says which file and
// where ("DIR/17.regs: line 3: ...").
Result<SnapshotData> read_snapshot(const std::string& directory, std::string* problem);
// Writes one (tests, and a program that saves its own state).
Result<void> write_snapshot(const SnapshotData& data, const std::string& directory);

// What a walk of every thread of `target` needs, saved: each thread's
// registers, up to `max_stack` bytes of its stack from 128 below its stack
// pointer, every other page of memory its walk reads (the stack below a
// signal frame on an alternate stack), and one mapping per module, naming
// the file as it was opened here (under a sysroot, or the executable given
// for a core), so that the snapshot is walked without them; the vDSO's code
// is saved (up to 1 MiB), as it has no file, and so are objects in memory
// only (GDB JIT objects, a jitdump's code with its tables). Reads the target's
// threads as a dump does; does not detach (a live target frozen as a whole
// stays frozen for a walk of the same moment).
SnapshotData snapshot_of(Target& target, size_t max_stack = 512u << 10);

// The snapshot's perf.map, which names its jit code.
std::string snapshot_perf_map(const std::string& directory);
// Writes `directory`/perf.map: a "START SIZE NAME" line for each of `names`
// (the ranges that named the jit frames of a walk; repeated ones once).
Result<void> save_jit_names(const std::string& directory, std::vector<symbol::PerfMap::Entry> names);

class SnapshotTarget final : public Target {
 public:
  SnapshotTarget(SnapshotData data, std::shared_ptr<ModuleCache> cache, std::string sysroot = "");

  MachineKey machine() const override { return data_.machine; }
  pid_t pid() const override { return data_.pid; }
  std::string process_name() const override { return data_.name; }
  Result<pid_t> next_thread(pid_t after) override;
  Result<void> initial_registers(pid_t tid, arch::RegisterFile* out) override;
  Memory& memory() override { return memory_; }
  const ModuleMap& modules() override;
  // Where it was read from ("" for one made in memory).
  const std::string& directory() const { return data_.directory; }

 private:
  class BlockMemory final : public Memory {
   public:
    explicit BlockMemory(const SnapshotData& data) : data_(data) {}
    size_t read(uint64_t address, void* out, size_t size) override;

   private:
    const SnapshotData& data_;
  };
  SnapshotData data_;
  std::shared_ptr<ModuleCache> cache_;
  std::string sysroot_;
  BlockMemory memory_;
  ModuleMap modules_;
  bool modules_built_ = false;
};

}  // namespace framewalk

// fuzz_gdb_jit: the bytes as a process's memory at 0x10000 holding a GDB JIT
// descriptor at its start (the first byte picks the layout: 64-bit or
// 32-bit ARM), its list read as framewalk reads a live process's: the
// reading ends (a loop, a broken link, a wild pointer are problems, never a
// hang), every object read is bytes of the memory at its address, entries
// are distinct, and a second reading gives the same. The same memory is
// also read as libgcc's two lists of __register_frame tables, headed by
// its first two words: every table read is bytes of the memory, its FDEs'
// range is not empty, and the reading ends.
#include "arch/machine.hpp"
#include "base/memory.hpp"
#include "elf/elf_file.hpp"
#include "fuzz_bodies.hpp"
#include "target/gdb_jit.hpp"
#include "target/libgcc_frames.hpp"

#include <cstring>
#include <set>

namespace framewalk::fuzz {

int fuzz_gdb_jit(const uint8_t* data, size_t size) {
  if (size < 2) return 0;
  constexpr uint64_t kBase = 0x10000;
  const arch::Machine* machine = arch::machine_for(usual_machine_key((data[0] & 1) ? elf::kEmArm : elf::kEmX86_64));
  if (!machine) return 0;
  const Bytes bytes(data + 1, size - 1);
  BufferMemory memory(bytes, kBase);
  const GdbJitList list = read_gdb_jit_list(memory, kBase, *machine);
  FUZZ_CHECK(list.attempts >= 1 && list.attempts <= 3);
  FUZZ_CHECK(list.objects.size() <= kGdbJitMaxEntries);
  FUZZ_CHECK(list.problem != GdbJitProblem::kNone || list.attempts == 1);
  std::set<uint64_t> entries;
  for (const GdbJitObject& o : list.objects) {
    FUZZ_CHECK(entries.insert(o.entry).second);
    FUZZ_CHECK(o.entry >= kBase && o.entry - kBase < bytes.size());
    if (o.bytes.empty()) continue;
    FUZZ_CHECK(o.address >= kBase && o.address - kBase <= bytes.size() &&
               o.bytes.size() <= bytes.size() - (o.address - kBase));
    FUZZ_CHECK(std::memcmp(o.bytes.data(), bytes.data() + (o.address - kBase), o.bytes.size()) == 0);
  }
  const GdbJitList again = read_gdb_jit_list(memory, kBase, *machine);
  FUZZ_CHECK(again.problem == list.problem && again.problem_address == list.problem_address &&
             again.objects.size() == list.objects.size());

  const LibgccRegistry registry = read_libgcc_registry(memory, kBase, kBase + machine->address_size(), *machine);
  FUZZ_CHECK(registry.tables.size() <= kLibgccMaxTables);
  for (const LibgccTable& t : registry.tables) {
    FUZZ_CHECK(t.pc_start < t.pc_end);
    FUZZ_CHECK(t.address >= kBase && t.address - kBase <= bytes.size() &&
               t.bytes.size() <= bytes.size() - (t.address - kBase));
    FUZZ_CHECK(std::memcmp(t.bytes.data(), bytes.data() + (t.address - kBase), t.bytes.size()) == 0);
  }
  return 0;
}

}  // namespace framewalk::fuzz

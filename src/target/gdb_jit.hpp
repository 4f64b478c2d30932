// The GDB JIT interface (gdb's manual, "JIT Interface"): a runtime publishes
// the code it makes as in-memory ELF objects, in a doubly linked list headed
// by its global `__jit_debug_descriptor`:
//
//   struct jit_descriptor { uint32_t version; uint32_t action_flag;
//                           jit_code_entry* relevant_entry; jit_code_entry* first_entry; };
//   struct jit_code_entry { jit_code_entry* next_entry; jit_code_entry* prev_entry;
//                           const char* symfile_addr; uint64_t symfile_size; };
//
// (symfile_size at 3 pointers rounded up to uint64_t's alignment: 24 on
// 64-bit machines, 16 on 32-bit ARM, 12 on i386). Each object's sections
// are at their run-time addresses; its CFI and symbols describe the code
// there. LLVM's ORC and MCJIT, V8's --gdbjit, LuaJIT, wasmtime and .NET
// publish so.
//
// Android's runtime (ART) extends the descriptor after first_entry with
// the magic "Android1" or "Android2", then flags, the descriptor's and an
// entry's size (u32 each) and `action_seqlock` (u32), incremented before
// and after every change of the list; its entries add a registration
// timestamp (u64) and, with "Android2", a seqlock of their own (u32, even
// while the entry is valid). Such a list is read as ART asks: the seqlock,
// then the head, and after each entry and object the seqlock again; odd or
// changed, the reading starts over.
//
// The list is read from the target's memory (live or core) with every
// pointer checked: a list that loops, a link that does not lead back, an
// object that cannot be read or is implausibly large end the reading with
// the problem and its address, keeping the objects read before it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "arch/machine.hpp"
#include "base/memory.hpp"
#include "unwind/module.hpp"

namespace framewalk {

enum class GdbJitProblem : uint8_t {
  kNone,
  kUnreadable,  // the descriptor, an entry or an object cannot be read (at the address)
  kVersion,     // the descriptor's version is not 1 (the descriptor)
  kLoop,        // the list comes back to an entry it has passed (that entry)
  kBrokenLink,  // an entry's prev_entry is not the entry before it: the list changed (the entry)
  kTooMany,     // more than kGdbJitMaxEntries entries (the first left out)
  kTooLarge,    // an object larger than kGdbJitMaxObjectBytes (its entry)
  kChanging,    // Android's descriptor: its action_seqlock odd or changed while read (the descriptor)
};
// "cannot be read", "version is not 1", ... for messages.
const char* to_string(GdbJitProblem problem);

inline constexpr size_t kGdbJitMaxEntries = size_t{1} << 16;
inline constexpr uint64_t kGdbJitMaxObjectBytes = uint64_t{64} << 20;

struct GdbJitObject {
  uint64_t entry = 0;    // the jit_code_entry
  uint64_t address = 0;  // symfile_addr: where the ELF object is
  std::vector<uint8_t> bytes;
};

struct GdbJitList {
  std::vector<GdbJitObject> objects;  // in list order: those read before a problem
  GdbJitProblem problem = GdbJitProblem::kNone;
  uint64_t problem_address = 0;
  unsigned attempts = 0;  // readings from the head (a broken list is read again, up to 3 times)
};

// The list of the descriptor at `descriptor`, in `machine`'s layout.
GdbJitList read_gdb_jit_list(Memory& memory, uint64_t descriptor, const arch::Machine& machine);

// For every file of `modules` that defines `__jit_debug_descriptor`: the
// objects of its list, each a module over the code its executable sections
// hold (bias 0, named "[gdb-jit@0xADDRESS]"); the jit modules of the
// anonymous mappings that hold them keep only what is left around them. Objects that are no
// ELF or hold no code are left out; problems go to `warnings`, one sentence
// each, naming the file and the address. Returns how many modules were added.
size_t add_gdb_jit_modules(ModuleMap& modules, Memory& memory, const arch::Machine& machine, ModuleCache& cache,
                           std::vector<std::string>* warnings);

}  // namespace framewalk

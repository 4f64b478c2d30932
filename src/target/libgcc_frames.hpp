// What a process registered with libgcc's `__register_frame` family (LLVM's
// ORC, LuaJIT, CPython's JIT and other runtimes register the .eh_frame of
// the code they make), read from the process's memory, live or in a core.
//
// libgcc (unwind-dw2-fde.c, GCC up to 12) keeps the registrations in two
// singly linked lists of `struct object`, headed by the file-local
// variables `unseen_objects` (not searched yet) and `seen_objects` (sorted
// at the first search that reached them):
//
//   struct object { void* pc_begin; void* tbase; void* dbase;
//                   union { fde* single; fde** array; fde_vector* sort; } u;
//                   size_t s;   /* bit 0 sorted, bit 1 from_array, ... */
//                   object* next; };
//   struct fde_vector { const void* orig_data; size_t count; const fde* array[]; };
//
// Unsorted, `u` is the table (`single`: an .eh_frame up to its zero
// length word) or, from `__register_frame_table`, a null-ended array of
// tables; sorted, `u.sort->orig_data` is what `u` was. Being file-local,
// the heads are found only where a symbol table names them: a program
// linked with libgcc statically (its .symtab), or libgcc_s with its debug
// file's. GCC 13 and later keep a b-tree instead, which is not read.
//
// Every pointer is checked: a list that loops, an object or a table that
// cannot be read end the reading with the problem and its address,
// keeping what was read before it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "arch/machine.hpp"
#include "base/memory.hpp"
#include "unwind/module.hpp"

namespace framewalk {

inline constexpr size_t kLibgccMaxObjects = size_t{1} << 16;
// Tables in all (a hostile array could name one table many times over).
inline constexpr size_t kLibgccMaxTables = size_t{1} << 16;
inline constexpr uint64_t kLibgccMaxTableBytes = uint64_t{64} << 20;

// One registered table, read from memory.
struct LibgccTable {
  uint64_t object = 0;   // the struct object that registered it
  uint64_t address = 0;  // where the .eh_frame is (its pc-relative pointers are from there)
  std::vector<uint8_t> bytes;  // its records, up to (not with) the zero length word
  uint64_t pc_start = 0, pc_end = 0;  // what its FDEs cover
};

struct LibgccRegistry {
  std::vector<LibgccTable> tables;  // unseen_objects' first, then seen_objects'
  std::string problem;              // "" or what ended the reading: "loops", "cannot be read", ...
  uint64_t problem_address = 0;
};

// The tables of the lists headed at `unseen_head` and `seen_head` (the
// addresses of the two variables; 0: that list is not read), in
// `machine`'s layout.
LibgccRegistry read_libgcc_registry(Memory& memory, uint64_t unseen_head, uint64_t seen_head,
                                    const arch::Machine& machine);

// For every file of `modules` whose symbol table names libgcc's two heads:
// each table registered there that covers code no file's module holds
// becomes a module (an image of the table over its FDEs' range, bias 0,
// named "[registered@0xTABLE]"); the jit modules around it keep what is
// left. Problems go to `warnings`, one sentence each, naming the file and
// the address. Returns how many modules were added.
size_t add_libgcc_frame_modules(ModuleMap& modules, Memory& memory, const arch::Machine& machine,
                                std::vector<std::string>* warnings);

}  // namespace framewalk

// Exact per-function times for code built with -finstrument-functions,
// whose hooks gcc calls at every function's entry and at its every exit
// (also when an exception unwinds it).
//
// Each thread keeps a shadow stack of the activations it is in (function,
// call site, clock at entry, time spent in callees so far) and a table of
// its functions: calls, inclusive time (entry to exit, counted for the
// outermost activation of a recursion only, so that it is never counted
// twice) and self time (inclusive minus the callees' inclusive time, summed
// over every activation). Frames left by longjmp are dropped (their time
// goes to the function they were left in): the shared runtime interposes
// longjmp, siglongjmp and __longjmp_chk (the static one wraps them, for a
// program linked with --wrap), and the thread's next hook drops the frames
// whose stack address shows they are gone (at or below the new entry's,
// below the exit's own); without that (a static program linked without the
// option), an exit pops down to its own activation, which catches frames
// left above it. Activations deeper than kShadowDepth are not timed
// (their time is their caller's), and calls made by a signal handler that
// interrupts the runtime itself are not timed either (theirs goes to the
// function interrupted). All memory is mapped (mmap), never malloc'd; a
// table that would pass half full is replaced by one twice as large, as
// arc tables are.
//
// The side file (write_function_times), text, next to gmon.out (its name
// with ".times" appended: gmon.out.times, PREFIX.<pid>.times):
//
//   # framewalk mcount function times 2
//   # clock monotonic                  (or "thread": FRAMEWALK_MCOUNT_CLOCK=thread)
//   # address calls inclusive_ns self_ns [module]
//   0x1189 1 60213455 10071233
//   0x1119 3 30200112 30200112 /usr/lib/libexample.so.1
//   ...
//   # 2 functions of no loaded file not listed
//
// one line per function, its address the function's link-time address (as
// gprof and nm give it); a function of the main executable has four
// fields, one of a shared library a fifth, the rest of the line: the
// library's path as the loader opened it (the address is then the
// library's own link-time one). All numbers decimal but the address;
// sorted by nothing in particular. Version 1 (before libraries were
// listed) had only the four-field lines.
#pragma once

#include <cstddef>
#include <cstdint>

namespace framewalk::mcount {

struct FunctionSlot {
  uintptr_t function;  // 0: empty
  uint64_t calls;
  uint64_t inclusive_ns;
  uint64_t self_ns;
  uint64_t active;     // activations of the owning thread in progress (recursion)
};

struct FunctionTable {
  std::size_t capacity;  // a power of two
  std::size_t used;
  std::size_t limit;     // capacity / 2
  std::size_t map_bytes;
  FunctionSlot slots[1];
};

inline constexpr std::size_t kInitialFunctionCapacity = 256;

FunctionTable* function_table_create(std::size_t capacity);
void function_table_destroy(FunctionTable* table);
// Twice as large, the same entries; nullptr when no memory.
FunctionTable* function_table_grown(const FunctionTable& table);
// The function's slot, inserted (zeroed) when new; nullptr when the table
// has reached its limit (grow it and ask again).
FunctionSlot* function_table_slot(FunctionTable& table, uintptr_t function);

template <typename Fn>
void function_table_for_each(const FunctionTable& table, Fn&& fn) {
  for (std::size_t i = 0; i < table.capacity; ++i) {
    const FunctionSlot& s = table.slots[i];
    if (__atomic_load_n(&s.function, __ATOMIC_ACQUIRE) != 0) fn(s);
  }
}

struct ShadowFrame {
  uintptr_t function;
  uintptr_t call_site;
  uintptr_t stack;       // the entry hook's frame address: where on the stack the activation is
  uint64_t entered_ns;
  uint64_t callees_ns;  // inclusive time of the callees that have returned
  // -pg -mfentry with return-address patching (runtime.cpp): the address
  // the patched slot (`stack`) held, which the return goes on to; 0 for a
  // -finstrument-functions activation (nothing patched).
  uintptr_t return_address;
};

inline constexpr std::size_t kShadowDepth = 4096;

struct ShadowStack {
  std::size_t depth;  // may pass kShadowDepth: the frames above it are not kept
  int jumped;         // a longjmp left frames since the last hook (set by the interposed longjmp)
  ShadowFrame frames[kShadowDepth];
};

// The side file: false when a write failed. `bias` turns run-time into
// link-time addresses of the executable, whose functions are those in
// [text_low, text_high); any other function is listed with its library's
// path, or, in no loaded file, counted on the last line only.
bool write_function_times(int fd, const FunctionTable& merged, uintptr_t text_low, uintptr_t text_high,
                          uintptr_t bias, const char* clock_name);

}  // namespace framewalk::mcount

// Unwind tables of code made at run time, registered by the program:
// framewalk_register_frame(), and libgcc's __register_frame(), interposed
// (registered_frames.cpp forwards each call to libgcc after taking note).
// An .eh_frame sequence (CIEs and FDEs up to a zero length word, as libgcc
// takes it) or a single FDE (as LLVM's libunwind takes it). Lookups take no
// lock and allocate nothing (signal handlers, the fast path's misses);
// deregistration waits until no lookup reads the table.
#pragma once

#include <cstdint>

#include "model/unwind_row.hpp"

namespace framewalk::local {

// Whether a table is registered whose FDEs cover `lookup_pc`; its row there
// into `row`.
bool find_registered_row(uint64_t lookup_pc, UnwindRow* row);
// Whether `address` lies in the range a registered table covers.
bool in_registered_code(uint64_t address);

// Referenced from fast_unwinder.cpp, so that a program linking the static
// library gets the interposers whenever it gets framewalk_backtrace.
void keep_register_frame_hooks();

}  // namespace framewalk::local

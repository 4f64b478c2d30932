// What the runtime (runtime.cpp) offers the rest of src/mcount/.
#pragma once

#include <cstdint>

namespace framewalk::mcount {

// Gives the calling thread its state (arc table, CPU-time timer, the
// pthread key that releases both when the thread ends) unless it has one:
// what a thread's first hook call does. Not from a signal handler.
void attach_current_thread();

// The calling thread is about to longjmp: its next hook drops the
// activations of -finstrument-functions' times the jump leaves.
void note_longjmp();

// -pg -mfentry's return-address patching (FRAMEWALK_MCOUNT_FENTRY_TIMES=1):
// before an unwinder walks the calling thread's stack, every patched slot
// gets its return address back; where an exception is caught, the
// activations below `stack` (the catching function's stack pointer) end and
// the others are patched again. Nothing without patching.
void restore_return_addresses();
void repatch_live_frames(uintptr_t stack);

}  // namespace framewalk::mcount

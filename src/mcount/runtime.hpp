// What the runtime (runtime.cpp) offers the rest of src/mcount/.
#pragma once

namespace framewalk::mcount {

// Gives the calling thread its state (arc table, CPU-time timer, the
// pthread key that releases both when the thread ends) unless it has one:
// what a thread's first hook call does. Not from a signal handler.
void attach_current_thread();

// The calling thread is about to longjmp: its next hook drops the
// activations of -finstrument-functions' times the jump leaves.
void note_longjmp();

}  // namespace framewalk::mcount

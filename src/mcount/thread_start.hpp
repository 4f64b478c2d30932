// Threads that attach when they start (thread_start.cpp), whichever way
// pthread_create is interposed: by the shared runtime's own pthread_create
// (interposed.cpp), or by the static one's __wrap_pthread_create for a
// program linked with --wrap=pthread_create (wrapped_pthread_create.cpp).
#pragma once

#include <pthread.h>

namespace framewalk::mcount {

using StartRoutine = void* (*)(void*);
using CreateFn = int (*)(pthread_t*, const pthread_attr_t*, StartRoutine, void*);

// Creates the thread with `real` (the C library's pthread_create), started
// in a routine that attaches it (its state and its CPU-time timer) before
// it runs `start`.
int create_attached_thread(CreateFn real, pthread_t* thread, const pthread_attr_t* attr, StartRoutine start,
                           void* arg);

}  // namespace framewalk::mcount

// pthread_create for a program linked with the static runtime and
// -Wl,--wrap=pthread_create: the program's calls come here, and every new
// thread attaches as it starts (thread_start.hpp), as the shared runtime's
// interposed pthread_create does (interposed.cpp). A member of its own in
// the archive: linked only when --wrap=pthread_create asks for it.
#include "mcount/thread_start.hpp"

using namespace framewalk::mcount;

extern "C" {

int __real_pthread_create(pthread_t* thread, const pthread_attr_t* attr, StartRoutine start, void* arg);

__attribute__((visibility("default"))) int __wrap_pthread_create(pthread_t* thread, const pthread_attr_t* attr,
                                                                 StartRoutine start, void* arg) {
  return create_attached_thread(__real_pthread_create, thread, attr, start, arg);
}

}  // extern "C"

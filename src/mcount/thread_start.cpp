// Every thread created through the interposed pthread_create
// (thread_start.hpp) starts in start_thread below, which attaches it (its
// state and its CPU-time timer) before it runs the start routine. Without
// it a thread gets its timer at its first instrumented call, so one that
// only runs uninstrumented code (a worker in a library, a spin loop, a
// thread of a program whose hot code is built without -pg) would never be
// sampled.
//
// No allocation: the start routine and its argument travel to the new
// thread in one of kStartRecords records of the library's own memory,
// claimed with a compare-and-swap and given back by the new thread as soon
// as it has read it; the thread's state is mapped (mmap), never malloc'd,
// and reused after a thread ends. When every record is in flight (that many
// threads created and not yet started), the thread is created as it asked,
// unwrapped, and attaches at its first hook call as before.
//
// Not covered: threads the C library starts by its internal entry point
// (C11 thrd_create, SIGEV_THREAD timers and notifications) and raw clone():
// they too attach at their first hook call.
#include "mcount/thread_start.hpp"

#include "mcount/runtime.hpp"

namespace framewalk::mcount {

namespace {

struct StartRecord {
  StartRoutine start;
  void* arg;
  int used;
};

constexpr unsigned kStartRecords = 256;
StartRecord g_records[kStartRecords];

StartRecord* claim_record() {
  for (StartRecord& r : g_records) {
    int free_record = 0;
    if (__atomic_load_n(&r.used, __ATOMIC_RELAXED) == 0 &&
        __atomic_compare_exchange_n(&r.used, &free_record, 1, false, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED)) {
      return &r;
    }
  }
  return nullptr;
}

void release_record(StartRecord* r) { __atomic_store_n(&r->used, 0, __ATOMIC_RELEASE); }

void* start_thread(void* data) {
  auto* r = static_cast<StartRecord*>(data);
  const StartRoutine start = r->start;
  void* const arg = r->arg;
  release_record(r);
  attach_current_thread();
  return start(arg);
}

}  // namespace

int create_attached_thread(CreateFn real, pthread_t* thread, const pthread_attr_t* attr, StartRoutine start,
                           void* arg) {
  StartRecord* r = claim_record();
  if (r == nullptr) return real(thread, attr, start, arg);
  r->start = start;
  r->arg = arg;
  const int rc = real(thread, attr, start_thread, r);
  if (rc != 0) release_record(r);
  return rc;
}

}  // namespace framewalk::mcount

// The mcount runtime: per-thread arc tables, the hooks' C side, gmon.out at
// exit and on request. The entry stubs (src/arch/<machine>/mcount_entry.S)
// find the two PCs of a call the way gcc's call sequence of the machine
// leaves them and call framewalk_mcount_fast(from_pc, self_pc); it returns
// nonzero only for a thread's first call (no table yet), and then the stub
// saves the vector argument registers too and calls framewalk_mcount_slow,
// which may call into the C library.
//
// Hot path: on machines whose stub reads it (x86-64), the thread's first
// probe (first_probe.h): a direct-mapped array of pointers to the slots of
// the arcs the thread counted last; a hit adds the call with one
// instruction, before the stub saves a register the C side needs. Else
// (framewalk_mcount_fast): a thread-local pointer (initial-exec TLS: no
// call), the thread's recursion guard, one probe of the thread's own table,
// and the first probe's entry set to the arc's slot. No lock, no atomic read-modify-write, no allocation, no store to a
// cache line another thread writes. It is async-signal-safe: a signal
// handler that calls instrumented code while its thread is inside the
// runtime finds the guard taken and leaves its arc in a small per-thread
// queue (an atomic increment claims a slot), which the interrupted call
// adds to the table before it lets the guard go; a stub's first probe hit
// needs no guard (its one instruction cannot be split by a signal, and the
// C side adds to a count with one instruction too: host::add_count). So the guard is per thread
// and loses nothing, where glibc's one global busy flag drops every call
// that meets another thread's.
//
// Threads: each thread's state (guard, queue, table) is mapped at its first
// call and linked into a registry that is only ever pushed to. When a thread
// ends (pthread key destructor) its state is released, counts and all, and
// the next new thread takes it over: counts of ended threads are kept, and
// the memory is bounded by the most threads alive at once. A dump merges the
// tables of every state.
//
// fork: the child keeps a copy of every count (as with glibc), releases the
// states of the parent's other threads (they do not exist in the child),
// starts a CPU timer for its thread (timers are not inherited), and writes
// its own file at its exit: with GMON_OUT_PREFIX, PREFIX.<pid>; without it,
// gmon.out, which the last process to exit writes, as with glibc.
#include <cerrno>
#include <csignal>
#include <cstring>
#include <fcntl.h>
#include <pthread.h>
#include <sys/auxv.h>
#include <time.h>
#include <unistd.h>

#include "framewalk/mcount.h"
#include "mcount/arc_table.hpp"
#include "mcount/digits.hpp"
#include "mcount/function_times.hpp"
#include "mcount/gmon_writer.hpp"
#include "mcount/histogram.hpp"
#include "mcount/page_memory.hpp"
#include "mcount/runtime.hpp"
#include "mcount_context.hpp"  // src/arch/<host machine>/

// getenv without <stdlib.h>: on 32-bit ARM (hard-float) its inline atof and
// libstdc++'s abs(double) cannot be compiled with -mgeneral-regs-only.
extern "C" char* getenv(const char* name) noexcept;

namespace framewalk::mcount {

namespace {

// Arcs a thread's signal handlers may leave while the thread is inside the
// runtime: one per handler nested at one moment.
constexpr unsigned kQueuedArcs = 64;

struct QueuedArc {
  uintptr_t from_pc;
  uintptr_t self_pc;
  unsigned ready;  // set last: a handler left by longjmp may leave a slot unwritten
};

struct ThreadState {
  ThreadState* next;  // the registry; set before the state is published, then never changed
  ArcTable* table;    // replaced only by the owning thread (release), read by dumps (acquire)
  unsigned table_shift;  // table->shift, beside the pointer: the hash needs no load through it
  int claimed;        // a thread owns the state
  int busy;           // the recursion guard: the owner is inside the runtime
  unsigned queued;    // arcs left in `queue` by nested handlers (may pass kQueuedArcs: those are lost)
  QueuedArc queue[kQueuedArcs];
  uint64_t lost;      // calls not counted: no memory for a bigger table, queue full
  timer_t timer;
  int has_timer;
  // -finstrument-functions' exact times (function_times.hpp): mapped at the
  // thread's first timed call. `times` is replaced only by the owner
  // (release), read by dumps (acquire).
  FunctionTable* times;
  ShadowStack* shadow;
  uint64_t untimed;   // activations not timed: no memory for a table or a shadow stack
  // The first probe (first_probe.h): slots of this state's tables, so valid
  // for whichever thread owns the state; an entry is one word, stored after
  // its slot is published.
  ArcSlot* probe[kFirstProbeEntries];
};

struct Settings {
  unsigned rate = kDefaultSampleRate;
  bool verbose = false;
  bool dump_on_sigusr2 = false;
  const char* prefix = nullptr;  // GMON_OUT_PREFIX, unless the program is AT_SECURE
  bool times = true;              // FRAMEWALK_MCOUNT_TIMES=0: no exact times
  clockid_t clock = CLOCK_MONOTONIC;  // FRAMEWALK_MCOUNT_CLOCK=thread: CLOCK_THREAD_CPUTIME_ID
  const char* clock_name = "monotonic";
  bool fentry_times = false;      // FRAMEWALK_MCOUNT_FENTRY_TIMES=1, where it can be done
};

ThreadState* g_states;         // the registry's head
int g_init_state;              // 0 not yet, 1 being initialised, 2 done
int g_dump_busy;               // one dump or arc walk at a time
int g_final_dump_done;
int g_monstartup_called;       // gcrt1.o set the program up for profiling
uint64_t g_lost_unattached;    // calls of a thread that could not get a state
bool g_have_text;
TextRange g_text;
Settings g_settings;
pthread_key_t g_thread_key;

// The thread's state, and the owner's copy of its table and shift, so that
// the hot path reaches the table with one load instead of two (the state,
// then its table). One thread-local object: in a shared library each one's
// offset is a load from the GOT.
struct ThreadLocal {
  ThreadState* state;
  ArcTable* table;
  unsigned table_shift;
};
__thread ThreadLocal tls __attribute__((tls_model("initial-exec")));
void mirror_table(const ThreadState* t) {
  tls.table = t->table;
  tls.table_shift = t->table_shift;
}
__thread int tls_attaching __attribute__((tls_model("initial-exec")));

}  // namespace
}  // namespace framewalk::mcount

// What the stubs read by name (mcount_entry.S): moncontrol's switch, and the
// thread's first probe (its state's, or nullptr while it has none).
extern "C" {
__attribute__((visibility("hidden"))) int framewalk_mcount_counting = 1;
// Nonzero: __fentry__ patches return addresses (FRAMEWALK_MCOUNT_FENTRY_TIMES=1).
__attribute__((visibility("hidden"))) int framewalk_mcount_patching = 0;
// Where a patched function returns to (mcount_entry.S).
void framewalk_mcount_return() __attribute__((weak));  // none on machines that do not patch
// Defined where the unwinder's entry points are interposed (interposed.cpp:
// the shared library): only there may return addresses be patched.
extern const int framewalk_mcount_unwinder_interposed __attribute__((weak));
__attribute__((visibility("hidden"), tls_model("initial-exec"))) __thread framewalk::mcount::ArcSlot**
    framewalk_mcount_probe;
}

namespace framewalk::mcount {
namespace {

void count_lost(uint64_t* counter, uint64_t n) { __atomic_fetch_add(counter, n, __ATOMIC_RELAXED); }

// Out of line: the hot path only reaches it when a thread's table is full.
// The full table is retired, not copied: it keeps its arcs and goes on
// counting the calls of first-probe entries that point into it (a stub
// interrupted between its probe and its add by a handler that grew the
// table adds there afterwards), and every dump walks the chain. The new
// table, twice as large, takes the arcs from now on; the tables left behind
// add up to less than the live one. The arc's slot, or nullptr (no memory).
__attribute__((noinline, cold)) ArcSlot* grow_for(ThreadState* t, uintptr_t from_pc, uintptr_t self_pc) {
  ArcTable* old = t->table;
  ArcTable* bigger = arc_table_create(old->capacity * 2);
  if (bigger == nullptr) return nullptr;
  bigger->retired = old;
  ArcSlot* slot = arc_table_slot(*bigger, bigger->shift, from_pc, self_pc);
  t->table_shift = bigger->shift;
  __atomic_store_n(&t->table, bigger, __ATOMIC_RELEASE);
  mirror_table(t);  // only the owner adds to its table
  return slot;
}

inline void add(ThreadState* t, uintptr_t from_pc, uintptr_t self_pc, uint64_t count) {
  // Only the owning thread adds (tls.state == t): its mirror is t's table.
  ArcSlot* slot = arc_table_slot(*tls.table, tls.table_shift, from_pc, self_pc);
  if (__builtin_expect(slot == nullptr, 0)) slot = grow_for(t, from_pc, self_pc);
  if (slot == nullptr) {
    count_lost(&t->lost, count);
    return;
  }
  host::add_count(slot->count, count);
  if constexpr (host::kStubReadsFirstProbe) {
    __atomic_store_n(&t->probe[first_probe_index(from_pc, self_pc)], slot, __ATOMIC_RELEASE);
  }
}

// Calls fn(from_pc, self_pc, count) for every arc of the state's tables,
// the live one and those it retired.
template <typename Fn>
void for_each_arc_of(const ThreadState* s, Fn&& fn) {
  for (const ArcTable* table = __atomic_load_n(&s->table, __ATOMIC_ACQUIRE); table != nullptr;
       table = table->retired) {
    arc_table_for_each(*table, fn);
  }
}

// A handler nested in the runtime on this thread: queue the arc for the
// guard's holder. The slot is claimed with an atomic increment, which a
// further nested handler cannot split.
void enqueue(ThreadState* t, uintptr_t from_pc, uintptr_t self_pc) {
  unsigned i = __atomic_fetch_add(&t->queued, 1u, __ATOMIC_RELAXED);
  if (i >= kQueuedArcs) {
    count_lost(&t->lost, 1);
    return;
  }
  t->queue[i].from_pc = from_pc;
  t->queue[i].self_pc = self_pc;
  __atomic_store_n(&t->queue[i].ready, 1u, __ATOMIC_RELEASE);
}

// The guard's holder adds what nested handlers queued. Handlers run to
// completion before the interrupted code resumes, so every slot below
// `queued` is written (or its handler left by longjmp: lost).
__attribute__((noinline)) void drain(ThreadState* t) {
  unsigned done = 0;
  for (;;) {
    unsigned n = __atomic_load_n(&t->queued, __ATOMIC_RELAXED);
    unsigned upto = n < kQueuedArcs ? n : kQueuedArcs;
    for (; done < upto; ++done) {
      QueuedArc& q = t->queue[done];
      if (__atomic_load_n(&q.ready, __ATOMIC_ACQUIRE) != 0) {
        add(t, q.from_pc, q.self_pc, 1);
      } else {
        count_lost(&t->lost, 1);
      }
      q.ready = 0;
    }
    if (__atomic_compare_exchange_n(&t->queued, &n, 0u, false, __ATOMIC_RELAXED, __ATOMIC_RELAXED)) return;
  }
}

// Runs `work` with the thread's guard taken (the caller checked it was
// free), then adds what nested handlers queued meanwhile and lets it go.
template <typename Work>
inline void guarded(ThreadState* t, Work&& work) {
  t->busy = 1;
  __atomic_signal_fence(__ATOMIC_SEQ_CST);
  work();
  for (;;) {
    if (__builtin_expect(__atomic_load_n(&t->queued, __ATOMIC_RELAXED) != 0, 0)) drain(t);
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    t->busy = 0;
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    // A handler that came between the drain and the release queued its arc
    // while the guard was still taken: take the guard again for it.
    if (__builtin_expect(__atomic_load_n(&t->queued, __ATOMIC_RELAXED) == 0, 1)) return;
    t->busy = 1;
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
  }
}

inline void record(ThreadState* t, uintptr_t from_pc, uintptr_t self_pc) {
  if (__builtin_expect(t->busy, 0)) {
    enqueue(t, from_pc, self_pc);
    return;
  }
  guarded(t, [&] { add(t, from_pc, self_pc, 1); });
}

// -finstrument-functions' times (function_times.hpp), with the guard held.

uint64_t clock_ns() {
  struct timespec now;
  clock_gettime(g_settings.clock, &now);
  return static_cast<uint64_t>(now.tv_sec) * 1000000000u + static_cast<uint64_t>(now.tv_nsec);
}

// The function's slot in the thread's table (mapped or grown as needed);
// nullptr when no memory.
FunctionSlot* times_slot(ThreadState* t, uintptr_t function) {
  FunctionTable* table = t->times;
  if (table == nullptr) {
    table = function_table_create(kInitialFunctionCapacity);
    if (table == nullptr) return nullptr;
    __atomic_store_n(&t->times, table, __ATOMIC_RELEASE);
  }
  if (FunctionSlot* slot = function_table_slot(*table, function)) return slot;
  FunctionTable* bigger = function_table_grown(*table);
  if (bigger == nullptr) return nullptr;
  __atomic_store_n(&t->times, bigger, __ATOMIC_RELEASE);  // the old one stays mapped, as arc tables do
  return function_table_slot(*bigger, function);
}

// Drops the activations a longjmp left: those whose stack address is below
// `stack` (an exit's own), or at it too (an entry: a new activation cannot be
// where a live one is).
void drop_left_frames(ThreadState* t, uintptr_t stack, bool entry) {
  ShadowStack& s = *t->shadow;
  s.jumped = 0;
  if (s.depth > kShadowDepth) return;  // frames are not kept that deep: the exits sort it out
  while (s.depth > 0) {
    const ShadowFrame& top = s.frames[s.depth - 1];
    if (top.stack > stack || (!entry && top.stack == stack)) return;
    FunctionSlot* left = function_table_slot(*t->times, top.function);
    if (left != nullptr && left->active > 0) --left->active;
    --s.depth;
  }
}

void time_enter(ThreadState* t, uintptr_t function, uintptr_t call_site, uintptr_t stack) {
  if (t->shadow == nullptr) t->shadow = static_cast<ShadowStack*>(map_zeroed(sizeof(ShadowStack)));
  if (t->shadow != nullptr && t->shadow->jumped) drop_left_frames(t, stack, true);
  FunctionSlot* slot = t->shadow != nullptr ? times_slot(t, function) : nullptr;
  if (slot == nullptr) {
    ++t->untimed;
    return;
  }
  ++slot->calls;
  ++slot->active;
  ShadowStack& s = *t->shadow;
  if (s.depth < kShadowDepth) s.frames[s.depth] = ShadowFrame{function, call_site, stack, clock_ns(), 0, 0};
  ++s.depth;
}

// Ends the activation frames[i - 1] of the thread's shadow stack at `now`
// (its times charged, its caller's callee time grown); those above it were
// left (longjmp, an exception) and only drop their activation counts.
void close_activation(ThreadState* t, std::size_t i, uint64_t now) {
  ShadowStack* s = t->shadow;
  for (std::size_t j = i; j < s->depth; ++j) {
    FunctionSlot* left = function_table_slot(*t->times, s->frames[j].function);
    if (left != nullptr && left->active > 0) --left->active;
  }
  const ShadowFrame& frame = s->frames[i - 1];
  const uint64_t elapsed = now > frame.entered_ns ? now - frame.entered_ns : 0;
  FunctionSlot* slot = function_table_slot(*t->times, frame.function);  // there since its entry
  if (slot != nullptr) {
    slot->self_ns += elapsed > frame.callees_ns ? elapsed - frame.callees_ns : 0;
    if (slot->active > 0 && --slot->active == 0) slot->inclusive_ns += elapsed;  // the outermost activation
  }
  s->depth = i - 1;
  if (i >= 2) s->frames[i - 2].callees_ns += elapsed;
}

// Drops the activations above the first `keep` (left without an exit).
void drop_above(ThreadState* t, std::size_t keep) {
  ShadowStack* s = t->shadow;
  while (s->depth > keep) {
    FunctionSlot* left = function_table_slot(*t->times, s->frames[s->depth - 1].function);
    if (left != nullptr && left->active > 0) --left->active;
    --s->depth;
  }
}

void time_exit(ThreadState* t, uintptr_t function, uintptr_t call_site, uintptr_t stack, uint64_t now) {
  ShadowStack* s = t->shadow;
  if (s == nullptr) return;
  if (s->jumped) drop_left_frames(t, stack, false);
  if (s->depth == 0) return;
  if (s->depth > kShadowDepth) {  // an activation too deep to keep: its time is its caller's
    --s->depth;
    FunctionSlot* slot = t->times != nullptr ? function_table_slot(*t->times, function) : nullptr;
    if (slot != nullptr && slot->active > 0) --slot->active;
    return;
  }
  // The function's own activation; those above it were left by longjmp.
  std::size_t i = s->depth;
  while (i > 0 && !(s->frames[i - 1].function == function && s->frames[i - 1].call_site == call_site)) --i;
  if (i == 0) return;  // entered before its thread was timed (moncontrol, no memory then)
  close_activation(t, i, now);
}

// A state given up by its thread: no activation of it is in progress any more.
void reset_times(ThreadState* t) {
  if (t->shadow != nullptr) {
    t->shadow->depth = 0;
    t->shadow->jumped = 0;
  }
  if (t->times != nullptr) {
    for (std::size_t i = 0; i < t->times->capacity; ++i) t->times->slots[i].active = 0;
  }
}

ThreadState* new_state() {
  auto* s = static_cast<ThreadState*>(map_zeroed(sizeof(ThreadState)));
  if (s == nullptr) return nullptr;
  s->table = arc_table_create(kInitialArcCapacity);
  if (s->table == nullptr) {
    unmap(s, sizeof(ThreadState));
    return nullptr;
  }
  s->table_shift = s->table->shift;
  s->claimed = 1;
  ThreadState* head = __atomic_load_n(&g_states, __ATOMIC_RELAXED);
  do {
    s->next = head;
  } while (!__atomic_compare_exchange_n(&g_states, &head, s, true, __ATOMIC_RELEASE, __ATOMIC_RELAXED));
  return s;
}

// A released state (its thread ended) if there is one, else a new one.
ThreadState* claim_state() {
  for (ThreadState* s = __atomic_load_n(&g_states, __ATOMIC_ACQUIRE); s != nullptr; s = s->next) {
    int free_state = 0;
    if (__atomic_load_n(&s->claimed, __ATOMIC_RELAXED) == 0 &&
        __atomic_compare_exchange_n(&s->claimed, &free_state, 1, false, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED)) {
      return s;
    }
  }
  return new_state();
}

void on_thread_exit(void* data) {
  auto* t = static_cast<ThreadState*>(data);
  if (tls.state == t) {
    tls.state = nullptr;
    framewalk_mcount_probe = nullptr;
  }
  if (t->has_timer) {
    stop_thread_timer(t->timer);
    t->has_timer = 0;
  }
  reset_times(t);
  // Calls this thread still makes (later destructors) attach it again.
  __atomic_store_n(&t->claimed, 0, __ATOMIC_RELEASE);
}

void on_fork_child() {
  ThreadState* me = tls.state;
  for (ThreadState* s = __atomic_load_n(&g_states, __ATOMIC_ACQUIRE); s != nullptr; s = s->next) {
    s->has_timer = 0;  // timers are not inherited
    if (s == me) continue;
    // A thread of the parent: its counts stay, its state is free for the
    // child's threads; an arc it had half-queued at the fork is dropped.
    s->busy = 0;
    s->queued = 0;
    reset_times(s);
    for (QueuedArc& q : s->queue) q.ready = 0;
    __atomic_store_n(&s->claimed, 0, __ATOMIC_RELEASE);
  }
  g_dump_busy = 0;
  g_final_dump_done = 0;
  if (me != nullptr) me->has_timer = start_thread_timer(me->timer) ? 1 : 0;
}

int write_profile(const char* path);

void on_dump_signal(int) {
  int saved = errno;
  write_profile(nullptr);
  errno = saved;
}

unsigned parse_unsigned(const char* text, unsigned fallback, unsigned most) {
  if (text == nullptr || *text == '\0') return fallback;
  unsigned long v = 0;
  for (const char* p = text; *p != '\0'; ++p) {
    if (*p < '0' || *p > '9') return fallback;
    v = v * 10 + static_cast<unsigned long>(*p - '0');
    if (v > most) return most;
  }
  return static_cast<unsigned>(v);
}

void initialize() {
  g_settings.rate = parse_unsigned(getenv("FRAMEWALK_MCOUNT_HZ"), kDefaultSampleRate, 100000);
  const char* verbose = getenv("FRAMEWALK_MCOUNT_VERBOSE");
  g_settings.verbose = verbose != nullptr && *verbose != '\0' && *verbose != '0';
  const char* on_signal = getenv("FRAMEWALK_MCOUNT_SIGUSR2");
  g_settings.dump_on_sigusr2 = on_signal != nullptr && *on_signal != '\0' && *on_signal != '0';
  const char* times = getenv("FRAMEWALK_MCOUNT_TIMES");
  g_settings.times = times == nullptr || *times != '0';
  const char* clock = getenv("FRAMEWALK_MCOUNT_CLOCK");
  if (clock != nullptr && std::strcmp(clock, "thread") == 0) {
    g_settings.clock = CLOCK_THREAD_CPUTIME_ID;
    g_settings.clock_name = "thread";
  }
  const char* fentry = getenv("FRAMEWALK_MCOUNT_FENTRY_TIMES");
  g_settings.fentry_times = fentry != nullptr && *fentry != '\0' && *fentry != '0' && g_settings.times &&
                            host::kStubPatchesReturns && &framewalk_mcount_unwinder_interposed != nullptr;
  const char* prefix = getenv("GMON_OUT_PREFIX");
  if (prefix != nullptr && *prefix != '\0' && getauxval(AT_SECURE) == 0) g_settings.prefix = prefix;
  g_have_text = find_executable_text(g_text);
  if (!g_have_text || !histogram_start(g_text, g_settings.rate)) g_settings.rate = 0;
  pthread_key_create(&g_thread_key, on_thread_exit);
  pthread_atfork(nullptr, nullptr, on_fork_child);
  if (g_settings.fentry_times) __atomic_store_n(&framewalk_mcount_patching, 1, __ATOMIC_RELAXED);
  if (g_settings.dump_on_sigusr2) {
    struct sigaction action = {};
    action.sa_handler = on_dump_signal;
    action.sa_flags = SA_RESTART;
    sigaction(SIGUSR2, &action, nullptr);
  }
}

// True once the runtime is set up. A call that meets the set-up in progress
// (a signal handler, or a thread started by a constructor that runs before
// the runtime's) is not counted, and is counted as lost.
bool ensure_initialized() {
  if (__atomic_load_n(&g_init_state, __ATOMIC_ACQUIRE) == 2) return true;
  int not_yet = 0;
  if (!__atomic_compare_exchange_n(&g_init_state, &not_yet, 1, false, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED)) {
    return __atomic_load_n(&g_init_state, __ATOMIC_ACQUIRE) == 2;
  }
  initialize();
  __atomic_store_n(&g_init_state, 2, __ATOMIC_RELEASE);
  return true;
}

ThreadState* attach_thread() {
  if (tls.state != nullptr) return tls.state;
  if (tls_attaching || !ensure_initialized()) return nullptr;
  tls_attaching = 1;
  ThreadState* t = claim_state();
  if (t != nullptr) {
    t->busy = 0;
    mirror_table(t);
    framewalk_mcount_probe = t->probe;
    tls.state = t;
    pthread_setspecific(g_thread_key, t);
    t->has_timer = start_thread_timer(t->timer) ? 1 : 0;
  }
  tls_attaching = 0;
  return t;
}

}  // namespace

void attach_current_thread() { attach_thread(); }

namespace {

// The thread's state for a hook that times (its guard free), attaching the
// thread at its first call; nullptr when the call is done with: not
// counting (moncontrol), no state (counted lost), or the guard taken (a
// handler that interrupted the runtime: its arc queued, not timed).
ThreadState* timing_hook_state(uintptr_t from_pc, uintptr_t self_pc) {
  ThreadState* t = tls.state;
  if (__builtin_expect(t == nullptr, 0)) {
    t = attach_thread();
    if (t == nullptr) {
      count_lost(&g_lost_unattached, 1);
      return nullptr;
    }
  }
  if (!__atomic_load_n(&framewalk_mcount_counting, __ATOMIC_RELAXED)) return nullptr;
  if (__builtin_expect(t->busy, 0)) {
    enqueue(t, from_pc, self_pc);
    return nullptr;
  }
  return t;
}

}  // namespace

void note_longjmp() {
  ThreadState* t = tls.state;
  if (t != nullptr && t->shadow != nullptr) __atomic_store_n(&t->shadow->jumped, 1, __ATOMIC_RELAXED);
}

// -pg -mfentry's exact times by return-address patching
// (FRAMEWALK_MCOUNT_FENTRY_TIMES=1; machines whose stub does it, in the
// shared library): __fentry__ keeps the instrumented function's return
// address in a shadow frame (return_address, the slot's address as `stack`)
// and puts framewalk_mcount_return's in the slot, which at the return ends
// the activation and jumps on to the kept address, as uftrace does.
//
// Which frames are gone is told without comparing stack addresses where a
// signal handler on an alternate stack could make them mislead: a return
// ends the newest activation of its slot and drops the newer ones (left
// without a return); only the first hook after a longjmp (the interposed
// longjmp marks it) drops the frames below its slot. A slot is written only
// while it holds what the runtime put there: before an unwinder walks the
// stack (an exception, a thread's cancellation) every slot that holds the
// trampoline gets its address back (restore_return_addresses); where the
// exception is caught, the frames below the catcher's stack end at that
// moment (as -finstrument-functions' exit hooks would have timed them) and
// those whose slot still holds its address are patched again
// (repatch_live_frames). Limit: an exception caught in a handler on an
// alternate stack above the thread's ends the thread's older frames too,
// and their returns then find no activation (the process is stopped).
namespace {

uintptr_t trampoline() { return reinterpret_cast<uintptr_t>(&framewalk_mcount_return); }
uintptr_t& slot_at(uintptr_t stack) { return *reinterpret_cast<uintptr_t*>(stack); }

}  // namespace

void restore_return_addresses() {
  ThreadState* t = tls.state;
  if (!framewalk_mcount_patching || t == nullptr || t->shadow == nullptr) return;
  guarded(t, [&] {
    // From the top down: a tail call's frames share a slot, the lowest frame's address is the real one.
    ShadowStack* s = t->shadow;
    for (std::size_t i = s->depth; i > 0; --i) {
      const ShadowFrame& f = s->frames[i - 1];
      if (f.return_address != 0 && slot_at(f.stack) == trampoline()) slot_at(f.stack) = f.return_address;
    }
  });
}

void repatch_live_frames(uintptr_t stack) {
  ThreadState* t = tls.state;
  if (!framewalk_mcount_patching || t == nullptr || t->shadow == nullptr) return;
  const uint64_t now = clock_ns();
  guarded(t, [&] {
    ShadowStack* s = t->shadow;
    while (s->depth > 0 && s->frames[s->depth - 1].stack < stack) close_activation(t, s->depth, now);
    // From the bottom up, so that a tail call's upper frame finds the slot patched again.
    for (std::size_t i = 0; i < s->depth; ++i) {
      const ShadowFrame& f = s->frames[i];
      if (f.return_address != 0 && slot_at(f.stack) == f.return_address) slot_at(f.stack) = trampoline();
    }
  });
}

namespace {

// Every arc of every thread, summed by (from_pc, self_pc), in a table of its
// own; nullptr when no memory could be mapped for it.
ArcTable* merge_all() {
  std::size_t total = 0;
  for (ThreadState* s = __atomic_load_n(&g_states, __ATOMIC_ACQUIRE); s != nullptr; s = s->next) {
    for (const ArcTable* table = __atomic_load_n(&s->table, __ATOMIC_ACQUIRE); table != nullptr;
         table = table->retired) {
      total += table->used;
    }
  }
  std::size_t capacity = 16;
  while (capacity < 2 * total + 2) capacity *= 2;
  ArcTable* merged = arc_table_create(capacity);
  for (ThreadState* s = __atomic_load_n(&g_states, __ATOMIC_ACQUIRE); s != nullptr && merged != nullptr;
       s = s->next) {
    for_each_arc_of(s, [&](uintptr_t from_pc, uintptr_t self_pc, uint64_t count) {
      if (merged == nullptr || arc_table_add(*merged, from_pc, self_pc, count)) return;
      // Arcs other threads added since the sizing.
      ArcTable* bigger = arc_table_grown(*merged);
      arc_table_destroy(merged);
      merged = bigger;
      if (merged != nullptr) arc_table_add(*merged, from_pc, self_pc, count);
    });
  }
  return merged;
}

// Every thread's function times summed, in a table of its own; nullptr when
// no thread timed a call (or no memory).
FunctionTable* merge_times() {
  std::size_t total = 0;
  for (ThreadState* s = __atomic_load_n(&g_states, __ATOMIC_ACQUIRE); s != nullptr; s = s->next) {
    if (FunctionTable* t = __atomic_load_n(&s->times, __ATOMIC_ACQUIRE)) total += t->used;
  }
  if (total == 0) return nullptr;
  std::size_t capacity = 16;
  while (capacity < 2 * total + 2) capacity *= 2;
  FunctionTable* merged = function_table_create(capacity);
  for (ThreadState* s = __atomic_load_n(&g_states, __ATOMIC_ACQUIRE); s != nullptr && merged != nullptr;
       s = s->next) {
    FunctionTable* t = __atomic_load_n(&s->times, __ATOMIC_ACQUIRE);
    if (t == nullptr) continue;
    function_table_for_each(*t, [&](const FunctionSlot& from) {
      FunctionSlot* to = merged != nullptr ? function_table_slot(*merged, from.function) : nullptr;
      if (to == nullptr && merged != nullptr) {  // functions other threads added since the sizing
        FunctionTable* bigger = function_table_grown(*merged);
        function_table_destroy(merged);
        merged = bigger;
        to = merged != nullptr ? function_table_slot(*merged, from.function) : nullptr;
      }
      if (to == nullptr) return;
      to->calls += from.calls;
      to->inclusive_ns += from.inclusive_ns;
      to->self_ns += from.self_ns;
    });
  }
  return merged;
}

// The times' side file: `gmon_name` with ".times" appended. False when it
// could not be written.
bool write_times(const char* gmon_name) {
  FunctionTable* merged = merge_times();
  if (merged == nullptr) return true;
  char name[4096 + 8];
  std::size_t n = std::strlen(gmon_name);
  bool ok = n + 7 <= sizeof name;
  if (ok) {
    std::memcpy(name, gmon_name, n);
    std::memcpy(name + n, ".times", 7);
    int fd = open(name, O_CREAT | O_TRUNC | O_WRONLY | O_NOFOLLOW | O_CLOEXEC, 0666);
    ok = fd >= 0 &&
         write_function_times(fd, *merged, g_have_text ? g_text.low : 0, g_have_text ? g_text.high : 0, g_text.bias,
                              g_settings.clock_name);
    if (fd >= 0) close(fd);
  }
  function_table_destroy(merged);
  return ok;
}

uint64_t lost_calls() {
  uint64_t lost = __atomic_load_n(&g_lost_unattached, __ATOMIC_RELAXED);
  for (ThreadState* s = __atomic_load_n(&g_states, __ATOMIC_ACQUIRE); s != nullptr; s = s->next) {
    lost += __atomic_load_n(&s->lost, __ATOMIC_RELAXED);
  }
  return lost;
}

// A line for stderr built without stdio (a dump may be in a signal handler).
class Line {
 public:
  Line& text(const char* s) {
    while (*s != '\0' && used_ < sizeof buffer_ - 1) buffer_[used_++] = *s++;
    return *this;
  }
  Line& number(uint64_t v) {
    char digits[20];
    unsigned n = decimal_digits_reversed(v, digits);
    while (n > 0 && used_ < sizeof buffer_ - 1) buffer_[used_++] = digits[--n];
    return *this;
  }
  void print() {
    buffer_[used_++] = '\n';
    ssize_t ignored = write(STDERR_FILENO, buffer_, used_);
    (void)ignored;
  }

 private:
  char buffer_[512];
  std::size_t used_ = 0;
};

// gmon.out, $GMON_OUT_PREFIX.<pid>, or `path`.
const char* output_path(const char* path, char (&buffer)[4096]) {
  if (path != nullptr) return path;
  if (g_settings.prefix == nullptr) return "gmon.out";
  std::size_t n = std::strlen(g_settings.prefix);
  if (n + 24 > sizeof buffer) return "gmon.out";
  std::memcpy(buffer, g_settings.prefix, n);
  buffer[n++] = '.';
  char digits[20];
  unsigned d = 0;
  for (unsigned long pid = static_cast<unsigned long>(getpid()); d == 0 || pid != 0; pid /= 10) {
    digits[d++] = static_cast<char>('0' + pid % 10);
  }
  while (d > 0) buffer[n++] = digits[--d];
  buffer[n] = '\0';
  return buffer;
}

int write_profile(const char* path) {
  int idle = 0;
  if (!__atomic_compare_exchange_n(&g_dump_busy, &idle, 1, false, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED)) return -1;
  ArcTable* merged = merge_all();
  char buffer[4096];
  const char* name = output_path(path, buffer);
  int fd = open(name, O_CREAT | O_TRUNC | O_WRONLY | O_NOFOLLOW | O_CLOEXEC, 0666);
  uint64_t arcs = 0, calls = 0, outside = 0;
  int open_errno = errno;
  bool ok = fd >= 0 && merged != nullptr;
  if (fd >= 0) {
    GmonWriter writer(fd);
    writer.header();
    HistogramView h = histogram_view();
    writer.histogram(h.low_pc, h.high_pc, h.bins, h.nbins, h.rate);
    if (merged != nullptr) {
      arc_table_for_each(*merged, [&](uintptr_t from_pc, uintptr_t self_pc, uint64_t count) {
        if (count == 0) return;  // published, its first call not added yet
        // gprof reads one program: arcs with an end elsewhere (a shared
        // library, a signal trampoline, the thread start in libc) have no
        // address it could look up, as with glibc, which drops them too.
        if (!g_have_text || !g_text.contains(from_pc) || !g_text.contains(self_pc)) {
          ++outside;
          return;
        }
        writer.arc(from_pc - g_text.bias, self_pc - g_text.bias, count);
        ++arcs;
        calls += count;
      });
    }
    ok = writer.finish() && ok;
    open_errno = errno;
    close(fd);
  }
  if (!write_times(name)) {
    Line().text("framewalk mcount: ").text(name).text(".times: cannot write it").print();
  }
  if (g_settings.verbose || !ok) {
    Line line;
    line.text("framewalk mcount: ").text(name);
    if (!ok) {
      if (merged == nullptr) {
        line.text(": no memory to merge the arcs");
      } else {
        line.text(fd < 0 ? ": cannot open it, errno " : ": cannot write it, errno ").number(static_cast<uint64_t>(open_errno));
      }
    } else {
      line.text(": ").number(arcs).text(" arcs, ").number(calls).text(" calls; ").number(outside);
      line.text(" arcs with an end outside the executable; ").number(histogram_samples()).text(" samples at ");
      line.number(histogram_view().rate).text(" Hz; ").number(lost_calls()).text(" calls lost");
    }
    line.print();
  }
  arc_table_destroy(merged);
  __atomic_store_n(&g_dump_busy, 0, __ATOMIC_RELEASE);
  return ok ? 0 : -1;
}

bool any_arc() {
  for (ThreadState* s = __atomic_load_n(&g_states, __ATOMIC_ACQUIRE); s != nullptr; s = s->next) {
    if (__atomic_load_n(&s->table, __ATOMIC_ACQUIRE)->used != 0) return true;
  }
  return false;
}

void final_dump() {
  int not_yet = 0;
  if (!__atomic_compare_exchange_n(&g_final_dump_done, &not_yet, 1, false, __ATOMIC_ACQ_REL, __ATOMIC_RELAXED)) return;
  if (__atomic_load_n(&g_init_state, __ATOMIC_ACQUIRE) != 2) return;
  // A process that neither was set up for profiling (gcrt1.o's
  // __monstartup) nor called a hook writes nothing: under LD_PRELOAD, the
  // programs a profiled program runs (a shell, sort) would otherwise
  // overwrite its gmon.out with an empty one.
  if (!__atomic_load_n(&g_monstartup_called, __ATOMIC_RELAXED) && !any_arc() && lost_calls() == 0) return;
  write_profile(nullptr);
  uint64_t lost = lost_calls();
  if (lost != 0) {
    Line()
        .text("framewalk mcount: ")
        .number(lost)
        .text(" calls were not counted (no memory for a table, or more than 64 nested signal handlers at once)")
        .print();
  }
}

// Before main; glibc's gcrt1.o calls __monstartup (below) even earlier, from
// the program's .init, which is why both only make sure of the set-up.
__attribute__((constructor)) void on_load() { attach_thread(); }

// After the program's own destructors (the library was loaded before the
// program, or is linked after its objects), so their calls are counted too.
__attribute__((destructor)) void on_unload() { final_dump(); }

}  // namespace

}  // namespace framewalk::mcount

using namespace framewalk::mcount;

extern "C" {

__attribute__((visibility("hidden"))) int framewalk_mcount_fast(uintptr_t from_pc, uintptr_t self_pc) {
  ThreadState* t = tls.state;
  if (__builtin_expect(t == nullptr, 0)) return 1;
  if (__builtin_expect(__atomic_load_n(&framewalk_mcount_counting, __ATOMIC_RELAXED), 1)) record(t, from_pc, self_pc);
  return 0;
}

__attribute__((visibility("hidden"))) void framewalk_mcount_slow(uintptr_t from_pc, uintptr_t self_pc) {
  ThreadState* t = attach_thread();
  if (t == nullptr) {
    count_lost(&g_lost_unattached, 1);
    return;
  }
  if (__atomic_load_n(&framewalk_mcount_counting, __ATOMIC_RELAXED)) record(t, from_pc, self_pc);
}

// __fentry__ with return-address patching (see restore_return_addresses):
// the arc, then the activation and the patch, unless the thread's guard is
// taken (a handler that interrupted the runtime: then only the arc, queued).
__attribute__((visibility("hidden"))) void framewalk_mcount_fentry_patch(uintptr_t from_pc, uintptr_t self_pc,
                                                                         uintptr_t* slot) {
  ThreadState* t = timing_hook_state(from_pc, self_pc);
  if (t == nullptr) return;
  const uintptr_t stack = reinterpret_cast<uintptr_t>(slot);
  guarded(t, [&] {
    if (t->shadow == nullptr) t->shadow = static_cast<ShadowStack*>(map_zeroed(sizeof(ShadowStack)));
    ShadowStack* s = t->shadow;
    // A tail call from a patched function: the slot holds the trampoline
    // already, and the caller is the one of the frame that patched it. A
    // frame at this slot that does not hold it is gone (a longjmp left it).
    const uintptr_t original = *slot;
    if (s != nullptr && s->jumped) {
      // The first hook after a longjmp: the frames below this slot are gone,
      // and so is one at it that no longer holds the trampoline.
      s->jumped = 0;
      const uintptr_t gone_below = original == trampoline() ? stack : stack + 1;
      std::size_t keep = s->depth;
      while (keep > 0 && s->frames[keep - 1].stack < gone_below) --keep;
      drop_above(t, keep);
    }
    uintptr_t caller = original;
    if (original == trampoline() && s != nullptr && s->depth > 0 && s->frames[s->depth - 1].stack == stack) {
      caller = s->frames[s->depth - 1].call_site;
    }
    add(t, caller, self_pc, 1);
    // Timed by the function's start, as -finstrument-functions' are (the file lists starts).
    const uintptr_t function = host::fentry_function_start(self_pc);
    FunctionSlot* fs = s != nullptr && s->depth < kShadowDepth ? times_slot(t, function) : nullptr;
    if (fs == nullptr) {
      ++t->untimed;
      return;
    }
    ++fs->calls;
    ++fs->active;
    s->frames[s->depth++] = ShadowFrame{function, caller, stack, clock_ns(), 0, original};
    *slot = trampoline();
  });
}

// framewalk_mcount_return's C side: ends the activation whose slot is
// `slot` (those above it are gone) and gives back its return address.
__attribute__((visibility("hidden"))) uintptr_t framewalk_mcount_fentry_return(uintptr_t slot) {
  const uint64_t now = clock_ns();
  ThreadState* t = tls.state;
  uintptr_t to = 0;
  if (t != nullptr && t->shadow != nullptr) {
    // Never with the guard taken: the runtime calls no instrumented code, and
    // a handler's calls while it is inside are not patched.
    guarded(t, [&] {
      // The newest activation of this slot; any newer were left without a return.
      ShadowStack* s = t->shadow;
      std::size_t i = s->depth;
      while (i > 0 && !(s->frames[i - 1].stack == slot && s->frames[i - 1].return_address != 0)) --i;
      if (i > 0) {
        to = s->frames[i - 1].return_address;
        close_activation(t, i, now);
      }
    });
  }
  if (to == 0) __builtin_trap();  // no activation patched this slot: nowhere to return to
  return to;
}

// -finstrument-functions: ordinary C calls, so no stub. Besides the arc,
// the entry and the exit time the function (function_times.hpp), unless a
// signal handler interrupted the runtime on this thread (its guard is
// taken: then neither its entries nor its exits are timed).
__attribute__((visibility("default"), no_instrument_function)) void __cyg_profile_func_enter(void* this_fn,
                                                                                              void* call_site) {
  uintptr_t self_pc = host::code_address(reinterpret_cast<uintptr_t>(this_fn));
  uintptr_t from_pc = host::code_address(reinterpret_cast<uintptr_t>(call_site));
  ThreadState* t = timing_hook_state(from_pc, self_pc);
  if (t == nullptr) return;
  const uintptr_t stack = reinterpret_cast<uintptr_t>(__builtin_frame_address(0));
  guarded(t, [&] {
    add(t, from_pc, self_pc, 1);
    if (g_settings.times) time_enter(t, self_pc, from_pc, stack);
  });
}

__attribute__((visibility("default"), no_instrument_function)) void __cyg_profile_func_exit(void* this_fn,
                                                                                             void* call_site) {
  ThreadState* t = tls.state;
  if (t == nullptr || t->busy || t->shadow == nullptr) return;
  const uint64_t now = clock_ns();
  uintptr_t self_pc = host::code_address(reinterpret_cast<uintptr_t>(this_fn));
  uintptr_t from_pc = host::code_address(reinterpret_cast<uintptr_t>(call_site));
  const uintptr_t stack = reinterpret_cast<uintptr_t>(__builtin_frame_address(0));
  guarded(t, [&] { time_exit(t, self_pc, from_pc, stack, now); });
}

// glibc's profiling entry points, so that neither its set-up (gcrt1.o calls
// __monstartup and registers _mcleanup) nor a static link pulls in glibc's
// gmon. The range glibc would cover comes from the program's headers
// instead; the file is written by the destructor above, after the program's
// atexit handlers, so _mcleanup has nothing left to do.
// riscv64's gcrt1.o calls it from the program's .preinit_array, before the
// C library has set up environ (getenv would find none of the settings):
// there the set-up waits for the runtime's constructor.
__attribute__((visibility("default"))) void __monstartup(unsigned long, unsigned long) {
  __atomic_store_n(&g_monstartup_called, 1, __ATOMIC_RELAXED);
  if (environ != nullptr) attach_thread();
}
__attribute__((visibility("default"))) void monstartup(unsigned long low, unsigned long high) { __monstartup(low, high); }
__attribute__((visibility("default"))) void _mcleanup(void) {}
__attribute__((visibility("default"))) void moncontrol(int mode) {
  __atomic_store_n(&framewalk_mcount_counting, mode != 0 ? 1 : 0, __ATOMIC_RELAXED);
  histogram_enable(mode != 0);
}

int framewalk_mcount_dump(const char* path) {
  if (!ensure_initialized()) return -1;
  return write_profile(path);
}

long framewalk_mcount_for_each_arc(framewalk_mcount_arc_fn fn, void* context) {
  int idle = 0;
  if (!__atomic_compare_exchange_n(&g_dump_busy, &idle, 1, false, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED)) return -1;
  ArcTable* merged = merge_all();
  long n = -1;
  if (merged != nullptr) {
    n = 0;
    arc_table_for_each(*merged, [&](uintptr_t from_pc, uintptr_t self_pc, uint64_t count) {
      if (count == 0) return;  // published, its first call not added yet
      fn(from_pc, self_pc, count, context);
      ++n;
    });
    arc_table_destroy(merged);
  }
  __atomic_store_n(&g_dump_busy, 0, __ATOMIC_RELEASE);
  return n;
}

uint64_t framewalk_mcount_lost(void) { return lost_calls(); }

}  // extern "C"

#include "target/ptrace_snapshot.hpp"
#include "target/ptrace_target.hpp"

#include "base/clock.hpp"

#include <elf.h>
#include <sched.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>

#include "arch/machine.hpp"

namespace framewalk {

namespace {

// Memory mapped for the lifetime of a snapshot.
struct Mapping {
  void* address = MAP_FAILED;
  size_t size = 0;
  Mapping() = default;
  Mapping(size_t bytes, bool populate) : size(bytes) {
    address = mmap(nullptr, bytes, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | (populate ? MAP_POPULATE : 0), -1, 0);
  }
  Mapping(const Mapping&) = delete;
  Mapping& operator=(const Mapping&) = delete;
  ~Mapping() {
    if (address != MAP_FAILED) munmap(address, size);
  }
  bool ok() const { return address != MAP_FAILED; }
  uint8_t* bytes() const { return static_cast<uint8_t*>(address); }
};

// What one tracer reports for one thread.
struct ThreadOut {
  AttachError error = AttachError::kNone;
  int error_number = 0;
  // The thread's elf_gregset_t, from PTRACE_GETREGSET(NT_PRSTATUS).
  uint8_t gregs[arch::Machine::kMaxGregsetSize];
  size_t gregs_size = 0;
  uint64_t stack_address = 0;
  uint8_t* copy = nullptr;
  size_t stack_size = 0;
  void* overflow = nullptr;  // mapped by the tracer when its arena was full
  size_t overflow_size = 0;
};

// Everything one tracer task reads and writes. It runs in our address space
// without a thread of its own in the C library's sense: it only makes system
// calls and writes into memory prepared for it (no allocation, no locks).
struct TracerWork {
  pid_t pid = 0;
  const pid_t* tids = nullptr;
  ThreadOut* out = nullptr;
  iovec* local = nullptr;
  iovec* remote = nullptr;
  size_t count = 0;
  const std::pair<uint64_t, uint64_t>* regions = nullptr;  // mappings, sorted
  size_t region_count = 0;
  size_t max_stack_copy = 0;
  uint8_t* arena = nullptr;
  size_t arena_size = 0;
  int tracers = 0;
  const arch::Machine* machine = nullptr;  // reads the gregsets
  std::atomic<int>* seized = nullptr;      // tracers done seizing
  std::atomic<bool>* abort = nullptr;      // a tracer could not be started
  std::atomic<uint64_t>* first_stop = nullptr;
  uint64_t stopped = 0, copied = 0;  // when this tracer had read every register, copied every stack
};

AttachError attach_error(int error_number) {
  return error_number == ESRCH ? AttachError::kGone
         : error_number == EPERM ? AttachError::kNotPermitted
                                 : AttachError::kOther;
}

// The end of the mapping holding `address`, or 0.
uint64_t region_end(const TracerWork& w, uint64_t address) {
  size_t lo = 0, hi = w.region_count;
  while (lo < hi) {
    const size_t mid = lo + (hi - lo) / 2;
    if (w.regions[mid].first <= address) lo = mid + 1; else hi = mid;
  }
  if (lo == 0) return 0;
  const auto& r = w.regions[lo - 1];
  return address < r.second ? r.second : 0;
}

// Waits (without reaping: the stop stays reported, its signal kept) until
// `tid` is stopped; false if it exited instead.
bool wait_stopped(pid_t tid) {
  siginfo_t info{};
  for (;;) {
    if (waitid(P_PID, static_cast<id_t>(tid), &info, WSTOPPED | WEXITED | __WALL | WNOWAIT) == 0)
      return info.si_code != CLD_EXITED && info.si_code != CLD_KILLED && info.si_code != CLD_DUMPED;
    if (errno != EINTR) return false;
  }
}

// Copies the ranges in w.local/w.remote (every thread with stack_size > 0):
// one process_vm_readv, then one per range that stopped short.
void copy_stacks(TracerWork& w) {
  size_t n = 0;
  for (size_t i = 0; i < w.count; ++i) {
    if (w.out[i].stack_size == 0) continue;
    w.local[n] = iovec{w.out[i].copy, w.out[i].stack_size};
    w.remote[n] = iovec{reinterpret_cast<void*>(w.out[i].stack_address), w.out[i].stack_size};
    ++n;
  }
  size_t done = 0;
  while (done < n) {
    const size_t batch = std::min<size_t>(n - done, 1024);  // IOV_MAX
    const ssize_t got = process_vm_readv(w.pid, &w.local[done], batch, &w.remote[done], batch, 0);
    size_t bytes = got > 0 ? static_cast<size_t>(got) : 0;
    size_t k = done;
    while (k < done + batch && bytes >= w.local[k].iov_len) bytes -= w.local[k++].iov_len;
    if (k < done + batch) {
      // This range stopped short (its end is unreadable): keep what came.
      for (size_t i = 0; i < w.count; ++i)
        if (w.out[i].copy == w.local[k].iov_base) w.out[i].stack_size = bytes;
      ++k;
    }
    done = k;
  }
}

int tracer_main(void* argument) {
  TracerWork& w = *static_cast<TracerWork*>(argument);
  prctl(PR_SET_PDEATHSIG, SIGKILL);  // if framewalk dies, so do we, which releases the threads
  for (size_t i = 0; i < w.count; ++i)
    if (ptrace(PTRACE_SEIZE, w.tids[i], nullptr, nullptr) != 0) {
      w.out[i].error_number = errno;
      w.out[i].error = attach_error(errno);
    }
  // Seizing stops nothing: the pause starts once every tracer is ready.
  w.seized->fetch_add(1);
  const uint64_t give_up = monotonic_ns() + 2000000000u;
  while (w.seized->load() < w.tracers && !w.abort->load()) {
    if (monotonic_ns() > give_up) w.abort->store(true);
    sched_yield();
  }
  if (w.abort->load()) {
    for (size_t i = 0; i < w.count; ++i)
      if (w.out[i].error == AttachError::kNone) {
        w.out[i].error = AttachError::kOther;
        w.out[i].error_number = EAGAIN;
      }
    syscall(SYS_exit, 0);
  }
  uint64_t start = monotonic_ns();
  uint64_t first = w.first_stop->load();
  while (start < first && !w.first_stop->compare_exchange_weak(first, start)) {
  }
  for (size_t i = 0; i < w.count; ++i)
    if (w.out[i].error == AttachError::kNone && ptrace(PTRACE_INTERRUPT, w.tids[i], nullptr, nullptr) != 0) {
      w.out[i].error_number = errno;
      w.out[i].error = AttachError::kGone;
    }
  // Registers as each thread stops (most have by the time we get to them).
  for (size_t i = 0; i < w.count; ++i) {
    ThreadOut& o = w.out[i];
    if (o.error != AttachError::kNone) continue;
    int tries = 0;
    for (;;) {
      iovec io{o.gregs, sizeof o.gregs};
      if (ptrace(PTRACE_GETREGSET, w.tids[i], reinterpret_cast<void*>(uintptr_t{NT_PRSTATUS}), &io) == 0) {
        o.gregs_size = io.iov_len;
        break;
      }
      const int e = errno;
      if (e != ESRCH || ++tries > 3 || !wait_stopped(w.tids[i])) {
        o.error_number = e;
        o.error = AttachError::kGone;
        break;
      }
    }
  }
  w.stopped = monotonic_ns();
  // Each stack's live part: from below sp (the red zone) to the end of its
  // mapping, at most max_stack_copy.
  size_t used = 0;
  for (size_t i = 0; i < w.count; ++i) {
    ThreadOut& o = w.out[i];
    if (o.error != AttachError::kNone) continue;
    const arch::Machine& machine = *w.machine;
    const uint64_t sp = machine.registers_from_gregset(Bytes(o.gregs, o.gregs_size))
                            .value_or(machine.stack_pointer(), 0);
    const uint64_t end = region_end(w, sp);
    if (end == 0) continue;  // sp outside every mapping: nothing to copy
    const uint64_t from = sp >= 128 ? sp - 128 : 0;
    const size_t size = static_cast<size_t>(std::min<uint64_t>(end - from, w.max_stack_copy));
    o.stack_address = from;
    o.stack_size = size;
    if (size <= w.arena_size - used) {
      o.copy = w.arena + used;
      used += size;
    } else {
      void* extra = mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
      if (extra == MAP_FAILED) {
        o.stack_size = 0;
        continue;
      }
      o.overflow = extra;
      o.overflow_size = size;
      o.copy = static_cast<uint8_t*>(extra);
    }
  }
  copy_stacks(w);
  w.copied = monotonic_ns();
  // Exiting releases every thread this task traces, as they were.
  syscall(SYS_exit, 0);
  return 0;
}

// Blocks every signal while alive: a tracer inherits the mask, so no handler
// of ours ever runs in it.
class BlockAllSignals {
 public:
  BlockAllSignals() {
    sigset_t all;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old_);
  }
  ~BlockAllSignals() { pthread_sigmask(SIG_SETMASK, &old_, nullptr); }

 private:
  sigset_t old_;
};

}  // namespace

struct PtraceSnapshot::Arena {
  Arena(size_t bytes, size_t threads) : copies(bytes, true), out(threads) {}
  Mapping copies;  // faulted in before the stop
  std::vector<ThreadOut> out;
  ~Arena() {
    for (ThreadOut& o : out)
      if (o.overflow) munmap(o.overflow, o.overflow_size);
  }
};

PtraceSnapshot PtraceSnapshot::take(pid_t pid, const std::vector<pid_t>& tids, const std::vector<MapEntry>& maps,
                                    const SnapshotOptions& options) {
  PtraceSnapshot snap;
  // The process's machine, whose elf_gregset_t the threads' registers are.
  const arch::Machine& machine = options.machine ? *options.machine : arch::host_machine();
  const size_t n = tids.size();
  snap.threads_.resize(n);
  for (size_t i = 0; i < n; ++i) snap.threads_[i].tid = tids[i];
  if (n == 0) return snap;

  // Everything the tracers use is prepared here, before anything stops.
  std::vector<std::pair<uint64_t, uint64_t>> regions;
  for (const MapEntry& m : maps) regions.emplace_back(m.start, m.end);
  std::sort(regions.begin(), regions.end());
  auto arena = std::make_shared<Arena>(std::max<size_t>(n * options.reserved_per_thread, 64u << 10), n);
  std::vector<iovec> local(n), remote(n);
  const int tracers = static_cast<int>(std::clamp<size_t>(static_cast<size_t>(options.tracers), 1, n));
  std::vector<TracerWork> work(static_cast<size_t>(tracers));
  std::atomic<int> seized{0};
  std::atomic<bool> abort{false};
  std::atomic<uint64_t> first_stop{UINT64_MAX};
  const size_t arena_share = arena->copies.ok() ? arena->copies.size / static_cast<size_t>(tracers) : 0;
  for (int k = 0; k < tracers; ++k) {
    const size_t from = n * static_cast<size_t>(k) / static_cast<size_t>(tracers);
    const size_t to = n * static_cast<size_t>(k + 1) / static_cast<size_t>(tracers);
    TracerWork& w = work[static_cast<size_t>(k)];
    w.pid = pid;
    w.tids = tids.data() + from;
    w.out = arena->out.data() + from;
    w.local = local.data() + from;
    w.remote = remote.data() + from;
    w.count = to - from;
    w.regions = regions.data();
    w.region_count = regions.size();
    w.max_stack_copy = options.max_stack_copy;
    w.arena = arena->copies.ok() ? arena->copies.bytes() + arena_share * static_cast<size_t>(k) : nullptr;
    w.arena_size = arena_share;
    w.tracers = tracers;
    w.machine = &machine;
    w.seized = &seized;
    w.abort = &abort;
    w.first_stop = &first_stop;
  }
  constexpr size_t kTracerStack = 64u << 10;
  Mapping stacks(kTracerStack * static_cast<size_t>(tracers), true);
  std::vector<pid_t> children;
  if (stacks.ok()) {
    BlockAllSignals blocked;
    for (int k = 0; k < tracers; ++k) {
      uint8_t* top = stacks.bytes() + kTracerStack * static_cast<size_t>(k + 1);
      const pid_t child = clone(tracer_main, top, CLONE_VM | SIGCHLD, &work[static_cast<size_t>(k)]);
      if (child < 0) {
        abort.store(true);
        // Its share was never seized: report it as not stopped.
        for (size_t i = 0; i < work[static_cast<size_t>(k)].count; ++i) {
          work[static_cast<size_t>(k)].out[i].error = AttachError::kOther;
          work[static_cast<size_t>(k)].out[i].error_number = errno;
        }
        continue;
      }
      hold_tracer_task(child);  // signals are blocked until every tracer is registered
      children.push_back(child);
    }
  } else {
    for (ThreadOut& o : arena->out) {
      o.error = AttachError::kOther;
      o.error_number = ENOMEM;
    }
  }
  for (pid_t child : children) {
    // Wait for the exit without reaping, so that the pid stays the tracer's
    // while the signal handler may still kill and reap it; then forget and
    // reap it with signals blocked.
    siginfo_t info;
    while (waitid(P_PID, static_cast<id_t>(child), &info, WEXITED | WNOWAIT) < 0 && errno == EINTR) {
    }
    BlockAllSignals blocked;
    forget_tracer_task(child);
    int status = 0;
    while (waitpid(child, &status, 0) < 0 && errno == EINTR) {
    }
  }
  const uint64_t released = monotonic_ns();
  const uint64_t first = first_stop.load();
  snap.pause_ns_ = first != UINT64_MAX && released > first ? released - first : 0;
  if (snap.pause_ns_) {
    uint64_t stopped = first, copied = first;
    for (const TracerWork& w : work) {
      stopped = std::max(stopped, w.stopped);
      copied = std::max(copied, w.copied);
    }
    snap.phases_ = {stopped - first, copied > stopped ? copied - stopped : 0, released > copied ? released - copied : 0};
  }

  for (size_t i = 0; i < n; ++i) {
    const ThreadOut& o = arena->out[i];
    SnapshotThread& t = snap.threads_[i];
    t.error = o.error;
    t.error_number = o.error_number;
    if (o.error != AttachError::kNone) continue;
    t.registers = machine.registers_from_gregset(Bytes(o.gregs, o.gregs_size));
    t.stack_address = o.stack_address;
    t.stack_size = o.stack_size;
    if (o.stack_size) snap.copies_.emplace(o.stack_address, std::make_pair(o.copy, o.stack_size));
  }
  snap.arena_ = std::move(arena);
  return snap;
}

namespace {

class SnapshotMemory final : public Memory {
 public:
  SnapshotMemory(const std::map<uint64_t, std::pair<const uint8_t*, size_t>>& copies, Memory& live)
      : copies_(copies), live_(live) {}
  size_t read(uint64_t address, void* out, size_t size) override {
    auto it = copies_.upper_bound(address);
    if (it != copies_.begin()) {
      --it;
      const uint64_t offset = address - it->first;
      const auto& [data, length] = it->second;
      if (offset < length && size <= length - offset) {
        std::memcpy(out, data + offset, size);
        return size;
      }
    }
    return live_.read(address, out, size);
  }

 private:
  const std::map<uint64_t, std::pair<const uint8_t*, size_t>>& copies_;
  Memory& live_;
};

}  // namespace

std::unique_ptr<Memory> PtraceSnapshot::memory(Memory& live) const {
  return std::make_unique<SnapshotMemory>(copies_, live);
}

}  // namespace framewalk

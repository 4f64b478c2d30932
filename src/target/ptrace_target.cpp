#include "target/ptrace_target.hpp"

#include <dirent.h>
#include <elf.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/ptrace.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>

#include "arch/machine.hpp"
#include "elf/elf_file.hpp"

namespace framewalk {

namespace {

// Threads held by any session, for the signal handler: a fixed table so that
// the handler neither allocates nor locks. A slot holds a thread id (low 32
// bits) and the signal to hand back on detach (above them); 0 is free. Slots
// are reused, so any number of seizes over a process's life can be recorded
// (at most kMaxHeld threads held at once).
constexpr int kMaxHeld = 65536;
std::atomic<uint64_t> g_held[kMaxHeld];
std::atomic<int> g_held_high{0};  // slots at or above this one were never used
std::atomic<int> g_held_hint{0};  // where the next search for a free slot starts

uint64_t held_slot(pid_t tid, int signal) {
  return static_cast<uint32_t>(tid) | static_cast<uint64_t>(static_cast<uint32_t>(signal)) << 32;
}
pid_t slot_tid(uint64_t slot) { return static_cast<pid_t>(static_cast<uint32_t>(slot)); }
int slot_signal(uint64_t slot) { return static_cast<int>(slot >> 32); }

void remember_held(pid_t tid) {
  const int start = g_held_hint.load(std::memory_order_relaxed);
  for (int k = 0; k < kMaxHeld; ++k) {
    const int i = (start + k) % kMaxHeld;
    uint64_t free_slot = 0;
    if (!g_held[i].compare_exchange_strong(free_slot, held_slot(tid, 0))) continue;
    int high = g_held_high.load();
    while (high < i + 1 && !g_held_high.compare_exchange_weak(high, i + 1)) {
    }
    g_held_hint.store((i + 1) % kMaxHeld, std::memory_order_relaxed);
    return;
  }
}

std::atomic<uint64_t>* held_slot_of(pid_t tid) {
  const int n = g_held_high.load();
  for (int i = 0; i < n; ++i)
    if (slot_tid(g_held[i].load()) == tid) return &g_held[i];
  return nullptr;
}

// The signal a held thread stopped with, for a detach the handler makes.
void remember_pending_signal(pid_t tid, int signal) {
  if (std::atomic<uint64_t>* slot = held_slot_of(tid)) slot->store(held_slot(tid, signal));
}

void forget_held(pid_t tid) {
  if (std::atomic<uint64_t>* slot = held_slot_of(tid)) {
    slot->store(0);
    g_held_hint.store(static_cast<int>(slot - g_held), std::memory_order_relaxed);
  }
}

// Tracer tasks holding threads (ptrace_snapshot), for the same handler.
constexpr int kMaxTracers = 16;
std::atomic<pid_t> g_tracers[kMaxTracers];

}  // namespace

void release_held_threads() {
  // Each thread gets back the signal it stopped with, as on a normal detach.
  const int n = g_held_high.load();
  for (int i = 0; i < n; ++i) {
    const uint64_t slot = g_held[i].exchange(0);
    if (slot_tid(slot) > 0)
      ptrace(PTRACE_DETACH, slot_tid(slot), nullptr, reinterpret_cast<void*>(static_cast<intptr_t>(slot_signal(slot))));
  }
  // A tracer's threads are released when it exits, and it has exited when
  // it can be reaped: exit only then, so that whoever waits for framewalk
  // finds the target released.
  for (auto& slot : g_tracers) {
    const pid_t task = slot.exchange(0);
    if (task <= 0) continue;
    kill(task, SIGKILL);
    while (waitpid(task, nullptr, 0) < 0 && errno == EINTR) {
    }
  }
  // Threads still running (interrupt not yet delivered) are released by the
  // kernel when this process exits.
}

size_t ProcessMemory::peek(uint64_t address, void* out, size_t size) {
  size_t done = 0;
  auto* dst = static_cast<uint8_t*>(out);
  while (done < size) {
    const uint64_t at = address + done;
    const uint64_t aligned = at & ~uint64_t{7};
    errno = 0;
    const long word = ptrace(PTRACE_PEEKDATA, pid_, reinterpret_cast<void*>(aligned), nullptr);
    if (errno != 0) break;
    const size_t skip = static_cast<size_t>(at - aligned);
    const size_t n = std::min(size - done, 8 - skip);
    std::memcpy(dst + done, reinterpret_cast<const uint8_t*>(&word) + skip, n);
    done += n;
  }
  return done;
}

size_t ProcessMemory::read(uint64_t address, void* out, size_t size) {
  if (size == 0) return 0;
  if (!use_peek_) {
    iovec local{out, size};
    iovec remote{reinterpret_cast<void*>(address), size};
    const ssize_t n = process_vm_readv(pid_, &local, 1, &remote, 1, 0);
    if (n >= 0) {
      return static_cast<size_t>(n);  // short: stopped at an unreadable page
    }
    // EFAULT: the first byte is unreadable. ENOSYS/EPERM: the call is not
    // available here; fall back to PTRACE_PEEKDATA from now on.
    if (errno != ENOSYS && errno != EPERM) return 0;
    use_peek_ = true;
  }
  return peek(address, out, size);
}

PtraceSession::PtraceSession(pid_t pid) : pid_(pid), machine_(process_machine(pid)), memory_(pid) {}

PtraceSession::~PtraceSession() { detach_all(); }

std::vector<pid_t> PtraceSession::threads() const {
  std::vector<pid_t> out;
  const std::string dir = "/proc/" + std::to_string(pid_) + "/task";
  DIR* d = opendir(dir.c_str());
  if (!d) return out;
  while (dirent* e = readdir(d)) {
    if (e->d_name[0] < '0' || e->d_name[0] > '9') continue;
    out.push_back(static_cast<pid_t>(std::atoi(e->d_name)));
  }
  closedir(d);
  std::sort(out.begin(), out.end());
  // The main thread first, as debuggers list it.
  auto it = std::find(out.begin(), out.end(), pid_);
  if (it != out.end()) std::rotate(out.begin(), it, it + 1);
  return out;
}

bool PtraceSession::seize(ThreadStop& s) {
  if (ptrace(PTRACE_SEIZE, s.tid, nullptr, nullptr) != 0) {
    s.error_number = errno;
    s.error = errno == ESRCH ? AttachError::kGone : errno == EPERM ? AttachError::kNotPermitted : AttachError::kOther;
    return false;
  }
  remember_held(s.tid);
  return true;
}

bool PtraceSession::interrupt(ThreadStop& s) {
  if (ptrace(PTRACE_INTERRUPT, s.tid, nullptr, nullptr) != 0) {
    s.error_number = errno;
    s.error = AttachError::kGone;
    ptrace(PTRACE_DETACH, s.tid, nullptr, nullptr);
    forget_held(s.tid);
    return false;
  }
  return true;
}

void PtraceSession::finish_stop(ThreadStop& s) {
  for (;;) {
    int status = 0;
    const pid_t r = waitpid(s.tid, &status, __WALL);
    if (r < 0) {
      if (errno == EINTR) continue;
      s.error_number = errno;
      s.error = AttachError::kGone;
      forget_held(s.tid);
      return;
    }
    if (WIFEXITED(status) || WIFSIGNALED(status)) {
      s.error = AttachError::kGone;
      forget_held(s.tid);
      return;
    }
    if (!WIFSTOPPED(status)) continue;
    const int sig = WSTOPSIG(status);
    const int event = status >> 16;
    if (event == PTRACE_EVENT_STOP) {
      // Our interrupt (SIGTRAP) or a group-stop the process was already in.
      s.group_stopped = sig != SIGTRAP;
    } else {
      // A signal arrived first: the thread is in signal-delivery-stop. Keep it
      // there and hand the signal back when we detach.
      s.pending_signal = sig;
      remember_pending_signal(s.tid, sig);
    }
    break;
  }
  held_.push_back(s);
}

ThreadStop PtraceSession::stop(pid_t tid) {
  ThreadStop s;
  s.tid = tid;
  if (seize(s) && interrupt(s)) finish_stop(s);
  return s;
}

std::vector<ThreadStop> PtraceSession::stop_all(const std::vector<pid_t>& tids) {
  std::vector<ThreadStop> stops = seize_all(tids);
  interrupt_all(stops);
  return stops;
}

std::vector<ThreadStop> PtraceSession::seize_all(const std::vector<pid_t>& tids) {
  std::vector<ThreadStop> stops(tids.size());
  for (size_t i = 0; i < tids.size(); ++i) {
    stops[i].tid = tids[i];
    seize(stops[i]);
  }
  return stops;
}

void PtraceSession::interrupt_all(std::vector<ThreadStop>& stops) {
  std::vector<bool> started(stops.size());
  for (size_t i = 0; i < stops.size(); ++i) started[i] = stops[i].error == AttachError::kNone && interrupt(stops[i]);
  for (size_t i = 0; i < stops.size(); ++i)
    if (started[i]) finish_stop(stops[i]);
}

bool PtraceSession::registers(pid_t tid, arch::RegisterFile* out, int* error_number) {
  // PTRACE_GETREGSET(NT_PRSTATUS) works on every machine, in its
  // elf_gregset_t: the layout the machine descriptor reads from cores too.
  uint8_t gregs[arch::Machine::kMaxGregsetSize];
  iovec io{gregs, sizeof gregs};
  if (ptrace(PTRACE_GETREGSET, tid, reinterpret_cast<void*>(uintptr_t{NT_PRSTATUS}), &io) != 0) {
    if (error_number) *error_number = errno;
    return false;
  }
  *out = machine_.registers_from_gregset(Bytes(gregs, io.iov_len));
  return true;
}

std::optional<uint64_t> PtraceSession::pointer_auth_mask(pid_t tid) {
  const uint32_t regset = machine_.pointer_auth_regset();
  if (regset == 0) return std::nullopt;
  uint64_t masks[2] = {};  // data_mask, insn_mask
  iovec io{masks, sizeof masks};
  if (ptrace(PTRACE_GETREGSET, tid, reinterpret_cast<void*>(uintptr_t{regset}), &io) != 0 || io.iov_len < sizeof masks)
    return std::nullopt;
  return masks[1];
}

void PtraceSession::detach(pid_t tid) {
  auto it = std::find_if(held_.begin(), held_.end(), [&](const ThreadStop& s) { return s.tid == tid; });
  if (it == held_.end()) return;
  ptrace(PTRACE_DETACH, tid, nullptr, reinterpret_cast<void*>(static_cast<intptr_t>(it->pending_signal)));
  forget_held(tid);
  held_.erase(it);
}

void PtraceSession::detach_all() {
  for (const ThreadStop& s : held_) {
    ptrace(PTRACE_DETACH, s.tid, nullptr, reinterpret_cast<void*>(static_cast<intptr_t>(s.pending_signal)));
    forget_held(s.tid);
  }
  held_.clear();
}

void hold_tracer_task(pid_t task) {
  for (auto& slot : g_tracers) {
    pid_t empty = 0;
    if (slot.compare_exchange_strong(empty, task)) return;
  }
}

void forget_tracer_task(pid_t task) {
  for (auto& slot : g_tracers) {
    pid_t expected = task;
    if (slot.compare_exchange_strong(expected, 0)) return;
  }
}

const arch::Machine& process_machine(pid_t pid) {
  char path[64];
  std::snprintf(path, sizeof path, "/proc/%d/exe", pid);
  uint8_t header[52];  // up to a 64-bit header's e_flags
  const int fd = ::open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return arch::host_machine();
  const ssize_t n = ::read(fd, header, sizeof header);
  ::close(fd);
  if (n <= 0) return arch::host_machine();
  const auto key = elf::header_machine_key(Bytes(header, static_cast<size_t>(n)));
  const arch::Machine* m = key.ok() ? arch::machine_for(*key) : nullptr;
  return m ? *m : arch::host_machine();
}

bool process_exists(pid_t pid, std::string* why) {
  if (kill(pid, 0) == 0 || errno == EPERM) {
    const std::string stat = "/proc/" + std::to_string(pid) + "/stat";
    if (access(stat.c_str(), R_OK) == 0) return true;
  }
  if (why) *why = "no such process";
  return false;
}

std::string thread_name(pid_t pid, pid_t tid) {
  char path[64];
  std::snprintf(path, sizeof path, "/proc/%d/task/%d/comm", pid, tid);
  const int fd = ::open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return {};
  char buf[64];
  const ssize_t n = ::read(fd, buf, sizeof buf);
  ::close(fd);
  if (n <= 0) return {};
  std::string name(buf, static_cast<size_t>(n));
  while (!name.empty() && name.back() == '\n') name.pop_back();
  return name;
}

}  // namespace framewalk

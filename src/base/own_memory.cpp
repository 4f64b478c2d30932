#include "base/own_memory.hpp"

#include <linux/futex.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>

namespace framewalk {

namespace {

// System calls made directly: a probe that fails must not change errno, which
// the code a signal handler interrupted may be about to read.
long raw_syscall(long number, long a, long b, long c, long d, long e, long f) {
#if defined(__x86_64__)
  register long r10 asm("r10") = d;
  register long r8 asm("r8") = e;
  register long r9 asm("r9") = f;
  long result;
  asm volatile("syscall"
               : "=a"(result)
               : "0"(number), "D"(a), "S"(b), "d"(c), "r"(r10), "r"(r8), "r"(r9)
               : "rcx", "r11", "memory");
  return result;
#else
  const int saved = errno;
  const long result = syscall(number, a, b, c, d, e, f);
  const long out = result < 0 ? -errno : result;
  errno = saved;
  return out;
#endif
}

// Set once process_vm_readv fails other than with EFAULT (seccomp filters,
// the default of container runtimes, refuse it): pages are probed one by
// one from then on.
std::atomic<bool> g_vm_readv_refused{false};

long vm_readv_self(const iovec* local, size_t local_count, const iovec* remote, size_t remote_count) {
  const long self = raw_syscall(SYS_getpid, 0, 0, 0, 0, 0, 0);
  const long got = raw_syscall(SYS_process_vm_readv, self, reinterpret_cast<long>(local), static_cast<long>(local_count),
                               reinterpret_cast<long>(remote), static_cast<long>(remote_count), 0);
  if (got < 0 && got != -EFAULT) g_vm_readv_refused.store(true, std::memory_order_relaxed);
  return got;
}

// Set once a futex probe fails other than with EFAULT (a sandbox that allows
// only some futex operations): pages are probed with process_vm_readv then.
std::atomic<bool> g_futex_refused{false};

// Whether the page at `page` can be read: a futex compare of its first word
// (FUTEX_CMP_REQUEUE that moves no waiter reads the word, fails with EFAULT
// when it cannot, and changes nothing; the requeue target is the next word).
// A system call every program makes all the time, so cheap even the first
// time in a process.
bool page_readable(uint64_t page) {
  if (!g_futex_refused.load(std::memory_order_relaxed)) {
    const long r = raw_syscall(SYS_futex, static_cast<long>(page), FUTEX_CMP_REQUEUE_PRIVATE, 0, 0,
                               static_cast<long>(page + 4), 0x5a5a5a5a);
    if (r == 0 || r == -EAGAIN) return true;  // the word was read: equal, or not
    if (r == -EFAULT) return false;
    g_futex_refused.store(true, std::memory_order_relaxed);
  }
  char sink;
  iovec local{&sink, 1};
  iovec remote{reinterpret_cast<void*>(page), 1};
  return vm_readv_self(&local, 1, &remote, 1) == 1;
}

}  // namespace

uint64_t readable_until(uint64_t first, uint64_t end) {
  // A few pages one by one; a longer range with batched process_vm_readv, a
  // byte of each page per call, which stops at the first it cannot read.
  constexpr uint64_t kPagesOneByOne = 8;
  if (end > first && (end - first) / 4096 > kPagesOneByOne && !g_vm_readv_refused.load(std::memory_order_relaxed)) {
    constexpr size_t kBatch = 64;
    char sink[kBatch];
    iovec local[kBatch];
    iovec remote[kBatch];
    while (first < end) {
      size_t n = 0;
      for (; n < kBatch && first + n * 4096 < end; ++n) {
        local[n] = iovec{sink + n, 1};
        remote[n] = iovec{reinterpret_cast<void*>(first + n * 4096), 1};
      }
      const long got = vm_readv_self(local, n, remote, n);
      if (got < 0 && got != -EFAULT) break;  // refused: probe page by page below
      if (got != static_cast<long>(n)) return first + (got > 0 ? static_cast<uint64_t>(got) : 0) * 4096;
      first += n * 4096;
    }
    if (first >= end) return first;
  }
  for (; first < end; first += 4096)
    if (!page_readable(first)) return first;
  return first;
}

size_t read_own_memory(uint64_t address, void* out, size_t size) {
  if (size == 0 || address + size < address) return 0;
  if (!g_vm_readv_refused.load(std::memory_order_relaxed)) {
    iovec local{out, size};
    iovec remote{reinterpret_cast<void*>(address), size};
    const long got = vm_readv_self(&local, 1, &remote, 1);
    if (got >= 0) return static_cast<size_t>(got);
    if (got == -EFAULT) return 0;
  }
  const uint64_t first = address & ~uint64_t{4095};
  const uint64_t end = ((address + size - 1) & ~uint64_t{4095}) + 4096;
  const uint64_t readable = readable_until(first, end);
  if (readable <= address) return 0;
  const size_t n = readable >= address + size ? size : static_cast<size_t>(readable - address);
  std::memcpy(out, reinterpret_cast<const void*>(address), n);
  return n;
}

}  // namespace framewalk

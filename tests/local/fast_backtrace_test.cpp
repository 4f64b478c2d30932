// framewalk_backtrace: identical to the full executor, no allocation, safe in
// signal handlers while libraries come and go, and a bad stack ends the walk.
#include <dlfcn.h>
#include <gtest/gtest.h>
#include <pthread.h>
#include <signal.h>
#include <linux/filter.h>
#include <linux/futex.h>
#include <linux/seccomp.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <ucontext.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "framewalk/backtrace.h"
#include "arch/capture.hpp"
#include "arch/machine.hpp"
#include "base/own_memory.hpp"
#include "elf/elf_file.hpp"
#include "local/fast_unwinder.hpp"
#include "unwind/compact_rule.hpp"
#include "support/allocation_counter.hpp"
#include "support/own_context.hpp"
#include "support/recursion.hpp"
#include "target/local_target.hpp"
#include "local/fp_only.h"

namespace {

using framewalk::test::g_allocations_while_unwinding;  // the binary's malloc interposer
using framewalk::test::recurse_then;
using framewalk::test::t_unwinding;

struct Compare {
  int depth;
  int fast_n, slow_n;
  void* fast[512];
  void* slow[512];
};

int compare_at_bottom(void* arg) {
  auto* c = static_cast<Compare*>(arg);
  ucontext_t uc;
  getcontext(&uc);
  framewalk::test::complete_getcontext(&uc);
  // Both start from the same context: the frames must be the same.
  c->fast_n = framewalk_backtrace_ucontext(&uc, c->fast, 512);
  c->slow_n = framewalk::LocalUnwinder::instance().backtrace(&uc, c->slow, 512);
  return 0;
}

TEST(FastBacktrace, IdenticalToTheFullExecutor) {
  for (int depth : {0, 1, 5, 50, 200}) {
    for (int round = 0; round < 2; ++round) {  // cold cache, then warm
      if (round == 0) framewalk_backtrace_flush_cache();
      Compare c{};
      c.depth = depth;
      recurse_then(depth, compare_at_bottom, &c);
      ASSERT_GT(c.fast_n, depth) << "depth " << depth;
      ASSERT_EQ(c.fast_n, c.slow_n) << "depth " << depth << " round " << round;
      for (int i = 0; i < c.fast_n; ++i) EXPECT_EQ(c.fast[i], c.slow[i]) << "frame " << i << " depth " << depth;
    }
  }
}

#if defined(__arm__)
// 32-bit ARM: Thumb code keeps its frame pointer in r7, ARM-state code in
// r11, and the hot loop tracks both. Frames of each state whose CFA is based
// on its frame pointer (alloca: EHABI's "vsp = r7" or "vsp = r11") saving
// the other register, and frames based on sp saving both or neither, called
// in turn: the fast path gives the full unwinder's frames, and warm the
// cache serves every one of them (a deeper stack of them looks up no row).
struct Bottom {  // what the deepest frame calls
  int (*fn)(void*);
  void* arg;
};
int mixed_frames(int depth, const Bottom* bottom);

__attribute__((target("thumb"), noinline)) int thumb_r7_frame(int depth, const Bottom* bottom) {
  volatile char* pad = static_cast<volatile char*>(__builtin_alloca(8 + (depth & 7)));
  pad[0] = 1;
  asm volatile("" ::: "r11");  // ARM state's frame pointer, saved here
  const int r = mixed_frames(depth - 1, bottom);
  asm volatile("" ::: "memory");
  return r + (pad[0] & 0);
}
__attribute__((target("arm"), noinline)) int arm_r11_frame(int depth, const Bottom* bottom) {
  volatile char* pad = static_cast<volatile char*>(__builtin_alloca(8 + (depth & 7)));
  pad[0] = 1;
  asm volatile("" ::: "r7");  // Thumb's frame pointer, saved here
  const int r = mixed_frames(depth - 1, bottom);
  asm volatile("" ::: "memory");
  return r + (pad[0] & 0);
}
__attribute__((target("thumb"), noinline)) int thumb_sp_frame(int depth, const Bottom* bottom) {
  asm volatile("" ::: "r7", "r11");
  const int r = mixed_frames(depth - 1, bottom);
  asm volatile("" ::: "memory");
  return r;
}
__attribute__((target("arm"), noinline)) int arm_sp_frame(int depth, const Bottom* bottom) {
  const int r = mixed_frames(depth - 1, bottom);
  asm volatile("" ::: "memory");
  return r;
}
__attribute__((noinline)) int mixed_frames(int depth, const Bottom* bottom) {
  if (depth <= 0) return bottom->fn(bottom->arg);
  int r;
  switch (depth & 3) {
    case 0: r = thumb_r7_frame(depth, bottom); break;
    case 1: r = arm_r11_frame(depth, bottom); break;
    case 2: r = thumb_sp_frame(depth, bottom); break;
    default: r = arm_sp_frame(depth, bottom); break;
  }
  asm volatile("" ::: "memory");  // a frame of its own, not a tail call
  return r;
}

TEST(FastBacktrace, ThumbAndArmFramePointersMatchTheFullExecutor) {
  framewalk_backtrace_flush_cache();
  for (int round = 0; round < 3; ++round) {  // cold, then warm
    uint64_t looked_up[2];
    int index = 0;
    for (int depth : {8, 40}) {
      Compare c{};
      const uint64_t before = framewalk::local::slow_lookup_count();
      const Bottom bottom{compare_at_bottom, &c};
      mixed_frames(depth, &bottom);
      looked_up[index++] = framewalk::local::slow_lookup_count() - before;
      ASSERT_GT(c.fast_n, 2 * depth) << "depth " << depth << " round " << round;  // two frames a level
      ASSERT_EQ(c.fast_n, c.slow_n) << "depth " << depth << " round " << round;
      for (int i = 0; i < c.fast_n; ++i)
        ASSERT_EQ(c.fast[i], c.slow[i]) << "frame " << i << " depth " << depth << " round " << round;
    }
    if (round > 0) {
      EXPECT_EQ(looked_up[1], looked_up[0]) << "round " << round;
    }
  }
}
#endif

// Frames of 16 KiB and 48 KiB (the cache holds CFA offsets up to 1 MiB) and
// of 2 MiB (it does not: the step loop steps that frame on every walk).
template <size_t kBytes>
__attribute__((noinline)) int big_frame_then(int (*fn)(void*), void* arg) {
  volatile char pad[kBytes];
  pad[0] = 1;
  pad[kBytes - 1] = 2;
  const int r = recurse_then(3, fn, arg);
  return r + (pad[0] & 0) + (pad[kBytes - 1] & 0);
}

// Counts the rows a walk from fn looks up the slow way, twice from one call
// site: first as it comes, then warm. Warm, none is looked up where the
// outermost frame's tables say that the stack ends there (x86-64's and
// AArch64's CFI); on 32-bit ARM one, crt1's _start or glibc's __clone, whose
// index entries are EXIDX_CANTUNWIND (no row: the step loop takes that frame
// on every walk and ends there, as the full unwinder does).
struct Lookups {
  uint64_t first, warm;
};
__attribute__((noinline)) Lookups lookups_of_two_walks() {
  void* frames[256];
  uint64_t counts[2];
  // One call site, so that the second walk is warm: a loop gcc cannot
  // unroll (on ppc64le it unrolls one of two rounds, despite an unroll pragma).
  volatile int rounds = 2;
  for (int round = 0; round < rounds; ++round) {
    uint64_t& count = counts[round];
    const uint64_t before = framewalk::local::slow_lookup_count();
    EXPECT_GT(framewalk_backtrace(frames, 256), 2);
    asm volatile("" ::: "memory");
    count = framewalk::local::slow_lookup_count() - before;
  }
  return {counts[0], counts[1]};
}

TEST(FastBacktrace, FramesLargerThanTheCacheHolds) {
  static_assert(48 * 1024 < framewalk::kMaxCompactCfaOffset && 2 * 1024 * 1024 > framewalk::kMaxCompactCfaOffset);
  framewalk_backtrace_flush_cache();
  for (int round = 0; round < 3; ++round) {
    Compare small{}, medium{}, large{};
    const uint64_t before_small = framewalk::local::slow_lookup_count();
    big_frame_then<16 * 1024>(compare_at_bottom, &small);
    const uint64_t before_medium = framewalk::local::slow_lookup_count();
    big_frame_then<48 * 1024>(compare_at_bottom, &medium);
    const uint64_t before_large = framewalk::local::slow_lookup_count();
    big_frame_then<2 * 1024 * 1024>(compare_at_bottom, &large);
    const uint64_t after = framewalk::local::slow_lookup_count();
    for (const Compare* c : {&small, &medium, &large}) {
      ASSERT_GT(c->fast_n, 5) << "round " << round;
      ASSERT_EQ(c->fast_n, c->slow_n) << "round " << round;
      for (int i = 0; i < c->fast_n; ++i) ASSERT_EQ(c->fast[i], c->slow[i]) << "frame " << i << " round " << round;
    }
    // Warm, a ucontext walk looks up its first frame (an exact PC, never
    // cached) and, of the rest, only the frame the cache cannot hold (and
    // the stack's end where it has no row: lookups_of_two_walks).
    if (round > 0) {
      const uint64_t end = before_medium - before_small - 1;
      EXPECT_LE(end, 1u) << "round " << round;
      EXPECT_EQ(before_large - before_medium, 1u + end) << "round " << round;
      EXPECT_EQ(after - before_large, 2u + end) << "round " << round;
    }
  }
}

// A library unloaded and another loaded at the same address: the rules
// cached for the first must not be used for the second (dlclose forgets them).
TEST(FastBacktrace, ALibraryReplacedAtTheSameAddress) {
  using Call = int (*)(int (*)(void*), void*);
  const std::string dir = std::string(FRAMEWALK_BINARY_DIR) + "/tests/";
  void* first = dlopen((dir + "libfw_reload_a.so").c_str(), RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(first, nullptr) << dlerror();
  const auto call_first = reinterpret_cast<Call>(dlsym(first, "fw_reload_call"));
  ASSERT_NE(call_first, nullptr);
  framewalk::LocalUnwinder::instance().refresh();
  for (int round = 0; round < 2; ++round) {  // the second walk runs on cached rules
    Compare c{};
    call_first(compare_at_bottom, &c);
    ASSERT_GT(c.fast_n, 3);
    ASSERT_EQ(c.fast_n, c.slow_n);
    for (int i = 0; i < c.fast_n; ++i) ASSERT_EQ(c.fast[i], c.slow[i]) << "frame " << i;
  }
  ASSERT_EQ(dlclose(first), 0);

  void* second = dlopen((dir + "libfw_reload_b.so").c_str(), RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(second, nullptr) << dlerror();
  const auto call_second = reinterpret_cast<Call>(dlsym(second, "fw_reload_call"));
  ASSERT_NE(call_second, nullptr);
  if (call_second != call_first) {
    dlclose(second);
    GTEST_SKIP() << "the loader put the second library at another address";
  }
  framewalk::LocalUnwinder::instance().refresh();
  Compare c{};
  call_second(compare_at_bottom, &c);
  ASSERT_GT(c.fast_n, 3);
  ASSERT_EQ(c.fast_n, c.slow_n);
  for (int i = 0; i < c.fast_n; ++i) EXPECT_EQ(c.fast[i], c.slow[i]) << "frame " << i;
  dlclose(second);
  framewalk::LocalUnwinder::instance().refresh();
}

// The one listing of the calling process's modules (LocalUnwinder and the C
// API's calling-thread target): modules that stay keep their ids, a library
// loaded is added, and unloaded, removed.
TEST(OwnModules, UpdatesKeepIdsAndFollowDlopenAndDlclose) {
  framewalk::ModuleCache cache;
  class Self final : public framewalk::Memory {
   public:
    size_t read(uint64_t address, void* out, size_t size) override {
      return framewalk::read_own_memory(address, out, size);
    }
  } memory;
  framewalk::ModuleMap map;
  EXPECT_TRUE(framewalk::update_own_modules(map, cache, memory));
  ASSERT_GT(map.size(), 2u);
  std::vector<uint64_t> ids;
  for (const auto& m : map.modules()) ids.push_back(m->id);
  const uint64_t generation = map.generation();
  EXPECT_FALSE(framewalk::update_own_modules(map, cache, memory));  // nothing changed
  EXPECT_EQ(map.generation(), generation);
  std::vector<uint64_t> again;
  for (const auto& m : map.modules()) again.push_back(m->id);
  EXPECT_EQ(again, ids);
  // The program itself is there, and the vDSO read from memory.
  const framewalk::Module* self = map.find(reinterpret_cast<uintptr_t>(&framewalk_backtrace));
  ASSERT_NE(self, nullptr);
  EXPECT_NE(self->data, nullptr) << self->problem;

  const std::string path = std::string(FRAMEWALK_BINARY_DIR) + "/tests/libfw_reload_a.so";
  void* library = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(library, nullptr) << dlerror();
  const auto code = reinterpret_cast<uintptr_t>(dlsym(library, "fw_reload_call"));
  EXPECT_TRUE(framewalk::update_own_modules(map, cache, memory));
  const framewalk::Module* loaded = map.find(code);
  ASSERT_NE(loaded, nullptr);
  EXPECT_NE(loaded->name.find("libfw_reload_a.so"), std::string::npos) << loaded->name;
  EXPECT_EQ(std::count(ids.begin(), ids.end(), loaded->id), 0);
  EXPECT_EQ(map.size(), ids.size() + 1);
  ASSERT_EQ(dlclose(library), 0);
  EXPECT_TRUE(framewalk::update_own_modules(map, cache, memory));
  EXPECT_EQ(map.find(code), nullptr);
  std::vector<uint64_t> after;
  for (const auto& m : map.modules()) after.push_back(m->id);
  EXPECT_EQ(after, ids);
}

#if defined(__x86_64__)  // x86-64 registers, and the x86-64 linker's .plt
// A context with every register as here but rip and rsp.
__attribute__((noinline)) ucontext_t context_with(uint64_t rip, uint64_t rsp) {
  ucontext_t uc;
  getcontext(&uc);
  uc.uc_mcontext.gregs[REG_RIP] = static_cast<greg_t>(rip);
  uc.uc_mcontext.gregs[REG_RSP] = static_cast<greg_t>(rsp);
  return uc;
}

// A signal that lands in a PLT entry: the linker's CFI for .plt is an
// expression (CFA = rsp + 8, and 8 more once the entry has pushed its
// index), which the cache cannot hold; the full executor applies it, here as
// in the slow unwinder.
TEST(FastBacktrace, AFrameInAPltEntryMatchesTheFullExecutor) {
  auto self = framewalk::elf::ElfFile::open("/proc/self/exe");
  ASSERT_TRUE(self.ok());
  const framewalk::elf::Section* plt = (*self)->section_by_name(".plt");
  if (!plt || plt->size < 48) GTEST_SKIP() << "this build has no lazy .plt";
  Dl_info info;
  ASSERT_NE(dladdr(reinterpret_cast<void*>(&recurse_then), &info), 0);
  const uint64_t bias = (*self)->type() == framewalk::elf::kEtDyn ? reinterpret_cast<uint64_t>(info.dli_fbase) : 0;
  // A stack as the second entry leaves it: at +0 (jmp *GOT) nothing pushed
  // but the caller's return address, at +11 (jmp PLT0) the index too.
  alignas(16) uint64_t stack[64] = {};
  const uint64_t return_address = reinterpret_cast<uint64_t>(&recurse_then) + 1;
  for (const uint64_t offset : {uint64_t{0}, uint64_t{6}, uint64_t{11}}) {
    const bool pushed = offset >= 11;
    stack[0] = pushed ? 7 : return_address;
    stack[1] = pushed ? return_address : 0;
    const ucontext_t uc = context_with(bias + plt->address + 16 + offset, reinterpret_cast<uint64_t>(stack));
    void* fast[16];
    void* slow[16];
    for (int round = 0; round < 2; ++round) {
      const int n = framewalk_backtrace_ucontext(&uc, fast, 16);
      const int m = framewalk::LocalUnwinder::instance().backtrace(&uc, slow, 16);
      ASSERT_GE(n, 2) << "offset " << offset;
      EXPECT_EQ(fast[1], reinterpret_cast<void*>(return_address)) << "offset " << offset;
      ASSERT_EQ(n, m) << "offset " << offset;
      for (int i = 0; i < n; ++i) EXPECT_EQ(fast[i], slow[i]) << "frame " << i << " offset " << offset;
    }
  }
}

#endif

// Where seccomp refuses process_vm_readv (the default of container
// runtimes), stack pages are probed another way: a walk through a frame
// larger than the pages probed one by one still reaches the thread's start,
// on the fast path and with the full local unwinder.
int count_frames(void*) {
  void* frames[256];
  return framewalk_backtrace(frames, 256);
}
int count_frames_full(void*) {
  void* frames[256];
  return framewalk::backtrace(frames, 256);  // the full local unwinder, same memory reader
}
int frames_in_a_new_thread(int (*count)(void*) = count_frames) {
  int n = 0;
  std::thread([&] { n = big_frame_then<48 * 1024>(count, nullptr); }).join();
  return n;
}

// Runs both walks in a child under `filter` (which the child checks with
// `filter_works`) and compares them with the same walks here: the exit status
// says which differed (0: none).
template <size_t kInstructions>
int walks_under_seccomp(sock_filter (&filter)[kInstructions], bool (*filter_works)()) {
  const int want = frames_in_a_new_thread();
  const int want_full = frames_in_a_new_thread(count_frames_full);
  if (want <= 6 || want_full <= 6) return 5;
  const pid_t child = fork();
  if (child < 0) return 6;
  if (child == 0) {
    sock_fprog program{static_cast<unsigned short>(kInstructions), filter};
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 || prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &program) != 0)
      _exit(3);
    if (!filter_works()) _exit(4);
    // The full unwinder first: the first refused call is its own.
    if (frames_in_a_new_thread(count_frames_full) != want_full) _exit(2);
    _exit(frames_in_a_new_thread() == want ? 0 : 1);
  }
  int status = 0;
  if (waitpid(child, &status, 0) != child || !WIFEXITED(status)) return 7;
  return WEXITSTATUS(status);
}
constexpr const char* kSeccompStatus =
    "1: framewalk_backtrace, 2: the full local unwinder walked differently under seccomp; "
    "3, 4: the filter could not be set up";

TEST(FastBacktrace, StacksAreProbedWhereSeccompRefusesProcessVmReadv) {
  // x86-64 only, as the fast path: process_vm_readv fails with EPERM.
  sock_filter filter[] = {
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, nr)),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_process_vm_readv, 0, 1),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
  };
  EXPECT_EQ(walks_under_seccomp(filter, [] {
              iovec local{nullptr, 0}, remote{nullptr, 0};
              return process_vm_readv(getpid(), &local, 1, &remote, 1, 0) < 0 && errno == EPERM;
            }),
            0)
      << kSeccompStatus;
}

// And where it refuses the futex operation the page probes use (sandboxes
// that allow only some futex operations): process_vm_readv probes instead.
TEST(FastBacktrace, StacksAreProbedWhereSeccompRefusesTheFutexProbe) {
  sock_filter filter[] = {
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, nr)),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_futex, 0, 3),
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, args[1])),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, FUTEX_CMP_REQUEUE_PRIVATE, 0, 1),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
  };
  EXPECT_EQ(walks_under_seccomp(filter, [] {
              int word = 0;
              return syscall(SYS_futex, &word, FUTEX_CMP_REQUEUE_PRIVATE, 0, 0, &word + 1, 1) < 0 && errno == EPERM;
            }),
            0)
      << kSeccompStatus;
}

// A second recursion with another frame layout (locals, and every
// callee-saved register pushed, rbp among them) that alternates with
// recurse_then: return addresses see different callers from walk to walk.
__attribute__((noinline)) int mixed_then(int depth, int (*fn)(void*), void* arg) {
  long a = depth * 3L, b = depth * 5L, c = depth * 7L, d = depth * 11L, e = depth * 13L, f = depth * 17L;
  asm volatile("" : "+r"(a), "+r"(b), "+r"(c), "+r"(d), "+r"(e), "+r"(f));
  volatile char pad[72];
  pad[0] = static_cast<char>(depth);
  int r;
  if (depth <= 0)
    r = fn(arg);
  else if (depth % 3 == 0)
    r = recurse_then(depth - 1, fn, arg);
  else
    r = mixed_then(depth - 1, fn, arg);
  asm volatile("" : "+r"(a), "+r"(b), "+r"(c), "+r"(d), "+r"(e), "+r"(f));
  return r + static_cast<int>((a ^ b ^ c ^ d ^ e ^ f) & 0) + (pad[0] & 0);
}

TEST(FastBacktrace, CallersThatChangeFromWalkToWalk) {
  // The cache predicts each frame's caller from the last walk; here the
  // predictions keep failing and must never change the result.
  framewalk_backtrace_flush_cache();
  for (int round = 0; round < 60; ++round) {
    Compare c{};
    c.depth = 2 + round % 9;
    if (round % 2)
      mixed_then(c.depth, compare_at_bottom, &c);
    else
      recurse_then(c.depth, compare_at_bottom, &c);
    ASSERT_GT(c.fast_n, c.depth) << "round " << round;
    ASSERT_EQ(c.fast_n, c.slow_n) << "round " << round;
    for (int i = 0; i < c.fast_n; ++i) ASSERT_EQ(c.fast[i], c.slow[i]) << "frame " << i << " round " << round;
  }
}

__attribute__((noinline)) int prepare_then_walk() {
  framewalk_backtrace_prepare();
  const Lookups lookups = lookups_of_two_walks();
  // Only the return addresses into lookups_of_two_walks and into this
  // function after that call are new: prepare() cached the rest (but a
  // stack end without a row).
  EXPECT_EQ(lookups.first, 2u + lookups.warm);
  EXPECT_LE(lookups.warm, 1u);
  return 6;
}

// ---- why a walk ended -------------------------------------------------------------
TEST(FastBacktrace, StatusTellsWhyTheWalkEnded) {
  void* frames[512];
  framewalk_backtrace_info info{-1, 1};
  // This thread's whole stack: it ends where its code says so (_start's or
  // clone's return address is undefined; ARM's tables mark them outermost).
  const int n = framewalk_backtrace_status(frames, 512, &info);
  EXPECT_GT(n, 2);
#if defined(__arm__)
  // 32-bit ARM: glibc's _start and clone have no .ARM.exidx entry, and the
  // in-process path has no symbol tables to know them by: the walk ends
  // there without a rule, and says so.
  const int thread_root_end = FRAMEWALK_BT_NO_UNWIND_INFO;
#else
  const int thread_root_end = FRAMEWALK_BT_OUTERMOST;
#endif
  EXPECT_EQ(info.end, thread_root_end) << framewalk_backtrace_end_name(info.end) << " at 0x" << std::hex
                                       << info.address;
  // The same walk as framewalk_backtrace's (all but the first entry: the call sites differ).
  void* plain[512];
  const int m = framewalk_backtrace(plain, 512);
  ASSERT_EQ(m, n);
  for (int i = 1; i < n; ++i) EXPECT_EQ(plain[i], frames[i]) << i;
  // A buffer smaller than the stack: full, and the entries are the same.
  info = {-1, 1};
  void* two[2];
  EXPECT_EQ(framewalk_backtrace_status(two, 2, &info), 2);
  EXPECT_EQ(info.end, FRAMEWALK_BT_FULL);
  EXPECT_EQ(info.address, 0u);
  EXPECT_EQ(framewalk_backtrace_status(two, 0, &info), 0);
  EXPECT_EQ(info.end, FRAMEWALK_BT_FULL);
  // A new thread's stack ends at the thread's start, outermost too.
  std::thread([thread_root_end] {
    void* pcs[512];
    framewalk_backtrace_info thread_info{-1, 1};
    EXPECT_GT(framewalk_backtrace_status(pcs, 512, &thread_info), 1);
    EXPECT_EQ(thread_info.end, thread_root_end) << framewalk_backtrace_end_name(thread_info.end);
  }).join();
  // NULL info is allowed.
  EXPECT_EQ(framewalk_backtrace_status(frames, 512, nullptr), n);
  EXPECT_STREQ(framewalk_backtrace_end_name(FRAMEWALK_BT_BAD_MEMORY), "bad-memory");
  EXPECT_STREQ(framewalk_backtrace_end_name(99), "unknown");
}

// The hot loop reads compact rules' slots from a compile-time copy of the
// host descriptor's slot origin (ppc64's CFA + 24).
TEST(FastBacktrace, HotLoopSlotsStartWhereTheHostsRulesSay) {
  EXPECT_EQ(framewalk::arch::kHostSavedAboveCfa, framewalk::arch::host_machine().saved_above_cfa());
}

TEST(FastBacktrace, PrepareCachesTheCallingStack) {
  framewalk_backtrace_flush_cache();
  EXPECT_GT(recurse_then(5, [](void*) { return prepare_then_walk(); }, nullptr), 5);
}

TEST(FastBacktrace, ANewThreadUsesTheRulesOthersCached) {
  Lookups lookups{};
  const auto body = [&] { lookups = lookups_of_two_walks(); };
  std::thread(body).join();  // caches the rows of a thread's stack
  std::thread(body).join();  // the same stack in a thread that has never walked
  // No more than a warm walk: nothing, or the stack's end without a row.
  EXPECT_EQ(lookups.first, lookups.warm);
  EXPECT_LE(lookups.warm, 1u);
}

int no_malloc_bottom(void*) {
  void* frames[256];
  t_unwinding = true;
  const int n = framewalk_backtrace(frames, 256);
  t_unwinding = false;
  return n;
}

TEST(FastBacktrace, NeverAllocates) {
  framewalk_backtrace_flush_cache();  // the slow path too
  g_allocations_while_unwinding = 0;
  const int n = recurse_then(20, no_malloc_bottom, nullptr);
  EXPECT_GT(n, 20);
  EXPECT_EQ(g_allocations_while_unwinding.load(), 0);
  EXPECT_GT(recurse_then(20, no_malloc_bottom, nullptr), 20);  // warm
  EXPECT_EQ(g_allocations_while_unwinding.load(), 0);
}

#if defined(__x86_64__)  // x86-64 registers and code: the return address read from the stack
TEST(FastBacktrace, UnreadableStackEndsTheWalk) {
  // A context whose stack pointer points at a PROT_NONE page: the return
  // address cannot be read, so the walk stops after the first frame.
  const long page = sysconf(_SC_PAGESIZE);
  auto* mem = static_cast<uint8_t*>(mmap(nullptr, 2 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
  ASSERT_NE(mem, MAP_FAILED);
  ASSERT_EQ(mprotect(mem + page, page, PROT_NONE), 0);
  ucontext_t uc;
  getcontext(&uc);
  uc.uc_mcontext.gregs[REG_RIP] = reinterpret_cast<greg_t>(&recurse_then);  // entry: CFA = rsp + 8
  uc.uc_mcontext.gregs[REG_RSP] = reinterpret_cast<greg_t>(mem + page);
  void* frames[16];
  errno = 4242;  // a probe that fails must leave errno as the interrupted code had it
  const int n = framewalk_backtrace_ucontext(&uc, frames, 16);
  EXPECT_EQ(n, 1);
  EXPECT_EQ(errno, 4242);
  // The status names the word that could not be read: the return address at sp.
  framewalk_backtrace_info info{-1, 0};
  EXPECT_EQ(framewalk_backtrace_ucontext_status(&uc, frames, 16, &info), 1);
  EXPECT_EQ(info.end, FRAMEWALK_BT_BAD_MEMORY) << framewalk_backtrace_end_name(info.end);
  EXPECT_EQ(info.address, reinterpret_cast<uintptr_t>(mem + page));
  // And a stack that runs into the protected page after a few good frames.
  auto* words = reinterpret_cast<uint64_t*>(mem + page - 16);
  words[0] = reinterpret_cast<uint64_t>(&recurse_then);  // a return address... into an entry point
  uc.uc_mcontext.gregs[REG_RSP] = reinterpret_cast<greg_t>(words);
  const int m = framewalk_backtrace_ucontext(&uc, frames, 16);
  EXPECT_GE(m, 1);
  EXPECT_LE(m, 3);
  munmap(mem, 2 * page);
}

// ---- a mapping next to the stack, unmapped between two walks ----------------------
// A function with a frame pointer: in its body CFA = rbp + 16, rbp saved at
// CFA - 16, the return address at CFA - 8.
extern "C" char fw_rbp_frame_body[];
asm(R"(
        .pushsection .text
        .type   fw_rbp_frame_function, @function
fw_rbp_frame_function:
        .cfi_startproc
        push    %rbp
        .cfi_def_cfa_offset 16
        .cfi_offset %rbp, -16
        mov     %rsp, %rbp
        .cfi_def_cfa_register %rbp
        .globl  fw_rbp_frame_body
fw_rbp_frame_body:
        nop
        pop     %rbp
        .cfi_def_cfa %rsp, 8
        ret
        .cfi_endproc
        .size   fw_rbp_frame_function, .-fw_rbp_frame_function
        .popsection
)");

// Walks a stack-like region with a mapping right above it, unmaps that
// mapping, then walks a frame whose frame pointer points into it. Exits 0 when
// both walks stopped after their first frame; a read of the unmapped page
// faults instead.
void walk_after_neighbour_unmapped() {
  constexpr size_t kPage = 4096;
  auto* region = static_cast<uint8_t*>(mmap(nullptr, 6 * kPage, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
  if (region == MAP_FAILED) _exit(2);
  uint8_t* const neighbour = region + 4 * kPage;  // the last two pages
  auto* frame = reinterpret_cast<uint64_t*>(neighbour) - 4;  // near the top of the stack-like pages
  frame[0] = 0;  // saved rbp
  frame[1] = 0;  // return address: the end of the stack
  ucontext_t uc;
  getcontext(&uc);
  uc.uc_mcontext.gregs[REG_RIP] = reinterpret_cast<greg_t>(fw_rbp_frame_body);
  uc.uc_mcontext.gregs[REG_RSP] = reinterpret_cast<greg_t>(frame);
  uc.uc_mcontext.gregs[REG_RBP] = reinterpret_cast<greg_t>(frame);
  void* frames[16];
  const int first = framewalk_backtrace_ucontext(&uc, frames, 16);
  munmap(neighbour, 2 * kPage);
  // A corrupt frame: same stack pointer, a frame pointer into the unmapped pages.
  uc.uc_mcontext.gregs[REG_RBP] = reinterpret_cast<greg_t>(neighbour + 64);
  const int second = framewalk_backtrace_ucontext(&uc, frames, 16);
  munmap(region, 4 * kPage);
  _exit(first == 1 && second == 1 ? 0 : 1);
}

TEST(FastBacktrace, AMappingUnmappedNextToTheStackIsNotTrustedLater) {
  EXPECT_EXIT(walk_after_neighbour_unmapped(), testing::ExitedWithCode(0), "");
}

#endif

// ---- a small signal stack ---------------------------------------------------------
// A handler on a 20 KiB sigaltstack with a PROT_NONE page below it unwinds
// with a cold cache (every row through the executor): the unwinder's stack
// use must fit (an overflow would hit the guard page and crash the test).
struct SmallStackResult {
  int from_context = 0;
  int from_handler = 0;
  bool on_alt_stack = false;
  uintptr_t handler_frame = 0;  // an address in the handler's frame
};
SmallStackResult g_small_stack;
uint8_t* g_alt_stack = nullptr;
// Room for the kernel's signal frame (on AArch64 with SVE, as qemu-user
// emulates it, over 9 KiB) and the walks; what the walks use is measured
// below the handler's frame.
constexpr size_t kAltStackSize = 48 * 1024;
constexpr uint8_t kUntouched = 0xa5;
// What a cold walk may take below the handler's frame: the slow path's rows,
// register files and the CFI program's state (on s390x 2 KiB more: every
// frame there also keeps the 160-byte register save area of its callee).
#if defined(__s390x__)
constexpr size_t kWalkStackBudget = 16 * 1024;
#else
constexpr size_t kWalkStackBudget = 14 * 1024;
#endif

void on_sigusr1(int, siginfo_t*, void* context) {
  void* frames[128];
  const auto here = reinterpret_cast<uintptr_t>(&frames);
  g_small_stack.handler_frame = here;
  g_small_stack.on_alt_stack = here > reinterpret_cast<uintptr_t>(g_alt_stack) &&
                               here < reinterpret_cast<uintptr_t>(g_alt_stack) + kAltStackSize;
  framewalk_backtrace_flush_cache();
  g_small_stack.from_context = framewalk_backtrace_ucontext(context, frames, 128);
  framewalk_backtrace_flush_cache();
  g_small_stack.from_handler = framewalk_backtrace(frames, 128);
}

TEST(FastBacktrace, ColdWalkFitsASmallSignalStack) {
  const long page = sysconf(_SC_PAGESIZE);
  auto* mem = static_cast<uint8_t*>(mmap(nullptr, kAltStackSize + page, PROT_READ | PROT_WRITE,
                                         MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
  ASSERT_NE(mem, MAP_FAILED);
  ASSERT_EQ(mprotect(mem, page, PROT_NONE), 0);  // the guard page, below the stack
  g_alt_stack = mem + page;
  std::memset(g_alt_stack, kUntouched, kAltStackSize);
  stack_t ss{}, old_ss{};
  ss.ss_sp = g_alt_stack;
  ss.ss_size = kAltStackSize;
  ASSERT_EQ(sigaltstack(&ss, &old_ss), 0);
  struct sigaction sa {}, old_sa{};
  sa.sa_sigaction = on_sigusr1;
  sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
  sigemptyset(&sa.sa_mask);
  ASSERT_EQ(sigaction(SIGUSR1, &sa, &old_sa), 0);
  g_small_stack = {};
  recurse_then(30, [](void*) { return raise(SIGUSR1); }, nullptr);
  sigaction(SIGUSR1, &old_sa, nullptr);
  ss.ss_flags = SS_DISABLE;
  sigaltstack(&ss, nullptr);
  if (!(old_ss.ss_flags & SS_DISABLE)) sigaltstack(&old_ss, nullptr);
  size_t lowest = 0;  // the lowest byte the handler touched
  while (lowest < kAltStackSize && g_alt_stack[lowest] == kUntouched) ++lowest;
  const uintptr_t lowest_address = reinterpret_cast<uintptr_t>(g_alt_stack) + lowest;
  munmap(mem, kAltStackSize + page);
  EXPECT_TRUE(g_small_stack.on_alt_stack);
  ASSERT_GT(lowest, 0u) << "the walks reached the end of the alternate stack";
  const size_t below_handler = g_small_stack.handler_frame - lowest_address;
  std::printf("cold walks in a signal handler: %zu bytes of stack below the handler's frame\n", below_handler);
  EXPECT_LE(below_handler, kWalkStackBudget);
  // Through the signal frame and the 30 recursion frames, from the context
  // and from inside the handler.
  EXPECT_GT(g_small_stack.from_context, 30);
  EXPECT_GT(g_small_stack.from_handler, 30);
}

// ---- a storm of SIGPROF while libraries are loaded and unloaded --------------------
std::atomic<long> g_samples{0};
std::atomic<long> g_short_samples{0};

void on_sigprof(int, siginfo_t*, void* context) {
  void* frames[128];
  const int saved = errno;
  t_unwinding = true;
  const int n = framewalk_backtrace_ucontext(context, frames, 128);
  t_unwinding = false;
  g_samples.fetch_add(1, std::memory_order_relaxed);
  if (n < 1) g_short_samples.fetch_add(1, std::memory_order_relaxed);
  errno = saved;
}

TEST(FastBacktrace, SignalStormWithDlopenAndDlclose) {
  struct sigaction sa {};
  sa.sa_sigaction = on_sigprof;
  sa.sa_flags = SA_SIGINFO | SA_RESTART;
  sigemptyset(&sa.sa_mask);
  ASSERT_EQ(sigaction(SIGPROF, &sa, nullptr), 0);
  g_allocations_while_unwinding = 0;
  std::atomic<bool> stop{false};
  std::vector<std::thread> workers;
  std::vector<pthread_t> handles;
  std::mutex handles_mutex;
  for (int t = 0; t < 4; ++t) {
    workers.emplace_back([&, t] {
      {
        std::lock_guard<std::mutex> lock(handles_mutex);
        handles.push_back(pthread_self());
      }
      while (!stop.load()) recurse_then(10 + t * 7, [](void*) { return 0; }, nullptr);
    });
  }
  std::thread loader([&] {
    {
      // Signalled too: an unwind that interrupts dlopen/dlclose (holding the
      // loader's lock) must not wait for that lock.
      std::lock_guard<std::mutex> lock(handles_mutex);
      handles.push_back(pthread_self());
    }
    const std::string lib = std::string(FRAMEWALK_BINARY_DIR) + "/tests/libfw_dlopen_target.so";
    while (!stop.load()) {
      void* h = dlopen(lib.c_str(), RTLD_NOW | RTLD_LOCAL);
      if (h) {
        auto work = reinterpret_cast<int (*)(int)>(dlsym(h, "fw_dlopen_target_work"));
        if (work) work(100);
        dlclose(h);  // forgets the library's rules (the interposed dlclose)
      }
    }
  });
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(1500);
  long sent = 0;
  while (std::chrono::steady_clock::now() < deadline) {
    std::vector<pthread_t> targets;
    {
      std::lock_guard<std::mutex> lock(handles_mutex);
      targets = handles;
    }
    for (pthread_t h : targets) {
      pthread_kill(h, SIGPROF);
      ++sent;
    }
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
  stop = true;
  for (auto& w : workers) w.join();
  loader.join();
  signal(SIGPROF, SIG_IGN);
  EXPECT_GT(g_samples.load(), 100);
  EXPECT_EQ(g_short_samples.load(), 0);
  EXPECT_EQ(g_allocations_while_unwinding.load(), 0);
  std::printf("signal storm: %ld signals sent, %ld samples unwound\n", sent, g_samples.load());
}

// Code without unwind information between the caller and the walk: the
// step loop's frame-pointer fallback, checked against the dynamic linker's
// objects (no module map in-process), carries the walk through fp_only_c,
// fp_only_b and fp_only_a to this test, from a call and from a signal
// handler, without allocating.
struct FpOnlyWalk {
  void* frames[64];
  int n = 0;
  bool from_signal = false;
};
FpOnlyWalk* g_fp_only = nullptr;

void fp_only_handler(int, siginfo_t*, void* context) {
  t_unwinding = true;
  g_fp_only->n = framewalk_backtrace_ucontext(context, g_fp_only->frames, 64);
  t_unwinding = false;
}

int fp_only_leaf(void* arg) {
  auto* w = static_cast<FpOnlyWalk*>(arg);
  if (w->from_signal) {
    g_fp_only = w;
    raise(SIGUSR2);
  } else {
    t_unwinding = true;
    w->n = framewalk_backtrace(w->frames, 64);
    t_unwinding = false;
  }
  return 0;
}

// Where the PC lies: which of fp_only_c/b/a (the return address into it, a
// few dozen bytes past its start: the nearest start below it), or -1.
int fp_only_function(void* pc) {
  const auto p = reinterpret_cast<uintptr_t>(pc);
  const uintptr_t starts[3] = {reinterpret_cast<uintptr_t>(&fp_only_c), reinterpret_cast<uintptr_t>(&fp_only_b),
                               reinterpret_cast<uintptr_t>(&fp_only_a)};
  int best = -1;
  for (int i = 0; i < 3; ++i)
    if (p > starts[i] && p < starts[i] + 64 && (best < 0 || starts[i] > starts[best])) best = i;
  return best;
}

TEST(FastBacktrace, CodeWithFramePointersOnlyIsWalkedThrough) {
#if defined(__arm__)
  // Thumb code keeps no frame record: a frame without unwind information is
  // stepped only by reading its prologue from the function's start, which
  // the in-process path does not know (it has no symbol table; the full
  // unwinder and the core and live targets have one).
  GTEST_SKIP() << "32-bit ARM: no frame records to follow without the function's start";
#elif defined(__s390x__)
  // s390x's frame pointer (r11) points at the bottom of its frame, whose
  // size only the prologue tells, and its frames keep no back chain
  // without -mbackchain: no chain to follow without the function's start.
  GTEST_SKIP() << "s390x: no frame records to follow without the function's start";
#endif
  struct sigaction sa {}, old {};
  sa.sa_sigaction = fp_only_handler;
  sa.sa_flags = SA_SIGINFO;
  sigaction(SIGUSR2, &sa, &old);
  for (bool from_signal : {false, true}) {
    SCOPED_TRACE(from_signal ? "from a signal handler" : "from a call");
    FpOnlyWalk w;
    w.from_signal = from_signal;
    g_allocations_while_unwinding = 0;
    fp_only_a(fp_only_leaf, &w);
    EXPECT_EQ(g_allocations_while_unwinding.load(), 0);
    std::vector<int> chain;
    int after = -1;
    for (int i = 0; i < w.n; ++i) {
      const int f = fp_only_function(w.frames[i]);
      if (f >= 0) {
        chain.push_back(f);
        after = i;
      }
    }
    EXPECT_EQ(chain, (std::vector<int>{0, 1, 2}));  // c, b, a: in the order they were called, innermost first
    // The walk goes on past them, to this test and beyond.
    EXPECT_GT(w.n, after + 2) << "the walk ended at the frame-pointer code";
  }
  sigaction(SIGUSR2, &old, nullptr);
}

}  // namespace

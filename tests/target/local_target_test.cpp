// framewalk::backtrace, the full local path: after refresh() it never
// allocates (it is documented async-signal-safe), on the first call as on
// every later one, with either overload.
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <link.h>
#include <ucontext.h>
#include <unistd.h>

#include <string>

#include "support/allocation_counter.hpp"
#include "support/own_context.hpp"
#include "support/recursion.hpp"
#include "support/run_command.hpp"
#include "target/local_target.hpp"

namespace framewalk {
namespace {

using test::g_allocations_while_unwinding;
using test::recurse_then;
using test::t_unwinding;

int counted_backtrace(void*) {
  void* frames[64];
  t_unwinding = true;
  const int n = backtrace(frames, 64);
  t_unwinding = false;
  return n;
}

int counted_backtrace_from_context(void* context) {
  void* frames[64];
  t_unwinding = true;
  const int n = backtrace(static_cast<const ucontext_t*>(context), frames, 64);
  t_unwinding = false;
  return n;
}

int context_here(void*) {
  ucontext_t uc;
  getcontext(&uc);
  framewalk::test::complete_getcontext(&uc);
  return counted_backtrace_from_context(&uc);
}

// A library with SFrame that no other test reads: its .sframe is parsed (an
// allocation) the first time a walk asks it for a row, unless refresh() did it.
struct LibraryWithSframe {
  void* handle = nullptr;
  uint64_t start = 0;  // its ELF header: no CFI or SFrame row covers it
  std::string path;
};

LibraryWithSframe load_library_with_sframe() {
  LibraryWithSframe lib;
  const std::string source = std::string(FRAMEWALK_BINARY_DIR) + "/tests/libfw_dlopen_target.so";
  lib.path = std::string(FRAMEWALK_BINARY_DIR) + "/tests/libfw_dlopen_target_sframe_" + std::to_string(getpid()) + ".so";
  int status = -1;
  test::run_command(std::string(FRAMEWALK_CLI) + " sframe --generate " + source + " -o " + lib.path, &status);
  if (status != 0) return lib;
  lib.handle = dlopen(lib.path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!lib.handle) return lib;
  link_map* map = nullptr;
  if (dlinfo(lib.handle, RTLD_DI_LINKMAP, &map) == 0 && map) {
    const auto* ehdr = reinterpret_cast<const ElfW(Ehdr)*>(map->l_addr);
    lib.start = reinterpret_cast<uintptr_t>(ehdr);
  }
  return lib;
}

TEST(LocalBacktrace, NeverAllocatesFromTheFirstCallAfterRefresh) {
  LibraryWithSframe lib = load_library_with_sframe();
  ASSERT_NE(lib.handle, nullptr) << lib.path;
  ASSERT_NE(lib.start, 0u);
  LocalUnwinder::instance().refresh();
  const Module* module = LocalUnwinder::instance().modules().find(lib.start);
  ASSERT_NE(module, nullptr);
  ASSERT_TRUE(module->data);
  g_allocations_while_unwinding = 0;

  // First calls: a PC no CFI covers makes the step loop ask the library's SFrame.
  ucontext_t uc;
  getcontext(&uc);
#if defined(__x86_64__)
  uc.uc_mcontext.gregs[REG_RIP] = static_cast<greg_t>(lib.start);
#elif defined(__aarch64__)
  uc.uc_mcontext.pc = lib.start;
#elif defined(__arm__)
  uc.uc_mcontext.arm_pc = static_cast<unsigned long>(lib.start);
#elif defined(__riscv)
  uc.uc_mcontext.__gregs[REG_PC] = lib.start;
#elif defined(__s390x__)
  uc.uc_mcontext.psw.addr = lib.start;
#elif defined(__powerpc64__)
  uc.uc_mcontext.gp_regs[32] = lib.start;  // PT_NIP
#endif
  EXPECT_GE(counted_backtrace_from_context(&uc), 1);
  EXPECT_EQ(g_allocations_while_unwinding.load(), 0) << "first call, from a context";
  EXPECT_GT(recurse_then(10, counted_backtrace, nullptr), 10);
  EXPECT_EQ(g_allocations_while_unwinding.load(), 0) << "first call, from here";

  // Warm calls.
  for (int round = 0; round < 3; ++round) {
    EXPECT_GT(recurse_then(10, context_here, nullptr), 10);
    EXPECT_GT(recurse_then(10, counted_backtrace, nullptr), 10);
  }
  EXPECT_EQ(g_allocations_while_unwinding.load(), 0) << "warm calls";

  // The library really has SFrame (else the first call proved nothing).
  EXPECT_NE(module->data->sframe(), nullptr);
  dlclose(lib.handle);
  LocalUnwinder::instance().refresh();
  unlink(lib.path.c_str());
}

// refresh() while other threads walk: each walk keeps the module list it
// began with, and refresh() frees the old list only once no walk holds it.
TEST(LocalBacktrace, RefreshWhileOtherThreadsWalk) {
  std::atomic<bool> stop{false};
  std::atomic<long> walks{0}, short_walks{0};
  auto walker = [&] {
    void* frames[64];
    while (!stop.load()) {
      const int n = LocalUnwinder::instance().backtrace(frames, 64);
      walks.fetch_add(1);
      if (n < 2) short_walks.fetch_add(1);
    }
  };
  std::thread a(walker), b(walker);
  for (int i = 0; i < 40; ++i) LocalUnwinder::instance().refresh();
  stop = true;
  a.join();
  b.join();
  EXPECT_GT(walks.load(), 0);
  EXPECT_EQ(short_walks.load(), 0);
}

}  // namespace
}  // namespace framewalk

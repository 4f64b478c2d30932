// In-process unwinding, side by side in one run: framewalk_backtrace, a
// frame-pointer walk, nongnu libunwind (unw_backtrace and an unw_step loop),
// LLVM libunwind (unw_step loop), libgcc's _Unwind_Backtrace and glibc's
// backtrace(), at depths 10, 50 and 200, on code built -O2
// -fomit-frame-pointer (the frame-pointer walk on a -fno-omit-frame-pointer
// copy). Before timing, every method's frames are checked against
// framewalk's: the benchmark aborts if any differ.
#include <benchmark/benchmark.h>
#include <dlfcn.h>
#include <execinfo.h>
#define UNW_LOCAL_ONLY
#include <libunwind.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "framewalk/backtrace.h"

extern "C" {
typedef int (*bt_method)(void** buffer, int size);
int bench_recurse(int depth, bt_method method, void** buffer, int size);
int bench_recurse_fp(int depth, bt_method method, void** buffer, int size);
int fp_walk(void** buffer, int size);
}

namespace {

constexpr int kMax = 512;

// ---- methods, each a bt_method ----------------------------------------------------
int m_framewalk(void** b, int n) { return framewalk_backtrace(b, n); }
// nongnu libunwind exports its own `backtrace`, which would interpose: take
// glibc's from libc itself.
int (*g_glibc_backtrace)(void**, int) = nullptr;
int m_glibc(void** b, int n) { return g_glibc_backtrace(b, n); }
int m_unw_backtrace(void** b, int n) { return unw_backtrace(b, n); }
int m_unw_step(void** b, int n) {
  unw_context_t ctx;
  unw_cursor_t cursor;
  unw_getcontext(&ctx);
  unw_init_local(&cursor, &ctx);
  int i = 0;
  while (i < n && unw_step(&cursor) > 0) {
    unw_word_t ip;
    unw_get_reg(&cursor, UNW_REG_IP, &ip);
    b[i++] = reinterpret_cast<void*>(ip);
  }
  return i;
}

// libgcc's and LLVM's unwinders are loaded by path and called through dlsym,
// so that nongnu libunwind's same-named symbols cannot interpose.
struct UnwindApi {
  using Backtrace = int (*)(int (*)(void*, void*), void*);
  using GetIP = uintptr_t (*)(void*);
  Backtrace backtrace = nullptr;
  GetIP get_ip = nullptr;
};
UnwindApi g_libgcc;

struct LlvmApi {
  int (*getcontext)(void*) = nullptr;
  int (*init_local)(void*, void*) = nullptr;
  int (*step)(void*) = nullptr;
  int (*get_reg)(void*, int, uint64_t*) = nullptr;
};
LlvmApi g_llvm;

struct TraceArg {
  void** buffer;
  int size;
  int n;
  bool skip_first;
};
int libgcc_cb(void* ctx, void* arg) {
  auto* a = static_cast<TraceArg*>(arg);
  if (a->skip_first) {  // libgcc reports the frame of the method itself first
    a->skip_first = false;
    return 0;
  }
  const uintptr_t ip = g_libgcc.get_ip(ctx);
  if (a->n >= a->size || ip == 0) return 5;  // _URC_END_OF_STACK
  a->buffer[a->n++] = reinterpret_cast<void*>(ip);
  return 0;
}
int m_libgcc(void** b, int n) {
  TraceArg a{b, n, 0, true};
  g_libgcc.backtrace(libgcc_cb, &a);
  return a.n;
}
int m_llvm(void** b, int n) {
  alignas(16) uint64_t ctx[128];
  alignas(16) uint64_t cursor[128];
  g_llvm.getcontext(ctx);
  g_llvm.init_local(cursor, ctx);
  int i = 0;
  while (i < n && g_llvm.step(cursor) > 0) {
    uint64_t ip;
    g_llvm.get_reg(cursor, -1 /* UNW_REG_IP */, &ip);
    b[i++] = reinterpret_cast<void*>(ip);
  }
  return i;
}

struct Method {
  const char* name;
  bt_method fn;
  bool frame_pointer_build;
};
std::vector<Method> methods() {
  std::vector<Method> m = {{"framewalk_backtrace", m_framewalk, false},
                           {"fp_walk", fp_walk, true},
                           {"libunwind_unw_backtrace", m_unw_backtrace, false},
                           {"libunwind_unw_step", m_unw_step, false},
                           {"glibc_backtrace", m_glibc, false}};
  if (g_libgcc.backtrace) m.push_back({"libgcc_Unwind_Backtrace", m_libgcc, false});
  if (g_llvm.step) m.push_back({"llvm_libunwind_unw_step", m_llvm, false});
  return m;
}

void load_peers() {
  if (void* h = dlopen("libc.so.6", RTLD_NOW | RTLD_NOLOAD))
    g_glibc_backtrace = reinterpret_cast<int (*)(void**, int)>(dlsym(h, "backtrace"));
  if (!g_glibc_backtrace) {
    std::fprintf(stderr, "cannot find glibc's backtrace\n");
    std::exit(1);
  }
  if (void* h = dlopen("libgcc_s.so.1", RTLD_NOW | RTLD_LOCAL)) {
    g_libgcc.backtrace = reinterpret_cast<UnwindApi::Backtrace>(dlsym(h, "_Unwind_Backtrace"));
    g_libgcc.get_ip = reinterpret_cast<UnwindApi::GetIP>(dlsym(h, "_Unwind_GetIP"));
  }
  if (void* h = dlopen("/usr/lib/llvm-14/lib/libunwind.so.1", RTLD_NOW | RTLD_LOCAL)) {
    g_llvm.getcontext = reinterpret_cast<int (*)(void*)>(dlsym(h, "unw_getcontext"));
    g_llvm.init_local = reinterpret_cast<int (*)(void*, void*)>(dlsym(h, "unw_init_local"));
    g_llvm.step = reinterpret_cast<int (*)(void*)>(dlsym(h, "unw_step"));
    g_llvm.get_reg = reinterpret_cast<int (*)(void*, int, uint64_t*)>(dlsym(h, "unw_get_reg"));
    if (!g_llvm.getcontext || !g_llvm.init_local || !g_llvm.get_reg) g_llvm.step = nullptr;
  }
}

__attribute__((noinline)) int run(const Method& m, int depth, void** buffer) {
  return (m.frame_pointer_build ? bench_recurse_fp : bench_recurse)(depth, m.fn, buffer, kMax);
}

// The frames from the innermost bench_recurse outwards, up to main.
std::vector<void*> normalized(void** b, int n, bool fp_build, int depth) {
  Dl_info info;
  const void* target = reinterpret_cast<void*>(fp_build ? bench_recurse_fp : bench_recurse);
  std::vector<void*> out;
  int i = 0;
  for (; i < n; ++i)
    if (dladdr(b[i], &info) && info.dli_saddr == target) break;
  for (int k = i; k < n; ++k) out.push_back(b[k]);
  (void)depth;
  return out;
}

void check_agreement() {
  for (int depth : {10, 50, 200}) {
    void* ref[kMax];
    const auto all = methods();
    const int n_ref = run(all[0], depth, ref);
    const auto want = normalized(ref, n_ref, false, depth);
    if (want.size() < static_cast<size_t>(depth)) {
      std::fprintf(stderr, "framewalk returned %d frames (%zu from the recursion) at depth %d\n", n_ref, want.size(), depth);
      std::exit(1);
    }
    for (const Method& m : all) {
      void* got[kMax];
      const int n = run(m, depth, got);
      const auto have = normalized(got, n, m.frame_pointer_build, depth);
      // Same number of frames, and (for the same build) the same return
      // addresses through the recursion (callers outside it differ by call site).
      // The frame-pointer walk ends where frame pointers end (outside the
      // recursion nothing keeps them): it must cover the recursion.
      bool same = m.frame_pointer_build ? have.size() >= static_cast<size_t>(depth - 1) : have.size() == want.size();
      if (same && !m.frame_pointer_build)
        same = std::equal(want.begin(), want.begin() + depth - 1, have.begin());
      if (!same) {
        std::fprintf(stderr, "frames differ: %s at depth %d (%zu frames vs framewalk's %zu)\n", m.name, depth,
                     have.size(), want.size());
        for (size_t k = 0; k < std::max(have.size(), want.size()); ++k)
          std::fprintf(stderr, "  %2zu %p %p\n", k, k < want.size() ? want[k] : nullptr, k < have.size() ? have[k] : nullptr);
        std::exit(1);
      }
    }
  }
  std::fprintf(stderr, "all methods return identical frames at depths 10, 50, 200\n");
}

void BM_Backtrace(benchmark::State& state, Method m) {
  const int depth = static_cast<int>(state.range(0));
  void* buffer[kMax];
  int n = 0;
  for (auto _ : state) {
    n = run(m, depth, buffer);
    benchmark::DoNotOptimize(n);
  }
  state.counters["frames"] = n;
  state.counters["ns_per_frame"] = benchmark::Counter(
      static_cast<double>(n) * static_cast<double>(state.iterations()),
      benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}

}  // namespace

int main(int argc, char** argv) {
  load_peers();
  check_agreement();
  for (const Method& m : methods())
    benchmark::RegisterBenchmark(m.name, BM_Backtrace, m)->Arg(10)->Arg(50)->Arg(200);
  std::fprintf(stderr, "framewalk rule cache: %lu bytes, shared by all threads (none per thread)\n",
               framewalk_backtrace_cache_bytes());
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  return 0;
}

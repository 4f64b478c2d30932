// In-process unwinding, side by side in one run: framewalk_backtrace, a
// frame-pointer walk, nongnu libunwind (unw_backtrace and an unw_step loop),
// LLVM libunwind (unw_step loop), libgcc's _Unwind_Backtrace and glibc's
// backtrace(), at depths 10, 50 and 200, on code built -O2
// -fomit-frame-pointer (the frame-pointer walk on a -fno-omit-frame-pointer
// copy). Before timing, every method's frames are checked against
// framewalk's: the benchmark aborts if any differ (`--check-only` stops
// there; CTest runs it so).
//
// Two figures per frame: ns_per_frame is the whole call of the recursion
// (building the stack, walking it, returning) over the frames; its
// net_ns_per_frame leaves out the recursion timed alone. walk_ns_per_frame is
// the walk alone, timed inside the innermost frame: returning through 200
// frames costs more after any unwinder has run there (the returns past the
// 32 the return-stack predictor holds mispredict more, by an amount that
// changes with code and stack layout from build to build and run to run),
// and that lands in the first two figures.
#include <benchmark/benchmark.h>
#include <dlfcn.h>
#include <execinfo.h>
#define UNW_LOCAL_ONLY
#include <libunwind.h>

#include <algorithm>
#include <chrono>
#include <map>
#include <tuple>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "framewalk/backtrace.h"
#include "local/fast_unwinder.hpp"

extern "C" {
typedef int (*bt_method)(void** buffer, int size);
int bench_recurse(int depth, bt_method method, void** buffer, int size);
int bench_recurse_fp(int depth, bt_method method, void** buffer, int size);
int bench_recurse_mixed_a(int depth, bt_method method, void** buffer, int size);
int bench_recurse_mixed_b(int depth, bt_method method, void** buffer, int size);
int bench_recurse_mixed_c(int depth, bt_method method, void** buffer, int size);
int bench_recurse_mixed_d(int depth, bt_method method, void** buffer, int size);
int bench_recurse_fp_mixed_a(int depth, bt_method method, void** buffer, int size);
int bench_recurse_fp_mixed_b(int depth, bt_method method, void** buffer, int size);
int bench_recurse_fp_mixed_c(int depth, bt_method method, void** buffer, int size);
int bench_recurse_fp_mixed_d(int depth, bt_method method, void** buffer, int size);
int fp_walk(void** buffer, int size);
int bench_recurse_timed(void** buffer, int size);
int bench_recurse_fp_timed(void** buffer, int size);
extern bt_method bench_recurse_timed_method, bench_recurse_fp_timed_method;
extern uint64_t bench_recurse_timed_ns, bench_recurse_fp_timed_ns;
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

// Walks nothing: the time of the recursion alone, which every other row
// includes. "net_ns_per_frame" takes it out.
__attribute__((noinline)) int m_recursion_only(void**, int) {
  asm volatile("" ::: "memory");
  return 0;
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

// The stack's shape: one function calling itself, or four different
// functions in a cycle (bench_recurse_mixed_*).
enum Shape { kSelf = 0, kMixed = 1 };
const char* shape_name(int shape) { return shape == kSelf ? "self" : "mixed"; }

using Recurse = int (*)(int, bt_method, void**, int);
Recurse entry(bool fp_build, int shape) {
  if (shape == kMixed) return fp_build ? bench_recurse_fp_mixed_a : bench_recurse_mixed_a;
  return fp_build ? bench_recurse_fp : bench_recurse;
}

__attribute__((noinline)) int run(const Method& m, int depth, void** buffer, int shape = kSelf) {
  return entry(m.frame_pointer_build, shape)(depth, m.fn, buffer, kMax);
}

// The frames from the innermost recursion frame outwards, up to main.
std::vector<void*> normalized(void** b, int n, bool fp_build, int shape) {
  Dl_info info;
  std::vector<const void*> targets;
  if (shape == kSelf) {
    targets = {reinterpret_cast<void*>(fp_build ? bench_recurse_fp : bench_recurse)};
  } else if (fp_build) {
    targets = {reinterpret_cast<void*>(bench_recurse_fp_mixed_a), reinterpret_cast<void*>(bench_recurse_fp_mixed_b),
               reinterpret_cast<void*>(bench_recurse_fp_mixed_c), reinterpret_cast<void*>(bench_recurse_fp_mixed_d)};
  } else {
    targets = {reinterpret_cast<void*>(bench_recurse_mixed_a), reinterpret_cast<void*>(bench_recurse_mixed_b),
               reinterpret_cast<void*>(bench_recurse_mixed_c), reinterpret_cast<void*>(bench_recurse_mixed_d)};
  }
  std::vector<void*> out;
  int i = 0;
  for (; i < n; ++i)
    if (dladdr(b[i], &info) && std::find(targets.begin(), targets.end(), info.dli_saddr) != targets.end()) break;
  for (int k = i; k < n; ++k) out.push_back(b[k]);
  return out;
}

void check_agreement() {
  for (int shape : {kSelf, kMixed})
  for (int depth : {10, 50, 200}) {
    void* ref[kMax];
    const auto all = methods();
    const int n_ref = run(all[0], depth, ref, shape);
    const auto want = normalized(ref, n_ref, false, shape);
    if (want.size() < static_cast<size_t>(depth)) {
      std::fprintf(stderr, "framewalk returned %d frames (%zu from the recursion) at depth %d\n", n_ref, want.size(), depth);
      std::exit(1);
    }
    for (const Method& m : all) {
      void* got[kMax];
      const int n = run(m, depth, got, shape);
      const auto have = normalized(got, n, m.frame_pointer_build, shape);
      // Same number of frames, and (for the same build) the same return
      // addresses through the recursion (callers outside it differ by call site).
      // The frame-pointer walk ends where frame pointers end (outside the
      // recursion nothing keeps them): it must cover the recursion.
      bool same = m.frame_pointer_build ? have.size() >= static_cast<size_t>(depth - 1) : have.size() == want.size();
      if (same && !m.frame_pointer_build)
        same = std::equal(want.begin(), want.begin() + depth - 1, have.begin());
      if (!same) {
        std::fprintf(stderr, "frames differ: %s at depth %d, %s stack (%zu frames vs framewalk's %zu)\n", m.name,
                     depth, shape_name(shape), have.size(), want.size());
        for (size_t k = 0; k < std::max(have.size(), want.size()); ++k)
          std::fprintf(stderr, "  %2zu %p %p\n", k, k < want.size() ? want[k] : nullptr, k < have.size() ? have[k] : nullptr);
        std::exit(1);
      }
    }
  }
  std::fprintf(stderr, "all methods return identical frames at depths 10, 50, 200, self and mixed stacks\n");
}

// The recursion alone, per call, by build, shape and depth: the median of 31 batches.
std::map<std::tuple<bool, int, int>, double> g_recursion_ns;

void measure_recursion() {
  for (bool fp_build : {false, true})
    for (int shape : {kSelf, kMixed})
    for (int depth : {10, 50, 200}) {
      const Method m{"recursion", m_recursion_only, fp_build};
      void* buffer[kMax];
      std::vector<double> batches;
      for (int b = 0; b < 31; ++b) {
        const auto t0 = std::chrono::steady_clock::now();
        for (int i = 0; i < 2000; ++i) benchmark::DoNotOptimize(run(m, depth, buffer, shape));
        const auto t1 = std::chrono::steady_clock::now();
        batches.push_back(std::chrono::duration<double, std::nano>(t1 - t0).count() / 2000);
      }
      std::sort(batches.begin(), batches.end());
      g_recursion_ns[{fp_build, shape, depth}] = batches[batches.size() / 2];
    }
}

// The method's own time per call, measured inside the innermost frame (the
// median of 31 batches), less the clock's own cost there (the same
// measurement of a method that does nothing).
double in_frame_ns(const Method& m, int depth, int shape) {
  bt_method& method = m.frame_pointer_build ? bench_recurse_fp_timed_method : bench_recurse_timed_method;
  uint64_t& ns = m.frame_pointer_build ? bench_recurse_fp_timed_ns : bench_recurse_timed_ns;
  const bt_method timed = m.frame_pointer_build ? bench_recurse_fp_timed : bench_recurse_timed;
  void* buffer[kMax];
  std::vector<double> batches;
  method = m.fn;
  for (int b = 0; b < 31; ++b) {
    ns = 0;
    constexpr int kCalls = 300;
    for (int i = 0; i < kCalls; ++i) benchmark::DoNotOptimize(entry(m.frame_pointer_build, shape)(depth, timed, buffer, kMax));
    batches.push_back(static_cast<double>(ns) / kCalls);
  }
  std::sort(batches.begin(), batches.end());
  return batches[batches.size() / 2];
}
std::map<std::tuple<bool, int, int>, double> g_clock_ns;  // in_frame_ns of a method that does nothing

void BM_Backtrace(benchmark::State& state, Method m) {
  const int depth = static_cast<int>(state.range(0));
  const int shape = static_cast<int>(state.range(1));
  void* buffer[kMax];
  int n = 0;
  const uint64_t slow_before = framewalk::local::slow_lookup_count();
  const auto t0 = std::chrono::steady_clock::now();
  for (auto _ : state) {
    n = run(m, depth, buffer, shape);
    benchmark::DoNotOptimize(n);
  }
  const auto t1 = std::chrono::steady_clock::now();
  state.counters["frames"] = n;
  // The walk alone, timed where it runs.
  state.counters["walk_ns_per_frame"] =
      (in_frame_ns(m, depth, shape) - g_clock_ns[{m.frame_pointer_build, shape, depth}]) / static_cast<double>(n > 0 ? n : 1);
  // Per frame without the recursion that builds the stack (measured alone
  // in the same run): what the unwinding itself costs.
  const double per_call = std::chrono::duration<double, std::nano>(t1 - t0).count() /
                          static_cast<double>(state.iterations());
  state.counters["net_ns_per_frame"] =
      (per_call - g_recursion_ns[{m.frame_pointer_build, shape, depth}]) / static_cast<double>(n > 0 ? n : 1);
  if (m.fn == m_framewalk)  // rows framewalk looked up the slow way, per call
    state.counters["slow_rows"] = benchmark::Counter(
        static_cast<double>(framewalk::local::slow_lookup_count() - slow_before) /
        static_cast<double>(state.iterations()));
  state.counters["ns_per_frame"] = benchmark::Counter(
      static_cast<double>(n) * static_cast<double>(state.iterations()),
      benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}

}  // namespace

int main(int argc, char** argv) {
  load_peers();
  check_agreement();
  if (argc > 1 && std::strcmp(argv[1], "--check-only") == 0) return 0;  // the CTest run
  measure_recursion();
  for (bool fp_build : {false, true})
    for (int shape : {kSelf, kMixed})
      for (int depth : {10, 50, 200})
        g_clock_ns[{fp_build, shape, depth}] = in_frame_ns({"clock", m_recursion_only, fp_build}, depth, shape);
  std::fprintf(stderr, "the clock's own cost in the innermost frame: %.1f ns\n", g_clock_ns[{false, kSelf, 200}]);
  for (const auto& [key, ns] : g_recursion_ns)
    std::fprintf(stderr, "recursion alone (%s build, %s stack), depth %d: %.1f ns per call\n",
                 std::get<0>(key) ? "frame-pointer" : "no-frame-pointer", shape_name(std::get<1>(key)),
                 std::get<2>(key), ns);
  for (const Method& m : methods())
    benchmark::RegisterBenchmark(m.name, BM_Backtrace, m)
        ->ArgNames({"depth", "mixed"})
        ->ArgsProduct({{10, 50, 200}, {kSelf, kMixed}});
  std::fprintf(stderr, "framewalk rule cache: %lu bytes, shared by all threads; per thread: %lu bytes\n",
               framewalk_backtrace_cache_bytes(), framewalk::local::per_thread_bytes());
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  return 0;
}

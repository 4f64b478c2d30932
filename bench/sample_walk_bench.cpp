// The walk of one profiler sample: registers and a copy of the stack, as
// perf's PERF_SAMPLE_REGS_USER and PERF_SAMPLE_STACK_USER give them, unwound
// by the engine the way `framewalk record` and `framewalk report perf.data`
// do (PerfSampleDriver: an Unwinder over the copy, modules from mappings as
// ModuleTracker keeps them, a RowCache kept across samples, each frame
// copied out).
//
// The sample is this process's own: at the bottom of a recursion built
// without frame pointers (backtrace_recurse.c), the registers are captured
// and the stack from there to the thread's top is copied (at most 64 KiB,
// perf's largest copy). Every walk must reach the same frames; the first
// is checked against the recursion's depth.
//
//   build/bench/sample_walk_bench [--benchmark_filter=...]
// Counter ns_per_frame: the walk's time over the frames it found.
#include <benchmark/benchmark.h>
#include <pthread.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "arch/capture.hpp"
#include "arch/machine.hpp"
#include "target/proc_maps.hpp"
#include "target/sample_target.hpp"
#include "unwind/unwinder.hpp"
#include "walk/perf_samples.hpp"

using namespace framewalk;

extern "C" {
typedef int (*bt_method)(void** buffer, int size);
int bench_recurse(int depth, bt_method method, void** buffer, int size);
int bench_recurse_mixed_a(int depth, bt_method method, void** buffer, int size);
}

namespace {

constexpr size_t kMaxCopy = 65528;  // perf's largest sample_stack_user

uint64_t g_words[arch::kCaptureWords];
std::vector<uint8_t> g_stack;
uint64_t g_sp = 0;

extern "C" __attribute__((noinline)) int capture_sample(void**, int) {
  arch::framewalk_capture(g_words);
  const arch::RegisterFile regs = arch::from_host_capture(g_words);
  g_sp = regs.value_or(arch::host_machine().stack_pointer(), 0);
  pthread_attr_t attr;
  void* low = nullptr;
  size_t size = 0;
  pthread_getattr_np(pthread_self(), &attr);
  pthread_attr_getstack(&attr, &low, &size);
  pthread_attr_destroy(&attr);
  const uint64_t top = reinterpret_cast<uint64_t>(low) + size;
  const size_t n = static_cast<size_t>(std::min<uint64_t>(top - g_sp, kMaxCopy));
  g_stack.assign(reinterpret_cast<const uint8_t*>(g_sp), reinterpret_cast<const uint8_t*>(g_sp) + n);
  __asm__ volatile("" ::: "memory");  // not a tail call
  return 0;
}

// This process's executable mappings as a recording's MMAP records give them.
ModuleTracker& tracker() {
  static ModuleTracker* t = [] {
    auto* tr = new ModuleTracker(nullptr, ModuleTracker::Options{});
    for (const MapEntry& e : read_proc_maps(getpid())) {
      if (e.perms.size() < 3 || e.perms[2] != 'x') continue;
      perf::Mmap m;
      m.pid = m.tid = 1;
      m.address = e.start;
      m.length = e.end - e.start;
      m.pgoff = e.offset;
      m.inode = e.inode;
      m.filename = e.path;
      m.executable = true;
      m.prot = 5;
      tr->on_mmap(m, perf::misc::kUser);
    }
    return tr;
  }();
  return *t;
}

void BM_SampleWalk(benchmark::State& state) {
  const int depth = static_cast<int>(state.range(0));
  const bool mixed = state.range(1) != 0;
  (mixed ? bench_recurse_mixed_a : bench_recurse)(depth, capture_sample, nullptr, 0);
  const uint16_t machine = arch::host_machine().elf_machine();
  const ModuleMap& modules = tracker().process(1).modules;
  const arch::RegisterFile start = arch::from_host_capture(g_words);
  RowCache cache(1024);
  std::vector<SampleFrame> frames;
  frames.reserve(512);
  UnwindOptions o;
  o.max_frames = 4096;
  o.row_cache = &cache;
  o.first_is_return_address = true;  // the capture's PC is a return address
  size_t walked = 0, expected = 0;
  for (auto _ : state) {
    frames.clear();
    BufferMemory stack(Bytes(g_stack.data(), g_stack.size()), g_sp);
    Unwinder unwinder(modules, stack, machine);
    unwinder.set_unreadable_saved_registers_unknown(true);
    arch::RegisterFile regs = start;
    const WalkResult r = unwinder.walk_in_place(regs, [&](const Frame& f) {
        SampleFrame& sf = frames.emplace_back();
        sf.frame = f;
        sf.frame.registers = nullptr;
        sf.kind = SampleFrameKind::kUser;
        return true;
      }, o);
    benchmark::DoNotOptimize(r);
    if (expected == 0) expected = frames.size();
    if (frames.size() != expected || frames.size() < static_cast<size_t>(depth)) {
      state.SkipWithError("the walks disagree, or one stopped inside the recursion");
      return;
    }
    walked += frames.size();
  }
  state.counters["frames"] = static_cast<double>(expected);
  state.counters["ns_per_frame"] =
      benchmark::Counter(static_cast<double>(walked), benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
  state.counters["copy_bytes"] = static_cast<double>(g_stack.size());
}

}  // namespace

BENCHMARK(BM_SampleWalk)->ArgNames({"depth", "mixed"})->ArgsProduct({{10, 50, 200}, {0, 1}});

BENCHMARK_MAIN();

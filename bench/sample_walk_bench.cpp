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
//   build/bench/sample_walk_bench --check-only   (CTest: the walks, once each, checked)
// Counter ns_per_frame: the walk's time over the frames it found.
//
// Beside it (x86-64, with libunwind's remote library): the same sample
// unwound by libunwind's remote API as perf's libunwind back-end does it
// (tools/perf/util/unwind-libunwind-local.c: an address space whose
// accessors read the stack copy and the captured registers, and whose
// find_proc_info searches each module's .eh_frame_hdr table with
// dwarf_search_unwind_table; the global cache on). The first walk of each
// must give the same return addresses.
#include <benchmark/benchmark.h>
#include <pthread.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#if FRAMEWALK_BENCH_LIBUNWIND_REMOTE
#include <elf.h>
#include <libunwind.h>
#include <link.h>
#endif

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

#if FRAMEWALK_BENCH_LIBUNWIND_REMOTE
// --- libunwind's remote API over the same sample ---------------------------

}  // namespace
// Exported by libunwind, declared by none of its headers (perf declares it too).
extern "C" int _Ux86_64_dwarf_search_unwind_table(unw_addr_space_t, unw_word_t, unw_dyn_info_t*, unw_proc_info_t*, int,
                                                  void*);
namespace {

struct UnwModule {
  uint64_t start, end;  // the executable segment
  uint64_t eh_frame_hdr;
};
std::vector<UnwModule> g_unw_modules;

int collect_module(dl_phdr_info* info, size_t, void*) {
  UnwModule m{};
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr)& p = info->dlpi_phdr[i];
    if (p.p_type == PT_LOAD && (p.p_flags & PF_X)) {
      m.start = info->dlpi_addr + p.p_vaddr;
      m.end = m.start + p.p_memsz;
    }
    if (p.p_type == PT_GNU_EH_FRAME) m.eh_frame_hdr = info->dlpi_addr + p.p_vaddr;
  }
  if (m.end > m.start && m.eh_frame_hdr) g_unw_modules.push_back(m);
  return 0;
}

int unw_find_proc_info(unw_addr_space_t as, unw_word_t ip, unw_proc_info_t* pi, int need_unwind_info, void* arg) {
  for (const UnwModule& m : g_unw_modules) {
    if (ip < m.start || ip >= m.end) continue;
    // .eh_frame_hdr: version, three encodings, the .eh_frame pointer and the
    // FDE count (4 bytes each, as GNU ld writes them), then the table.
    const auto* hdr = reinterpret_cast<const uint8_t*>(m.eh_frame_hdr);
    if (hdr[0] != 1 || hdr[2] != 0x03 || hdr[3] != 0x3b) return -UNW_ENOINFO;
    uint32_t fde_count;
    std::memcpy(&fde_count, hdr + 8, 4);
    unw_dyn_info_t di{};
    di.format = UNW_INFO_FORMAT_REMOTE_TABLE;
    di.start_ip = m.start;
    di.end_ip = m.end;
    di.u.rti.segbase = m.eh_frame_hdr;
    di.u.rti.table_data = m.eh_frame_hdr + 12;
    di.u.rti.table_len = fde_count * 8 / sizeof(unw_word_t);
    return _Ux86_64_dwarf_search_unwind_table(as, ip, &di, pi, need_unwind_info, arg);
  }
  return -UNW_ENOINFO;
}

void unw_put_unwind_info(unw_addr_space_t, unw_proc_info_t*, void*) {}
int unw_get_dyn_info_list_addr(unw_addr_space_t, unw_word_t*, void*) { return -UNW_ENOINFO; }

// The stack from the copy; anything else (the tables) from this process,
// where the modules are.
int unw_access_mem(unw_addr_space_t, unw_word_t addr, unw_word_t* valp, int write, void*) {
  if (write) return -UNW_EINVAL;
  if (addr >= g_sp && addr + sizeof *valp <= g_sp + g_stack.size()) {
    std::memcpy(valp, g_stack.data() + (addr - g_sp), sizeof *valp);
    return 0;
  }
  for (const UnwModule& m : g_unw_modules)
    if (addr >= m.start - (1u << 20) && addr < m.end + (8u << 20)) {  // the module's image and tables
      std::memcpy(valp, reinterpret_cast<const void*>(addr), sizeof *valp);
      return 0;
    }
  return -UNW_EINVAL;
}

int unw_access_reg(unw_addr_space_t, unw_regnum_t reg, unw_word_t* valp, int write, void*) {
  if (write) return -UNW_EINVAL;
  // libunwind's x86-64 numbers are DWARF's for the general registers.
  const arch::RegisterFile regs = arch::from_host_capture(g_words);
  const unsigned dwarf = reg == UNW_REG_IP ? 16u : reg == UNW_REG_SP ? 7u : static_cast<unsigned>(reg);
  auto v = regs.get(dwarf);
  if (!v) return -UNW_EBADREG;
  *valp = *v;
  return 0;
}

int unw_access_fpreg(unw_addr_space_t, unw_regnum_t, unw_fpreg_t*, int, void*) { return -UNW_EINVAL; }
int unw_resume(unw_addr_space_t, unw_cursor_t*, void*) { return -UNW_EINVAL; }
int unw_get_proc_name(unw_addr_space_t, unw_word_t, char*, size_t, unw_word_t*, void*) { return -UNW_EINVAL; }

unw_accessors_t g_unw_accessors = {unw_find_proc_info, unw_put_unwind_info, unw_get_dyn_info_list_addr,
                                   unw_access_mem,     unw_access_reg,      unw_access_fpreg,
                                   unw_resume,         unw_get_proc_name};

void BM_SampleWalkLibunwind(benchmark::State& state) {
  const int depth = static_cast<int>(state.range(0));
  const bool mixed = state.range(1) != 0;
  (mixed ? bench_recurse_mixed_a : bench_recurse)(depth, capture_sample, nullptr, 0);
  if (g_unw_modules.empty()) dl_iterate_phdr(collect_module, nullptr);
  static unw_addr_space_t as = [] {
    unw_addr_space_t a = unw_create_addr_space(&g_unw_accessors, 0);
    unw_set_caching_policy(a, UNW_CACHE_GLOBAL);
    return a;
  }();
  unw_flush_cache(as, 0, 0);
  std::vector<uint64_t> pcs;
  pcs.reserve(512);
  size_t walked = 0, expected = 0;
  for (auto _ : state) {
    pcs.clear();
    unw_cursor_t cursor;
    if (unw_init_remote(&cursor, as, nullptr) != 0) {
      state.SkipWithError("unw_init_remote failed");
      return;
    }
    do {
      unw_word_t ip = 0;
      unw_get_reg(&cursor, UNW_REG_IP, &ip);
      pcs.push_back(ip);
    } while (pcs.size() < 4096 && unw_step(&cursor) > 0);
    if (expected == 0) expected = pcs.size();
    if (pcs.size() != expected || pcs.size() < static_cast<size_t>(depth)) {
      state.SkipWithError("the walks disagree, or one stopped inside the recursion");
      return;
    }
    walked += pcs.size();
  }
  // The same return addresses as framewalk's walk of the same sample.
  std::vector<uint64_t> mine;
  {
    BufferMemory stack(Bytes(g_stack.data(), g_stack.size()), g_sp);
    Unwinder unwinder(tracker().process(1).modules, stack, arch::host_machine().key());
    UnwindOptions o;
    o.max_frames = 4096;
    o.first_is_return_address = true;
    unwinder.walk(arch::from_host_capture(g_words), [&](const Frame& f) {
        mine.push_back(f.pc);
        return true;
      }, o);
  }
  const size_t common = std::min(mine.size(), pcs.size());
  if (common < static_cast<size_t>(depth) || !std::equal(mine.begin(), mine.begin() + common, pcs.begin())) {
    state.SkipWithError("libunwind's frames differ from framewalk's");
    return;
  }
  state.counters["frames"] = static_cast<double>(expected);
  state.counters["ns_per_frame"] =
      benchmark::Counter(static_cast<double>(walked), benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}
#endif

void BM_SampleWalk(benchmark::State& state) {
  const int depth = static_cast<int>(state.range(0));
  const bool mixed = state.range(1) != 0;
  (mixed ? bench_recurse_mixed_a : bench_recurse)(depth, capture_sample, nullptr, 0);
  const MachineKey machine = arch::host_machine().key();
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
#if FRAMEWALK_BENCH_LIBUNWIND_REMOTE
BENCHMARK(BM_SampleWalkLibunwind)->ArgNames({"depth", "mixed"})->ArgsProduct({{10, 50, 200}, {0, 1}});
#endif

// --check-only (the CTest run): each sample walked once by the engine (and
// by libunwind where built), the walk reaching through the recursion to
// the thread's start and, with libunwind, the same return addresses.
int check_only() {
  int failures = 0;
  for (int mixed : {0, 1}) {
    for (int depth : {10, 200}) {
      (mixed ? bench_recurse_mixed_a : bench_recurse)(depth, capture_sample, nullptr, 0);
      BufferMemory stack(Bytes(g_stack.data(), g_stack.size()), g_sp);
      Unwinder unwinder(tracker().process(1).modules, stack, arch::host_machine().key());
      unwinder.set_unreadable_saved_registers_unknown(true);
      UnwindOptions o;
      o.max_frames = 4096;
      o.first_is_return_address = true;
      std::vector<uint64_t> mine;
      const WalkResult r = unwinder.walk(arch::from_host_capture(g_words), [&](const Frame& f) {
          mine.push_back(f.pc);
          return true;
        }, o);
      bool ok = mine.size() > static_cast<size_t>(depth) && r.reason == StopReason::kOutermost;
#if FRAMEWALK_BENCH_LIBUNWIND_REMOTE
      if (g_unw_modules.empty()) dl_iterate_phdr(collect_module, nullptr);
      unw_addr_space_t as = unw_create_addr_space(&g_unw_accessors, 0);
      unw_cursor_t cursor;
      std::vector<uint64_t> theirs;
      if (unw_init_remote(&cursor, as, nullptr) == 0) {
        do {
          unw_word_t ip = 0;
          unw_get_reg(&cursor, UNW_REG_IP, &ip);
          theirs.push_back(ip);
        } while (theirs.size() < 4096 && unw_step(&cursor) > 0);
      }
      unw_destroy_addr_space(as);
      const size_t common = std::min(mine.size(), theirs.size());
      ok = ok && common > static_cast<size_t>(depth) && std::equal(mine.begin(), mine.begin() + common, theirs.begin());
      std::printf("depth %d mixed %d: framewalk %zu frames (%s), libunwind %zu\n", depth, mixed, mine.size(),
                  to_string(r.reason), theirs.size());
#else
      std::printf("depth %d mixed %d: framewalk %zu frames (%s)\n", depth, mixed, mine.size(), to_string(r.reason));
#endif
      if (!ok) {
        std::printf("  FAIL\n");
        ++failures;
      }
    }
  }
  return failures ? 1 : 0;
}

int main(int argc, char** argv) {
  if (argc > 1 && std::strcmp(argv[1], "--check-only") == 0) return check_only();
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}

// The C API's cost over the C++ engine, per frame: every thread of a core
// walked ROUNDS times through fw_walk (a callback per frame) and through
// walk_thread on a CoreTarget (a lambda per frame), one target each, its
// rule cache warm; then fw_walk again with each frame's function asked for.
// Medians of the rounds, in ns per frame.
//
//   capi_overhead CORE [EXECUTABLE] [ROUNDS]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "framewalk/framewalk.h"
#include "target/core_target.hpp"
#include "walk/stack_dump.hpp"

namespace {

using Clock = std::chrono::steady_clock;

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

fw_walk_action count_frame(const fw_frame* frame, void* arg) {
  *static_cast<uint64_t*>(arg) += fw_frame_pc(frame);
  return FW_CONTINUE;
}

fw_walk_action count_named_frame(const fw_frame* frame, void* arg) {
  uint64_t offset = 0;
  const char* name = fw_frame_function(frame, &offset);
  *static_cast<uint64_t*>(arg) += fw_frame_pc(frame) + (name ? 1 : 0);
  return FW_CONTINUE;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: capi_overhead CORE [EXECUTABLE] [ROUNDS]\n");
    return 2;
  }
  const char* exe = argc > 2 && argv[2][0] ? argv[2] : nullptr;
  const int rounds = argc > 3 ? std::atoi(argv[3]) : 21;
  // The C API.
  fw_context* context = fw_context_new();
  fw_target* target = nullptr;
  if (fw_target_core(context, argv[1], exe, &target) != FW_OK) {
    std::fprintf(stderr, "capi_overhead: %s\n", fw_last_error());
    return 1;
  }
  std::vector<int> tids;
  for (int tid = 0; fw_next_thread(target, tid, &tid) == FW_OK && tid != 0;) tids.push_back(tid);
  uint64_t sink = 0;
  size_t frames = 0;
  auto capi_round = [&](fw_frame_callback callback) {
    size_t n = 0;
    const auto t0 = Clock::now();
    for (int tid : tids) {
      fw_walk_end end;
      fw_walk(target, tid, callback, &sink, nullptr, &end);
      n += end.frames;
    }
    frames = n;
    return std::chrono::duration<double, std::nano>(Clock::now() - t0).count() / static_cast<double>(n);
  };
  // The engine.
  framewalk::CoreOptions options;
  if (exe) options.exe = exe;
  auto core = framewalk::CoreTarget::open(argv[1], options, nullptr);
  if (!core) return 1;
  framewalk::RowCache rows;
  framewalk::UnwindOptions o;
  o.row_cache = &rows;
  auto engine_round = [&] {
    size_t n = 0;
    const auto t0 = Clock::now();
    for (int tid : tids) {
      auto r = framewalk::walk_thread(**core, tid, [&](const framewalk::Frame& f) {
        sink += f.pc;
        ++n;
        return true;
      }, o);
      (void)r;
    }
    return std::chrono::duration<double, std::nano>(Clock::now() - t0).count() / static_cast<double>(n);
  };
  capi_round(count_frame);  // warm both caches
  engine_round();
  std::vector<double> capi, engine, named;
  for (int i = 0; i < rounds; ++i) {
    capi.push_back(capi_round(count_frame));
    engine.push_back(engine_round());
    named.push_back(capi_round(count_named_frame));
  }
  std::printf("%zu threads, %zu frames a round, medians of %d rounds (ns per frame)\n", tids.size(), frames, rounds);
  std::printf("C++ engine (walk_thread)     %8.1f\n", median(engine));
  std::printf("C API (fw_walk)              %8.1f  (%+.1f ns, %.2fx)\n", median(capi), median(capi) - median(engine),
              median(capi) / median(engine));
  std::printf("C API, with fw_frame_function %7.1f\n", median(named));
  fw_target_free(target);
  fw_context_free(context);
  return sink == 42 ? 3 : 0;
}

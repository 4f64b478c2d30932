// framewalk_backtrace's cost per frame beside a frame-pointer walk and
// glibc's backtrace(), in the same run, from the bottom of one recursion
// (backtrace_recurse.c, built with frame pointers so that the frame-pointer
// walk can follow it). No Google Benchmark: it cross-builds, and
// tests/cross/inprocess.sh runs it under qemu-aarch64, where only the ratios
// mean something (qemu distorts absolute times).
//
//   backtrace_per_frame [DEPTH] [ROUNDS] [NEEDS_FRAME_POINTERS]
#include <execinfo.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "framewalk/backtrace.h"

extern "C" {
typedef int (*bt_method)(void** buffer, int size);
int bench_recurse(int depth, bt_method method, void** buffer, int size);
int fp_walk(void** buffer, int size);
}

namespace {

int glibc_backtrace(void** buffer, int size) { return backtrace(buffer, size); }

struct Result {
  double ns_per_frame;
  int frames;
};

// The median over `rounds` of the time one walk takes, per frame it stored.
Result measure(bt_method method, int depth, int rounds) {
  void* buffer[1024];
  std::vector<double> ns;
  int frames = 0;
  constexpr int kWalksPerRound = 20;
  for (int r = 0; r < rounds; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < kWalksPerRound; ++i) frames = bench_recurse(depth, method, buffer, 1024);
    const auto t1 = std::chrono::steady_clock::now();
    ns.push_back(std::chrono::duration<double, std::nano>(t1 - t0).count() / kWalksPerRound / std::max(frames, 1));
  }
  std::sort(ns.begin(), ns.end());
  return {ns[ns.size() / 2], frames};
}

}  // namespace

int main(int argc, char** argv) {
  const int depth = argc > 1 ? std::atoi(argv[1]) : 64;
  const int rounds = argc > 2 ? std::atoi(argv[2]) : 51;
  framewalk_backtrace_prepare();
  const Result fw = measure(framewalk_backtrace, depth, rounds);
  const Result fp = measure(fp_walk, depth, rounds);
  const Result gl = measure(glibc_backtrace, depth, rounds);
  // On 32-bit ARM gcc's Thumb frames are no frame-pointer chain: there the
  // frame-pointer walk stops early and framewalk is set against glibc alone.
  const bool fp_walked = fp.frames >= depth;
  std::printf("%-22s %8s %12s %10s %10s\n", "method", "frames", "ns/frame", "vs fp", "vs glibc");
  auto row = [&](const char* name, const Result& r) {
    if (fp_walked)
      std::printf("%-22s %8d %12.1f %9.2fx %9.3fx\n", name, r.frames, r.ns_per_frame, r.ns_per_frame / fp.ns_per_frame,
                  r.ns_per_frame / gl.ns_per_frame);
    else
      std::printf("%-22s %8d %12.1f %10s %9.3fx\n", name, r.frames, r.ns_per_frame, "-", r.ns_per_frame / gl.ns_per_frame);
  };
  if (fp_walked) row("frame-pointer walk", fp);
  else std::printf("%-22s %8d (no frame-pointer chain to follow)\n", "frame-pointer walk", fp.frames);
  row("framewalk_backtrace", fw);
  row("glibc backtrace()", gl);
  // framewalk and glibc must have walked the whole recursion; the
  // frame-pointer walk too where the code keeps frame pointers.
  const bool needs_fp = argc > 3 && std::atoi(argv[3]) != 0;
  return fw.frames >= depth && gl.frames >= depth && (fp_walked || !needs_fp) ? 0 : 1;
}

// A sampled profile made without the recorder, with a time split known by
// construction (tests/profile/*, tests/profile/sample_reports.sh, the fuzz
// seed). Two threads, three paths on-CPU, two off-CPU:
//
//   on-CPU, 1000 samples of 1 ms:
//     60%  demo (100): main;run;compute;square[inlined into compute]   leaf square
//     30%  demo (100): main;run;parse;memcpy (libc.so.6)               leaf memcpy
//     10%  worker (101): thread_start;worker;recurse x 298             300 frames deep
//   off-CPU, 10 samples of 100 ms:
//     70%  demo (100): main;run;parse;read (libc.so.6)
//     30%  worker (101): thread_start;worker;pthread_cond_wait (libc.so.6)
//
// So on-CPU: square self 60%, compute total 60%, memcpy self 30%, parse
// total 30%, recurse self and total 10%, main and run total 90%,
// thread_start and worker total 10%; off-CPU: read 70%, parse and main 70%,
// pthread_cond_wait 30%, worker 30%.
#pragma once

#include <vector>

#include "profile/sample_profile.hpp"

namespace framewalk::profile::fixture {

inline constexpr uint32_t kPid = 100, kMainTid = 100, kWorkerTid = 101;
inline constexpr uint64_t kOnWeight = 1'000'000, kOffWeight = 100'000'000;
inline constexpr int kRecurseDepth = 298;

inline SampleProfile make_profile() {
  SampleProfile p;
  const uint32_t exe = p.add_module("/usr/bin/demo", "0123456789abcdef0123456789abcdef01234567", 0x555555554000,
                                    0x555555558000, 0, 0x555555554000);
  const uint32_t libc = p.add_module("/usr/lib/x86_64-linux-gnu/libc.so.6", "fedcba9876543210fedcba9876543210fedcba98",
                                     0x7ffff7c00000, 0x7ffff7e00000, 0, 0x7ffff7c00000);
  const StringId demo_c = p.intern("demo.c");
  const auto frame = [&](uint32_t module, uint64_t address, std::vector<std::pair<const char*, uint32_t>> names) {
    const uint32_t f = p.intern_frame(module, address);
    std::vector<SourceLine> lines;
    for (const auto& [name, line] : names)
      lines.push_back(SourceLine{p.intern(name), module == exe ? demo_c : 0, line, 0});
    p.set_frame_lines(f, lines);
    return f;
  };
  const uint32_t main_f = frame(exe, 0x1100, {{"main", 40}});
  const uint32_t run_f = frame(exe, 0x1200, {{"run", 30}});
  const uint32_t compute_f = frame(exe, 0x1300, {{"square", 5}, {"compute", 12}});  // square inlined into compute
  const uint32_t parse_f = frame(exe, 0x1400, {{"parse", 20}});
  const uint32_t memcpy_f = frame(libc, 0x9a000, {{"memcpy", 0}});
  const uint32_t read_f = frame(libc, 0x11c000, {{"read", 0}});
  const uint32_t start_f = frame(exe, 0x1500, {{"thread_start", 50}});
  const uint32_t worker_f = frame(exe, 0x1600, {{"worker", 60}});
  const uint32_t recurse_f = frame(exe, 0x1700, {{"recurse", 70}});
  const uint32_t wait_f = frame(libc, 0x95000, {{"pthread_cond_wait", 0}});
  p.add_thread(kPid, kMainTid, "demo");
  p.add_thread(kPid, kWorkerTid, "worker");
  const uint32_t a = p.push_stack(std::vector<uint32_t>{compute_f, run_f, main_f});
  const uint32_t b = p.push_stack(std::vector<uint32_t>{memcpy_f, parse_f, run_f, main_f});
  std::vector<uint32_t> deep(kRecurseDepth, recurse_f);
  deep.push_back(worker_f);
  deep.push_back(start_f);
  const uint32_t c = p.push_stack(deep);
  const uint32_t off_b = p.push_stack(std::vector<uint32_t>{read_f, parse_f, run_f, main_f});
  const uint32_t off_c = p.push_stack(std::vector<uint32_t>{wait_f, worker_f, start_f});
  // Interleaved in time as a recorder would see them: every 10 ms, 6 A, 3 B, 1 C.
  uint64_t t = 0;
  for (int round = 0; round < 100; ++round) {
    for (int i = 0; i < 10; ++i) {
      const uint32_t stack = i < 6 ? a : i < 9 ? b : c;
      p.add_sample(stack, t, i < 9 ? kMainTid : kWorkerTid, static_cast<uint16_t>(i % 2), kOnWeight);
      t += 1'000'000;
    }
    if (round % 10 == 9) {
      const int k = round / 10;  // 10 off-CPU samples: 7 on path B, 3 on path C
      p.add_sample(k < 7 ? off_b : off_c, t, k < 7 ? kMainTid : kWorkerTid, 0, kOffWeight, SampleKind::kOffCpu);
    }
  }
  for (int i = 0; i < 990; ++i) p.add_stop_reason("outermost");
  p.add_stop_reason("no-unwind-info at 0x7ffff7c9a123", 6);
  p.add_stop_reason("stack copy ended", 4);
  p.add_lost_samples(3);
  RecordingInfo& in = p.info();
  in.event = p.intern("cpu-clock");
  in.frequency = 1000;
  in.weight_unit = p.intern("nanoseconds");
  in.start_time_ns = 1'764'800'000'000'000'000ULL;
  in.duration_ns = 1'000'000'000;
  in.command_line = {p.intern("./demo"), p.intern("--work")};
  in.hostname = p.intern("testhost");
  return p;
}

}  // namespace framewalk::profile::fixture

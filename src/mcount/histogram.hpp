// The PC histogram of gmon.out: every thread that calls instrumented code
// gets a CPU-time timer of its own (timer_create on CLOCK_THREAD_CPUTIME_ID,
// delivered to that thread with SIGEV_THREAD_ID), so each thread is sampled
// for the CPU time it uses, not only the one that happens to take a
// process-wide ITIMER_PROF signal as with glibc's profil(). Samples of every
// thread meet in one array of 32-bit bins, one atomic add per sample (at the
// default 100 per CPU second a shared array costs nothing a per-thread copy
// would save). A timer's overruns (expirations while the signal was pending:
// the kernel checks thread CPU timers at its tick) are added to the sample,
// so the total stays CPU time / rate.
//
// Like glibc's, the histogram covers the text of the main executable only
// (its executable PT_LOAD segments, 4 bytes of code per bin); gprof reads
// one program.
#pragma once

#include <cstddef>
#include <cstdint>
#include <ctime>

namespace framewalk::mcount {

// The executable segments of the main program: run-time [low, high); the
// link-time address of a PC is PC - bias.
struct TextRange {
  uintptr_t low = 0;
  uintptr_t high = 0;
  uintptr_t bias = 0;
  bool contains(uintptr_t pc) const { return pc >= low && pc < high; }
};

// Uses dl_iterate_phdr (its first object is the program): call at start-up,
// not from a signal handler.
bool find_executable_text(TextRange& out);

inline constexpr unsigned kDefaultSampleRate = 100;  // per second of a thread's CPU time, glibc's AT_CLKTCK rate
inline constexpr unsigned kBytesPerBin = 4;

struct HistogramView {
  uintptr_t low_pc = 0;  // link-time, 4-byte aligned
  uintptr_t high_pc = 0;
  const uint32_t* bins = nullptr;
  std::size_t nbins = 0;
  unsigned rate = kDefaultSampleRate;
};

// Maps the bins for `text` and installs the SIGPROF handler; false when
// either failed (no histogram then, arcs are still counted).
bool histogram_start(const TextRange& text, unsigned rate);
// Stops or resumes taking samples (moncontrol).
void histogram_enable(bool on);
HistogramView histogram_view();
// The samples taken so far.
uint64_t histogram_samples();

// The calling thread's timer; false when the histogram is off or the
// kernel refused.
bool start_thread_timer(timer_t& timer);
void stop_thread_timer(timer_t timer);

}  // namespace framewalk::mcount

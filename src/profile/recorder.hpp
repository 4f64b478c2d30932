// framewalk record's engine: samples a process (record/perf_events), unwinds
// each sample at once with framewalk's engine (walk/perf_samples'
// PerfSampleUnwinder: modules from the mmap records, stack from the sample's
// copy, code from the module images) and keeps only the resolved frames, in
// a sampled profile (sample_profile.hpp) written out as .fwprof chunks as it
// goes, so that a recording cut short leaves a readable file.
//
// The ring buffers' records are decoded by the perf.data decoder
// (perf/perf_data: decode_record) and handed to the unwinder batch by
// batch, a round after each, as perf.data's are; the mappings, names and
// threads a process already had are made into MMAP2 and COMM records first,
// as perf record does. A sample's stack copy is cut to its valid bytes
// before it is kept for its round: the one copy of it the recorder makes.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "base/function_ref.hpp"
#include "base/result.hpp"
#include "profile/sample_profile.hpp"
#include "record/perf_events.hpp"
#include "unwind/unwinder.hpp"

namespace framewalk::profile {

struct RecordOptions {
  std::string event = "cpu-clock";  // its name, for the file
  bool event_is_clock = true;       // weights in nanoseconds (else event counts)
  size_t max_frames = 1024;
  bool symbols = true;                  // name frames in the file (else addresses and modules only)
  std::optional<std::string> kallsyms;  // as symbol::KernelSymbols takes it
  std::vector<std::string> command_line;  // what was recorded, for the file
  bool compress = false;                // zstd chunks
  uint64_t flush_interval_ms = 1000;    // chunks written at least this often
  uint64_t status_interval_ms = 250;
};

// What a recording has done so far (for a status line), and in the end.
struct RecordStatus {
  uint64_t samples = 0;       // unwound and kept
  uint64_t switch_samples = 0;  // of those, taken as a thread left its CPU (--off-cpu)
  uint64_t lost = 0;          // lost in the ring buffers (the kernel's count)
  uint64_t complete = 0;      // walks that reached the stack's declared end
  uint64_t truncated = 0;     // walks that stopped for another reason (see stop reasons)
  uint64_t bytes_written = 0;
  uint64_t records = 0;       // records read from the ring buffers
  double seconds = 0;
  // The recorder's own CPU time (user + system): reading and unwinding the
  // samples (its main thread, while it sampled), naming the frames (the
  // background thread, then), and after (naming what was left, writing the
  // file's end): what it took from the machine beside the program.
  double sampling_cpu_seconds = 0;
  double naming_cpu_seconds = 0;
  double finishing_cpu_seconds = 0;
};

struct RecordResult {
  RecordStatus status;
  std::vector<std::pair<std::string, uint64_t>> stop_reasons;  // walks by why they stopped
  std::vector<std::string> warnings;  // files missing or changed; once each
  std::optional<std::string> read_error;  // the stream could not be read on (never expected)
};

// The stream's prelude for `pid`: its executable mappings as MMAP2 records
// and its threads' names as COMM records, at time 0 (exposed for tests).
std::string synthesize_process_records(pid_t pid, const perf_event_attr& attr, uint64_t identifier);

// Records from `sampler` (opened on `pids`, or on every CPU) until
// `keep_going` returns false or every thread sampled has ended; the
// mappings and threads of `existing` (processes that ran before: every one
// for a system-wide recording) are read from /proc first. Writes the
// .fwprof file to `fd` (errors: kIoError with errno). `on_status` is called
// every status_interval_ms.
Result<RecordResult> record_samples(record::Sampler& sampler, const std::vector<pid_t>& existing,
                                    const RecordOptions& options, int fd, FunctionRef<bool()> keep_going,
                                    FunctionRef<void(const RecordStatus&)> on_status);

}  // namespace framewalk::profile

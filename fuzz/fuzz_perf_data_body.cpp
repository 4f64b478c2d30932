// fuzz_perf_data: the bytes as a perf.data file. The reader must deliver
// records that lie inside the input (or inside a decompressed record) and
// end with an error whose offset lies inside the input; the same bytes are
// then unwound sample by sample (no file is opened: the recorded paths are
// looked up under a root that does not exist), and every record's bytes are
// decoded again alone, as a live recorder's ring buffer would hand them, and
// with its stack copy cut to its valid bytes.
#include <cstring>
#include <vector>

#include "fuzz_bodies.hpp"
#include "perf/perf_data.hpp"
#include "walk/perf_samples.hpp"

namespace framewalk::fuzz {

int fuzz_perf_data(const uint8_t* data, size_t size) {
  const Bytes input(data, size);
  {
    perf::BufferSource source(input);
    perf::PerfDataReader reader(source);
    uint64_t records = 0;
    const perf::ReadSummary summary = reader.read(
        [&](const perf::FileInfo& info) {
          FUZZ_CHECK(info.attrs.size() <= 4096 || info.pipe);
          return true;
        },
        [&](const perf::Record& r) {
          FUZZ_CHECK(r.bytes.size() == r.size && r.size >= 8);
          FUZZ_CHECK(r.index >= records);
          FUZZ_CHECK(r.file_offset < size);
          ++records;
          if (r.type == perf::kSample) {
            const perf::Sample& s = r.sample;
            FUZZ_CHECK(s.callchain.size() == 8 * s.callchain_size);
            FUZZ_CHECK(s.regs_user_count <= 64);
            FUZZ_CHECK(s.stack().size() <= s.stack_user.size());
            for (size_t i = 0; i < s.callchain_size; ++i) (void)s.callchain_at(i);
            // The same bytes alone decode the same.
            perf::Record again;
            FUZZ_CHECK(perf::decode_record(r.bytes, reader.info().attrs, &again).ok());
            FUZZ_CHECK(again.sample.ip == s.ip && again.sample.stack_dyn_size == s.stack_dyn_size);
            // Its stack copy cut to the valid bytes (as the unwinder queues
            // it): no longer, and the same sample with the same valid stack.
            std::vector<uint8_t> cut;
            perf::append_compacted(r, &cut);
            FUZZ_CHECK(cut.size() <= r.bytes.size() && cut.size() >= 8);
            perf::Record compacted;
            FUZZ_CHECK(perf::decode_record(Bytes(cut.data(), cut.size()), reader.info().attrs, &compacted).ok());
            FUZZ_CHECK(compacted.sample.ip == s.ip && compacted.sample.time == s.time &&
                       compacted.sample.callchain_size == s.callchain_size);
            FUZZ_CHECK(compacted.sample.stack().size() == s.stack().size() &&
                       (s.stack().empty() ||  // (no memcmp of null pointers)
                        std::memcmp(compacted.sample.stack().data(), s.stack().data(), s.stack().size()) == 0));
          }
          return true;
        });
    FUZZ_CHECK(summary.records == records);
    if (summary.error) {
      (void)perf::describe(*summary.error);
      // A record's offset lies in the input; a header part's may not (that is the error).
      FUZZ_CHECK(summary.error->record_offset <= size || summary.error->record == 0);
    }
  }
  {
    perf::BufferSource source(input);
    PerfUnwindOptions options;
    options.files.sysroot = "/nonexistent-fuzz-root";
    options.files.buildid_dir = "";
    options.max_frames = 64;
    uint64_t samples = 0;
    const PerfUnwindResult result = unwind_perf_samples(source, options, [&](const UnwoundSample& u) {
      ++samples;
      FUZZ_CHECK(u.frames.size() <= 64 + u.sample->callchain_size + 1);
      for (const SampleFrame& f : u.frames) FUZZ_CHECK(f.frame.registers == nullptr);
      return true;
    });
    FUZZ_CHECK(result.stats.samples == samples);
    uint64_t walks = 0;
    for (uint64_t n : result.stats.by_reason) walks += n;
    FUZZ_CHECK(walks == result.stats.walked);
  }
  return 0;
}

}  // namespace framewalk::fuzz

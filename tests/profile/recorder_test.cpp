// The recorder's records: a sample's stack copy cut to its valid bytes (as
// the unwinder keeps it, perf::append_compacted), and a running process's
// mappings and names as MMAP2 and COMM records; each read back by the
// perf.data decoder as it reads the kernel's.
#include "profile/recorder.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstring>
#include <string>
#include <vector>

#include "perf/perf_data.hpp"

namespace framewalk::profile {
namespace {

perf_event_attr sampler_attr() {
  perf_event_attr a{};
  a.size = sizeof a;
  a.type = PERF_TYPE_SOFTWARE;
  a.config = PERF_COUNT_SW_CPU_CLOCK;
  a.sample_type = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CPU |
                  PERF_SAMPLE_PERIOD | PERF_SAMPLE_CALLCHAIN | PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER;
  a.sample_regs_user = 0b111;
  a.sample_stack_user = 64;
  a.sample_id_all = 1;
  return a;
}

perf::AttrSet attrs_of(const perf_event_attr& a) {
  auto parsed = perf::parse_event_attr(Bytes(reinterpret_cast<const uint8_t*>(&a), sizeof a));
  EXPECT_TRUE(parsed.ok());
  perf::AttrSet set;
  set.add(*parsed);
  return set;
}

void put64(std::string* s, uint64_t v) { s->append(reinterpret_cast<const char*>(&v), 8); }
Bytes as_bytes(const std::string& s) { return Bytes(reinterpret_cast<const uint8_t*>(s.data()), s.size()); }

// A sample as the kernel writes it: 64 stack bytes, of which `dyn` valid
// (then the weight, when `weight`: a field after the copy).
std::string kernel_sample(uint64_t dyn, bool weight = false) {
  std::string body;
  put64(&body, 7);                   // identifier
  put64(&body, 0x401000);            // ip
  put64(&body, 42 | uint64_t{43} << 32);  // pid, tid
  put64(&body, 123456);              // time
  put64(&body, 1);                   // cpu, res
  put64(&body, 1000000);             // period
  put64(&body, 2);                   // callchain: 2 entries
  put64(&body, 0x401000);
  put64(&body, 0x402000);
  put64(&body, 2);                   // regs: abi 64-bit
  put64(&body, 0x1111);
  put64(&body, 0x2222);
  put64(&body, 0x3333);
  put64(&body, 64);                  // stack size
  for (int i = 0; i < 64; ++i) body += static_cast<char>(i);
  put64(&body, dyn);                 // dyn_size
  if (weight) put64(&body, 0x77);
  std::string rec;
  const uint32_t type = PERF_RECORD_SAMPLE;
  const uint16_t misc = PERF_RECORD_MISC_USER, size = static_cast<uint16_t>(8 + body.size());
  rec.append(reinterpret_cast<const char*>(&type), 4);
  rec.append(reinterpret_cast<const char*>(&misc), 2);
  rec.append(reinterpret_cast<const char*>(&size), 2);
  return rec + body;
}

// The bytes of `record` decoded by `attrs`, then compacted.
std::string compacted(const std::string& record, const perf::AttrSet& attrs) {
  perf::Record r;
  EXPECT_TRUE(perf::decode_record(as_bytes(record), attrs, &r).ok());
  std::vector<uint8_t> out;
  perf::append_compacted(r, &out);
  return std::string(out.begin(), out.end());
}

TEST(Recorder, ASampleKeepsOnlyItsValidStackBytes) {
  perf_event_attr a = sampler_attr();
  const perf::AttrSet attrs = attrs_of(a);
  const std::string full = kernel_sample(20);
  const std::string out = compacted(full, attrs);
  EXPECT_EQ(out.size(), full.size() - 40);  // 64 stack bytes become 24 (20 rounded up to 8)
  perf::Record r;
  ASSERT_TRUE(perf::decode_record(as_bytes(out), attrs, &r).ok());
  const perf::Sample& s = r.sample;
  EXPECT_EQ(s.ip, 0x401000u);
  EXPECT_EQ(s.tid, 43u);
  EXPECT_EQ(s.time, 123456u);
  EXPECT_EQ(s.callchain_size, 2u);
  EXPECT_EQ(s.callchain_at(1), 0x402000u);
  ASSERT_EQ(s.regs_user_count, 3u);
  EXPECT_EQ(s.regs_user[2], 0x3333u);
  EXPECT_EQ(s.stack_user.size(), 24u);
  EXPECT_EQ(s.stack_dyn_size, 20u);
  ASSERT_EQ(s.stack().size(), 20u);
  EXPECT_EQ(s.stack()[19], 19);
  // A full copy stays as it is.
  EXPECT_EQ(compacted(kernel_sample(64), attrs), kernel_sample(64));
  // A field after the copy (the weight) is kept after it.
  a.sample_type |= PERF_SAMPLE_WEIGHT;
  const perf::AttrSet weighted = attrs_of(a);
  const std::string with_weight = compacted(kernel_sample(8, true), weighted);
  EXPECT_EQ(with_weight.size(), kernel_sample(8, true).size() - 56);
  ASSERT_TRUE(perf::decode_record(as_bytes(with_weight), weighted, &r).ok());
  EXPECT_EQ(r.sample.stack().size(), 8u);
  EXPECT_EQ(r.sample.weight, 0x77u);
}

TEST(Recorder, AProcessAlreadyRunningIsDescribedByItsMapsAndNames) {
  const perf_event_attr a = sampler_attr();
  const perf::AttrSet attrs = attrs_of(a);
  const std::string records = synthesize_process_records(getpid(), a, 7);
  size_t comms = 0, executable = 0, at = 0;
  bool this_program = false;
  while (at + 8 <= records.size()) {
    uint16_t size;
    std::memcpy(&size, records.data() + at + 6, 2);
    ASSERT_GE(size, 8u);
    ASSERT_LE(at + size, records.size());
    perf::Record r;
    ASSERT_TRUE(perf::decode_record(as_bytes(records).subspan(at, size), attrs, &r).ok()) << at;
    EXPECT_EQ(r.sample_id.pid, static_cast<uint32_t>(getpid()));
    if (r.type == PERF_RECORD_COMM) {
      ++comms;
      EXPECT_FALSE(r.comm.comm.empty());
    } else if (r.type == PERF_RECORD_MMAP2) {
      ++executable;
      EXPECT_TRUE(r.mmap.executable);
      const auto here = reinterpret_cast<uintptr_t>(&synthesize_process_records);
      if (here >= r.mmap.address && here < r.mmap.address + r.mmap.length) this_program = true;
    }
    at += size;
  }
  EXPECT_EQ(at, records.size());
  EXPECT_GE(comms, 1u);
  EXPECT_GE(executable, 2u);
  EXPECT_TRUE(this_program) << "the mapping of this test's own code";
}

}  // namespace
}  // namespace framewalk::profile

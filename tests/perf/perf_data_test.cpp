// The perf.data reader on hand-written files: the header, attributes and
// features; every record type; samples of many sample_type combinations;
// two events told apart by id; pipe mode; damaged files (truncated, a size
// that lies, a record of size 0), whose error names the record and offset
// after everything before it was delivered; zstd-compressed records.
#include <gtest/gtest.h>

#include <string>
#include <tuple>
#include <vector>

#if __has_include(<zstd.h>)
#include <zstd.h>
#endif

#include "base/text.hpp"
#include "perf/perf_data.hpp"
#include "perf/perf_data_builder.hpp"

namespace framewalk::perf {
namespace {

using test::Attr;
using test::Bytes8;
using test::perf_file;
using test::Rec;

// Every record the reader delivers, kept (bytes copied: they live during the callback only).
struct Collected {
  ReadSummary summary;
  FileInfo info;
  std::vector<Record> records;
  std::vector<std::vector<uint8_t>> bytes;
};

Collected read_all(const std::vector<uint8_t>& file) {
  Collected c;
  BufferSource source(Bytes(file.data(), file.size()));
  PerfDataReader reader(source);
  c.summary = reader.read([&](const FileInfo&) { return true; },
                          [&](const Record& r) {
                            c.records.push_back(r);
                            c.bytes.emplace_back(r.bytes.begin(), r.bytes.end());
                            return true;
                          });
  c.info = reader.info();
  return c;
}

constexpr uint64_t kTidTimeIdCpu = sample::kTid | sample::kTime | sample::kId | sample::kCpu;

// The sample_id trailer: pid/tid, time, id, cpu.
Rec& trailer(Rec& r, uint32_t pid, uint32_t tid, uint64_t time, uint64_t id, uint32_t cpu) {
  r.u32(pid).u32(tid).u64(time).u64(id).u32(cpu).u32(0);
  return r;
}

TEST(PerfData, HeaderAttrsAndFeatures) {
  Attr a;
  a.sample_type = sample::kIp | kTidTimeIdCpu | sample::kPeriod;
  a.ids = {7, 8};
  Bytes8 hostname, arch, cmdline, build_ids;
  test::header_string(hostname, "box");
  test::header_string(arch, "x86_64");
  cmdline.u32(2);
  test::header_string(cmdline, "perf");
  test::header_string(cmdline, "record");
  // One build_id_event with its size (misc bit 15), one padded with zeros.
  Rec one(kHeaderBuildId, misc::kUser | misc::kBuildIdSize);
  one.u32(42);
  for (int i = 0; i < 20; ++i) one.u8(static_cast<uint8_t>(0xa0 + i));
  one.u8(20).u8(0).u8(0).u8(0).name("/usr/bin/prog");
  Rec two(kHeaderBuildId, misc::kUser);
  two.u32(42);
  for (int i = 0; i < 8; ++i) two.u8(static_cast<uint8_t>(1 + i));
  for (int i = 8; i < 24; ++i) two.u8(0);
  two.name("/lib/libx.so");
  build_ids.raw(one.done()).raw(two.done());
  const auto file = perf_file({a}, {}, {{2, build_ids.b}, {3, hostname.b}, {6, arch.b}, {11, cmdline.b}});
  const Collected c = read_all(file);
  ASSERT_FALSE(c.summary.error) << describe(*c.summary.error);
  EXPECT_EQ(c.records.size(), 0u);
  ASSERT_EQ(c.info.attrs.size(), 1u);
  EXPECT_EQ(c.info.attrs.attrs()[0].sample_type, a.sample_type);
  EXPECT_EQ(c.info.attrs.attrs()[0].name, "cpu-clock");
  EXPECT_TRUE(c.info.attrs.attrs()[0].sample_id_all());
  EXPECT_EQ(c.info.attrs.by_id(8), std::optional<size_t>(0));
  EXPECT_FALSE(c.info.attrs.by_id(9));
  EXPECT_EQ(c.info.hostname, "box");
  EXPECT_EQ(c.info.arch, "x86_64");
  EXPECT_EQ(c.info.cmdline, (std::vector<std::string>{"perf", "record"}));
  ASSERT_EQ(c.info.build_ids.size(), 2u);
  EXPECT_EQ(c.info.build_ids[0].filename, "/usr/bin/prog");
  EXPECT_EQ(c.info.build_ids[0].build_id.size(), 20u);
  EXPECT_EQ(c.info.build_ids[0].build_id[0], 0xa0);
  EXPECT_EQ(c.info.build_ids[1].build_id.size(), 8u);
  EXPECT_TRUE(c.info.feature_problems.empty());
}

// HEADER_EVENT_DESC names the events (perf's own names: "cpu-clock:u", a tracepoint's).
TEST(PerfData, EventDescNamesTheEvents) {
  Attr a, b;
  a.sample_type = b.sample_type = sample::kIdentifier | sample::kIp;
  a.ids = {1};
  b.ids = {2};
  b.type = 4;  // PERF_TYPE_RAW: no name of its own
  Bytes8 desc;
  desc.u32(2).u32(128);
  for (const auto& [attr, name, id] : {std::tuple{a, "cpu-clock:u", 1}, std::tuple{b, "r01c2", 2}}) {
    desc.raw(attr.bytes()).u32(1);
    test::header_string(desc, name);
    desc.u64(static_cast<uint64_t>(id));
  }
  const Collected c = read_all(perf_file({a, b}, {}, {{12, desc.b}}));
  ASSERT_FALSE(c.summary.error) << describe(*c.summary.error);
  ASSERT_EQ(c.info.attrs.size(), 2u);
  EXPECT_EQ(c.info.attrs.attrs()[0].name, "cpu-clock:u");
  EXPECT_EQ(c.info.attrs.attrs()[1].name, "r01c2");
  EXPECT_EQ(c.info.attrs.by_id(2), std::optional<size_t>(1));
  EXPECT_TRUE(c.info.feature_problems.empty());
  // A damaged one is a problem of its own, not the end of the file.
  desc.b.resize(20);
  const Collected d = read_all(perf_file({a, b}, {}, {{12, desc.b}}));
  EXPECT_FALSE(d.summary.error);
  ASSERT_EQ(d.info.feature_problems.size(), 1u);
  EXPECT_NE(d.info.feature_problems[0].find("EVENT_DESC"), std::string::npos);
  EXPECT_EQ(d.info.attrs.attrs()[0].name, "cpu-clock");
}

TEST(PerfData, AttrOfAnySize) {
  for (uint32_t size : {64u, 96u, 136u, 200u}) {
    SCOPED_TRACE(size);
    Attr a;
    a.size = size;
    a.sample_type = sample::kIp;
    a.regs_user = size >= 96 ? 0xff : 0;
    a.ids = {1};
    const Collected c = read_all(perf_file({a}, {}));
    ASSERT_FALSE(c.summary.error) << describe(*c.summary.error);
    ASSERT_EQ(c.info.attrs.size(), 1u);
    EXPECT_EQ(c.info.attrs.attrs()[0].sample_regs_user, size >= 96 ? 0xffu : 0u);
  }
}

TEST(PerfData, EveryRecordType) {
  Attr a;
  a.sample_type = sample::kIp | kTidTimeIdCpu;
  a.ids = {5};
  std::vector<std::vector<uint8_t>> records;
  Rec mmap(kMmap, misc::kUser);
  mmap.u32(10).u32(10).u64(0x400000).u64(0x1000).u64(0).name("/bin/a");
  records.push_back(trailer(mmap, 10, 10, 100, 5, 1).done());
  Rec mmap2(kMmap2, misc::kUser);
  mmap2.u32(10).u32(11).u64(0x7f0000).u64(0x2000).u64(0x1000).u32(8).u32(1).u64(1234).u64(0).u32(5).u32(2).name("/lib/b.so");
  records.push_back(trailer(mmap2, 10, 11, 101, 5, 1).done());
  Rec mmap2_id(kMmap2, misc::kUser | misc::kMmapBuildId);
  mmap2_id.u32(10).u32(10).u64(0x800000).u64(0x1000).u64(0).u8(20).u8(0).u16(0);
  for (int i = 0; i < 20; ++i) mmap2_id.u8(static_cast<uint8_t>(i));
  mmap2_id.u32(5).u32(2).name("/lib/c.so");
  records.push_back(trailer(mmap2_id, 10, 10, 102, 5, 0).done());
  Rec data_map(kMmap2, misc::kUser | misc::kMmapData);
  data_map.u32(10).u32(10).u64(0x900000).u64(0x1000).u64(0).u32(0).u32(0).u64(0).u64(0).u32(3).u32(2).name("//anon");
  records.push_back(trailer(data_map, 10, 10, 103, 5, 0).done());
  Rec comm(kComm, misc::kCommExec);
  comm.u32(10).u32(10).name("prog");
  records.push_back(trailer(comm, 10, 10, 104, 5, 0).done());
  Rec fork(kFork);
  fork.u32(12).u32(10).u32(12).u32(10).u64(105);
  records.push_back(trailer(fork, 12, 12, 105, 5, 0).done());
  Rec exit(kExit);
  exit.u32(12).u32(10).u32(12).u32(10).u64(106);
  records.push_back(trailer(exit, 12, 12, 106, 5, 0).done());
  Rec lost(kLost);
  lost.u64(5).u64(17);
  records.push_back(trailer(lost, 10, 10, 107, 5, 0).done());
  Rec lost_samples(kLostSamples);
  lost_samples.u64(3);
  records.push_back(trailer(lost_samples, 10, 10, 108, 5, 0).done());
  Rec throttle(kThrottle);
  throttle.u64(109).u64(5).u64(6);
  records.push_back(trailer(throttle, 10, 10, 109, 5, 0).done());
  Rec unthrottle(kUnthrottle);
  unthrottle.u64(110).u64(5).u64(6);
  records.push_back(trailer(unthrottle, 10, 10, 110, 5, 0).done());
  records.push_back(Rec(kFinishedRound).done());
  Rec unknown(200);  // a type of a later perf: skipped by its size
  unknown.u64(1).u64(2).u64(3);
  records.push_back(unknown.done());
  Rec sw(kSwitchCpuWide);
  sw.u32(1).u32(2);
  records.push_back(trailer(sw, 10, 10, 111, 5, 0).done());

  const Collected c = read_all(perf_file({a}, records));
  ASSERT_FALSE(c.summary.error) << describe(*c.summary.error);
  ASSERT_EQ(c.records.size(), records.size());
  const Record& m = c.records[0];
  EXPECT_EQ(m.type, kMmap);
  EXPECT_EQ(m.mmap.address, 0x400000u);
  EXPECT_TRUE(m.mmap.executable);
  EXPECT_EQ(m.sample_id.time, 100u);
  EXPECT_EQ(m.sample_id.cpu, 1u);
  EXPECT_EQ(m.attr, std::optional<size_t>(0));
  // Strings point into the reader's buffer: decode the kept bytes again to read them.
  Record again;
  ASSERT_TRUE(decode_record(Bytes(c.bytes[0].data(), c.bytes[0].size()), c.info.attrs, &again));
  EXPECT_EQ(again.mmap.filename, "/bin/a");
  ASSERT_TRUE(decode_record(Bytes(c.bytes[1].data(), c.bytes[1].size()), c.info.attrs, &again));
  EXPECT_EQ(again.mmap.filename, "/lib/b.so");
  EXPECT_EQ(again.mmap.inode, 1234u);
  EXPECT_EQ(again.mmap.major, 8u);
  EXPECT_EQ(again.mmap.pgoff, 0x1000u);
  EXPECT_TRUE(again.mmap.executable);
  EXPECT_EQ(again.sample_id.tid, 11u);
  ASSERT_TRUE(decode_record(Bytes(c.bytes[2].data(), c.bytes[2].size()), c.info.attrs, &again));
  EXPECT_TRUE(again.mmap.has_build_id);
  EXPECT_EQ(again.mmap.build_id_size, 20);
  EXPECT_EQ(again.mmap.build_id[19], 19);
  EXPECT_EQ(again.mmap.filename, "/lib/c.so");
  EXPECT_FALSE(c.records[3].mmap.executable);  // a data mapping
  ASSERT_TRUE(decode_record(Bytes(c.bytes[4].data(), c.bytes[4].size()), c.info.attrs, &again));
  EXPECT_EQ(again.comm.comm, "prog");
  EXPECT_TRUE(again.comm.exec);
  EXPECT_EQ(c.records[5].task.pid, 12u);
  EXPECT_EQ(c.records[5].task.ppid, 10u);
  EXPECT_EQ(c.records[5].task.time, 105u);
  EXPECT_EQ(c.records[6].type, kExit);
  EXPECT_EQ(c.records[6].task.time, 106u);
  EXPECT_EQ(c.records[7].lost.lost, 17u);
  EXPECT_EQ(c.records[7].lost.id, 5u);
  EXPECT_EQ(c.records[8].lost.lost, 3u);
  EXPECT_EQ(c.records[9].throttle.time, 109u);
  EXPECT_EQ(c.records[9].throttle.stream_id, 6u);
  EXPECT_EQ(c.records[10].type, kUnthrottle);
  EXPECT_EQ(c.records[11].type, kFinishedRound);
  EXPECT_EQ(c.records[12].type, 200u);
  EXPECT_EQ(c.records[13].sample_id.time, 111u);
  // Indexes and offsets: each record where the file has it.
  EXPECT_EQ(c.records[0].index, 0u);
  EXPECT_EQ(c.records[13].index, 13u);
  EXPECT_EQ(c.records[1].file_offset, c.records[0].file_offset + c.records[0].size);
}

// Every field sample_type can ask for, in the kernel's order.
TEST(PerfData, SampleWithEveryField) {
  Attr a;
  a.sample_type = sample::kIdentifier | sample::kIp | sample::kTid | sample::kTime | sample::kAddr | sample::kId |
                  sample::kStreamId | sample::kCpu | sample::kPeriod | sample::kRead | sample::kCallchain |
                  sample::kRaw | sample::kBranchStack | sample::kRegsUser | sample::kStackUser |
                  sample::kWeightStruct | sample::kDataSrc | sample::kTransaction | sample::kRegsIntr |
                  sample::kPhysAddr | sample::kCgroup | sample::kDataPageSize | sample::kCodePageSize | sample::kAux;
  a.read_format = read_format::kGroup | read_format::kId | read_format::kTotalTimeEnabled;
  a.branch_sample_type = 1u << 17;  // hw_idx
  a.regs_user = 0x1c0;              // three registers: bits 6, 7, 8
  a.ids = {99};
  // regs_intr: the attr's field at offset 96 stays 0 here, so REGS_INTR has only its ABI word.
  Rec s(kSample, misc::kUser);
  s.u64(99).u64(0x401000).u32(10).u32(11).u64(5000).u64(0xdead).u64(99).u64(77).u32(1).u32(0).u64(4000);
  s.u64(2).u64(123).u64(1).u64(99).u64(2).u64(98);  // READ: nr 2, time_enabled, {value, id} x2
  s.u64(3).u64(context::kUser).u64(0x401000).u64(0x402000);  // CALLCHAIN
  s.u32(4).u32(0xabcdef01);                                     // RAW (4 bytes)
  s.u64(1).u64(0).u64(0x10).u64(0x20).u64(0);                   // BRANCH_STACK: nr 1, hw_idx, entry
  s.u64(2).u64(0x7ffe1000).u64(0x7ffe0f00).u64(0x401000);       // REGS_USER: abi 64, bp, sp, ip
  s.u64(16);                                                    // STACK_USER: size 16
  for (int i = 0; i < 16; ++i) s.u8(static_cast<uint8_t>(i));
  s.u64(8);                                                     // dyn_size
  s.u64(0x55).u64(0x66).u64(0x77).u64(0);                       // weight, data_src, transaction, regs_intr abi 0
  s.u64(0x1000).u64(9).u64(4096).u64(8192);                     // phys_addr, cgroup, page sizes
  s.u64(8).u64(0x1122334455667788ull);                          // AUX
  const Collected c = read_all(perf_file({a}, {s.done()}));
  ASSERT_FALSE(c.summary.error) << describe(*c.summary.error);
  ASSERT_EQ(c.records.size(), 1u);
  const Sample& x = c.records[0].sample;
  EXPECT_EQ(x.id, 99u);
  EXPECT_EQ(x.ip, 0x401000u);
  EXPECT_EQ(x.pid, 10u);
  EXPECT_EQ(x.tid, 11u);
  EXPECT_EQ(x.time, 5000u);
  EXPECT_EQ(x.addr, 0xdeadu);
  EXPECT_EQ(x.stream_id, 77u);
  EXPECT_EQ(x.cpu, 1u);
  EXPECT_EQ(x.period, 4000u);
  EXPECT_EQ(x.read_values.size(), 48u);
  EXPECT_EQ(x.callchain_size, 3u);
  EXPECT_EQ(x.callchain_at(0), context::kUser);
  EXPECT_EQ(x.callchain_at(2), 0x402000u);
  EXPECT_EQ(x.raw.size(), 4u);
  EXPECT_EQ(x.branch_stack.size(), 40u);
  EXPECT_EQ(x.regs_user_abi, 2u);
  EXPECT_EQ(x.regs_user_count, 3u);
  EXPECT_EQ(x.regs_user[1], 0x7ffe0f00u);
  EXPECT_EQ(x.stack_user.size(), 16u);
  EXPECT_EQ(x.stack_dyn_size, 8u);
  EXPECT_EQ(x.stack().size(), 8u);
  EXPECT_EQ(x.weight, 0x55u);
  EXPECT_EQ(x.data_src, 0x66u);
  EXPECT_EQ(x.transaction, 0x77u);
  EXPECT_EQ(x.phys_addr, 0x1000u);
  EXPECT_EQ(x.cgroup, 9u);
  EXPECT_EQ(x.data_page_size, 4096u);
  EXPECT_EQ(x.code_page_size, 8192u);
  EXPECT_EQ(x.aux.size(), 8u);
}

TEST(PerfData, SampleTypeCombinations) {
  // A sample that reads its fields right must end exactly at the record's end
  // for every combination of the simple fields.
  const uint64_t simple[] = {sample::kIp, sample::kTid, sample::kTime, sample::kAddr, sample::kId, sample::kCpu,
                             sample::kPeriod, sample::kStreamId, sample::kDataSrc};
  for (unsigned combo = 0; combo < (1u << std::size(simple)); combo += 7) {
    Attr a;
    a.ids = {1};
    for (size_t i = 0; i < std::size(simple); ++i)
      if (combo >> i & 1) a.sample_type |= simple[i];
    Rec s(kSample);
    uint64_t value = 0x100;
    for (uint64_t bit : {sample::kIp, sample::kTid, sample::kTime, sample::kAddr, sample::kId, sample::kStreamId,
                         sample::kCpu, sample::kPeriod, sample::kDataSrc})
      if (a.sample_type & bit) s.u64(bit == sample::kId ? 1 : value++);
    const Collected c = read_all(perf_file({a}, {s.done()}));
    ASSERT_FALSE(c.summary.error) << combo << ": " << describe(*c.summary.error);
    ASSERT_EQ(c.records.size(), 1u);
    if (a.sample_type & sample::kIp) {
      EXPECT_EQ(c.records[0].sample.ip, 0x100u);
    }
  }
}

TEST(PerfData, TwoEventsToldApartById) {
  Attr clock, task;
  clock.sample_type = task.sample_type = sample::kIdentifier | sample::kIp | sample::kTid | sample::kTime;
  clock.ids = {100, 101};
  task.config = 1;  // task-clock
  task.ids = {200};
  Rec s1(kSample);
  s1.u64(200).u64(0x1).u32(1).u32(1).u64(10);
  Rec s2(kSample);
  s2.u64(101).u64(0x2).u32(1).u32(1).u64(11);
  Rec comm(kComm);
  comm.u32(1).u32(1).name("x").u32(1).u32(1).u64(12).u64(200);  // trailer: tid, time, identifier
  Rec bad(kSample);
  bad.u64(300).u64(0x3).u32(1).u32(1).u64(13);  // an id no event has
  const Collected c = read_all(perf_file({clock, task}, {s1.done(), s2.done(), comm.done(), bad.done()}));
  ASSERT_EQ(c.records.size(), 3u);
  EXPECT_EQ(c.records[0].sample.attr, 1u);
  EXPECT_EQ(c.info.attrs.attrs()[1].name, "task-clock");
  EXPECT_EQ(c.records[1].sample.attr, 0u);
  EXPECT_EQ(c.records[2].attr, std::optional<size_t>(1));
  EXPECT_EQ(c.records[2].sample_id.time, 12u);
  ASSERT_TRUE(c.summary.error);
  EXPECT_EQ(c.summary.error->record, 3u);
  EXPECT_EQ(c.summary.error->error.code, ErrorCode::kNotFound);
  EXPECT_NE(describe(*c.summary.error).find("record 3 at offset 0x"), std::string::npos) << describe(*c.summary.error);
}

// perf's own synthesized records (the mappings of a process already
// running) carry id 0: they go with the first event, as perf reads them.
TEST(PerfData, IdZeroGoesWithTheFirstEvent) {
  Attr clock, task;
  clock.sample_type = task.sample_type = sample::kIdentifier | sample::kIp | sample::kTid | sample::kTime;
  clock.ids = {100};
  task.config = 1;
  task.ids = {200};
  Rec comm(kComm);
  comm.u32(1).u32(1).name("x").u32(1).u32(1).u64(12).u64(0);
  const Collected c = read_all(perf_file({clock, task}, {comm.done()}));
  ASSERT_FALSE(c.summary.error) << describe(*c.summary.error);
  ASSERT_EQ(c.records.size(), 1u);
  EXPECT_EQ(c.records[0].attr, std::optional<size_t>(0));
}

// A record cut short by the file's end, one whose size runs past the data
// section, one of size 0 and a sample whose stack size lies: each ends the
// stream with the record's index and offset, after the records before it.
TEST(PerfData, DamagedFiles) {
  Attr a;
  a.sample_type = sample::kIp | sample::kTid | sample::kStackUser;
  a.ids = {1};
  Rec good(kSample);
  good.u64(0x10).u32(1).u32(1).u64(0);
  const std::vector<uint8_t> g = good.done();
  {
    std::vector<uint8_t> file = perf_file({a}, {g, g});
    file.resize(file.size() - 4);  // the second sample is cut (no features follow)
    const Collected c = read_all(file);
    ASSERT_EQ(c.records.size(), 1u);
    ASSERT_TRUE(c.summary.error);
    EXPECT_EQ(c.summary.error->record, 1u);
    EXPECT_EQ(c.summary.error->record_offset, c.records[0].file_offset + g.size());
    EXPECT_NE(describe(*c.summary.error).find("record 1 at offset " + hex(c.summary.error->record_offset)), std::string::npos)
        << describe(*c.summary.error);
  }
  {
    std::vector<uint8_t> lie = g;
    lie[6] = 200;  // 200 bytes: past the data section
    const Collected c = read_all(perf_file({a}, {g, lie}));
    ASSERT_EQ(c.records.size(), 1u);
    ASSERT_TRUE(c.summary.error);
    EXPECT_EQ(c.summary.error->error.code, ErrorCode::kBadLength);
    EXPECT_EQ(c.summary.error->record, 1u);
    EXPECT_NE(describe(*c.summary.error).find("past the data section"), std::string::npos) << describe(*c.summary.error);
  }
  {
    std::vector<uint8_t> zero = g;
    zero[6] = 0;
    const Collected c = read_all(perf_file({a}, {g, g, zero, g}));
    ASSERT_EQ(c.records.size(), 2u);
    ASSERT_TRUE(c.summary.error);
    EXPECT_EQ(c.summary.error->record, 2u);
    EXPECT_NE(describe(*c.summary.error).find("size 0"), std::string::npos) << describe(*c.summary.error);
  }
  {
    Rec s(kSample);
    s.u64(0x10).u32(1).u32(1).u64(4096).u64(1);  // a stack of 4096 bytes in a record of 40
    const Collected c = read_all(perf_file({a}, {g, s.done()}));
    ASSERT_EQ(c.records.size(), 1u);
    ASSERT_TRUE(c.summary.error);
    EXPECT_EQ(c.summary.error->error.code, ErrorCode::kTruncated);
    EXPECT_EQ(c.summary.error->error.offset, c.summary.error->record_offset + 32);  // where the stack starts
    EXPECT_NE(describe(*c.summary.error).find("SAMPLE"), std::string::npos);
  }
  {
    Rec s(kSample);
    s.u64(0x10).u32(1).u32(1).u64(8).u64(0).u64(9);  // dyn_size 9 of a copy of 8
    const Collected c = read_all(perf_file({a}, {s.done()}));
    ASSERT_TRUE(c.summary.error);
    EXPECT_EQ(c.summary.error->error.code, ErrorCode::kBadLength);
  }
  {
    // Not a perf.data; a header cut short.
    std::vector<uint8_t> junk(200, 'x');
    EXPECT_TRUE(read_all(junk).summary.error);
    std::vector<uint8_t> file = perf_file({a}, {g});
    file.resize(50);
    const Collected c = read_all(file);
    ASSERT_TRUE(c.summary.error);
    EXPECT_EQ(c.summary.error->record, 0u);
  }
}

// AUXTRACE: its trace data follows the record, outside its size: read past
// (in a pipe too); a size that runs past the data section is an error, not
// a jump backwards.
TEST(PerfData, AuxtraceDataReadPast) {
  Attr a;
  a.sample_type = sample::kIp | sample::kTid;
  a.ids = {1};
  Rec aux(kAuxtrace);
  aux.u64(16).u64(0).u64(0).u32(0).u32(1).u32(0).u32(0);
  std::vector<uint8_t> with_data = aux.done();
  with_data.insert(with_data.end(), 16, 0xee);
  Rec s(kSample);
  s.u64(0x42).u32(1).u32(1);
  const Collected c = read_all(perf_file({a}, {with_data, s.done()}));
  ASSERT_FALSE(c.summary.error) << describe(*c.summary.error);
  ASSERT_EQ(c.records.size(), 2u);
  EXPECT_EQ(c.records[1].sample.ip, 0x42u);

  Rec huge(kAuxtrace);
  huge.u64(~uint64_t{0} - 100).u64(0).u64(0).u32(0).u32(1).u32(0).u32(0);
  const Collected bad = read_all(perf_file({a}, {huge.done(), s.done()}));
  ASSERT_TRUE(bad.summary.error);
  EXPECT_EQ(bad.summary.error->error.code, ErrorCode::kBadLength);
  EXPECT_NE(describe(*bad.summary.error).find("AUXTRACE"), std::string::npos);
}

// decode_record alone, on the bytes of one record (a ring buffer's).
TEST(PerfData, DecodeOneRecord) {
  AttrSet attrs;
  EventAttr e;
  e.sample_type = sample::kIp | sample::kTid | sample::kRegsUser | sample::kStackUser;
  e.sample_regs_user = 0x3;
  attrs.add(e);
  Rec s(kSample, misc::kUser);
  s.u64(0x1234).u32(7).u32(8).u64(2).u64(0xa).u64(0xb).u64(8).u64(0x1122334455667788ull).u64(8);
  const auto bytes = s.done();
  Record r;
  ASSERT_TRUE(decode_record(Bytes(bytes.data(), bytes.size()), attrs, &r));
  EXPECT_EQ(r.sample.ip, 0x1234u);
  EXPECT_EQ(r.sample.regs_user[1], 0xbu);
  EXPECT_EQ(r.sample.stack().size(), 8u);
  // A record shorter than its header says.
  auto cut = bytes;
  cut.pop_back();
  auto result = decode_record(Bytes(cut.data(), cut.size()), attrs, &r);
  ASSERT_FALSE(result);
  EXPECT_EQ(result.error().code, ErrorCode::kBadLength);
  // A user ABI of 0: no register values follow.
  Rec none(kSample);
  none.u64(1).u32(1).u32(1).u64(0).u64(0);
  const auto n = none.done();
  ASSERT_TRUE(decode_record(Bytes(n.data(), n.size()), attrs, &r));
  EXPECT_EQ(r.sample.regs_user_count, 0u);
  EXPECT_EQ(r.sample.stack_user.size(), 0u);
}

TEST(PerfData, PipeMode) {
  Attr a;
  a.sample_type = sample::kIp | sample::kTid;
  Bytes8 f;
  f.u64(kMagic).u64(16);
  Rec attr(kHeaderAttr);
  attr.raw(a.bytes()).u64(55);
  f.raw(attr.done());
  Rec feature(kHeaderFeature);
  feature.u64(3);
  test::header_string(feature, "pipehost");
  f.raw(feature.done());
  Rec s(kSample);
  s.u64(0x99).u32(3).u32(4);
  f.raw(s.done());
  const Collected c = read_all(f.b);
  ASSERT_FALSE(c.summary.error) << describe(*c.summary.error);
  EXPECT_TRUE(c.info.pipe);
  EXPECT_EQ(c.info.hostname, "pipehost");
  ASSERT_EQ(c.info.attrs.size(), 1u);
  EXPECT_EQ(c.info.attrs.by_id(55), std::optional<size_t>(0));
  ASSERT_EQ(c.records.size(), 1u);  // the attr and feature records are in the FileInfo
  EXPECT_EQ(c.records[0].sample.ip, 0x99u);
  EXPECT_EQ(c.records[0].index, 2u);
}

// An event with more ids than one HEADER_ATTR record holds comes in several
// records with the same attributes: one event, all its ids.
TEST(PerfData, PipeModeAttrIdsAcrossRecords) {
  Attr a, b;
  a.sample_type = b.sample_type = sample::kIdentifier | sample::kIp | sample::kTid;
  b.config = 3;
  Bytes8 f;
  f.u64(kMagic).u64(16);
  for (auto [attr, id] : {std::pair{&a, 1}, std::pair{&a, 2}, std::pair{&b, 3}}) {
    Rec r(kHeaderAttr);
    r.raw(attr->bytes()).u64(static_cast<uint64_t>(id));
    f.raw(r.done());
  }
  Rec s(kSample);
  s.u64(2).u64(0x99).u32(3).u32(4);
  f.raw(s.done());
  const Collected c = read_all(f.b);
  ASSERT_FALSE(c.summary.error) << describe(*c.summary.error);
  ASSERT_EQ(c.info.attrs.size(), 2u);
  EXPECT_EQ(c.info.attrs.by_id(1), std::optional<size_t>(0));
  EXPECT_EQ(c.info.attrs.by_id(2), std::optional<size_t>(0));
  EXPECT_EQ(c.info.attrs.by_id(3), std::optional<size_t>(1));
  EXPECT_EQ(c.info.attrs.attrs()[0].ids.size(), 2u);
  ASSERT_EQ(c.records.size(), 1u);
  EXPECT_EQ(c.records[0].sample.attr, 0u);
}

#if __has_include(<zstd.h>) && FRAMEWALK_TEST_PERF_ZSTD
// PERF_RECORD_COMPRESSED: records inside a zstd stream, one of them split
// across two compressed records, as perf record -z writes them.
TEST(PerfData, CompressedRecords) {
  Attr a;
  a.sample_type = sample::kIp | sample::kTid;
  a.ids = {1};
  std::vector<uint8_t> plain;
  for (uint64_t i = 0; i < 50; ++i) {
    Rec s(kSample);
    s.u64(0x1000 + i).u32(1).u32(1);
    const auto b = s.done();
    plain.insert(plain.end(), b.begin(), b.end());
  }
  std::vector<uint8_t> z(ZSTD_compressBound(plain.size()));
  z.resize(ZSTD_compress(z.data(), z.size(), plain.data(), plain.size(), 3));
  ASSERT_FALSE(ZSTD_isError(z.size()));
  // Split the frame into two records, mid-stream.
  const size_t half = z.size() / 2;
  Rec c1(kCompressed), c2(kCompressed);
  c1.raw(std::vector<uint8_t>(z.begin(), z.begin() + static_cast<std::ptrdiff_t>(half)));
  c2.raw(std::vector<uint8_t>(z.begin() + static_cast<std::ptrdiff_t>(half), z.end()));
  Rec after(kSample);
  after.u64(0x9999).u32(1).u32(1);
  const Collected c = read_all(perf_file({a}, {c1.done(), c2.done(), after.done()}));
  ASSERT_FALSE(c.summary.error) << describe(*c.summary.error);
  EXPECT_EQ(c.summary.compressed_records, 2u);
  ASSERT_EQ(c.records.size(), 51u);
  EXPECT_EQ(c.records[0].sample.ip, 0x1000u);
  EXPECT_EQ(c.records[49].sample.ip, 0x1000u + 49);
  EXPECT_EQ(c.records[50].sample.ip, 0x9999u);
  // Bytes that are no zstd: an error naming the compressed record.
  Rec junk(kCompressed);
  junk.u64(0x0123456789abcdefull).u64(1);
  const Collected bad = read_all(perf_file({a}, {after.done(), junk.done()}));
  ASSERT_EQ(bad.records.size(), 1u);
  ASSERT_TRUE(bad.summary.error);
  EXPECT_EQ(bad.summary.error->error.code, ErrorCode::kDecompressFailed);
  EXPECT_EQ(bad.summary.error->record, 1u);
}
#endif

}  // namespace
}  // namespace framewalk::perf

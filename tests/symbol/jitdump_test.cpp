// jitdump files on hand-written bytes: every record kind in both byte
// orders, V8's padding to 8 bytes, "\xff" file names, files cut at every
// record boundary and inside every record, damaged sizes and names, unknown
// records skipped, headers refused; JitCodeIndex over loads, moves and
// reused addresses; and a file Node.js writes (--perf-prof) when node is
// installed. JitdumpFeed: a process's jitdump code with unwind tables
// made into modules as samples' times reach its records.
#include "symbol/jitdump.hpp"

#include <elf.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <string>
#include <vector>

#include "support/run_command.hpp"
#include "support/section_builder.hpp"
#include "target/jitdump_modules.hpp"

namespace framewalk::symbol {
namespace {

using test::SectionBuilder;

constexpr Endian kHost = std::endian::native == std::endian::big ? Endian::kBig : Endian::kLittle;
constexpr Endian kOther = kHost == Endian::kLittle ? Endian::kBig : Endian::kLittle;

// A jitdump file being written: a header, then records.
class JitdumpBuilder {
 public:
  explicit JitdumpBuilder(Endian endian = kHost, uint32_t header_size = 40, uint64_t flags = 0) : b_(endian) {
    b_.u32(kJitdumpMagic).u32(1).u32(header_size).u32(EM_X86_64).u32(0xdeadbeef).u32(4242).u64(1000).u64(flags);
    b_.zeros(header_size > 40 ? header_size - 40 : 0);
  }
  // A record around `payload`, padded with zeros to a multiple of `align`.
  JitdumpBuilder& record(uint32_t id, uint64_t timestamp, const SectionBuilder& payload, size_t align = 1) {
    size_t size = 16 + payload.size();
    size = (size + align - 1) / align * align;
    boundaries_.push_back(b_.size());
    b_.u32(id).u32(static_cast<uint32_t>(size)).u64(timestamp).append(payload).zeros(size - 16 - payload.size());
    return *this;
  }
  JitdumpBuilder& code_load(uint64_t timestamp, uint64_t addr, std::string_view name, std::vector<uint8_t> code,
                            uint64_t index, uint32_t pid = 4242) {
    SectionBuilder p = payload();
    p.u32(pid).u32(pid + 1).u64(addr).u64(addr).u64(code.size()).u64(index).str(name).bytes(code);
    return record(0, timestamp, p);
  }
  JitdumpBuilder& code_move(uint64_t timestamp, uint64_t from, uint64_t to, uint64_t size, uint64_t index,
                            uint32_t pid = 4242) {
    SectionBuilder p = payload();
    p.u32(pid).u32(pid + 1).u64(to).u64(from).u64(to).u64(size).u64(index);
    return record(1, timestamp, p);
  }
  JitdumpBuilder& unwinding_info(uint64_t timestamp, const std::vector<uint8_t>& eh_frame,
                                 const std::vector<uint8_t>& hdr, size_t align = 1) {
    SectionBuilder p = payload();
    p.u64(eh_frame.size() + hdr.size()).u64(hdr.size()).u64(eh_frame.size() + hdr.size()).bytes(eh_frame).bytes(hdr);
    return record(4, timestamp, p, align);
  }
  SectionBuilder payload() const { return SectionBuilder(b_.endian()); }
  std::vector<uint8_t> bytes() const { return b_.bytes(); }
  const std::vector<size_t>& boundaries() const { return boundaries_; }  // each record's offset

 private:
  SectionBuilder b_;
  std::vector<size_t> boundaries_;
};

// A DEBUG_INFO payload: code_addr, then (address, line, file) entries.
struct LineSpec {
  uint64_t address;
  int32_t line;
  std::string file;
};
SectionBuilder debug_payload(const JitdumpBuilder& j, uint64_t code_addr, const std::vector<LineSpec>& lines) {
  SectionBuilder p = j.payload();
  p.u64(code_addr).u64(lines.size());
  for (const LineSpec& l : lines) p.u64(l.address).u32(static_cast<uint32_t>(l.line)).u32(7).str(l.file);
  return p;
}

// A CIE (length, id 0, version 1, "zR", ...) and an FDE, enough to look like .eh_frame.
const std::vector<uint8_t> kEhFrame = {0x10, 0, 0, 0, 0, 0, 0, 0, 1, 'z', 'R', 0, 1, 0x78, 0x10, 1, 0x1b, 0, 0, 0};
const std::vector<uint8_t> kEhFrameHdr = {1, 0x1b, 3, 0x3b, 0, 0, 0, 0, 0, 0, 0, 0};

JitdumpBuilder every_kind(Endian endian) {
  JitdumpBuilder j(endian, 48);
  j.record(2, 10, debug_payload(j, 0x1000, {{0x1000, 1, "a.js"}, {0x1004, 2, "\xff"}, {0x1008, 3, "b.js"},
                                            {0x100c, 4, "\xff"}}));
  j.unwinding_info(11, kEhFrame, kEhFrameHdr);
  j.code_load(12, 0x1000, "LazyCompile:*f a.js:1", {0x55, 0x48, 0x89, 0xe5, 0xc3}, 1);
  j.code_load(13, 0x2000, "Builtin:g", {0xc3}, 2);
  j.code_move(14, 0x2000, 0x3000, 1, 2);
  j.record(3, 15, j.payload());
  return j;
}

void expect_every_kind(const JitDump& d, Endian endian) {
  EXPECT_EQ(d.header.version, 1u);
  EXPECT_EQ(d.header.size, 48u);
  EXPECT_EQ(d.header.elf_mach, uint32_t{EM_X86_64});
  EXPECT_EQ(d.header.pid, 4242u);
  EXPECT_EQ(d.header.timestamp, 1000u);
  EXPECT_EQ(d.header.flags, 0u);
  EXPECT_EQ(d.header.endian, endian);
  EXPECT_EQ(d.header.swapped, endian != kHost);
  EXPECT_FALSE(d.stopped.has_value());
  EXPECT_EQ(d.records, 6u);
  EXPECT_EQ(d.code_closes, 1u);
  EXPECT_EQ(d.unknown_records, 0u);

  ASSERT_EQ(d.debug_infos.size(), 1u);
  const JitDebugInfo& di = d.debug_infos[0];
  EXPECT_EQ(di.code_addr, 0x1000u);
  EXPECT_EQ(di.timestamp, 10u);
  EXPECT_EQ(di.index, 0u);
  EXPECT_EQ(di.file_offset, 48u);
  ASSERT_EQ(di.lines.size(), 4u);
  EXPECT_EQ(di.lines[0].file, "a.js");
  EXPECT_EQ(di.lines[1].file, "a.js");  // "\xff": as the previous
  EXPECT_EQ(di.lines[2].file, "b.js");
  EXPECT_EQ(di.lines[3].file, "b.js");
  EXPECT_EQ(di.lines[3].address, 0x100cu);
  EXPECT_EQ(di.lines[3].line, 4);
  EXPECT_EQ(di.lines[3].discriminator, 7);

  ASSERT_EQ(d.unwinding_infos.size(), 1u);
  const JitUnwindingInfo& u = d.unwinding_infos[0];
  EXPECT_EQ(u.index, 1u);
  EXPECT_EQ(u.timestamp, 11u);
  EXPECT_EQ(u.unwinding_size, kEhFrame.size() + kEhFrameHdr.size());
  EXPECT_EQ(u.eh_frame_hdr_size, kEhFrameHdr.size());
  EXPECT_EQ(u.mapped_size, u.unwinding_size);
  EXPECT_EQ(std::vector<uint8_t>(u.eh_frame.begin(), u.eh_frame.end()), kEhFrame);
  EXPECT_EQ(std::vector<uint8_t>(u.eh_frame_hdr.begin(), u.eh_frame_hdr.end()), kEhFrameHdr);

  ASSERT_EQ(d.loads.size(), 2u);
  const JitCodeLoad& f = d.loads[0];
  EXPECT_EQ(f.name, "LazyCompile:*f a.js:1");
  EXPECT_EQ(f.pid, 4242u);
  EXPECT_EQ(f.tid, 4243u);
  EXPECT_EQ(f.vma, 0x1000u);
  EXPECT_EQ(f.code_addr, 0x1000u);
  EXPECT_EQ(f.code_size, 5u);
  EXPECT_EQ(f.code_index, 1u);
  EXPECT_EQ(f.timestamp, 12u);
  EXPECT_EQ(f.index, 2u);
  EXPECT_EQ(f.file_offset, u.file_offset + 40 + u.unwinding_size);
  EXPECT_EQ(std::vector<uint8_t>(f.code.begin(), f.code.end()), (std::vector<uint8_t>{0x55, 0x48, 0x89, 0xe5, 0xc3}));
  EXPECT_EQ(f.debug_info, std::optional<size_t>(0));
  EXPECT_EQ(f.unwinding_info, std::optional<size_t>(0));
  const JitCodeLoad& g = d.loads[1];
  EXPECT_EQ(g.name, "Builtin:g");
  EXPECT_EQ(g.code_end(), 0x2001u);
  EXPECT_FALSE(g.debug_info.has_value());  // used up by the load before
  EXPECT_FALSE(g.unwinding_info.has_value());

  ASSERT_EQ(d.moves.size(), 1u);
  const JitCodeMove& m = d.moves[0];
  EXPECT_EQ(m.old_code_addr, 0x2000u);
  EXPECT_EQ(m.new_code_addr, 0x3000u);
  EXPECT_EQ(m.code_size, 1u);
  EXPECT_EQ(m.code_index, 2u);
  EXPECT_EQ(m.timestamp, 14u);
  EXPECT_EQ(m.index, 4u);
  EXPECT_EQ(m.file_offset, g.file_offset + 16 + 40 + 10 + 1);
}

TEST(Jitdump, EveryRecordKind) {
  const std::vector<uint8_t> file = every_kind(kHost).bytes();
  Result<JitDump> d = parse_jitdump(file);
  ASSERT_TRUE(d.ok()) << to_string(d.error().code);
  expect_every_kind(*d, kHost);
}

TEST(Jitdump, OtherByteOrder) {
  const std::vector<uint8_t> file = every_kind(kOther).bytes();
  EXPECT_NE(file, every_kind(kHost).bytes());
  Result<JitDump> d = parse_jitdump(file);
  ASSERT_TRUE(d.ok()) << to_string(d.error().code);
  expect_every_kind(*d, kOther);
}

TEST(Jitdump, V8PadsRecordsTo8) {
  JitdumpBuilder j;
  // Three entries of 16 + 5 bytes: 63 bytes after the header's, padded to 8.
  j.record(2, 1, debug_payload(j, 0x1000, {{0x1000, 1, "x.js"}, {0x1001, 2, "\xff"}, {0x1002, 3, "\xff"}}), 8);
  j.unwinding_info(2, kEhFrame, {1, 2, 3}, 8);  // 40 + 23 bytes, padded to 64
  j.code_load(3, 0x1000, "f", {0x90, 0x90, 0xc3}, 9);
  const std::vector<uint8_t> file = j.bytes();
  ASSERT_EQ(j.boundaries()[1] - j.boundaries()[0], 96u);
  ASSERT_EQ(j.boundaries()[2] - j.boundaries()[1], 64u);
  Result<JitDump> d = parse_jitdump(file);
  ASSERT_TRUE(d.ok());
  EXPECT_FALSE(d->stopped.has_value());
  ASSERT_EQ(d->debug_infos.size(), 1u);
  ASSERT_EQ(d->debug_infos[0].lines.size(), 3u);
  EXPECT_EQ(d->debug_infos[0].lines[2].file, "x.js");
  ASSERT_EQ(d->unwinding_infos.size(), 1u);
  EXPECT_EQ(d->unwinding_infos[0].eh_frame.size(), kEhFrame.size());
  EXPECT_EQ(d->unwinding_infos[0].eh_frame_hdr.size(), 3u);
  EXPECT_EQ(d->unwinding_infos[0].eh_frame_hdr[2], 3);
  ASSERT_EQ(d->loads.size(), 1u);
  EXPECT_EQ(d->loads[0].name, "f");
  EXPECT_EQ(d->loads[0].file_offset, j.boundaries()[2]);
  EXPECT_EQ(d->loads[0].debug_info, std::optional<size_t>(0));
  EXPECT_EQ(d->loads[0].unwinding_info, std::optional<size_t>(0));
}

TEST(Jitdump, RepeatedFileNameFirstHasNoPrevious) {
  JitdumpBuilder j;
  j.record(2, 1, debug_payload(j, 0, {{0, 1, "\xff"}, {4, 2, "y.js"}, {8, 3, "\xff"}, {12, 4, ""}, {16, 5, "\xff"}}));
  Result<JitDump> d = parse_jitdump(j.bytes());
  ASSERT_TRUE(d.ok());
  ASSERT_EQ(d->debug_infos.size(), 1u);
  const std::vector<JitLine>& l = d->debug_infos[0].lines;
  ASSERT_EQ(l.size(), 5u);
  EXPECT_EQ(l[0].file, "");
  EXPECT_EQ(l[1].file, "y.js");
  EXPECT_EQ(l[2].file, "y.js");
  EXPECT_EQ(l[3].file, "");
  EXPECT_EQ(l[4].file, "");
}

// Cut at a record's start: a clean end after the records before. Cut
// anywhere inside a record: the same records, and kTruncated at its start.
TEST(Jitdump, CutAtEveryRecordBoundaryAndInsideEveryRecord) {
  const JitdumpBuilder j = every_kind(kHost);
  const std::vector<uint8_t> file = j.bytes();
  std::vector<size_t> starts = j.boundaries();
  starts.push_back(file.size());
  for (size_t k = 0; k + 1 < starts.size(); ++k) {
    for (size_t cut = starts[k]; cut < starts[k + 1]; ++cut) {
      SCOPED_TRACE("record " + std::to_string(k) + ", cut at " + std::to_string(cut));
      Result<JitDump> d = parse_jitdump(Bytes(file).first(cut));
      ASSERT_TRUE(d.ok());
      EXPECT_EQ(d->records, k);
      for (const JitCodeLoad& l : d->loads) EXPECT_LT(l.index, k);
      for (const JitCodeMove& m : d->moves) EXPECT_LT(m.index, k);
      EXPECT_EQ(d->debug_infos.size(), k > 0 ? 1u : 0u);
      EXPECT_EQ(d->unwinding_infos.size(), k > 1 ? 1u : 0u);
      EXPECT_EQ(d->loads.size(), k > 3 ? 2u : k > 2 ? 1u : 0u);
      if (cut == starts[k]) {
        EXPECT_FALSE(d->stopped.has_value());
        continue;
      }
      ASSERT_TRUE(d->stopped.has_value());
      EXPECT_EQ(d->stopped->code, ErrorCode::kTruncated);
      EXPECT_EQ(d->stopped->offset, starts[k]);
      EXPECT_EQ(d->stopped_record_offset, starts[k]);
    }
  }
}

// A record whose total_size field is `size`, after one good load.
std::vector<uint8_t> with_record_size(uint32_t size) {
  JitdumpBuilder j;
  j.code_load(1, 0x1000, "ok", {0xc3}, 1);
  std::vector<uint8_t> file = j.bytes();
  SectionBuilder r(kHost);
  r.u32(0).u32(size).u64(2).zeros(64);
  file.insert(file.end(), r.bytes().begin(), r.bytes().end());
  return file;
}

TEST(Jitdump, TotalSizeZeroSmallOrHuge) {
  for (uint32_t size : {0u, 1u, 15u, 81u, 0xffffffffu}) {
    SCOPED_TRACE(size);
    const std::vector<uint8_t> file = with_record_size(size);
    const uint64_t at = file.size() - 80;
    Result<JitDump> d = parse_jitdump(file);
    ASSERT_TRUE(d.ok());
    ASSERT_EQ(d->loads.size(), 1u);
    EXPECT_EQ(d->loads[0].name, "ok");
    EXPECT_EQ(d->records, 1u);
    ASSERT_TRUE(d->stopped.has_value());
    EXPECT_EQ(d->stopped->code, size < 16 ? ErrorCode::kBadLength : ErrorCode::kTruncated);
    EXPECT_EQ(d->stopped->offset, at);
    EXPECT_EQ(d->stopped_record_offset, at);
  }
  // 16: a record of no payload, too short for a CODE_LOAD's fields.
  Result<JitDump> d = parse_jitdump(with_record_size(16));
  ASSERT_TRUE(d.ok());
  ASSERT_TRUE(d->stopped.has_value());
  EXPECT_EQ(d->stopped->code, ErrorCode::kTruncated);
  EXPECT_EQ(d->stopped->offset, d->stopped_record_offset + 16);
}

// The file of one CODE_LOAD whose payload is `payload` (after the header).
std::vector<uint8_t> one_record(uint32_t id, const std::function<void(SectionBuilder&)>& payload) {
  JitdumpBuilder j;
  SectionBuilder p = j.payload();
  payload(p);
  j.record(id, 1, p);
  return j.bytes();
}

void expect_stopped(const std::vector<uint8_t>& file, ErrorCode code, uint64_t offset_in_record) {
  Result<JitDump> d = parse_jitdump(file);
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(d->records, 0u);
  EXPECT_TRUE(d->loads.empty() && d->moves.empty() && d->debug_infos.empty() && d->unwinding_infos.empty());
  ASSERT_TRUE(d->stopped.has_value());
  EXPECT_EQ(d->stopped->code, code);
  EXPECT_EQ(d->stopped->offset, 40 + offset_in_record);
  EXPECT_EQ(d->stopped_record_offset, 40u);
}

TEST(Jitdump, NameWithoutNul) {
  expect_stopped(one_record(0, [](SectionBuilder& p) { p.u32(1).u32(1).u64(0).u64(0x1000).u64(2).u64(0).raw("abcd").u8(0x90).u8(0xc3); }),
                 ErrorCode::kTruncated, 56);
  // The NUL is there, but inside the code: the name must end before it.
  expect_stopped(one_record(0, [](SectionBuilder& p) { p.u32(1).u32(1).u64(0).u64(0x1000).u64(2).u64(0).raw("abcd").u8(0).u8(0xc3); }),
                 ErrorCode::kTruncated, 56);
}

TEST(Jitdump, CodeSizeLargerThanRecord) {
  expect_stopped(one_record(0, [](SectionBuilder& p) { p.u32(1).u32(1).u64(0).u64(0x1000).u64(7).u64(0).str("f").u8(0xc3); }),
                 ErrorCode::kBadLength, 40);
  expect_stopped(one_record(0, [](SectionBuilder& p) { p.u32(1).u32(1).u64(0).u64(0x1000).u64(~uint64_t{0}).u64(0).str("f"); }),
                 ErrorCode::kBadLength, 40);
}

TEST(Jitdump, CodeRangeThatWraps) {
  expect_stopped(one_record(0, [](SectionBuilder& p) { p.u32(1).u32(1).u64(0).u64(~uint64_t{0}).u64(2).u64(0).str("f").u16(0); }),
                 ErrorCode::kBadLength, 40);
  expect_stopped(one_record(1, [](SectionBuilder& p) { p.u32(1).u32(1).u64(0).u64(0).u64(~uint64_t{0} - 1).u64(4).u64(0); }),
                 ErrorCode::kBadLength, 48);
}

TEST(Jitdump, EhFrameHdrLargerThanUnwinding) {
  expect_stopped(one_record(4, [](SectionBuilder& p) { p.u64(8).u64(9).u64(8).zeros(16); }), ErrorCode::kBadLength, 24);
  // The data past the record.
  expect_stopped(one_record(4, [](SectionBuilder& p) { p.u64(17).u64(8).u64(0).zeros(16); }), ErrorCode::kTruncated, 40);
  // Only a header: no data, "use frame pointers".
  Result<JitDump> d = parse_jitdump(one_record(4, [](SectionBuilder& p) { p.u64(0).u64(0).u64(0); }));
  ASSERT_TRUE(d.ok());
  ASSERT_EQ(d->unwinding_infos.size(), 1u);
  EXPECT_TRUE(d->unwinding_infos[0].eh_frame.empty());
  EXPECT_FALSE(d->stopped.has_value());
}

TEST(Jitdump, DebugInfoCountPastTheRecord) {
  // Two entries announced, one written.
  expect_stopped(one_record(2, [](SectionBuilder& p) { p.u64(0).u64(2).u64(0).u32(1).u32(0).str("a.js").raw(std::string(16, '\1')); }),
                 ErrorCode::kTruncated, 32 + 21 + 16);
  // A count no record could hold.
  expect_stopped(one_record(2, [](SectionBuilder& p) { p.u64(0).u64(~uint64_t{0} / 2).zeros(40); }),
                 ErrorCode::kBadLength, 24);
  // A file name without its NUL.
  expect_stopped(one_record(2, [](SectionBuilder& p) { p.u64(0).u64(1).u64(0).u32(1).u32(0).raw("a.js"); }),
                 ErrorCode::kTruncated, 48);
}

TEST(Jitdump, UnknownRecordsSkippedAndCounted) {
  JitdumpBuilder j;
  SectionBuilder odd = j.payload();
  odd.u64(0x1234).u8(9);
  j.record(5, 1, odd).record(0x10000, 2, j.payload()).code_load(3, 0x1000, "after", {0xc3}, 1);
  Result<JitDump> d = parse_jitdump(j.bytes());
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(d->unknown_records, 2u);
  EXPECT_EQ(d->records, 3u);
  ASSERT_EQ(d->loads.size(), 1u);
  EXPECT_EQ(d->loads[0].name, "after");
  EXPECT_EQ(d->loads[0].index, 2u);
  EXPECT_FALSE(d->stopped.has_value());
}

TEST(Jitdump, HeaderRefused) {
  const std::vector<uint8_t> good = JitdumpBuilder().bytes();
  ASSERT_TRUE(parse_jitdump(good).ok());
  auto expect_error = [](const std::vector<uint8_t>& file, ErrorCode code, uint64_t offset) {
    Result<JitDump> d = parse_jitdump(file);
    ASSERT_FALSE(d.ok());
    EXPECT_EQ(d.error().code, code);
    EXPECT_EQ(d.error().offset, offset);
  };
  std::vector<uint8_t> bad = good;
  bad[0] ^= 1;
  expect_error(bad, ErrorCode::kBadElf, 0);
  // Short: the first field that does not fit.
  const uint64_t field_ends[] = {4, 8, 12, 16, 20, 24, 32, 40};
  for (size_t n = 0; n < 40; ++n) {
    SCOPED_TRACE(n);
    uint64_t field = 0;
    for (uint64_t end : field_ends)
      if (end > n) break;
      else field = end;
    expect_error(std::vector<uint8_t>(good.begin(), good.begin() + static_cast<ptrdiff_t>(n)), ErrorCode::kTruncated,
                 field);
  }
  expect_error(JitdumpBuilder(kHost, 40, 2).bytes(), ErrorCode::kUnsupportedElf, 32);
  expect_error(JitdumpBuilder(kOther, 40, uint64_t{1} << 63).bytes(), ErrorCode::kUnsupportedElf, 32);
  EXPECT_TRUE(parse_jitdump(JitdumpBuilder(kHost, 40, kJitdumpFlagArchTimestamp).bytes()).ok());
  bad = good;
  bad[4] = 2;  // version 2
  expect_error(bad, ErrorCode::kUnsupportedElf, 4);
  expect_error(JitdumpBuilder(kHost, 39).bytes(), ErrorCode::kBadLength, 8);
  bad = JitdumpBuilder(kHost, 56).bytes();
  bad.resize(48);
  expect_error(bad, ErrorCode::kBadLength, 8);
}

TEST(JitdumpCodeIndex, LoadMoveAndReuse) {
  JitdumpBuilder j;
  j.code_load(10, 0x1000, "a", std::vector<uint8_t>(0x100, 0x90), 1);
  j.code_load(20, 0x2000, "b", std::vector<uint8_t>(0x40, 0x90), 2);
  j.code_move(30, 0x2000, 0x5000, 0x40, 2);
  j.code_load(40, 0x1080, "c", std::vector<uint8_t>(0x20, 0x90), 3);  // over the middle of a
  j.code_load(40, 0x1000, "d", std::vector<uint8_t>(0x10, 0x90), 4);
  j.code_load(25, 0x7000, "other", {0xc3}, 5, /*pid=*/99);
  j.code_move(35, 0x9000, 0xa000, 0x10, 77);  // never loaded
  Result<JitDump> d = parse_jitdump(j.bytes());
  ASSERT_TRUE(d.ok());
  const JitCodeIndex index(*d, 4242);
  EXPECT_EQ(index.size(), 5u);
  EXPECT_EQ(index.unmatched_moves(), 1u);
  auto name = [&](uint64_t address, uint64_t t) {
    const JitCodeLoad* l = index.find(address, t);
    return l ? std::string(l->name) : "-";
  };
  EXPECT_EQ(name(0x1000, 9), "-");  // not yet loaded
  EXPECT_EQ(name(0x1000, 10), "a");
  EXPECT_EQ(name(0x10ff, 10), "a");
  EXPECT_EQ(name(0x1100, 10), "-");
  EXPECT_EQ(name(0x2000, 29), "b");
  EXPECT_EQ(name(0x2000, 30), "-");  // moved away
  EXPECT_EQ(name(0x5000, 29), "-");
  EXPECT_EQ(name(0x503f, 30), "b");
  EXPECT_EQ(name(0x5040, 30), "-");
  EXPECT_EQ(name(0x1080, 39), "a");
  EXPECT_EQ(name(0x1080, 40), "c");  // a later load wins
  EXPECT_EQ(name(0x10a0, 40), "a");  // a's rest
  EXPECT_EQ(name(0x1000, 40), "d");  // same timestamp: the later record
  EXPECT_EQ(name(0x1010, 40), "a");
  EXPECT_EQ(name(0x7000, 30), "-");  // another process's
  EXPECT_EQ(name(~uint64_t{0}, ~uint64_t{0}), "-");
  EXPECT_EQ(JitCodeIndex(*d, 99).find(0x7000, 25)->code_index, 5u);
}

// Node.js writes jit-PID.dump in its working directory with --perf-prof.
TEST(JitdumpNode, FileWrittenByNode) {
  int status = -1;
  test::run_command("command -v node", &status);
  if (status != 0) GTEST_SKIP() << "node is not installed";
  char dir_template[] = "/tmp/framewalk-jitdump-XXXXXX";
  ASSERT_NE(mkdtemp(dir_template), nullptr);
  const std::filesystem::path dir = dir_template;
  const std::string out = test::run_command(
      "cd " + dir.string() +
          " && timeout 120 node --perf-prof --perf-prof-unwinding-info -e "
          "'function f(i) { return (i * i) % 7; } let s = 0; for (let i = 0; i < 3e6; ++i) s += f(i); "
          "console.log(process.pid, s > 0)'",
      &status, false);
  const uint32_t pid = static_cast<uint32_t>(std::strtoul(out.c_str(), nullptr, 10));
  const std::filesystem::path path = dir / ("jit-" + std::to_string(pid) + ".dump");
  std::vector<uint8_t> file;
  if (std::ifstream in{path, std::ios::binary})
    file.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  std::filesystem::remove_all(dir);  // whatever happened
  ASSERT_EQ(status, 0) << out;
  ASSERT_FALSE(file.empty()) << "no " << path << " after node printed " << out;

  Result<JitDump> d = parse_jitdump(file);
  ASSERT_TRUE(d.ok()) << to_string(d.error().code) << " at " << d.error().offset;
  EXPECT_FALSE(d->stopped.has_value()) << to_string(d->stopped->code) << " at " << d->stopped->offset;
  EXPECT_EQ(d->header.pid, pid);
  EXPECT_FALSE(d->header.swapped);
  // The machine node runs on (the test may run under qemu-user, node not).
  const std::string node_path = test::run_command("readlink -f \"$(command -v node)\"", &status);
  uint16_t node_machine = 0;
  if (std::ifstream exe{node_path.substr(0, node_path.find('\n')), std::ios::binary}) {
    exe.seekg(18);
    exe.read(reinterpret_cast<char*>(&node_machine), 2);
  }
  EXPECT_EQ(d->header.elf_mach, uint32_t{node_machine});
  EXPECT_TRUE(node_machine == EM_X86_64 || node_machine == EM_AARCH64 || node_machine == EM_ARM) << node_machine;
  ASSERT_GT(d->loads.size(), 10u);
  size_t named = 0;
  for (const JitCodeLoad& l : d->loads) {
    named += !l.name.empty();
    EXPECT_EQ(l.pid, pid);
    EXPECT_EQ(l.code.size(), l.code_size);
  }
  EXPECT_EQ(named, d->loads.size());
  // V8 writes an UNWINDING_INFO before each load: most hold only a
  // placeholder .eh_frame_hdr (frame pointers), optimized code real CFI.
  size_t with_cfi = 0;
  for (const JitUnwindingInfo& u : d->unwinding_infos) {
    if (u.eh_frame.empty()) continue;
    ++with_cfi;
    ByteReader r(u.eh_frame, d->header.endian);
    Result<uint32_t> length = r.u32();
    Result<uint32_t> cie_id = r.u32();
    ASSERT_TRUE(length.ok() && cie_id.ok());
    EXPECT_GE(*length, 4u);
    EXPECT_LE(*length, u.eh_frame.size() - 4);
    EXPECT_EQ(*cie_id, 0u) << "UNWINDING_INFO record " << u.index;
  }
  EXPECT_GT(with_cfi, 0u) << d->unwinding_infos.size() << " UNWINDING_INFO records, none with .eh_frame";
  // V8 writes the lines of code with source positions just before its load.
  EXPECT_FALSE(d->debug_infos.empty());
  for (const JitCodeLoad& l : d->loads) {
    if (!l.debug_info) continue;
    const JitDebugInfo& lines = d->debug_infos[*l.debug_info];
    EXPECT_EQ(lines.code_addr, l.code_addr) << l.name;
    for (const JitLine& line : lines.lines) {
      EXPECT_FALSE(line.file.empty()) << l.name;
      EXPECT_GT(line.line, 0) << l.name;
      // (Not below code_end: TurboFan's positions can go a few bytes past the code_size it gives.)
      EXPECT_GE(line.address, l.code_addr) << l.name;
    }
  }
  // The optimized f is named, and the index finds it at its address.
  const JitCodeIndex index(*d, pid);
  size_t found = 0;
  for (const JitCodeLoad& l : d->loads)
    if (l.code_size && index.find(l.code_addr, l.timestamp) == &l) ++found;
  EXPECT_GT(found, d->loads.size() / 2);
}


void write_file(const std::string& path, const std::vector<uint8_t>& bytes) {
  std::ofstream(path, std::ios::binary).write(reinterpret_cast<const char*>(bytes.data()),
                                              static_cast<std::streamsize>(bytes.size()));
}

// Whether the code at `address` is the jitdump's (a module of its own with
// its tables) rather than bare jit code.
bool from_jitdump(const ModuleMap& modules, uint64_t address, const std::string& path) {
  const Module* m = modules.find(address);
  return m && !m->jit && m->name == path && m->data;
}

TEST(JitdumpFeed, LoadsTakeEffectAtTheirTimesAndEndWhenReplacedOrMoved) {
  const std::string path = testing::TempDir() + "jit-4242.dump";
  // Code A at 0x11000 (t 100) and B at 0x12000 (t 200) with tables; C over
  // A without (t 300); B moved away (t 400).
  JitdumpBuilder j;
  j.unwinding_info(100, kEhFrame, {});
  j.code_load(100, 0x11000, "A", std::vector<uint8_t>(0x100, 0xc3), 1);
  j.unwinding_info(200, kEhFrame, {});
  j.code_load(200, 0x12000, "B", std::vector<uint8_t>(0x80, 0xc3), 2);
  j.code_load(300, 0x11000, "C", std::vector<uint8_t>(0x40, 0xc3), 3);
  j.code_move(400, 0x12000, 0x13000, 0x80, 2);
  write_file(path, j.bytes());

  ModuleMap modules;
  modules.add(jit_module(0x10000, 0x20000, "//anon"));
  JitdumpFeed feed;
  std::vector<std::string> warnings;
  EXPECT_EQ(feed.advance(modules, path, 50, &warnings), 0u);
  EXPECT_TRUE(modules.find(0x11000)->jit);
  EXPECT_EQ(feed.advance(modules, path, 150, &warnings), 1u);
  EXPECT_TRUE(from_jitdump(modules, 0x11000, path));
  EXPECT_TRUE(from_jitdump(modules, 0x110ff, path));
  // The jit module keeps what is left around it, under its name.
  for (uint64_t around : {0x10000ull, 0x11100ull, 0x1ffffull}) {
    ASSERT_NE(modules.find(around), nullptr) << std::hex << around;
    EXPECT_TRUE(modules.find(around)->jit);
    EXPECT_EQ(modules.find(around)->name, "//anon");
  }
  EXPECT_EQ(feed.advance(modules, path, 250, &warnings), 1u);
  EXPECT_TRUE(from_jitdump(modules, 0x12000, path));
  EXPECT_EQ(feed.modules(), 2u);
  // C took A's place: bare jit code again (its load has no tables).
  EXPECT_EQ(feed.advance(modules, path, 350, &warnings), 0u);
  ASSERT_NE(modules.find(0x11000), nullptr);
  EXPECT_TRUE(modules.find(0x11000)->jit);
  EXPECT_TRUE(from_jitdump(modules, 0x12000, path));
  // B moved: its tables' pc-relative pointers are not for where it went.
  feed.advance(modules, path, 450, &warnings);
  EXPECT_EQ(feed.modules(), 0u);
  ASSERT_NE(modules.find(0x12000), nullptr);
  EXPECT_TRUE(modules.find(0x12000)->jit);
  EXPECT_FALSE(from_jitdump(modules, 0x13000, path));

  // The runtime writes on: the file is looked at again only after
  // kRecheckCalls calls with nothing pending.
  j.unwinding_info(500, kEhFrame, {});
  j.code_load(500, 0x14000, "D", std::vector<uint8_t>(0x10, 0xc3), 4);
  write_file(path, j.bytes());
  size_t added = 0, calls = 0;
  while (added == 0 && calls < 2 * JitdumpFeed::kRecheckCalls) {
    added += feed.advance(modules, path, 600, &warnings);
    ++calls;
  }
  EXPECT_EQ(added, 1u);
  EXPECT_EQ(calls, JitdumpFeed::kRecheckCalls);
  EXPECT_TRUE(from_jitdump(modules, 0x14000, path));
  EXPECT_TRUE(warnings.empty());

  // Samples on another clock: every record read is in force at once.
  ModuleMap other;
  other.add(jit_module(0x10000, 0x20000, "//anon"));
  JitdumpFeed any;
  EXPECT_EQ(any.advance(other, path, JitdumpFeed::kAnyTime, &warnings), 3u);
  EXPECT_EQ(any.modules(), 1u);
  EXPECT_TRUE(from_jitdump(other, 0x14000, path));
  EXPECT_TRUE(other.find(0x11000)->jit);
  std::filesystem::remove(path);
}

TEST(JitdumpFeed, DamagedAndMissingFilesAreSaidOnce) {
  const std::string path = testing::TempDir() + "jit-4243.dump";
  JitdumpBuilder j;
  j.unwinding_info(100, kEhFrame, {});
  j.code_load(100, 0x11000, "A", std::vector<uint8_t>(0x100, 0xc3), 1);
  const size_t damaged = j.bytes().size();
  j.record(0, 150, j.payload().u32(1));  // a CODE_LOAD cut short inside its record
  j.code_load(200, 0x12000, "B", {0xc3}, 2);
  write_file(path, j.bytes());
  ModuleMap modules;
  JitdumpFeed feed;
  std::vector<std::string> warnings;
  EXPECT_EQ(feed.advance(modules, path, JitdumpFeed::kAnyTime, &warnings), 1u);
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find(path + ": "), std::string::npos) << warnings[0];
  char offset[32];
  snprintf(offset, sizeof offset, "0x%zx", damaged + 20);  // its tid, after the pid
  EXPECT_NE(warnings[0].find(offset), std::string::npos) << warnings[0];
  std::filesystem::remove(path);

  // Damage in what was appended after a first reading: named at its offset
  // in the file, not in the part read.
  {
    JitdumpBuilder grown;
    grown.unwinding_info(100, kEhFrame, {});
    grown.code_load(100, 0x11000, "A", std::vector<uint8_t>(0x100, 0xc3), 1);
    write_file(path, grown.bytes());
    ModuleMap m2;
    JitdumpFeed feed2;
    std::vector<std::string> w2;
    EXPECT_EQ(feed2.advance(m2, path, JitdumpFeed::kAnyTime, &w2), 1u);
    grown.unwinding_info(200, kEhFrame, {});
    grown.code_load(200, 0x12000, "B", std::vector<uint8_t>(0x10, 0xc3), 2);
    const size_t at = grown.bytes().size();
    grown.record(0, 250, grown.payload().u32(1));
    grown.code_load(300, 0x13000, "C", {0xc3}, 3);
    write_file(path, grown.bytes());
    size_t added = 0;
    for (uint32_t i = 0; i < JitdumpFeed::kRecheckCalls; ++i) added += feed2.advance(m2, path, JitdumpFeed::kAnyTime, &w2);
    EXPECT_EQ(added, 1u);  // B; C lies after the damage
    EXPECT_TRUE(from_jitdump(m2, 0x12000, path));
    ASSERT_EQ(w2.size(), 1u);
    snprintf(offset, sizeof offset, "0x%zx", at + 20);
    EXPECT_NE(w2[0].find(offset), std::string::npos) << w2[0];
    // Written anew, shorter: read from its start again.
    JitdumpBuilder anew;
    anew.unwinding_info(400, kEhFrame, {});
    anew.code_load(400, 0x14000, "D", std::vector<uint8_t>(0x10, 0xc3), 4);
    write_file(path, anew.bytes());
    added = 0;
    for (uint32_t i = 0; i < JitdumpFeed::kRecheckCalls; ++i) added += feed2.advance(m2, path, JitdumpFeed::kAnyTime, &w2);
    EXPECT_EQ(added, 1u);
    EXPECT_TRUE(from_jitdump(m2, 0x14000, path));
  }
  std::filesystem::remove(path);

  JitdumpFeed missing;
  EXPECT_EQ(missing.advance(modules, path, JitdumpFeed::kAnyTime, &warnings), 0u);
  for (uint32_t i = 0; i < 3 * JitdumpFeed::kRecheckCalls; ++i)
    missing.advance(modules, path, JitdumpFeed::kAnyTime, &warnings);
  EXPECT_EQ(warnings.size(), 1u);  // a file that is not there is not a problem (yet)
}

}  // namespace
}  // namespace framewalk::symbol

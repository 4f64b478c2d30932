// .debug_line: headers of every version (v2, v4, v5 with entry formats,
// DWARF 64), every opcode kind, the errors with their offsets, and the table
// built from the rows, on hand-written bytes.
#include <gtest/gtest.h>

#include <atomic>
#include <functional>
#include <thread>
#include <vector>

#include "elf/elf_writer.hpp"
#include "support/section_builder.hpp"
#include "support/tiny_elf.hpp"
#include "symbol/line_program.hpp"
#include "symbol/line_table.hpp"

namespace framewalk::symbol {
namespace {

using test::Label;
using test::SectionBuilder;

struct UnitSpec {
  uint16_t version = 4;
  bool dwarf64 = false;
  uint8_t minimum_instruction_length = 1;
  uint8_t maximum_operations_per_instruction = 1;
  uint8_t default_is_stmt = 1;
  int8_t line_base = -5;
  uint8_t line_range = 14;
  uint8_t opcode_base = 13;
  std::vector<uint8_t> opcode_lengths = {0, 1, 1, 1, 1, 0, 0, 0, 1, 0, 0, 1};
  std::function<void(SectionBuilder&)> tables;  // directories and files
  std::vector<uint8_t> program;
};

// The v2-4 tables: directory "inc", files a.c (dir 0) and b.h (dir 1).
void v4_tables(SectionBuilder& b) {
  b.str("inc").u8(0);
  b.str("a.c").uleb(0).uleb(0).uleb(0);
  b.str("b.h").uleb(1).uleb(7).uleb(99);
  b.u8(0);
}

void unit(SectionBuilder& b, const UnitSpec& u) {
  Label start = b.new_label(), end = b.new_label(), hstart = b.new_label(), hend = b.new_label();
  if (u.dwarf64) b.u32(0xffffffffu).diff64(end, start);
  else b.diff32(end, start);
  b.mark(start).u16(u.version);
  if (u.version >= 5) b.u8(8).u8(0);
  if (u.dwarf64) b.diff64(hend, hstart);
  else b.diff32(hend, hstart);
  b.mark(hstart).u8(u.minimum_instruction_length);
  if (u.version >= 4) b.u8(u.maximum_operations_per_instruction);
  b.u8(u.default_is_stmt).u8(static_cast<uint8_t>(u.line_base)).u8(u.line_range).u8(u.opcode_base);
  for (unsigned op = 1; op < u.opcode_base; ++op) b.u8(op - 1 < u.opcode_lengths.size() ? u.opcode_lengths[op - 1] : 0);
  if (u.tables) u.tables(b);
  else v4_tables(b);
  b.mark(hend).bytes(u.program).mark(end);
}

std::vector<uint8_t> set_address(uint64_t a) {
  std::vector<uint8_t> out = {0, 9, 2};
  for (int i = 0; i < 8; ++i) out.push_back(static_cast<uint8_t>(a >> (8 * i)));
  return out;
}
std::vector<uint8_t> cat(std::initializer_list<std::vector<uint8_t>> parts) {
  std::vector<uint8_t> out;
  for (const auto& p : parts) out.insert(out.end(), p.begin(), p.end());
  return out;
}
const std::vector<uint8_t> kEndSequence = {0, 1, 1};

struct ProgramRun {
  LineHeader header;
  std::vector<LineRow> rows;
  Result<void> result;
};

ProgramRun run_unit(const std::vector<uint8_t>& bytes, Bytes line_str = {}) {
  LineSections s;
  s.line = bytes;
  s.line_str = line_str;
  ProgramRun out;
  auto h = parse_line_header(s, 0);
  EXPECT_TRUE(h.ok()) << to_string(h.error().code) << " at " << h.error().offset;
  if (!h) return out;
  out.header = *h;
  out.result = run_line_program(s, out.header, [&](const LineRow& r) { out.rows.push_back(r); });
  return out;
}

Error header_error(const std::vector<uint8_t>& bytes, Bytes line_str = {}) {
  LineSections s;
  s.line = bytes;
  s.line_str = line_str;
  auto h = parse_line_header(s, 0);
  EXPECT_FALSE(h.ok());
  return h ? Error{} : h.error();
}

TEST(LineHeaderParse, Version4) {
  SectionBuilder b;
  UnitSpec u;
  u.program = kEndSequence;
  unit(b, u);
  const ProgramRun r = run_unit(b.finish());
  EXPECT_EQ(r.header.version, 4);
  EXPECT_FALSE(r.header.dwarf64);
  EXPECT_EQ(r.header.line_base, -5);
  EXPECT_EQ(r.header.line_range, 14);
  EXPECT_EQ(r.header.opcode_base, 13);
  EXPECT_EQ(r.header.standard_opcode_lengths[lns::kAdvancePc], 1);
  ASSERT_EQ(r.header.directories.size(), 1u);
  EXPECT_EQ(r.header.directories[0], "inc");
  ASSERT_EQ(r.header.files.size(), 2u);
  EXPECT_EQ(r.header.files[1].name, "b.h");
  EXPECT_EQ(r.header.files[1].directory, 1u);
  EXPECT_EQ(r.header.files[1].mtime, 7u);
  EXPECT_EQ(r.header.files[1].size, 99u);
  EXPECT_EQ(r.header.end, b.size());
}

TEST(LineHeaderParse, Version2HasNoMaximumOperationsAndTenOpcodes) {
  SectionBuilder b;
  UnitSpec u;
  u.version = 2;
  u.opcode_base = 10;
  // Opcode 10 is a special opcode in a v2 table: address += 0, line += -5 + 0.
  u.program = cat({set_address(0x400), {0x0a}, kEndSequence});
  unit(b, u);
  const ProgramRun r = run_unit(b.finish());
  ASSERT_TRUE(r.result.ok());
  EXPECT_EQ(r.header.version, 2);
  EXPECT_EQ(r.header.maximum_operations_per_instruction, 1);
  ASSERT_EQ(r.rows.size(), 2u);
  EXPECT_EQ(r.rows[0].address, 0x400u);
  EXPECT_EQ(r.rows[0].line, static_cast<uint32_t>(1 - 5));
}

// v5: directories as line_strp, files as (string path, udata directory, data16 MD5).
void v5_tables(SectionBuilder& b) {
  b.u8(1).uleb(lnct::kPath).uleb(form::kLineStrp);
  b.uleb(2).u32(0).u32(4);  // "/cd", "sub"
  b.u8(3).uleb(lnct::kPath).uleb(form::kString).uleb(lnct::kDirectoryIndex).uleb(form::kUdata)
      .uleb(lnct::kMd5).uleb(form::kData16);
  b.uleb(2);
  b.str("main.c").uleb(0);
  for (int i = 0; i < 16; ++i) b.u8(static_cast<uint8_t>(i));
  b.str("x.h").uleb(1);
  for (int i = 0; i < 16; ++i) b.u8(0xff);
}
const std::vector<uint8_t> kLineStr = {'/', 'c', 'd', 0, 's', 'u', 'b', 0};

TEST(LineHeaderParse, Version5EntryFormats) {
  SectionBuilder b;
  UnitSpec u;
  u.version = 5;
  u.tables = v5_tables;
  u.program = kEndSequence;
  unit(b, u);
  const ProgramRun r = run_unit(b.finish(), kLineStr);
  EXPECT_EQ(r.header.address_size, 8);
  ASSERT_EQ(r.header.directories.size(), 2u);
  EXPECT_EQ(r.header.directories[0], "/cd");
  EXPECT_EQ(r.header.directories[1], "sub");
  ASSERT_EQ(r.header.files.size(), 2u);
  EXPECT_EQ(r.header.files[0].name, "main.c");
  EXPECT_TRUE(r.header.files[0].has_md5);
  EXPECT_EQ(r.header.files[0].md5[15], 15);
  EXPECT_EQ(r.header.files[1].directory, 1u);
  // Index 0 is the primary file; v5 directory indexes are 0-based.
  EXPECT_EQ(resolve_file_path(r.header, r.header.files[0], "/cd"), "/cd/main.c");
  EXPECT_EQ(resolve_file_path(r.header, r.header.files[1], "/cd"), "/cd/sub/x.h");
}

TEST(LineHeaderParse, Version5Dwarf64WithStrp) {
  SectionBuilder b;
  UnitSpec u;
  u.version = 5;
  u.dwarf64 = true;
  u.tables = [](SectionBuilder& t) {
    t.u8(1).uleb(lnct::kPath).uleb(form::kStrp).uleb(1).u64(0);
    t.u8(2).uleb(lnct::kPath).uleb(form::kLineStrp).uleb(lnct::kSize).uleb(form::kData4).uleb(1).u64(4).u32(1234);
  };
  u.program = kEndSequence;
  unit(b, u);
  LineSections s;
  const std::vector<uint8_t> bytes = b.finish();
  s.line = bytes;
  s.str = kLineStr;
  s.line_str = kLineStr;
  auto h = parse_line_header(s, 0);
  ASSERT_TRUE(h.ok());
  EXPECT_TRUE(h->dwarf64);
  EXPECT_EQ(h->directories[0], "/cd");
  EXPECT_EQ(h->files[0].name, "sub");
  EXPECT_EQ(h->files[0].size, 1234u);
}

// The error the header of a unit made from `spec` stops with.
Error header_error_of(const UnitSpec& spec, Bytes line_str = kLineStr) {
  SectionBuilder b;
  unit(b, spec);
  return header_error(b.finish(), line_str);
}
UnitSpec v5_with(std::function<void(SectionBuilder&)> tables) {
  UnitSpec u;
  u.version = 5;
  u.tables = std::move(tables);
  return u;
}

TEST(LineHeaderParse, Errors) {
  UnitSpec u;
  u.version = 6;  // at the version field
  Error e = header_error_of(u);
  EXPECT_EQ(e.code, ErrorCode::kBadLineVersion);
  EXPECT_EQ(e.offset, 4u);
  u = UnitSpec{};
  u.line_range = 0;  // offset of the field (4 length, 2 version, 4 header length, 4 bytes before it)
  e = header_error_of(u);
  EXPECT_EQ(e.code, ErrorCode::kBadLineHeader);
  EXPECT_EQ(e.offset, 14u);
  // a unit length past the section
  SectionBuilder b;
  b.u32(100).u16(4);
  e = header_error(b.finish());
  EXPECT_EQ(e.code, ErrorCode::kBadLength);
  EXPECT_EQ(e.offset, 0u);
  // a line_strp offset outside .debug_line_str: the offset field itself
  e = header_error_of(v5_with([](SectionBuilder& t) { t.u8(1).uleb(lnct::kPath).uleb(form::kLineStrp).uleb(1).u32(400); }));
  EXPECT_EQ(e.code, ErrorCode::kBadStringOffset);
  EXPECT_EQ(e.offset, 4u + 2 + 2 + 4 + 6 + 12 + 4);
  // more entries than bytes
  e = header_error_of(v5_with([](SectionBuilder& t) { t.u8(1).uleb(lnct::kPath).uleb(form::kString).uleb(1000000); }));
  EXPECT_EQ(e.code, ErrorCode::kBadLineHeader);
  // entries with no format at all
  e = header_error_of(v5_with([](SectionBuilder& t) { t.u8(0).uleb(5); }));
  EXPECT_EQ(e.code, ErrorCode::kBadLineHeader);
  // a form the header cannot hold (DW_FORM_addr)
  e = header_error_of(v5_with([](SectionBuilder& t) { t.u8(1).uleb(lnct::kPath).uleb(form::kAddr).uleb(1).u64(0); }));
  EXPECT_EQ(e.code, ErrorCode::kBadForm);
}

TEST(LineProgramRun, StandardOpcodes) {
  SectionBuilder b;
  UnitSpec u;
  u.program = cat({set_address(0x1000),
                   {lns::kAdvanceLine, 9},                          // line 10
                   {lns::kCopy},                                    // row 0x1000:10
                   {lns::kAdvancePc, 4, lns::kSetColumn, 7, lns::kCopy},  // 0x1004:10 col 7
                   {lns::kSetFile, 2, lns::kNegateStmt, lns::kConstAddPc, lns::kCopy},  // + (255-13)/14 = 17
                   {lns::kFixedAdvancePc, 0x00, 0x01, lns::kSetPrologueEnd, lns::kSetEpilogueBegin,
                    lns::kSetBasicBlock, lns::kSetIsa, 3, lns::kCopy},  // + 0x100
                   {lns::kAdvanceLine, 0x7d, lns::kCopy},           // line 10 - 3
                   kEndSequence});
  unit(b, u);
  const ProgramRun r = run_unit(b.finish());
  ASSERT_TRUE(r.result.ok());
  ASSERT_EQ(r.rows.size(), 6u);
  EXPECT_EQ(r.rows[0].address, 0x1000u);
  EXPECT_EQ(r.rows[0].line, 10u);
  EXPECT_EQ(r.rows[1].address, 0x1004u);
  EXPECT_EQ(r.rows[1].column, 7u);
  EXPECT_EQ(r.rows[2].address, 0x1004u + 17);
  EXPECT_EQ(r.rows[2].file, 2u);
  EXPECT_FALSE(r.rows[2].is_stmt);
  EXPECT_EQ(r.rows[3].address, 0x1004u + 17 + 0x100);
  EXPECT_EQ(r.rows[4].line, 7u);
  EXPECT_TRUE(r.rows[5].end_sequence);
  // After end_sequence the registers start again.
}

TEST(LineProgramRun, SpecialOpcodes) {
  SectionBuilder b;
  UnitSpec u;
  u.minimum_instruction_length = 4;
  // opcode 0x4b: adjusted 62, address += 4 * (62 / 14) = 16, line += -5 + 62 % 14 = 1
  u.program = cat({set_address(0x2000), {0x4b, 0x0d}, kEndSequence});
  unit(b, u);
  const ProgramRun r = run_unit(b.finish());
  ASSERT_TRUE(r.result.ok());
  ASSERT_EQ(r.rows.size(), 3u);
  EXPECT_EQ(r.rows[0].address, 0x2010u);
  EXPECT_EQ(r.rows[0].line, 2u);
  EXPECT_EQ(r.rows[1].address, 0x2010u);  // opcode 13: adjusted 0
  EXPECT_EQ(r.rows[1].line, static_cast<uint32_t>(2 - 5));
}

TEST(LineProgramRun, VliwOperationIndex) {
  SectionBuilder b;
  UnitSpec u;
  u.maximum_operations_per_instruction = 3;
  u.minimum_instruction_length = 8;
  u.program = cat({set_address(0x100), {lns::kAdvancePc, 4, lns::kCopy}, kEndSequence});
  unit(b, u);
  const ProgramRun r = run_unit(b.finish());
  ASSERT_EQ(r.rows.size(), 2u);
  EXPECT_EQ(r.rows[0].address, 0x108u);
  EXPECT_EQ(r.rows[0].op_index, 1);
}

TEST(LineProgramRun, ExtendedOpcodes) {
  SectionBuilder b;
  UnitSpec u;
  u.program = cat({set_address(0x3000),
                   {0, 2, lne::kSetDiscriminator, 5, lns::kCopy},  // discriminator 5
                   {lns::kCopy},                                   // reset to 0 after a row
                   {0, 8, lne::kDefineFile, 'n', '.', 'c', 0, 1, 2, 3},
                   {0, 3, 0x80, 0xaa, 0xbb},                       // DW_LNE_lo_user: skipped
                   {0, 5, 2, 0x00, 0x40, 0x00, 0x00},              // set_address with 4 bytes
                   {lns::kSetFile, 3, lns::kCopy},
                   kEndSequence});
  unit(b, u);
  const ProgramRun r = run_unit(b.finish());
  ASSERT_TRUE(r.result.ok()) << r.result.error().offset;
  ASSERT_EQ(r.rows.size(), 4u);
  EXPECT_EQ(r.rows[0].discriminator, 5u);
  EXPECT_EQ(r.rows[1].discriminator, 0u);
  ASSERT_EQ(r.header.files.size(), 3u);
  EXPECT_EQ(r.header.files[2].name, "n.c");
  EXPECT_EQ(r.header.files[2].directory, 1u);
  EXPECT_EQ(r.rows[2].address, 0x4000u);
  EXPECT_EQ(r.rows[2].file, 3u);
}

TEST(LineProgramRun, UnknownStandardOpcodeSkippedByItsOperandCount) {
  SectionBuilder b;
  UnitSpec u;
  u.opcode_base = 15;
  u.opcode_lengths = {0, 1, 1, 1, 1, 0, 0, 0, 1, 0, 0, 1, 2, 0};  // opcode 13: two ULEB128 operands
  u.program = cat({set_address(0x10), {13, 0x80, 0x01, 0x05, 14, lns::kCopy}, kEndSequence});
  unit(b, u);
  const ProgramRun r = run_unit(b.finish());
  ASSERT_TRUE(r.result.ok());
  ASSERT_EQ(r.rows.size(), 2u);
  EXPECT_EQ(r.rows[0].address, 0x10u);
  EXPECT_EQ(r.rows[0].line, 1u);
}

// The error a default unit with `program` stops with, its offset made relative to the program.
Error program_error(const std::vector<uint8_t>& program) {
  SectionBuilder b;
  UnitSpec u;
  u.program = program;
  unit(b, u);
  const std::vector<uint8_t> bytes = b.finish();
  LineSections s;
  s.line = bytes;
  auto h = parse_line_header(s, 0);
  EXPECT_TRUE(h.ok());
  if (!h) return {};
  auto result = run_line_program(s, *h, [](const LineRow&) {});
  EXPECT_FALSE(result.ok());
  if (result) return {};
  return Error{result.error().code, result.error().offset - h->program_offset};
}

TEST(LineProgramRun, ErrorsCarryTheOpcodeOffset) {
  // advance_pc whose ULEB128 runs off the end: the offset of the ULEB128
  Error e = program_error({lns::kAdvancePc, 0x80});
  EXPECT_EQ(e.code, ErrorCode::kTruncated);
  EXPECT_EQ(e.offset, 1u);
  // an extended opcode longer than the unit: the offset of its body
  e = program_error({lns::kCopy, 0, 50, 1});
  EXPECT_EQ(e.code, ErrorCode::kTruncated);
  EXPECT_EQ(e.offset, 3u);
  // set_address of 3 bytes
  e = program_error({0, 4, 2, 1, 2, 3});
  EXPECT_EQ(e.code, ErrorCode::kBadAddressSize);
  // an extended opcode of length 0: the offset of the opcode
  e = program_error({lns::kCopy, lns::kCopy, 0, 0});
  EXPECT_EQ(e.code, ErrorCode::kTruncated);
  EXPECT_EQ(e.offset, 2u);
}

TEST(LineTableBuild, SortedSequencesAndLookup) {
  SectionBuilder b;
  UnitSpec u;
  // Two sequences, the later one first in the section; rows at one address keep the last.
  u.program = cat({set_address(0x2000), {lns::kCopy, lns::kAdvanceLine, 1, lns::kCopy},
                   {lns::kAdvancePc, 0x10, lns::kSetFile, 2, lns::kCopy}, {lns::kAdvancePc, 0x10}, kEndSequence,
                   set_address(0x1000), {lns::kAdvanceLine, 40, lns::kCopy}, {lns::kAdvancePc, 8}, kEndSequence,
                   set_address(0x5000), {lns::kCopy}, kEndSequence});  // empty: covers nothing
  unit(b, u);
  const std::vector<uint8_t> bytes = b.finish();
  LineSections s;
  s.line = bytes;
  const LineTable t = LineTable::build(s, {{0, "/cd"}});
  EXPECT_TRUE(t.problems().empty());
  EXPECT_EQ(t.sequence_count(), 2u);
  EXPECT_FALSE(t.lookup(0xfff));
  auto a = t.lookup(0x1007);
  ASSERT_TRUE(a);
  EXPECT_EQ(a->line, 41u);
  EXPECT_EQ(a->file, "/cd/a.c");
  EXPECT_FALSE(t.lookup(0x1008));  // the end of the first sequence
  EXPECT_FALSE(t.lookup(0x1fff));
  a = t.lookup(0x2000);
  ASSERT_TRUE(a);
  EXPECT_EQ(a->line, 2u);  // the last row at 0x2000
  a = t.lookup(0x201f);
  ASSERT_TRUE(a);
  EXPECT_EQ(a->file, "/cd/inc/b.h");
  EXPECT_FALSE(t.lookup(0x2020));
  EXPECT_FALSE(t.lookup(0x5000));
  EXPECT_EQ(t.row_addresses(), (std::vector<uint64_t>{0x1000, 0x2000, 0x2010}));
}

// LineTable::load only scans the programs; make_units, on a thread beside
// lookups, makes the units' rows and gives the same answers as making them
// when asked for; stopped, it makes no more and lookups make their own.
TEST(LineTableBuild, UnitsMadeOnAThreadBesideLookups) {
  SectionBuilder b;
  constexpr uint64_t kUnits = 200;
  for (uint64_t i = 0; i < kUnits; ++i) {
    UnitSpec u;
    u.program = cat({set_address(0x1000 + 0x100 * i), {lns::kAdvanceLine, static_cast<uint8_t>(i % 60), lns::kCopy},
                     {lns::kAdvancePc, 0x10, lns::kAdvanceLine, 1, lns::kCopy}, {lns::kAdvancePc, 0x10}, kEndSequence});
    unit(b, u);
  }
  const std::vector<uint8_t> line = b.finish();
  const std::vector<uint8_t> tiny = test::tiny_elf(true, Endian::kLittle);
  auto base = elf::ElfFile::parse(FileImage::from_buffer(tiny), "tiny");
  ASSERT_TRUE(base.ok());
  auto placement = elf::plan_added_section(**base, elf::SegmentPolicy::kNever);
  ASSERT_TRUE(placement.ok());
  auto with_line = elf::add_section(**base, *placement, {".debug_line", elf::kShtProgbits, Bytes{line.data(), line.size()}});
  ASSERT_TRUE(with_line.ok());
  auto file = elf::ElfFile::parse(FileImage::from_buffer(*with_line), "with-line");
  ASSERT_TRUE(file.ok());
  auto expect_rows = [](const LineTable& t) {
    for (uint64_t i = 0; i < kUnits; ++i) {
      auto a = t.lookup(0x1000 + 0x100 * i + 0x18);
      ASSERT_TRUE(a) << i;
      EXPECT_EQ(a->line, 2 + i % 60);  // advance_line takes an SLEB: below 64 in a byte
      EXPECT_EQ(a->file, "a.c");
      EXPECT_FALSE(t.lookup(0x1000 + 0x100 * i + 0x20));
    }
  };
  for (bool stop_first : {false, true}) {
    SCOPED_TRACE(stop_first);
    const LineTable t = LineTable::load(*file);
    EXPECT_TRUE(t.problems().empty());
    std::atomic<bool> stop{stop_first};
    std::thread beside([&] { t.make_units(stop); });
    expect_rows(t);
    stop = true;
    beside.join();
    expect_rows(t);
  }
}

// A good unit (one row at 0x10..0x12 in a.c) and one of version 9, in either
// order; the broken one is reported at its version field and the good one read.
void check_good_and_broken(bool broken_first) {
  SectionBuilder b;
  UnitSpec good, bad;
  good.program = cat({set_address(0x10), {lns::kCopy, lns::kAdvancePc, 2}, kEndSequence});
  bad.version = 9;
  unit(b, broken_first ? bad : good);
  const size_t second = b.size();
  unit(b, broken_first ? good : bad);
  const std::vector<uint8_t> bytes = b.finish();
  LineSections s;
  s.line = bytes;
  const LineTable t = LineTable::build(s, {});
  ASSERT_EQ(t.problems().size(), 1u);
  EXPECT_EQ(t.problems()[0].error.code, ErrorCode::kBadLineVersion);
  EXPECT_EQ(t.problems()[0].error.offset, (broken_first ? 0 : second) + 4);
  auto a = t.lookup(0x11);
  ASSERT_TRUE(a);
  EXPECT_EQ(a->file, "a.c");  // no unit names a directory for it
  EXPECT_FALSE(t.lookup(0x12));
}

TEST(LineTableBuild, BrokenUnitIsReportedWithItsOffset) { check_good_and_broken(false); }
TEST(LineTableBuild, UnitAfterABrokenHeaderIsRead) { check_good_and_broken(true); }

TEST(LineTableBuild, PathsAsBinutilsMakesThem) {
  LineHeader h;
  h.version = 4;
  h.directories = {"rel", "/abs"};
  LineFileEntry e;
  e.name = "f.c";
  e.directory = 0;
  EXPECT_EQ(resolve_file_path(h, e, "/cd"), "/cd/f.c");
  EXPECT_EQ(resolve_file_path(h, e, ""), "f.c");
  e.directory = 1;
  EXPECT_EQ(resolve_file_path(h, e, "/cd"), "/cd/rel/f.c");
  EXPECT_EQ(resolve_file_path(h, e, ""), "rel/f.c");
  e.directory = 2;
  EXPECT_EQ(resolve_file_path(h, e, "/cd"), "/abs/f.c");
  e.directory = 9;  // no such directory
  EXPECT_EQ(resolve_file_path(h, e, "/cd"), "/cd/f.c");
  e.name = "/root/g.c";
  EXPECT_EQ(resolve_file_path(h, e, "/cd"), "/root/g.c");
  // DWARF 5, directory 0 relative (glibc's): binutils puts the unit's
  // directory before it, LLVM does not; elsewhere they agree.
  h.version = 5;
  h.directories = {"./iconv", "sub"};
  e.name = "g.c";
  e.directory = 0;
  EXPECT_EQ(resolve_file_path(h, e, "/cd"), "/cd/./iconv/g.c");
  EXPECT_EQ(resolve_file_path(h, e, "/cd", PathStyle::kLlvm), "./iconv/g.c");
  e.directory = 1;
  EXPECT_EQ(resolve_file_path(h, e, "/cd"), "/cd/sub/g.c");
  EXPECT_EQ(resolve_file_path(h, e, "/cd", PathStyle::kLlvm), "/cd/sub/g.c");
}

}  // namespace
}  // namespace framewalk::symbol

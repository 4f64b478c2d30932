// .debug_info on hand-written bytes: unit headers of every kind, abbreviation
// tables, each form class, the DWARF 5 index forms through their bases, range
// lists of both sections, and the function index (abstract_origin and
// specification chains, across units, inline trees, a broken unit).
#include <gtest/gtest.h>

#include <functional>
#include <vector>

#include "support/section_builder.hpp"
#include "symbol/debug_info.hpp"
#include "symbol/function_index.hpp"
#include "symbol/line_program.hpp"

namespace framewalk::symbol {
namespace {

using test::Label;
using test::SectionBuilder;

TEST(DebugInfo, UnitHeadersOfEveryKind) {
  SectionBuilder b;
  // DWARF 4 compile unit.
  Label e1 = b.new_label(), s1 = b.new_label();
  b.diff32(e1, s1).mark(s1).u16(4).u32(0x10).u8(8).uleb(0).mark(e1);
  // DWARF 5 type unit: signature and type offset.
  const size_t second = b.size();
  Label e2 = b.new_label(), s2 = b.new_label();
  b.diff32(e2, s2).mark(s2).u16(5).u8(ut::kType).u8(4).u32(0x20).u64(0x1122334455667788).u32(0x19).uleb(0).mark(e2);
  // DWARF 5 skeleton, DWARF 64.
  const size_t third = b.size();
  Label e3 = b.new_label(), s3 = b.new_label();
  b.u32(0xffffffff).diff64(e3, s3).mark(s3).u16(5).u8(ut::kSkeleton).u8(8).u64(0x30).u64(0xabcdef).uleb(0).mark(e3);
  // DWARF 5 with unit type 9: reported with the type's offset, the next unit is read.
  const size_t fourth = b.size();
  Label e4 = b.new_label(), s4 = b.new_label();
  b.diff32(e4, s4).mark(s4).u16(5).u8(9).u8(8).u32(0).mark(e4);
  const size_t fifth = b.size();
  Label e5 = b.new_label(), s5 = b.new_label();
  b.diff32(e5, s5).mark(s5).u16(2).u32(0).u8(4).uleb(0).mark(e5);
  const std::vector<uint8_t> info = b.finish();

  std::vector<DwarfProblem> problems;
  const std::vector<UnitHeader> units = read_unit_headers(info, Endian::kLittle, &problems);
  ASSERT_EQ(units.size(), 4u);
  EXPECT_EQ(units[0].version, 4);
  EXPECT_EQ(units[0].abbrev_offset, 0x10u);
  EXPECT_EQ(units[0].first_die, 11u);
  EXPECT_EQ(units[1].offset, second);
  EXPECT_EQ(units[1].unit_type, ut::kType);
  EXPECT_EQ(units[1].address_size, 4);
  EXPECT_EQ(units[1].signature, 0x1122334455667788u);
  EXPECT_EQ(units[1].type_offset, 0x19u);
  EXPECT_EQ(units[1].first_die, second + 4 + 2 + 1 + 1 + 4 + 8 + 4);
  EXPECT_EQ(units[2].offset, third);
  EXPECT_TRUE(units[2].dwarf64);
  EXPECT_EQ(units[2].abbrev_offset, 0x30u);
  EXPECT_EQ(units[2].signature, 0xabcdefu);
  EXPECT_EQ(units[2].first_die, third + 12 + 2 + 1 + 1 + 8 + 8);
  EXPECT_EQ(units[3].offset, fifth);
  EXPECT_EQ(units[3].version, 2);
  ASSERT_EQ(problems.size(), 1u);
  EXPECT_EQ(problems[0].error.code, ErrorCode::kBadUnitType);
  EXPECT_EQ(problems[0].error.offset, fourth + 4 + 2);
  EXPECT_STREQ(problems[0].section, ".debug_info");
}

TEST(DebugInfo, AbbreviationTables) {
  SectionBuilder a;
  a.u8(0);  // another table's end before ours, at offset 0
  a.uleb(7).uleb(tag::kSubprogram).u8(0).uleb(at::kName).uleb(form::kString).uleb(0x88).uleb(form::kImplicitConst)
      .sleb(-5).uleb(0).uleb(0);
  a.uleb(2).uleb(tag::kCompileUnit).u8(1).uleb(0).uleb(0);
  a.uleb(0);
  const size_t duplicate = a.size();
  a.uleb(1).uleb(tag::kCompileUnit).u8(0).uleb(0).uleb(0);
  a.uleb(1).uleb(tag::kSubprogram).u8(0).uleb(0).uleb(0).uleb(0);
  const std::vector<uint8_t> bytes = a.finish();
  auto t = AbbrevTable::parse(bytes, Endian::kLittle, 1);
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(t->size(), 2u);
  const Abbrev* seven = t->find(7);
  ASSERT_NE(seven, nullptr);
  EXPECT_EQ(seven->tag, tag::kSubprogram);
  EXPECT_FALSE(seven->has_children);
  ASSERT_EQ(seven->count, 2u);
  EXPECT_EQ(t->implicit_const(t->attributes(*seven)[1]), -5);
  ASSERT_NE(t->find(2), nullptr);
  EXPECT_TRUE(t->find(2)->has_children);
  EXPECT_EQ(t->find(3), nullptr);
  EXPECT_EQ(t->find(0), nullptr);
  auto dup = AbbrevTable::parse(bytes, Endian::kLittle, duplicate);
  ASSERT_FALSE(dup.ok());
  EXPECT_EQ(dup.error().code, ErrorCode::kBadAbbreviation);
  EXPECT_EQ(dup.error().offset, duplicate + 5);
  EXPECT_FALSE(AbbrevTable::parse(bytes, Endian::kLittle, bytes.size()).ok());
}

TEST(DebugInfo, EveryFormClass) {
  UnitHeader u;
  u.version = 5;
  u.address_size = 8;
  SectionBuilder b;
  b.u64(0x401000);                             // addr
  b.u8(0x12).u16(0x3456).u32(0x789a).u64(9);  // data1, 2, 4, 8
  b.zeros(16);                                 // data16
  b.sleb(-2).uleb(300);                        // sdata, udata
  b.str("hi");                                 // string
  b.u32(0x44);                                 // strp
  b.u32(0x55);                                 // line_strp
  b.uleb(3).u8(4).u16(5).bytes({6, 0, 1}).u32(7);  // strx, strx1-4
  b.uleb(8).u8(9).u16(10).bytes({0x0b, 0, 0}).u32(12);  // addrx, addrx1-4
  b.u8(1).u16(2).u32(3).u64(4).uleb(5);        // ref1-8, ref_udata
  b.u32(0x99);                                 // ref_addr (DWARF 5: offset size)
  b.u64(0xfeed);                               // ref_sig8
  b.u32(0x66).u32(0x77);                       // GNU_ref_alt, GNU_strp_alt
  b.u32(0x88).uleb(2).uleb(3);                 // sec_offset, rnglistx, loclistx
  b.u8(2).bytes({1, 2}).uleb(1).u8(0x9c);      // block1, exprloc
  b.u8(1);                                     // flag
  b.uleb(form::kData2).u16(0xbeef);            // indirect data2
  b.uleb(form::kIndirect).uleb(form::kData1);  // indirect indirect: refused
  const std::vector<uint8_t> bytes = b.finish();
  ByteReader r(bytes, Endian::kLittle);
  struct Want {
    uint64_t form;
    FormClass kind;
    uint64_t number;
  };
  const Want wants[] = {
      {form::kAddr, FormClass::kAddress, 0x401000}, {form::kData1, FormClass::kConstant, 0x12},
      {form::kData2, FormClass::kConstant, 0x3456}, {form::kData4, FormClass::kConstant, 0x789a},
      {form::kData8, FormClass::kConstant, 9}, {form::kData16, FormClass::kBlock, 0},
      {form::kSdata, FormClass::kSigned, static_cast<uint64_t>(-2)}, {form::kUdata, FormClass::kConstant, 300},
      {form::kString, FormClass::kString, 0}, {form::kStrp, FormClass::kStrOffset, 0x44},
      {form::kLineStrp, FormClass::kLineStrOffset, 0x55}, {form::kStrx, FormClass::kStrIndex, 3},
      {form::kStrx1, FormClass::kStrIndex, 4}, {form::kStrx2, FormClass::kStrIndex, 5},
      {form::kStrx3, FormClass::kStrIndex, 0x010006}, {form::kStrx4, FormClass::kStrIndex, 7},
      {form::kAddrx, FormClass::kAddrIndex, 8}, {form::kAddrx1, FormClass::kAddrIndex, 9},
      {form::kAddrx2, FormClass::kAddrIndex, 10}, {form::kAddrx3, FormClass::kAddrIndex, 11},
      {form::kAddrx4, FormClass::kAddrIndex, 12}, {form::kRef1, FormClass::kUnitRef, 1},
      {form::kRef2, FormClass::kUnitRef, 2}, {form::kRef4, FormClass::kUnitRef, 3},
      {form::kRef8, FormClass::kUnitRef, 4}, {form::kRefUdata, FormClass::kUnitRef, 5},
      {form::kRefAddr, FormClass::kSectionRef, 0x99}, {form::kRefSig8, FormClass::kSignatureRef, 0xfeed},
      {form::kGnuRefAlt, FormClass::kAltRef, 0x66}, {form::kGnuStrpAlt, FormClass::kAltStrOffset, 0x77},
      {form::kSecOffset, FormClass::kSectionOffset, 0x88}, {form::kRnglistx, FormClass::kRnglistIndex, 2},
      {form::kLoclistx, FormClass::kLoclistIndex, 3}, {form::kBlock1, FormClass::kBlock, 0},
      {form::kExprloc, FormClass::kBlock, 0}, {form::kFlag, FormClass::kFlag, 1},
      {form::kFlagPresent, FormClass::kFlag, 1}, {form::kImplicitConst, FormClass::kConstant, 42},
      {form::kIndirect, FormClass::kConstant, 0xbeef},
  };
  for (const Want& w : wants) {
    auto v = read_form(r, u, w.form, 42);
    ASSERT_TRUE(v.ok()) << "form " << w.form;
    EXPECT_EQ(v->kind, w.kind) << "form " << w.form;
    if (w.kind != FormClass::kBlock && w.kind != FormClass::kString) {
      EXPECT_EQ(v->number, w.number) << "form " << w.form;
    }
    if (w.form == form::kString) {
      EXPECT_EQ(v->text, "hi");
    }
    if (w.form == form::kData16) {
      EXPECT_EQ(v->block.size(), 16u);
    }
    if (w.form == form::kBlock1) {
      EXPECT_EQ(v->block.size(), 2u);
    }
  }
  const size_t at = r.offset();
  auto twice = read_form(r, u, form::kIndirect, 0);
  ASSERT_FALSE(twice.ok());
  EXPECT_EQ(twice.error().code, ErrorCode::kBadForm);
  EXPECT_EQ(twice.error().offset, at + 1);
  auto unknown = read_form(r, u, 0x7f, 0);
  ASSERT_FALSE(unknown.ok());
  EXPECT_EQ(unknown.error().code, ErrorCode::kBadForm);
  // DWARF 2's ref_addr is address-sized.
  UnitHeader v2 = u;
  v2.version = 2;
  v2.address_size = 4;
  const std::vector<uint8_t> four = {1, 0, 0, 0, 0xff};
  ByteReader r2(four, Endian::kLittle);
  auto ref = read_form(r2, v2, form::kRefAddr, 0);
  ASSERT_TRUE(ref.ok());
  EXPECT_EQ(ref->number, 1u);
  EXPECT_EQ(r2.offset(), 4u);
}

// skip_die passes a DIE of every form as read_die reads it, and where the
// bytes end early (or an abbreviation is unknown) fails as read_die fails.
TEST(DebugInfo, SkippingADieEndsAndFailsAsReadingIt) {
  const uint64_t forms[] = {
      form::kAddr, form::kData1, form::kData2, form::kData4, form::kData8, form::kData16, form::kSdata,
      form::kUdata, form::kString, form::kStrp, form::kLineStrp, form::kStrx, form::kStrx1, form::kStrx2,
      form::kStrx3, form::kStrx4, form::kAddrx, form::kAddrx1, form::kAddrx2, form::kAddrx3, form::kAddrx4,
      form::kRef1, form::kRef2, form::kRef4, form::kRef8, form::kRefUdata, form::kRefAddr, form::kRefSig8,
      form::kGnuRefAlt, form::kGnuStrpAlt, form::kSecOffset, form::kRnglistx, form::kLoclistx, form::kBlock1,
      form::kBlock2, form::kBlock4, form::kBlock, form::kExprloc, form::kFlag, form::kFlagPresent,
      form::kImplicitConst, form::kIndirect};
  SectionBuilder a;
  a.uleb(1).uleb(tag::kLexicalBlock).u8(0);
  for (uint64_t f : forms) {
    a.uleb(at::kName).uleb(f);
    if (f == form::kImplicitConst) a.sleb(3);
  }
  a.uleb(0).uleb(0).uleb(0);
  const std::vector<uint8_t> abbrev = a.finish();
  auto table = AbbrevTable::parse(abbrev, Endian::kLittle, 0);
  ASSERT_TRUE(table.ok());
  SectionBuilder b;
  b.uleb(1).u64(0x401000).u8(1).u16(2).u32(3).u64(4).zeros(16).sleb(-300).uleb(300).str("name");
  b.u32(5).u32(6).uleb(7).u8(8).u16(9).bytes({1, 2, 3}).u32(10).uleb(11).u8(12).u16(13).bytes({1, 2, 3}).u32(14);
  b.u8(1).u16(2).u32(3).u64(4).uleb(5).u32(6).u64(7).u32(8).u32(9).u32(10).uleb(11).uleb(12);
  b.u8(2).bytes({1, 2}).u16(1).u8(3).u32(2).bytes({4, 5}).uleb(1).u8(6).uleb(2).bytes({0x9c, 0x9c}).u8(1);
  b.uleb(form::kUdata).uleb(0x1234);  // indirect udata: read_die reads it
  b.uleb(0);                          // a null entry
  const std::vector<uint8_t> die = b.finish();
  UnitHeader u;
  u.version = 5;
  u.address_size = 8;
  DwarfFile file{DwarfSections{}};
  for (size_t size = 0; size <= die.size(); ++size) {
    const std::vector<uint8_t> bytes(die.begin(), die.begin() + static_cast<ptrdiff_t>(size));
    ByteReader read(bytes, Endian::kLittle), skip(bytes, Endian::kLittle);
    auto read_result = file.read_die(u, *table, read, [](uint64_t, const FormValue&) {});
    auto skip_result = file.skip_die(u, *table, skip);
    ASSERT_EQ(read_result.ok(), skip_result.ok()) << "at size " << size;
    if (read_result.ok()) {
      EXPECT_EQ(*read_result, *skip_result);
      EXPECT_EQ(read.offset(), skip.offset());
      if (size == die.size()) {  // the null entry after it
        auto null = file.skip_die(u, *table, skip);
        ASSERT_TRUE(null.ok());
        EXPECT_EQ(*null, nullptr);
      }
    } else {
      EXPECT_EQ(read_result.error().code, skip_result.error().code) << "at size " << size;
      EXPECT_EQ(read_result.error().offset, skip_result.error().offset) << "at size " << size;
    }
  }
  const std::vector<uint8_t> unknown = {2};
  ByteReader r(unknown, Endian::kLittle);
  auto refused = file.skip_die(u, *table, r);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().code, ErrorCode::kBadAbbreviation);
  EXPECT_EQ(refused.error().offset, 0u);
}

TEST(DebugInfo, IndexFormsThroughTheirBases) {
  const std::vector<uint8_t> str = {'x', 0, 'n', 'a', 'm', 'e', 0};
  SectionBuilder offsets;
  offsets.u32(12).u16(5).u16(0).u32(0).u32(2);  // header, then entries: 0, 2
  const std::vector<uint8_t> str_offsets = offsets.finish();
  SectionBuilder addr;
  addr.u32(20).u16(5).u8(8).u8(0).u64(0x1000).u64(0x2000);
  const std::vector<uint8_t> addr_bytes = addr.finish();
  DwarfSections s;
  s.str = str;
  s.str_offsets = str_offsets;
  s.addr = addr_bytes;
  UnitContext u;
  u.sections = &s;
  u.header.version = 5;
  u.str_offsets_base = 8;
  u.has_str_offsets_base = true;
  u.addr_base = 8;
  u.has_addr_base = true;
  FormValue v;
  v.kind = FormClass::kStrIndex;
  v.number = 1;
  auto name = value_string(u, v);
  ASSERT_TRUE(name.ok());
  EXPECT_EQ(*name, "name");
  v.number = 2;
  auto past = value_string(u, v);
  ASSERT_FALSE(past.ok());
  EXPECT_EQ(past.error().code, ErrorCode::kBadIndex);
  v.kind = FormClass::kAddrIndex;
  v.number = 1;
  auto a = value_address(u, v);
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(*a, 0x2000u);
  v.number = 2;
  EXPECT_FALSE(value_address(u, v).ok());
  v.kind = FormClass::kAltStrOffset;
  v.number = 0;
  auto alt = value_string(u, v);
  ASSERT_FALSE(alt.ok());
  EXPECT_EQ(alt.error().code, ErrorCode::kNeedsSupplementary);
  auto with_alt = value_string(u, v, str);
  ASSERT_TRUE(with_alt.ok());
  EXPECT_EQ(*with_alt, "x");
}

TEST(DebugInfo, RangeListsOfBothSections) {
  SectionBuilder addr;
  addr.u32(28).u16(5).u8(8).u8(0).u64(0x1000).u64(0x2000).u64(0x3000);
  const std::vector<uint8_t> addr_bytes = addr.finish();
  SectionBuilder rl;
  rl.u32(0).u16(5).u8(8).u8(0).u32(1);  // header with one offset
  rl.u32(4);                             // offsets[0]: the list, 4 bytes after the offsets' base (12)
  rl.u8(0x01).uleb(0);                   // base_addressx 0x1000
  rl.u8(0x04).uleb(0x10).uleb(0x20);     // offset_pair: 0x1010-0x1020
  rl.u8(0x02).uleb(1).uleb(2);           // startx_endx: 0x2000-0x3000
  rl.u8(0x03).uleb(2).uleb(0x8);         // startx_length: 0x3000-0x3008
  rl.u8(0x05).u64(0x5000);               // base_address 0x5000
  rl.u8(0x04).uleb(1).uleb(1);           // offset_pair, empty: left out
  rl.u8(0x04).uleb(1).uleb(2);           // 0x5001-0x5002
  rl.u8(0x06).u64(0x6000).u64(0x6010);   // start_end
  rl.u8(0x07).u64(0x7000).uleb(0x10);    // start_length
  rl.u8(0x00);
  const size_t bad = rl.size();
  rl.u8(0x09);
  const std::vector<uint8_t> rnglists = rl.finish();
  SectionBuilder r4;
  r4.u64(0x10).u64(0x20).u64(~uint64_t{0}).u64(0x9000).u64(0x1).u64(0x2).u64(0).u64(0);
  const std::vector<uint8_t> ranges = r4.finish();
  DwarfSections s;
  s.addr = addr_bytes;
  s.rnglists = rnglists;
  s.ranges = ranges;
  UnitContext u;
  u.sections = &s;
  u.header.version = 5;
  u.header.address_size = 8;
  u.addr_base = 8;
  u.has_addr_base = true;
  u.rnglists_base = 12;
  u.has_rnglists_base = true;
  u.base_address = 0x400;
  std::vector<AddressRange> out;
  FormValue v;
  v.kind = FormClass::kRnglistIndex;
  v.number = 0;
  ASSERT_TRUE(read_ranges(u, v, &out).ok());
  const std::vector<std::pair<uint64_t, uint64_t>> want = {{0x1010, 0x1020}, {0x2000, 0x3000}, {0x3000, 0x3008},
                                                           {0x5001, 0x5002}, {0x6000, 0x6010}, {0x7000, 0x7010}};
  ASSERT_EQ(out.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) {
    EXPECT_EQ(out[i].low, want[i].first);
    EXPECT_EQ(out[i].high, want[i].second);
  }
  v.kind = FormClass::kSectionOffset;
  v.number = bad;
  out.clear();
  auto broken = read_ranges(u, v, &out);
  ASSERT_FALSE(broken.ok());
  EXPECT_EQ(broken.error().code, ErrorCode::kBadRangeList);
  EXPECT_EQ(broken.error().offset, bad);
  v.kind = FormClass::kRnglistIndex;
  v.number = 1;
  EXPECT_EQ(read_ranges(u, v, &out).error().code, ErrorCode::kBadIndex);
  // DWARF 4 .debug_ranges: the unit's base, then a base selection entry.
  u.header.version = 4;
  v.kind = FormClass::kSectionOffset;
  v.number = 0;
  out.clear();
  ASSERT_TRUE(read_ranges(u, v, &out).ok());
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].low, 0x410u);
  EXPECT_EQ(out[0].high, 0x420u);
  EXPECT_EQ(out[1].low, 0x9001u);
  EXPECT_EQ(out[1].high, 0x9002u);
}

// Two DWARF 4 units. Unit A: an abstract function (name "helper", linkage
// "_Z6helperv" in a declaration it names by DW_AT_specification), the
// physical "outer" at 0x1000-0x1100 with an inlined helper (0x1010-0x1040,
// call at file 1, line 7, column 3) that inlines "leaf" (0x1020-0x1030, at
// line 9 column 5), leaf's abstract DIE in unit B through ref_addr.
// Unit B: "leaf", and "solo" at 0x2000-0x2010 (high_pc an address).
// Unit C: a DIE with an unknown abbreviation code (broken).
struct TwoUnits {
  std::vector<uint8_t> info, abbrev, str;
  uint64_t leaf_die = 0;
  size_t broken_die = 0;
};

TwoUnits two_units() {
  SectionBuilder a;
  // 1: compile_unit, children: name string, low_pc addr, high_pc data4
  a.uleb(1).uleb(tag::kCompileUnit).u8(1).uleb(at::kName).uleb(form::kString).uleb(at::kLowPc).uleb(form::kAddr)
      .uleb(at::kHighPc).uleb(form::kData4).uleb(0).uleb(0);
  // 2: subprogram declaration: name strp, linkage_name string
  a.uleb(2).uleb(tag::kSubprogram).u8(0).uleb(at::kName).uleb(form::kStrp).uleb(at::kLinkageName)
      .uleb(form::kString).uleb(0).uleb(0);
  // 3: abstract subprogram: specification ref4
  a.uleb(3).uleb(tag::kSubprogram).u8(0).uleb(at::kSpecification).uleb(form::kRef4).uleb(0).uleb(0);
  // 4: physical subprogram: name string, low_pc, high_pc data4, children
  a.uleb(4).uleb(tag::kSubprogram).u8(1).uleb(at::kName).uleb(form::kString).uleb(at::kLowPc).uleb(form::kAddr)
      .uleb(at::kHighPc).uleb(form::kData4).uleb(0).uleb(0);
  // 5: inlined_subroutine: abstract_origin ref4, low_pc, high_pc data4, call_file/line/column data1, children
  a.uleb(5).uleb(tag::kInlinedSubroutine).u8(1).uleb(at::kAbstractOrigin).uleb(form::kRef4).uleb(at::kLowPc)
      .uleb(form::kAddr).uleb(at::kHighPc).uleb(form::kData4).uleb(at::kCallFile).uleb(form::kData1)
      .uleb(at::kCallLine).uleb(form::kData1).uleb(at::kCallColumn).uleb(form::kData1).uleb(0).uleb(0);
  // 6: inlined_subroutine, no children, origin by ref_addr
  a.uleb(6).uleb(tag::kInlinedSubroutine).u8(0).uleb(at::kAbstractOrigin).uleb(form::kRefAddr).uleb(at::kLowPc)
      .uleb(form::kAddr).uleb(at::kHighPc).uleb(form::kData4).uleb(at::kCallFile).uleb(form::kData1)
      .uleb(at::kCallLine).uleb(form::kData1).uleb(at::kCallColumn).uleb(form::kData1).uleb(0).uleb(0);
  // 7: subprogram name only
  a.uleb(7).uleb(tag::kSubprogram).u8(0).uleb(at::kName).uleb(form::kString).uleb(0).uleb(0);
  // 8: subprogram name, low_pc, high_pc addr
  a.uleb(8).uleb(tag::kSubprogram).u8(0).uleb(at::kName).uleb(form::kString).uleb(at::kLowPc).uleb(form::kAddr)
      .uleb(at::kHighPc).uleb(form::kAddr).uleb(0).uleb(0);
  a.uleb(0);
  TwoUnits t;
  t.abbrev = a.finish();
  t.str = {'h', 'e', 'l', 'p', 'e', 'r', 0};

  SectionBuilder b;
  // Unit A
  Label ea = b.new_label(), sa = b.new_label();
  b.diff32(ea, sa).mark(sa).u16(4).u32(0).u8(8);
  const uint64_t unit_a = 0;
  b.uleb(1).str("a.c").u64(0x1000).u32(0x100);
  const uint64_t decl = b.size();
  b.uleb(2).u32(0).str("_Z6helperv");
  const uint64_t abstract = b.size();
  b.uleb(3).u32(static_cast<uint32_t>(decl - unit_a));
  b.uleb(4).str("outer").u64(0x1000).u32(0x100);
  b.uleb(5).u32(static_cast<uint32_t>(abstract - unit_a)).u64(0x1010).u32(0x30).u8(1).u8(7).u8(3);
  Label leaf_ref = b.new_label();
  b.uleb(6).offset32(leaf_ref).u64(0x1020).u32(0x10).u8(1).u8(9).u8(5);
  b.uleb(0);  // end of helper's children
  b.uleb(0);  // end of outer's children
  b.uleb(0);  // end of the unit's children
  b.mark(ea);
  // Unit B
  Label eb = b.new_label(), sb = b.new_label();
  b.diff32(eb, sb).mark(sb).u16(4).u32(0).u8(8);
  b.uleb(1).str("b.c").u64(0x2000).u32(0x10);
  b.mark(leaf_ref);
  b.uleb(7).str("leaf");
  b.uleb(8).str("solo").u64(0x2000).u64(0x2010);
  b.uleb(0);
  b.mark(eb);
  // Unit C: broken at its second DIE.
  Label ec = b.new_label(), sc = b.new_label();
  b.diff32(ec, sc).mark(sc).u16(4).u32(0).u8(8);
  b.uleb(1).str("c.c").u64(0x3000).u32(0x10);
  const size_t broken = b.size();
  b.uleb(0x55);
  b.uleb(0);
  b.mark(ec);
  t.info = b.finish();
  t.leaf_die = b.offset_of(leaf_ref);
  t.broken_die = broken;
  return t;
}

TEST(FunctionIndex, InlineChainThroughOriginsAndUnits) {
  const TwoUnits t = two_units();
  DwarfSections s;
  s.info = t.info;
  s.abbrev = t.abbrev;
  s.str = t.str;
  FunctionIndex index(s);
  EXPECT_TRUE(index.problems().empty());  // lazy: nothing read yet

  auto chain = index.chain(0x1024);
  ASSERT_EQ(chain.size(), 3u);
  EXPECT_EQ(chain[0].name, "leaf");
  EXPECT_FALSE(chain[0].linkage_name);
  EXPECT_TRUE(chain[0].inlined);
  EXPECT_EQ(chain[0].call_line, 9u);
  EXPECT_EQ(chain[0].call_column, 5u);
  EXPECT_EQ(chain[0].entry, 0x1020u);
  EXPECT_EQ(chain[1].name, "_Z6helperv");  // the declaration's linkage name, through specification
  EXPECT_TRUE(chain[1].linkage_name);
  EXPECT_TRUE(chain[1].inlined);
  EXPECT_EQ(chain[1].call_line, 7u);
  EXPECT_EQ(chain[1].call_column, 3u);
  EXPECT_EQ(chain[2].name, "outer");
  EXPECT_FALSE(chain[2].inlined);
  EXPECT_EQ(chain[2].entry, 0x1000u);

  chain = index.chain(0x1038);  // in helper, past leaf
  ASSERT_EQ(chain.size(), 2u);
  EXPECT_EQ(chain[0].name, "_Z6helperv");
  chain = index.chain(0x10ff);
  ASSERT_EQ(chain.size(), 1u);
  EXPECT_EQ(chain[0].name, "outer");
  EXPECT_TRUE(index.chain(0x1100).empty());
  chain = index.chain(0x200f);  // high_pc as an address
  ASSERT_EQ(chain.size(), 1u);
  EXPECT_EQ(chain[0].name, "solo");
  EXPECT_TRUE(index.chain(0x2010).empty());

  // The broken unit is reported with the DIE's offset; the others still answer.
  EXPECT_TRUE(index.chain(0x3004).empty());
  const std::vector<DwarfProblem> problems = index.problems();
  ASSERT_EQ(problems.size(), 1u);
  EXPECT_EQ(problems[0].error.code, ErrorCode::kBadAbbreviation);
  EXPECT_EQ(problems[0].error.offset, t.broken_die);
  EXPECT_STREQ(problems[0].section, ".debug_info");
  EXPECT_EQ(index.chain(0x1024).size(), 3u);
  EXPECT_EQ(index.function_entries(), (std::vector<uint64_t>{0x1000, 0x2000}));
}

// One DWARF 4 unit: abbreviation 1 a compile unit with children and no
// attributes, the rest as `abbrevs` declares them; its DIEs as `dies` writes
// them after the root's code (the root's last null is added).
struct OneUnit {
  std::vector<uint8_t> info, abbrev;
  DwarfSections sections() const {
    DwarfSections s;
    s.info = info;
    s.abbrev = abbrev;
    return s;
  }
};
OneUnit one_unit(const std::function<void(SectionBuilder&)>& abbrevs, const std::function<void(SectionBuilder&)>& dies) {
  SectionBuilder a;
  a.uleb(1).uleb(tag::kCompileUnit).u8(1).uleb(0).uleb(0);
  abbrevs(a);
  a.uleb(0);
  SectionBuilder b;
  Label end = b.new_label(), start = b.new_label();
  b.diff32(end, start).mark(start).u16(4).u32(0).u8(8);
  b.uleb(1);
  dies(b);
  b.uleb(0);
  b.mark(end);
  return OneUnit{b.finish(), a.finish()};
}
// A function's abbreviation: name (string), low_pc (addr), high_pc (data4).
void named_function_abbrev(SectionBuilder& a, uint64_t code, uint64_t tag, bool children) {
  a.uleb(code).uleb(tag).u8(children ? 1 : 0).uleb(at::kName).uleb(form::kString).uleb(at::kLowPc)
      .uleb(form::kAddr).uleb(at::kHighPc).uleb(form::kData4).uleb(0).uleb(0);
}

// A call site's children are jumped over by its DW_AT_sibling (they hold no
// function with code: a subprogram put there is not seen), unless the
// sibling leads back or out of the unit: then they are read as any DIE's.
TEST(FunctionIndex, CallSiteChildrenJumpedOverByTheirSibling) {
  const OneUnit unit = one_unit(
      [](SectionBuilder& a) {
        a.uleb(2).uleb(0x48).u8(1).uleb(at::kSibling).uleb(form::kRef4).uleb(0).uleb(0);  // DW_TAG_call_site
        a.uleb(3).uleb(0x49).u8(0).uleb(0).uleb(0);                                    // DW_TAG_call_site_parameter
        named_function_abbrev(a, 4, tag::kSubprogram, false);
      },
      [](SectionBuilder& b) {
        // A call site with a good sibling, a subprogram hidden among its children.
        Label after = b.new_label();
        b.uleb(2).offset32(after).uleb(3).uleb(4).str("hidden").u64(0x2000).u32(0x10).uleb(0);
        b.mark(after);
        b.uleb(4).str("seen").u64(0x1000).u32(0x10);
        // A call site whose sibling leads back to the unit's root: read through.
        b.uleb(2).u32(11).uleb(4).str("inside").u64(0x3000).u32(0x10).uleb(0);
      });
  FunctionIndex index(unit.sections());
  auto chain = index.chain(0x1004);
  ASSERT_EQ(chain.size(), 1u);
  EXPECT_EQ(chain[0].name, "seen");
  EXPECT_TRUE(index.chain(0x2004).empty());
  chain = index.chain(0x3004);
  ASSERT_EQ(chain.size(), 1u);
  EXPECT_EQ(chain[0].name, "inside");
  EXPECT_TRUE(index.problems().empty());
}

// Functions 8 GiB apart in one unit: ranges too far from the unit's lowest
// address for 32-bit offsets are kept whole, and both still answer, with
// an inlined call in the far one.
TEST(FunctionIndex, AUnitWiderThan32Bits) {
  const OneUnit unit = one_unit(
      [](SectionBuilder& a) {
        named_function_abbrev(a, 2, tag::kSubprogram, true);
        named_function_abbrev(a, 3, tag::kInlinedSubroutine, false);
      },
      [](SectionBuilder& b) {
        b.uleb(2).str("near").u64(0x1000).u32(0x100).uleb(0);
        b.uleb(2).str("far").u64(0x200001000).u32(0x100);
        b.uleb(3).str("in_far").u64(0x200001010).u32(0x10).uleb(0);
      });
  FunctionIndex index(unit.sections());
  auto chain = index.chain(0x1080);
  ASSERT_EQ(chain.size(), 1u);
  EXPECT_EQ(chain[0].name, "near");
  chain = index.chain(0x200001018);
  ASSERT_EQ(chain.size(), 2u);
  EXPECT_EQ(chain[0].name, "in_far");
  EXPECT_EQ(chain[0].entry, 0x200001010u);
  EXPECT_EQ(chain[1].name, "far");
  EXPECT_EQ(chain[1].entry, 0x200001000u);
  EXPECT_TRUE(index.chain(0x200001100).empty());
  EXPECT_EQ(index.function_entries(), (std::vector<uint64_t>{0x1000, 0x200001000}));
  EXPECT_TRUE(index.problems().empty());
}

// Nodes are packed against the node before them: a subprogram below the
// unit's first node, inlined calls starting below the one before them, and
// calls nested deeper than a record's flags hold (63) all read back.
TEST(FunctionIndex, NodesOfEveryShapeReadBack) {
  constexpr int kNested = 70;
  const OneUnit unit = one_unit(
      [](SectionBuilder& a) {
        named_function_abbrev(a, 2, tag::kSubprogram, true);
        named_function_abbrev(a, 3, tag::kInlinedSubroutine, true);
      },
      [&](SectionBuilder& b) {
        b.uleb(2).str("high").u64(0x9000).u32(0x100).uleb(0);
        b.uleb(2).str("low").u64(0x1000).u32(0x1000);
        // Call i covers [0x1800 - 8i, 0x1808 + 8i).
        for (int i = 0; i < kNested; ++i)
          b.uleb(3).str(("in" + std::to_string(i)).c_str()).u64(0x1800 - 8 * i).u32(8 + 16 * i);
        for (int i = 0; i <= kNested; ++i) b.uleb(0);
      });
  FunctionIndex index(unit.sections());
  auto chain = index.chain(0x1800);
  ASSERT_EQ(chain.size(), size_t{kNested} + 1);
  for (int i = 0; i < kNested; ++i) {
    EXPECT_EQ(chain[kNested - 1 - i].name, "in" + std::to_string(i));
    EXPECT_EQ(chain[kNested - 1 - i].entry, 0x1800u - 8 * i);
    EXPECT_TRUE(chain[kNested - 1 - i].inlined);
  }
  EXPECT_EQ(chain[kNested].name, "low");
  EXPECT_FALSE(chain[kNested].inlined);
  // Below in0: no inlined call of "low" covers it, whatever its descendants do.
  chain = index.chain(0x1800 - 8);
  ASSERT_EQ(chain.size(), 1u);
  EXPECT_EQ(chain[0].name, "low");
  chain = index.chain(0x9010);
  ASSERT_EQ(chain.size(), 1u);
  EXPECT_EQ(chain[0].name, "high");
  EXPECT_EQ(index.function_entries(), (std::vector<uint64_t>{0x1000, 0x9000}));
  EXPECT_TRUE(index.problems().empty());
}

TEST(FunctionIndex, SupplementaryReferenceWithoutTheFileIsReported) {
  SectionBuilder a;
  a.uleb(1).uleb(tag::kCompileUnit).u8(1).uleb(at::kLowPc).uleb(form::kAddr).uleb(at::kHighPc).uleb(form::kData1)
      .uleb(0).uleb(0);
  a.uleb(2).uleb(tag::kSubprogram).u8(0).uleb(at::kAbstractOrigin).uleb(form::kGnuRefAlt).uleb(at::kLowPc)
      .uleb(form::kAddr).uleb(at::kHighPc).uleb(form::kData1).uleb(0).uleb(0);
  a.uleb(0);
  const std::vector<uint8_t> abbrev = a.finish();
  SectionBuilder b;
  Label e = b.new_label(), st = b.new_label();
  b.diff32(e, st).mark(st).u16(4).u32(0).u8(8);
  b.uleb(1).u64(0x100).u8(0x10);
  const size_t die = b.size();
  b.uleb(2).u32(0x40).u64(0x100).u8(0x10).uleb(0).mark(e);
  const std::vector<uint8_t> info = b.finish();
  // The supplementary file: one unit with "alt_name" at its DIE 0x0b.
  SectionBuilder alt_abbrev;
  alt_abbrev.uleb(1).uleb(tag::kPartialUnit).u8(1).uleb(0).uleb(0);
  alt_abbrev.uleb(2).uleb(tag::kSubprogram).u8(0).uleb(at::kName).uleb(form::kString).uleb(0).uleb(0).uleb(0);
  const std::vector<uint8_t> alt_abbrev_bytes = alt_abbrev.finish();
  SectionBuilder alt;
  Label ae = alt.new_label(), as = alt.new_label();
  alt.diff32(ae, as).mark(as).u16(4).u32(0).u8(8).uleb(1);
  const size_t alt_die = alt.size();
  alt.uleb(2).str("alt_name").uleb(0).mark(ae);
  const std::vector<uint8_t> alt_info = alt.finish();

  DwarfSections s;
  s.info = info;
  s.abbrev = abbrev;
  {
    FunctionIndex index(s);
    auto chain = index.chain(0x108);
    ASSERT_EQ(chain.size(), 1u);
    EXPECT_TRUE(chain[0].name.empty());
    const std::vector<DwarfProblem> problems = index.problems();
    ASSERT_EQ(problems.size(), 1u);
    EXPECT_EQ(problems[0].error.code, ErrorCode::kNeedsSupplementary);
    EXPECT_EQ(problems[0].error.offset, die);
  }
  // With the file: the name is its DIE's. The reference is fixed up to the DIE's offset.
  std::vector<uint8_t> fixed = info;
  fixed[die + 1] = static_cast<uint8_t>(alt_die);
  s.info = fixed;
  DwarfSections sup;
  sup.info = alt_info;
  sup.abbrev = alt_abbrev_bytes;
  FunctionIndex index(s, &sup);
  auto chain = index.chain(0x108);
  ASSERT_EQ(chain.size(), 1u);
  EXPECT_EQ(chain[0].name, "alt_name");
  EXPECT_TRUE(index.problems().empty());
}


// DWARF 5 through the bases: names by strx (DW_AT_str_offsets_base), low_pc
// by addrx (DW_AT_addr_base), a subprogram's DW_AT_ranges by rnglistx
// (DW_AT_rnglists_base), call_file by implicit_const; then a unit without
// root ranges, whose function is found by the scan of such units.
TEST(FunctionIndex, Dwarf5ThroughTheBasesAndAUnitWithoutRootRanges) {
  SectionBuilder a;
  a.uleb(1).uleb(tag::kCompileUnit).u8(1).uleb(at::kStrOffsetsBase).uleb(form::kSecOffset).uleb(at::kAddrBase)
      .uleb(form::kSecOffset).uleb(at::kRnglistsBase).uleb(form::kSecOffset).uleb(at::kRanges).uleb(form::kRnglistx)
      .uleb(0).uleb(0);
  a.uleb(2).uleb(tag::kSubprogram).u8(1).uleb(at::kName).uleb(form::kStrx1).uleb(at::kRanges).uleb(form::kRnglistx)
      .uleb(0).uleb(0);
  a.uleb(3).uleb(tag::kInlinedSubroutine).u8(0).uleb(at::kAbstractOrigin).uleb(form::kRefUdata).uleb(at::kLowPc)
      .uleb(form::kAddrx).uleb(at::kHighPc).uleb(form::kData1).uleb(at::kCallFile).uleb(form::kImplicitConst).sleb(1)
      .uleb(at::kCallLine).uleb(form::kUdata).uleb(at::kCallColumn).uleb(form::kData1).uleb(0).uleb(0);
  a.uleb(4).uleb(tag::kSubprogram).u8(0).uleb(at::kName).uleb(form::kStrx2).uleb(at::kLinkageName)
      .uleb(form::kStrx1).uleb(0).uleb(0);
  a.uleb(5).uleb(tag::kCompileUnit).u8(1).uleb(0).uleb(0);
  a.uleb(6).uleb(tag::kSubprogram).u8(0).uleb(at::kName).uleb(form::kString).uleb(at::kLowPc).uleb(form::kAddr)
      .uleb(at::kHighPc).uleb(form::kData2).uleb(0).uleb(0);
  a.uleb(0);
  const std::vector<uint8_t> abbrev = a.finish();
  const std::vector<uint8_t> str = {0, 'o', 'u', 't', 'e', 'r', 0, '_', 'Z', '4', 'l', 'e', 'a', 'f', 'v', 0,
                                    'l', 'e', 'a', 'f', 0};
  SectionBuilder offsets;
  // Each table after another unit's 8 (or 4) bytes: the bases are not the defaults.
  offsets.u64(~uint64_t{0}).u32(16).u16(5).u16(0).u32(1).u32(7).u32(16);  // [0] outer, [1] _Z4leafv, [2] leaf
  const std::vector<uint8_t> str_offsets = offsets.finish();
  SectionBuilder addr;
  addr.u64(0x7777).u32(20).u16(5).u8(8).u8(0).u64(0x1000).u64(0x1010);
  const std::vector<uint8_t> addr_bytes = addr.finish();
  SectionBuilder rl;
  rl.u32(0x5555).u32(0).u16(5).u8(8).u8(0).u32(2).u32(8).u32(13);  // two lists after the offsets (base 16)
  rl.u8(0x03).uleb(0).uleb(0x100).u8(0x00);            // [0] the unit: startx_length 0x1000 + 0x100
  rl.u8(0x03).uleb(0).uleb(0x80).u8(0x00);             // [1] outer: 0x1000 + 0x80
  const std::vector<uint8_t> rnglists = rl.finish();

  SectionBuilder b;
  Label e1 = b.new_label(), s1 = b.new_label();
  b.diff32(e1, s1).mark(s1).u16(5).u8(ut::kCompile).u8(8).u32(0);
  const size_t unit = 0;
  b.uleb(1).u32(16).u32(16).u32(16).uleb(0);
  const size_t abstract = b.size();
  b.uleb(4).u16(2).u8(1);
  b.uleb(2).u8(0).uleb(1);
  b.uleb(3).uleb(abstract - unit).uleb(1).u8(0x20).uleb(12).u8(7);
  b.uleb(0).uleb(0).mark(e1);
  Label e2 = b.new_label(), s2 = b.new_label();
  b.diff32(e2, s2).mark(s2).u16(5).u8(ut::kCompile).u8(8).u32(0);
  b.uleb(5).uleb(6).str("rootless").u64(0x5000).u16(0x10).uleb(0).mark(e2);
  const std::vector<uint8_t> info = b.finish();

  DwarfSections sections;
  sections.info = info;
  sections.abbrev = abbrev;
  sections.str = str;
  sections.str_offsets = str_offsets;
  sections.addr = addr_bytes;
  sections.rnglists = rnglists;
  FunctionIndex index(sections);
  auto chain = index.chain(0x1015);
  ASSERT_EQ(chain.size(), 2u);
  EXPECT_EQ(chain[0].name, "_Z4leafv");
  EXPECT_TRUE(chain[0].linkage_name);
  EXPECT_TRUE(chain[0].inlined);
  EXPECT_EQ(chain[0].entry, 0x1010u);
  EXPECT_EQ(chain[0].call_line, 12u);
  EXPECT_EQ(chain[0].call_column, 7u);
  EXPECT_EQ(chain[1].name, "outer");
  EXPECT_FALSE(chain[1].linkage_name);
  EXPECT_EQ(chain[1].entry, 0x1000u);
  chain = index.chain(0x1050);
  ASSERT_EQ(chain.size(), 1u);
  EXPECT_EQ(chain[0].name, "outer");
  EXPECT_TRUE(index.chain(0x1080).empty());  // in the unit's range, in no function
  chain = index.chain(0x500f);
  ASSERT_EQ(chain.size(), 1u);
  EXPECT_EQ(chain[0].name, "rootless");
  EXPECT_TRUE(index.chain(0x5010).empty());
  EXPECT_TRUE(index.problems().empty());
}

}  // namespace
}  // namespace framewalk::symbol

// The root DIE of .debug_info units (DWARF 4 and 5): DW_AT_stmt_list and
// DW_AT_comp_dir through the forms before them, and the errors with offsets.
#include <gtest/gtest.h>

#include <vector>

#include "support/section_builder.hpp"
#include "symbol/line_program.hpp"
#include "symbol/unit_roots.hpp"

namespace framewalk::symbol {
namespace {

using test::Label;
using test::SectionBuilder;

// Abbreviation 1: DW_TAG_compile_unit with children; producer (strp), a
// language (data1), a flag_present, an implicit_const, an exprloc, name
// (string), comp_dir (line_strp or strp), low_pc (addr), stmt_list (sec_offset).
std::vector<uint8_t> abbrev(uint64_t comp_dir_form) {
  SectionBuilder a;
  a.uleb(1).uleb(0x11).u8(1);
  a.uleb(0x25).uleb(form::kStrp);
  a.uleb(0x13).uleb(form::kData1);
  a.uleb(0x3f).uleb(form::kFlagPresent);
  a.uleb(0x88).uleb(form::kImplicitConst).sleb(-3);
  a.uleb(0x02).uleb(form::kExprloc);
  a.uleb(0x03).uleb(form::kString);
  a.uleb(0x1b).uleb(comp_dir_form);
  a.uleb(0x11).uleb(form::kAddr);
  a.uleb(0x10).uleb(form::kSecOffset);
  a.uleb(0).uleb(0).uleb(0);
  return a.finish();
}

void compile_unit(SectionBuilder& b, uint16_t version, uint32_t stmt_list) {
  Label start = b.new_label(), end = b.new_label();
  b.diff32(end, start).mark(start).u16(version);
  if (version >= 5) b.u8(1).u8(8).u32(0);  // DW_UT_compile, address size, abbrev offset
  else b.u32(0).u8(8);
  b.uleb(1).u32(0).u8(0x1d).bytes({2, 0x30, 0x9f}).str("a.c").u32(4).u64(0x1000).u32(stmt_list);
  b.uleb(0).mark(end);
}

const std::vector<uint8_t> kStrings = {'g', 'c', 'c', 0, '/', 'c', 'd', 0};

// Two units of the given versions (stmt_list 0x40 and 0x80) with comp_dir in
// `comp_dir_form`, read; `second` gets the second unit's offset.
std::vector<UnitRoot> roots_of(uint16_t first, uint16_t second_version, uint64_t comp_dir_form, size_t* second,
                               std::vector<Error>* problems) {
  SectionBuilder info;
  compile_unit(info, first, 0x40);
  *second = info.size();
  compile_unit(info, second_version, 0x80);
  const std::vector<uint8_t> info_bytes = info.finish();
  const std::vector<uint8_t> abbrev_bytes = abbrev(comp_dir_form);
  UnitRootSections s;
  s.info = info_bytes;
  s.abbrev = abbrev_bytes;
  s.str = kStrings;
  return read_unit_roots(s, problems);
}

TEST(UnitRoots, Version4And5) {
  size_t second = 0;
  std::vector<Error> problems;
  const std::vector<UnitRoot> roots = roots_of(4, 5, form::kStrp, &second, &problems);
  EXPECT_TRUE(problems.empty());
  ASSERT_EQ(roots.size(), 2u);
  EXPECT_EQ(roots[0].version, 4);
  EXPECT_EQ(roots[0].stmt_list, 0x40u);
  EXPECT_EQ(roots[0].comp_dir, "/cd");
  EXPECT_EQ(roots[1].offset, second);
  EXPECT_EQ(roots[1].stmt_list, 0x80u);
  EXPECT_EQ(roots[1].comp_dir, "/cd");
}

TEST(UnitRoots, ErrorsWithOffsets) {
  // A unit of version 7; then comp_dir in a form this reader does not know
  // (0x7f): an error at the attribute's value.
  size_t second = 0;
  std::vector<Error> problems;
  const std::vector<UnitRoot> roots = roots_of(7, 4, 0x7f, &second, &problems);
  EXPECT_TRUE(roots.empty());
  ASSERT_EQ(problems.size(), 2u);
  EXPECT_EQ(problems[0].code, ErrorCode::kBadUnitVersion);
  EXPECT_EQ(problems[0].offset, 4u);
  EXPECT_EQ(problems[1].code, ErrorCode::kBadForm);
  EXPECT_EQ(problems[1].offset, second + 4 + 2 + 4 + 1 + 1 + 4 + 1 + 3 + 4);
}

}  // namespace
}  // namespace framewalk::symbol

// Split DWARF on hand-written bytes: .debug_cu_index tables of versions 5 and
// 2 parsed and looked up (colliding hash slots included), broken tables with
// the offset of the field at fault, a package row's contributions sliced and
// checked, and a skeleton unit decoded through its split unit (addresses from
// the main file's .debug_addr at the skeleton's base, strings from the dwo),
// lazily, with a missing and a mismatched split unit reported; the call
// sites of a split unit's function read through the index's split unit; a
// gcc .dwo with type units in sections of their own.
#include <gtest/gtest.h>

#include <unistd.h>

#include <vector>

#include "elf/elf_file.hpp"
#include "support/run_command.hpp"
#include "support/section_builder.hpp"
#include "symbol/call_sites.hpp"
#include "symbol/function_index.hpp"
#include "symbol/line_program.hpp"
#include "symbol/split_dwarf.hpp"

namespace framewalk::symbol {
namespace {

using test::Label;
using test::SectionBuilder;

// Two signatures in the same first slot of a 4-slot table: the second is found by the secondary hash.
constexpr uint64_t kSigA = 0x0000000100000001, kSigB = 0x0000000200000005;

// A table of `version` with units A (row 1) and B (row 2) and the columns `ids`.
std::vector<uint8_t> cu_index(uint32_t version, const std::vector<uint32_t>& ids, uint32_t slot_count = 4,
                              uint32_t row_of_b = 2) {
  SectionBuilder b;
  if (version == 5) b.u16(5).u16(0);
  else b.u32(version);
  b.u32(static_cast<uint32_t>(ids.size())).u32(2).u32(slot_count);
  // Slots: A at 1 (0x...01 & 3); B hashes to 1 too, step ((B >> 32) & 3) | 1 = 3: slot 0.
  std::vector<uint64_t> sigs(slot_count, 0);
  std::vector<uint32_t> rows(slot_count, 0);
  sigs[1] = kSigA, rows[1] = 1;
  sigs[0] = kSigB, rows[0] = row_of_b;
  for (uint64_t s : sigs) b.u64(s);
  for (uint32_t r : rows) b.u32(r);
  for (uint32_t id : ids) b.u32(id);
  for (uint32_t unit = 0; unit < 2; ++unit)
    for (size_t c = 0; c < ids.size(); ++c) b.u32(0x100 * (unit + 1) + 0x10 * static_cast<uint32_t>(c));
  for (uint32_t unit = 0; unit < 2; ++unit)
    for (size_t c = 0; c < ids.size(); ++c) b.u32(0x20 + static_cast<uint32_t>(c) + unit);
  return b.finish();
}

TEST(CuIndex, Version5RowsFoundByTheirHash) {
  const std::vector<uint8_t> bytes = cu_index(5, {1, 3, 6, 8});
  auto t = CuIndex::parse(bytes, Endian::kLittle);
  ASSERT_TRUE(t.ok()) << to_string(t.error().code) << " at " << t.error().offset;
  EXPECT_EQ(t->version(), 5u);
  EXPECT_EQ(t->size(), 2u);
  const CuIndexRow* a = t->find(kSigA);
  const CuIndexRow* b = t->find(kSigB);
  ASSERT_NE(a, nullptr);
  ASSERT_NE(b, nullptr);
  EXPECT_EQ(a->signature, kSigA);
  EXPECT_EQ((*a)[DwpSection::kInfo].offset, 0x100u);
  EXPECT_EQ((*a)[DwpSection::kInfo].size, 0x20u);
  EXPECT_EQ((*a)[DwpSection::kAbbrev].offset, 0x110u);
  EXPECT_EQ((*a)[DwpSection::kStrOffsets].offset, 0x120u);
  EXPECT_TRUE((*a)[DwpSection::kRnglists].present);  // 8 is DW_SECT_RNGLISTS in version 5
  EXPECT_EQ((*b)[DwpSection::kRnglists].offset, 0x230u);
  EXPECT_EQ((*b)[DwpSection::kRnglists].size, 0x24u);
  EXPECT_FALSE((*b)[DwpSection::kLine].present);
  EXPECT_EQ(t->find(0x42), nullptr);
  EXPECT_EQ(t->find(kSigA + 4), nullptr);  // slot 1 probed, then an empty one
}

TEST(CuIndex, Version2GnuTable) {
  const std::vector<uint8_t> bytes = cu_index(2, {1, 3, 4, 6, 8});
  auto t = CuIndex::parse(bytes, Endian::kLittle);
  ASSERT_TRUE(t.ok()) << to_string(t.error().code) << " at " << t.error().offset;
  EXPECT_EQ(t->version(), 2u);
  const CuIndexRow* b = t->find(kSigB);
  ASSERT_NE(b, nullptr);
  EXPECT_EQ((*b)[DwpSection::kInfo].offset, 0x200u);
  EXPECT_EQ((*b)[DwpSection::kLine].offset, 0x220u);
  EXPECT_EQ((*b)[DwpSection::kStrOffsets].offset, 0x230u);
  EXPECT_FALSE((*b)[DwpSection::kRnglists].present);  // 8 is DW_SECT_MACRO in version 2
}

TEST(CuIndex, BigEndianVersion5) {
  SectionBuilder b(Endian::kBig);
  b.u16(5).u16(0).u32(1).u32(1).u32(1).u64(kSigA).u32(1).u32(1).u32(0x40).u32(0x10);
  const std::vector<uint8_t> bytes = b.finish();
  auto t = CuIndex::parse(bytes, Endian::kBig);
  ASSERT_TRUE(t.ok());
  ASSERT_NE(t->find(kSigA), nullptr);
  EXPECT_EQ((*t->find(kSigA))[DwpSection::kInfo].offset, 0x40u);
}

TEST(CuIndex, BrokenTablesNameTheOffset) {
  auto error_of = [](const std::vector<uint8_t>& bytes) {
    auto t = CuIndex::parse(bytes, Endian::kLittle);
    EXPECT_FALSE(t.ok());
    EXPECT_EQ(t.ok() ? ErrorCode::kTruncated : t.error().code, ErrorCode::kBadCuIndex);
    return t.ok() ? ~uint64_t{0} : t.error().offset;
  };
  std::vector<uint8_t> whole = cu_index(5, {1, 3});
  // Truncated: the offset is where the table should have gone on.
  std::vector<uint8_t> cut(whole.begin(), whole.end() - 1);
  EXPECT_EQ(error_of(cut), cut.size());
  EXPECT_EQ(error_of(std::vector<uint8_t>(whole.begin(), whole.begin() + 10)), 10u);
  EXPECT_EQ(error_of({}), 0u);
  // A slot naming row 3 of 2: the offset of that slot's row index (slot 0, after 4 signatures).
  EXPECT_EQ(error_of(cu_index(5, {1, 3}, 4, 3)), 16u + 4 * 8);
  // Slot counts that are not a power of two.
  EXPECT_EQ(error_of(cu_index(5, {1, 3}, 6)), 12u);
  // The same section twice, and no DW_SECT_INFO.
  EXPECT_EQ(error_of(cu_index(5, {1, 3, 3})), 16u + 4 * 12 + 8);
  EXPECT_EQ(error_of(cu_index(5, {3, 6})), 16u + 4 * 12);
  // Another version.
  std::vector<uint8_t> v3 = whole;
  v3[0] = 3;
  EXPECT_EQ(error_of(v3), 0u);
  // The same signature in two slots: the later slot's signature.
  std::vector<uint8_t> twice = cu_index(5, {1, 3}, 4, 1);
  for (int i = 0; i < 8; ++i) twice[16 + i] = twice[16 + 8 + i];
  EXPECT_EQ(error_of(twice), 16u + 8);
  // Two slots naming one row (B's slot 0 and A's slot 1, both row 1): a row
  // found by one signature would carry the other (found by fuzz_cu_index).
  // The offset is the later slot's row index.
  EXPECT_EQ(error_of(cu_index(5, {1, 3}, 4, 1)), 16u + 4 * 8 + 4);
}

TEST(CuIndex, PackageRowsAreSlicedAndChecked) {
  const std::vector<uint8_t> info(0x300, 1), abbrev(0x300, 2), str_offsets(0x300, 3), str(8, 4);
  DwarfSections package;
  package.info = info;
  package.abbrev = abbrev;
  package.str_offsets = str_offsets;
  package.str = str;
  CuIndexRow row;
  row.sections[static_cast<size_t>(DwpSection::kInfo)] = {0x100, 0x20, true};
  row.sections[static_cast<size_t>(DwpSection::kAbbrev)] = {0x10, 0x30, true};
  row.sections[static_cast<size_t>(DwpSection::kStrOffsets)] = {0x2f0, 0x10, true};
  const char* bad = nullptr;
  auto s = package_unit_sections(package, row, &bad);
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s->info.data(), info.data() + 0x100);
  EXPECT_EQ(s->info.size(), 0x20u);
  EXPECT_EQ(s->abbrev.size(), 0x30u);
  EXPECT_EQ(s->str_offsets.size(), 0x10u);
  EXPECT_TRUE(s->rnglists.empty());
  EXPECT_EQ(s->str.size(), str.size());  // .debug_str.dwo is shared by every unit
  // A contribution past its section's end.
  row.sections[static_cast<size_t>(DwpSection::kStrOffsets)] = {0x2f0, 0x11, true};
  auto past = package_unit_sections(package, row, &bad);
  ASSERT_FALSE(past.ok());
  EXPECT_EQ(past.error().code, ErrorCode::kBadCuIndex);
  EXPECT_EQ(past.error().offset, 0x2f0u);
  EXPECT_STREQ(bad, ".debug_str_offsets.dwo");
}

// A main file with one DWARF 5 skeleton (low_pc 0x1000, 0x100 bytes,
// addr_base 8) and a split unit with one function at addrx 0 named by strx 0.
// The bytes of a main file and a dwo, and the sections over them.
struct SplitBytes {
  std::vector<uint8_t> info, abbrev, addr, ranges, dwo_info, dwo_abbrev, dwo_str, dwo_str_offsets;
  DwarfSections main, dwo;
  void point() {
    main.info = info;
    main.abbrev = abbrev;
    main.addr = addr;
    main.ranges = ranges;
    dwo.info = dwo_info;
    dwo.abbrev = dwo_abbrev;
    dwo.str = dwo_str;
    dwo.str_offsets = dwo_str_offsets;
  }
};

struct SplitFixture : SplitBytes {
  SplitFixture(uint64_t skeleton_id, uint64_t split_id) {
    SectionBuilder ab;
    ab.uleb(1).uleb(tag::kSkeletonUnit).u8(0);
    ab.uleb(at::kLowPc).uleb(form::kAddr).uleb(at::kHighPc).uleb(form::kData4);
    ab.uleb(at::kDwoName).uleb(form::kString).uleb(at::kAddrBase).uleb(form::kSecOffset).uleb(0).uleb(0).uleb(0);
    abbrev = ab.finish();
    SectionBuilder ib;
    Label end = ib.new_label(), start = ib.new_label();
    ib.diff32(end, start).mark(start).u16(5).u8(ut::kSkeleton).u8(8).u32(0).u64(skeleton_id);
    ib.uleb(1).u64(0x1000).u32(0x100).str("x.dwo").u32(8).mark(end);
    info = ib.finish();
    SectionBuilder adb;
    adb.u32(4 + 8).u16(5).u8(8).u8(0).u64(0x1000);
    addr = adb.finish();
    SectionBuilder dab;
    dab.uleb(1).uleb(tag::kCompileUnit).u8(1).uleb(at::kLanguage).uleb(form::kData1).uleb(0).uleb(0);
    dab.uleb(2).uleb(tag::kSubprogram).u8(0).uleb(at::kName).uleb(form::kStrx1).uleb(at::kLowPc);
    dab.uleb(form::kAddrx).uleb(at::kHighPc).uleb(form::kData4).uleb(0).uleb(0).uleb(0);
    dwo_abbrev = dab.finish();
    SectionBuilder dib;
    Label dend = dib.new_label(), dstart = dib.new_label();
    dib.diff32(dend, dstart).mark(dstart).u16(5).u8(ut::kSplitCompile).u8(8).u32(0).u64(split_id);
    dib.uleb(1).u8(0x21).uleb(2).u8(0).uleb(0).u32(0x40).uleb(0).mark(dend);
    dwo_info = dib.finish();
    SectionBuilder sb;
    sb.str("split_fn");
    dwo_str = sb.finish();
    SectionBuilder ob;
    ob.u32(8).u16(5).u16(0).u32(0);
    dwo_str_offsets = ob.finish();
    point();
  }
};

// Hands out `dwo` (null: reports it missing), counting the calls and keeping the last skeleton asked about.
class FakeSource : public SplitUnitSource {
 public:
  FakeSource(const DwarfSections* dwo, int* calls, SkeletonInfo* seen = nullptr)
      : dwo_(dwo), calls_(calls), seen_(seen) {}
  std::optional<SplitUnitDwarf> find(const SkeletonInfo& skeleton, const DwarfSections& main,
                                     std::vector<DwarfProblem>* problems) override {
    ++*calls_;
    if (seen_) *seen_ = skeleton;
    const std::string name(skeleton.dwo_name);
    if (!dwo_) {
      problems->push_back({Error{ErrorCode::kSplitUnitNotFound, skeleton.unit_offset}, ".debug_info", name});
      return std::nullopt;
    }
    SplitUnitDwarf out{*dwo_, name, false, {}};
    out.sections.addr = main.addr;
    out.sections.ranges = main.ranges;
    return out;
  }

 private:
  const DwarfSections* dwo_;
  int* calls_;
  SkeletonInfo* seen_;
};

TEST(SplitDwarf, SkeletonDecodedFromItsSplitUnitOnFirstUse) {
  SplitFixture f(0x77, 0x77);
  int calls = 0;
  SkeletonInfo seen;
  FunctionIndex index(f.main, nullptr, PathStyle::kBinutils, std::make_unique<FakeSource>(&f.dwo, &calls, &seen));
  EXPECT_TRUE(index.chain(0x5000).empty());
  EXPECT_EQ(calls, 0);  // no address in the skeleton yet: no file opened
  const std::vector<FunctionLevel> chain = index.chain(0x1010);
  EXPECT_EQ(calls, 1);
  EXPECT_EQ(seen.dwo_name, "x.dwo");
  EXPECT_EQ(seen.dwo_id, 0x77u);  // the DWARF 5 skeleton's header signature
  EXPECT_EQ(seen.version, 5u);
  ASSERT_EQ(chain.size(), 1u);
  EXPECT_EQ(chain[0].name, "split_fn");
  EXPECT_EQ(chain[0].entry, 0x1000u);
  EXPECT_FALSE(chain[0].inlined);
  // The DIE's offset in the dwo, tagged with the split unit's number.
  EXPECT_EQ(chain[0].die >> kSplitDieShift, 1u);
  EXPECT_EQ(chain[0].die & ((uint64_t{1} << kSplitDieShift) - 1), 0x16u);
  EXPECT_TRUE(index.chain(0x1100).empty());  // one past the function
  (void)index.chain(0x1020);
  EXPECT_EQ(calls, 1);  // kept
  EXPECT_TRUE(index.problems().empty());
}

TEST(SplitDwarf, MissingAndMismatchedSplitUnitsAreReported) {
  {
    SplitFixture f(0x77, 0x77);
    int calls = 0;
    FunctionIndex index(f.main, nullptr, PathStyle::kBinutils, std::make_unique<FakeSource>(nullptr, &calls));
    EXPECT_TRUE(index.chain(0x1010).empty());
    const std::vector<DwarfProblem> problems = index.problems();
    ASSERT_EQ(problems.size(), 1u);
    EXPECT_EQ(problems[0].error.code, ErrorCode::kSplitUnitNotFound);
    EXPECT_EQ(problems[0].file, "x.dwo");
  }
  {
    SplitFixture f(0x77, 0x78);  // a stale .dwo
    int calls = 0;
    FunctionIndex index(f.main, nullptr, PathStyle::kBinutils, std::make_unique<FakeSource>(&f.dwo, &calls));
    EXPECT_TRUE(index.chain(0x1010).empty());
    const std::vector<DwarfProblem> problems = index.problems();
    ASSERT_EQ(problems.size(), 1u);
    EXPECT_EQ(problems[0].error.code, ErrorCode::kSplitUnitMismatch);
    EXPECT_EQ(problems[0].error.offset, 0u);
    EXPECT_STREQ(problems[0].section, ".debug_info.dwo");
  }
  {
    SplitFixture f(0x77, 0x77);  // no source at all: reported, never a crash
    FunctionIndex index(f.main);
    EXPECT_TRUE(index.chain(0x1010).empty());
    ASSERT_EQ(index.problems().size(), 1u);
    EXPECT_EQ(index.problems()[0].error.code, ErrorCode::kSplitUnitNotFound);
  }
}

// The GNU extension to DWARF 4: a compile unit with DW_AT_GNU_dwo_name,
// GNU_dwo_id, GNU_addr_base and GNU_ranges_base (low_pc 0x2000, 0x100
// bytes); its split unit names its function by DW_FORM_GNU_str_index (string
// offsets without a header) and gives its ranges in the main file's
// .debug_ranges at the skeleton's ranges base, relative to the skeleton's low_pc.
struct GnuSplitFixture : SplitBytes {
  explicit GnuSplitFixture(uint64_t split_id) {
    SectionBuilder ab;
    ab.uleb(1).uleb(tag::kCompileUnit).u8(0).uleb(at::kLowPc).uleb(form::kAddr).uleb(at::kHighPc).uleb(form::kData4);
    ab.uleb(at::kGnuDwoName).uleb(form::kString).uleb(at::kGnuDwoId).uleb(form::kData8);
    ab.uleb(at::kGnuAddrBase).uleb(form::kSecOffset).uleb(at::kGnuRangesBase).uleb(form::kSecOffset);
    ab.uleb(0).uleb(0).uleb(0);
    abbrev = ab.finish();
    SectionBuilder ib;
    Label end = ib.new_label(), start = ib.new_label();
    ib.diff32(end, start).mark(start).u16(4).u32(0).u8(8);
    ib.uleb(1).u64(0x2000).u32(0x100).str("y.dwo").u64(0x99).u32(0).u32(0x10).mark(end);
    info = ib.finish();
    SectionBuilder adb;
    adb.u64(0x2000);  // no header in DWARF 4
    addr = adb.finish();
    SectionBuilder rb;
    rb.u64(0).u64(0).u64(0x10).u64(0x30).u64(0).u64(0);  // another unit's empty list, then this one's
    ranges = rb.finish();
    SectionBuilder dab;
    dab.uleb(1).uleb(tag::kCompileUnit).u8(1).uleb(at::kGnuDwoId).uleb(form::kData8).uleb(0).uleb(0);
    dab.uleb(2).uleb(tag::kSubprogram).u8(0).uleb(at::kName).uleb(form::kGnuStrIndex);
    dab.uleb(at::kRanges).uleb(form::kSecOffset).uleb(0).uleb(0).uleb(0);
    dwo_abbrev = dab.finish();
    SectionBuilder dib;
    Label dend = dib.new_label(), dstart = dib.new_label();
    dib.diff32(dend, dstart).mark(dstart).u16(4).u32(0).u8(8);
    dib.uleb(1).u64(split_id).uleb(2).uleb(1).u32(0).uleb(0).mark(dend);
    dwo_info = dib.finish();
    SectionBuilder sb;
    sb.str("other").str("gnu_fn");
    dwo_str = sb.finish();
    SectionBuilder ob;
    ob.u32(0).u32(6);
    dwo_str_offsets = ob.finish();
    point();
  }
};

TEST(SplitDwarf, GnuDwarf4SkeletonAndItsSplitUnit) {
  GnuSplitFixture f(0x99);
  int calls = 0;
  SkeletonInfo seen;
  FunctionIndex index(f.main, nullptr, PathStyle::kBinutils, std::make_unique<FakeSource>(&f.dwo, &calls, &seen));
  const std::vector<FunctionLevel> chain = index.chain(0x2015);
  EXPECT_EQ(seen.dwo_name, "y.dwo");
  EXPECT_EQ(seen.dwo_id, 0x99u);
  EXPECT_EQ(seen.version, 4u);
  ASSERT_EQ(chain.size(), 1u);
  EXPECT_EQ(chain[0].name, "gnu_fn");  // string index 1: offset 6 of .debug_str.dwo
  EXPECT_EQ(chain[0].entry, 0x2010u);  // 0x10 from the skeleton's low_pc, at ranges base 0x10
  EXPECT_EQ(chain[0].die >> kSplitDieShift, 1u);
  EXPECT_TRUE(index.chain(0x2005).empty());
  EXPECT_TRUE(index.chain(0x2030).empty());
  EXPECT_TRUE(index.problems().empty());
  EXPECT_EQ(index.function_entries(), std::vector<uint64_t>{0x2010});

  GnuSplitFixture stale(0x98);
  FunctionIndex other(stale.main, nullptr, PathStyle::kBinutils, std::make_unique<FakeSource>(&stale.dwo, &calls));
  EXPECT_TRUE(other.chain(0x2015).empty());
  ASSERT_EQ(other.problems().size(), 1u);
  EXPECT_EQ(other.problems()[0].error.code, ErrorCode::kSplitUnitMismatch);
}

// The skeleton of SplitFixture; its split unit has caller() at addrx 0
// (0x1000, 0x20 bytes, DW_AT_call_all_calls) whose one call site, at DIE
// 0x1d, is a tail call returning to addrx 1 (0x1020) with DW_AT_call_origin
// callee() (DIE 0x24, addrx 2: 0x1040). `truncated`: the unit ends after
// the call site, its children's list never closed.
struct SplitCallsFixture : SplitBytes {
  explicit SplitCallsFixture(bool truncated) {
    SplitFixture skeleton(0x77, 0x77);
    info = skeleton.info;
    abbrev = skeleton.abbrev;
    SectionBuilder adb;
    adb.u32(4 + 3 * 8).u16(5).u8(8).u8(0).u64(0x1000).u64(0x1020).u64(0x1040);
    addr = adb.finish();
    SectionBuilder dab;
    dab.uleb(1).uleb(tag::kCompileUnit).u8(1).uleb(at::kLanguage).uleb(form::kData1).uleb(0).uleb(0);
    dab.uleb(2).uleb(tag::kSubprogram).u8(1).uleb(at::kName).uleb(form::kStrx1).uleb(at::kLowPc).uleb(form::kAddrx);
    dab.uleb(at::kHighPc).uleb(form::kData4).uleb(at::kCallAllCalls).uleb(form::kFlagPresent).uleb(0).uleb(0);
    dab.uleb(3).uleb(tag::kCallSite).u8(0).uleb(at::kCallReturnPc).uleb(form::kAddrx);
    dab.uleb(at::kCallTailCall).uleb(form::kFlagPresent).uleb(at::kCallOrigin).uleb(form::kRef4).uleb(0).uleb(0);
    dab.uleb(4).uleb(tag::kSubprogram).u8(0).uleb(at::kName).uleb(form::kStrx1).uleb(at::kLowPc).uleb(form::kAddrx);
    dab.uleb(at::kHighPc).uleb(form::kData4).uleb(0).uleb(0).uleb(0);
    dwo_abbrev = dab.finish();
    SectionBuilder dib;
    Label dend = dib.new_label(), dstart = dib.new_label();
    dib.diff32(dend, dstart).mark(dstart).u16(5).u8(ut::kSplitCompile).u8(8).u32(0).u64(0x77);
    dib.uleb(1).u8(0x0c);                         // 0x14: the unit (C)
    dib.uleb(2).u8(0).uleb(0).u32(0x20);          // 0x16: caller
    dib.uleb(3).uleb(1).u32(0x24);                // 0x1d: its tail call to callee
    if (!truncated) {
      dib.uleb(0);                                // 0x23
      dib.uleb(4).u8(1).uleb(2).u32(0x10);        // 0x24: callee
      dib.uleb(0);
    }
    dib.mark(dend);
    dwo_info = dib.finish();
    SectionBuilder sb;
    sb.str("caller").str("callee");
    dwo_str = sb.finish();
    SectionBuilder ob;
    ob.u32(12).u16(5).u16(0).u32(0).u32(7);
    dwo_str_offsets = ob.finish();
    point();
  }
};

TEST(SplitDwarf, CallSitesOfASplitUnitFunction) {
  SplitCallsFixture f(false);
  int calls = 0;
  FunctionIndex index(f.main, nullptr, PathStyle::kBinutils, std::make_unique<FakeSource>(&f.dwo, &calls));
  EXPECT_FALSE(index.split_unit(1));  // not opened yet
  const std::vector<FunctionLevel> chain = index.chain(0x1010);
  ASSERT_EQ(chain.size(), 1u);
  EXPECT_EQ(chain[0].name, "caller");
  const uint64_t split = uint64_t{1} << kSplitDieShift;
  EXPECT_EQ(chain[0].die, split | 0x16);
  ASSERT_TRUE(index.split_unit(1));
  EXPECT_EQ(index.split_unit(1)->unit_offset, 0u);
  EXPECT_EQ(index.split_unit(1)->bases.addr_base, 8u);
  EXPECT_FALSE(index.split_unit(2));
  EXPECT_FALSE(index.split_unit(0));

  CallSiteIndex call_sites(f.main, nullptr, &index);
  const FunctionCallSites* sites = call_sites.sites(chain[0].die);
  ASSERT_NE(sites, nullptr);
  EXPECT_EQ(sites->die, chain[0].die);
  EXPECT_TRUE(sites->all_tail_calls);
  EXPECT_FALSE(sites->problem);
  ASSERT_EQ(sites->sites.size(), 1u);
  const CallSite& s = sites->sites[0];
  EXPECT_EQ(s.die, split | 0x1d);  // tagged as the function's DIE: no main-file DIE has that number
  EXPECT_EQ(s.return_pc, 0x1020u);  // addrx 1 at the skeleton's addr_base
  EXPECT_TRUE(s.tail_call);
  EXPECT_EQ(s.target, CallTargetKind::kAddress);
  EXPECT_EQ(s.address, 0x1040u);  // the origin, a reference into the split unit, and its addrx 2
  // The main file's DIE of that offset is not the split one.
  EXPECT_EQ(call_sites.sites(0x16), nullptr);
  // Without the index the split unit is not known: no call sites, no crash.
  CallSiteIndex main_only(f.main);
  EXPECT_EQ(main_only.sites(chain[0].die), nullptr);

  // The search runs through it: the callee's frame is reached by the tail call.
  std::optional<uint64_t> none;
  auto named = [&](std::string_view) { return none; };
  const ModuleCallGraph graph{index, call_sites, named};
  const std::vector<TailCallFrame> frames = graph.tail_calls_from(0x1000, 0x1040);
  ASSERT_EQ(frames.size(), 1u);
  EXPECT_EQ(frames[0].function_entry, 0x1000u);
  EXPECT_EQ(frames[0].function_die, split | 0x16);
  EXPECT_EQ(frames[0].pc, 0x1020u);
}

TEST(SplitDwarf, CallSiteProblemsNameTheDwo) {
  SplitCallsFixture f(true);
  int calls = 0;
  FunctionIndex index(f.main, nullptr, PathStyle::kBinutils, std::make_unique<FakeSource>(&f.dwo, &calls));
  const std::vector<FunctionLevel> chain = index.chain(0x1010);
  ASSERT_EQ(chain.size(), 1u);
  CallSiteIndex call_sites(f.main, nullptr, &index);
  const FunctionCallSites* sites = call_sites.sites(chain[0].die);
  ASSERT_NE(sites, nullptr);
  ASSERT_EQ(sites->sites.size(), 1u);  // what was read before the fault is kept
  EXPECT_EQ(sites->sites[0].target, CallTargetKind::kUnknown);  // its origin is past the unit's end
  ASSERT_TRUE(sites->problem);
  EXPECT_EQ(sites->problem->error.code, ErrorCode::kTruncated);
  EXPECT_EQ(sites->problem->error.offset, 0x23u);  // untagged: the offset in the file's section
  EXPECT_STREQ(sites->problem->section, ".debug_info.dwo");
  EXPECT_EQ(sites->problem->file, "x.dwo");
}

TEST(SplitDwarf, SplitUnitProblemsInAPackage) {
  std::array<uint64_t, static_cast<size_t>(DwpSection::kCount)> bases{};
  bases[static_cast<size_t>(DwpSection::kInfo)] = 0x100;
  const DwarfProblem info = split_unit_problem("p.dwp", bases, Error{ErrorCode::kTruncated, 0x23}, ".debug_info");
  EXPECT_EQ(info.error.offset, 0x123u);  // the contribution's start in the package's section added
  EXPECT_STREQ(info.section, ".debug_info.dwo");
  EXPECT_EQ(info.file, "p.dwp");
  const DwarfProblem addr = split_unit_problem("p.dwp", bases, Error{ErrorCode::kTruncated, 0x8}, ".debug_addr");
  EXPECT_EQ(addr.error.offset, 0x8u);  // the main file's
  EXPECT_STREQ(addr.section, ".debug_addr");
  EXPECT_TRUE(addr.file.empty());
}

// gcc's .dwo of -fdebug-types-section: each type unit in a .debug_info.dwo
// section of its own, the first of them a type unit; the split unit's
// section is the one with the compile unit.
TEST(SplitDwarf, DwoWithTypeUnitSections) {
  int status = 0;
  const std::string dir = std::string(FRAMEWALK_BINARY_DIR) + "/tests/split_types/" + std::to_string(::getpid());
  (void)test::run_command("mkdir -p " + dir, &status);
  (void)test::run_command("cd " + dir + " && echo 'struct A { int a; }; struct B { A x; long b; }; "
                          "int f(B* p) { return p->x.a + (int)p->b; }' > t.cpp && "
                          "g++ -O2 -g -gsplit-dwarf -fdebug-types-section -c t.cpp -o t.o",
                          &status);
  if (status != 0) GTEST_SKIP() << "no g++ with -gsplit-dwarf -fdebug-types-section";
  const std::string path = dir + "/t.dwo";
  auto file = elf::ElfFile::open(path);
  ASSERT_TRUE(file.ok());
  size_t info_sections = 0;
  for (const elf::Section& section : (*file)->sections()) info_sections += section.name == ".debug_info.dwo";
  std::vector<DwarfProblem> problems;
  const DwarfSections s = dwo_sections(**file, &problems, path);
  (void)test::run_command("rm -rf " + dir, &status);
  EXPECT_TRUE(problems.empty());
  EXPECT_GE(info_sections, 3u);  // A's, B's and the compile unit's
  auto unit = parse_unit_header(s.info, s.endian, 0);
  ASSERT_TRUE(unit.ok());
  EXPECT_EQ(unit->unit_type, ut::kSplitCompile);
}

TEST(SplitDwarf, GnuIndexForms) {
  UnitHeader unit;
  unit.version = 4;
  const std::vector<uint8_t> bytes = {0x85, 0x01, 0x03};
  ByteReader r(bytes, Endian::kLittle);
  auto a = read_form(r, unit, form::kGnuAddrIndex, 0);
  auto s = read_form(r, unit, form::kGnuStrIndex, 0);
  ASSERT_TRUE(a.ok());
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(a->kind, FormClass::kAddrIndex);
  EXPECT_EQ(a->number, 0x85u);
  EXPECT_EQ(s->kind, FormClass::kStrIndex);
  EXPECT_EQ(s->number, 3u);
  EXPECT_TRUE(r.at_end());
}

}  // namespace
}  // namespace framewalk::symbol

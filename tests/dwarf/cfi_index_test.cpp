// Finding the FDE for a PC: through a sound .eh_frame_hdr table, or through
// the index built by scanning the section when the header is missing, has no
// table, points elsewhere or is not sorted.
#include "dwarf/cfi_index.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <optional>
#include <vector>

#include "support/section_builder.hpp"

namespace framewalk::dwarf {
namespace {

using test::CfiBuilder;
using test::CieSpec;
using test::FdeSpec;
using test::SectionBuilder;

constexpr uint64_t kHdrAddress = 0x402000;
constexpr uint64_t kEhFrameAddress = 0x403000;

struct FdeRange {
  uint64_t begin;
  uint64_t range;
};

// An .eh_frame with one CIE and the given FDEs (in this order), and its header.
class Fixture {
 public:
  explicit Fixture(const std::vector<FdeRange>& fdes, CfiKind kind = CfiKind::kEhFrame) {
    CfiBuilder b(kind, Endian::kLittle, kind == CfiKind::kEhFrame ? kEhFrameAddress : 0);
    CieSpec cs;
    if (kind == CfiKind::kDebugFrame) cs.augmentation = "";
    cs.instructions = {0x0c, 0x07, 0x08, 0x90, 0x01};
    const auto cie = b.cie(cs);
    for (const FdeRange& f : fdes) {
      FdeSpec fs;
      fs.pc_begin = f.begin;
      fs.pc_range = f.range;
      if (kind == CfiKind::kDebugFrame) {
        fs.encoding = pe::kAbsptr;
        fs.augmentation = false;
      }
      offsets_.push_back(b.b().offset_of(b.fde(cie.start, fs).start));
    }
    b.terminator();
    data_ = b.finish();
    section_ = std::make_unique<CfiSection>(data_, b.info());
    fdes_ = fdes;
  }

  const CfiSection& section() const { return *section_; }
  uint64_t fde_offset(size_t i) const { return offsets_[i]; }
  uint64_t fde_address(size_t i) const { return kEhFrameAddress + offsets_[i]; }

  // A header whose table lists `order` (indexes into the FDEs), sorted by PC unless told otherwise.
  EhFrameHdr header(std::optional<std::vector<size_t>> order = std::nullopt,
                    uint64_t eh_frame_ptr = kEhFrameAddress,
                    uint8_t table_encoding = pe::kDatarel | pe::kSdata4) {
    std::vector<size_t> idx;
    if (order) {
      idx = *order;
    } else {
      for (size_t i = 0; i < fdes_.size(); ++i) idx.push_back(i);
      std::stable_sort(idx.begin(), idx.end(), [&](size_t a, size_t b) { return fdes_[a].begin < fdes_[b].begin; });
    }
    SectionBuilder b;
    PointerBases bases;
    bases.section_address = kHdrAddress;
    bases.data = kHdrAddress;
    bases.has_data = true;
    b.u8(1).u8(pe::kPcrel | pe::kSdata4).u8(pe::kUdata4).u8(table_encoding);
    b.encoded(pe::kPcrel | pe::kSdata4, eh_frame_ptr, 8, bases);
    b.u32(static_cast<uint32_t>(idx.size()));
    for (size_t i : idx) {
      b.encoded(table_encoding, fdes_[i].begin, 8, bases);
      b.encoded(table_encoding, fde_address(i), 8, bases);
    }
    hdr_bytes_.push_back(std::make_unique<std::vector<uint8_t>>(b.finish()));
    auto h = EhFrameHdr::parse(*hdr_bytes_.back(), Endian::kLittle, 8, kHdrAddress);
    EXPECT_TRUE(h.ok());
    return *h;
  }

 private:
  std::vector<FdeRange> fdes_;
  std::vector<uint64_t> offsets_;
  std::vector<uint8_t> data_;
  std::unique_ptr<CfiSection> section_;
  std::vector<std::unique_ptr<std::vector<uint8_t>>> hdr_bytes_;
};

const std::vector<FdeRange> kFdes = {
    {0x401000, 0x100}, {0x401100, 0x80}, {0x401200, 0x40}, {0x401400, 0x400}};

void expect_found(const CfiIndex& index, uint64_t pc, uint64_t fde_offset, uint64_t begin) {
  auto m = index.find(pc);
  ASSERT_TRUE(m.ok()) << std::hex << pc << ": " << to_string(m.error().code);
  EXPECT_EQ(m->fde.offset, fde_offset) << std::hex << pc;
  EXPECT_EQ(m->fde.pc_begin, begin) << std::hex << pc;
  ASSERT_NE(m->cie, nullptr);
  EXPECT_EQ(m->cie->offset, 0u);
}

void expect_not_found(const CfiIndex& index, uint64_t pc, uint64_t offset) {
  auto m = index.find(pc);
  ASSERT_FALSE(m.ok()) << std::hex << pc;
  EXPECT_EQ(m.error().code, ErrorCode::kNotFound) << to_string(m.error().code);
  EXPECT_EQ(m.error().offset, offset) << std::hex << pc;
}

// Lookups that hold whichever way the index was built.
void expect_standard_lookups(const Fixture& f, const CfiIndex& index) {
  expect_found(index, 0x401000, f.fde_offset(0), 0x401000);
  expect_found(index, 0x4010ff, f.fde_offset(0), 0x401000);
  expect_found(index, 0x401100, f.fde_offset(1), 0x401100);
  expect_found(index, 0x40117f, f.fde_offset(1), 0x401100);
  expect_found(index, 0x401210, f.fde_offset(2), 0x401200);
  expect_found(index, 0x4017ff, f.fde_offset(3), 0x401400);
}

TEST(CfiIndexTest, UsesASoundHeader) {
  Fixture f(kFdes);
  const EhFrameHdr hdr = f.header();
  const CfiIndex index = CfiIndex::build(f.section(), &hdr);
  EXPECT_TRUE(index.uses_eh_frame_hdr());
  EXPECT_STREQ(index.hdr_rejected_reason(), "");
  EXPECT_EQ(index.indexed_fdes(), 0u);
  expect_standard_lookups(f, index);
  // Below the first entry: the header's error (at its table offset).
  expect_not_found(index, 0x400fff, 12);
  // In a gap after an FDE: the FDE the table found does not cover the PC.
  expect_not_found(index, 0x401180, f.fde_offset(1));
  expect_not_found(index, 0x401300, f.fde_offset(2));
  expect_not_found(index, 0x401800, f.fde_offset(3));
}

TEST(CfiIndexTest, EveryTableEncodingWorksThroughTheIndex) {
  // (The PCs lie below the header: no unsigned datarel encoding.)
  for (uint8_t enc : {uint8_t{pe::kDatarel | pe::kSdata4}, uint8_t{pe::kDatarel | pe::kSdata8},
                      uint8_t{pe::kDatarel | pe::kUdata8}, pe::kUdata4, pe::kUdata8, pe::kAbsptr,
                      uint8_t{pe::kPcrel | pe::kSdata4}}) {
    SCOPED_TRACE(int{enc});
    Fixture f(kFdes);
    const EhFrameHdr hdr = f.header(std::nullopt, kEhFrameAddress, enc);
    const CfiIndex index = CfiIndex::build(f.section(), &hdr);
    EXPECT_TRUE(index.uses_eh_frame_hdr());
    expect_standard_lookups(f, index);
  }
}

TEST(CfiIndexTest, WithoutAHeaderBuildsItsOwnIndex) {
  Fixture f(kFdes);
  const CfiIndex index = CfiIndex::build(f.section(), nullptr);
  EXPECT_FALSE(index.uses_eh_frame_hdr());
  EXPECT_STREQ(index.hdr_rejected_reason(), "");
  EXPECT_EQ(index.indexed_fdes(), 4u);
  expect_standard_lookups(f, index);
  expect_not_found(index, 0x400fff, 0);
  expect_not_found(index, 0x401180, 0);
  expect_not_found(index, 0x401800, 0);
  expect_not_found(index, ~uint64_t{0}, 0);
}

TEST(CfiIndexTest, UnsortedTableFallsBackToTheSortedIndex) {
  Fixture f(kFdes);
  const EhFrameHdr hdr = f.header(std::vector<size_t>{0, 2, 1, 3});
  ASSERT_EQ(hdr.first_unsorted(), std::optional<uint64_t>(2));
  const CfiIndex index = CfiIndex::build(f.section(), &hdr);
  EXPECT_FALSE(index.uses_eh_frame_hdr());
  EXPECT_STREQ(index.hdr_rejected_reason(), "search table is not sorted");
  EXPECT_EQ(index.indexed_fdes(), 4u);
  expect_standard_lookups(f, index);
}

TEST(CfiIndexTest, UnsortedSectionIsSortedByTheIndex) {
  // FDEs out of address order in the section itself.
  const std::vector<FdeRange> shuffled = {kFdes[3], kFdes[1], kFdes[0], kFdes[2]};
  Fixture f(shuffled);
  const CfiIndex index = CfiIndex::build(f.section(), nullptr);
  EXPECT_EQ(index.indexed_fdes(), 4u);
  expect_found(index, 0x401000, f.fde_offset(2), 0x401000);
  expect_found(index, 0x401100, f.fde_offset(1), 0x401100);
  expect_found(index, 0x401210, f.fde_offset(3), 0x401200);
  expect_found(index, 0x401500, f.fde_offset(0), 0x401400);
  // A sorted header over the same section is used.
  const EhFrameHdr hdr = f.header();
  const CfiIndex via_hdr = CfiIndex::build(f.section(), &hdr);
  EXPECT_TRUE(via_hdr.uses_eh_frame_hdr());
  expect_found(via_hdr, 0x401500, f.fde_offset(0), 0x401400);
}

TEST(CfiIndexTest, EhFramePointerMismatchFallsBack) {
  Fixture f(kFdes);
  const EhFrameHdr hdr = f.header(std::nullopt, kEhFrameAddress + 0x10);
  const CfiIndex index = CfiIndex::build(f.section(), &hdr);
  EXPECT_FALSE(index.uses_eh_frame_hdr());
  EXPECT_STREQ(index.hdr_rejected_reason(), "eh_frame_ptr does not point to .eh_frame");
  EXPECT_EQ(index.indexed_fdes(), 4u);
  expect_standard_lookups(f, index);
}

TEST(CfiIndexTest, HeaderWithoutATableFallsBack) {
  Fixture f(kFdes);
  const EhFrameHdr hdr = f.header(std::vector<size_t>{});
  EXPECT_FALSE(hdr.has_table());
  const CfiIndex index = CfiIndex::build(f.section(), &hdr);
  EXPECT_FALSE(index.uses_eh_frame_hdr());
  EXPECT_STREQ(index.hdr_rejected_reason(), "no search table");
  expect_standard_lookups(f, index);
}

TEST(CfiIndexTest, DebugFrameIgnoresTheHeader) {
  Fixture eh(kFdes);
  const EhFrameHdr hdr = eh.header();
  Fixture f(kFdes, CfiKind::kDebugFrame);
  const CfiIndex index = CfiIndex::build(f.section(), &hdr);
  EXPECT_FALSE(index.uses_eh_frame_hdr());
  EXPECT_STREQ(index.hdr_rejected_reason(), "");
  EXPECT_EQ(index.indexed_fdes(), 4u);
  expect_standard_lookups(f, index);
}

TEST(CfiIndexTest, OverlappingFdesInTheBuiltIndex) {
  // An outer FDE with two FDEs inside it, and one starting at the same PC.
  const std::vector<FdeRange> fdes = {
      {0x401000, 0x1000}, {0x401100, 0x100}, {0x401800, 0x10}, {0x401000, 0x20}};
  Fixture f(fdes);
  const CfiIndex index = CfiIndex::build(f.section(), nullptr);
  EXPECT_EQ(index.indexed_fdes(), 4u);
  // The FDE starting last (closest below the PC) that covers it wins.
  expect_found(index, 0x401150, f.fde_offset(1), 0x401100);
  expect_found(index, 0x401805, f.fde_offset(2), 0x401800);
  // Between the inner FDEs: the outer one.
  expect_found(index, 0x401500, f.fde_offset(0), 0x401000);
  expect_found(index, 0x401810, f.fde_offset(0), 0x401000);
  expect_found(index, 0x401fff, f.fde_offset(0), 0x401000);
  // Same start: the sort is stable, the later FDE in the section is found first.
  expect_found(index, 0x401010, f.fde_offset(3), 0x401000);
  expect_found(index, 0x401020, f.fde_offset(0), 0x401000);
  expect_not_found(index, 0x402000, 0);
}

TEST(CfiIndexTest, ZeroRangeFdesAreNotIndexed) {
  const std::vector<FdeRange> fdes = {{0x401000, 0x10}, {0x401010, 0}, {0x401010, 0x10}};
  Fixture f(fdes);
  const CfiIndex index = CfiIndex::build(f.section(), nullptr);
  EXPECT_EQ(index.indexed_fdes(), 2u);
  expect_found(index, 0x401010, f.fde_offset(2), 0x401010);
}

TEST(CfiIndexTest, BrokenRecordsAreLeftOut) {
  CfiBuilder b(CfiKind::kEhFrame, Endian::kLittle, kEhFrameAddress);
  const auto cie = b.cie(CieSpec{});
  FdeSpec good;
  good.pc_begin = 0x401000;
  good.pc_range = 0x10;
  b.fde(cie.start, good);
  FdeSpec broken = good;
  broken.pc_begin = 0x401100;
  broken.cie_pointer = 0x4000;  // not a CIE
  b.fde(cie.start, broken);
  good.pc_begin = 0x401200;
  const auto last = b.fde(cie.start, good);
  const auto data = b.finish();
  CfiSection section(data, b.info());
  const CfiIndex index = CfiIndex::build(section, nullptr);
  EXPECT_EQ(index.indexed_fdes(), 2u);
  expect_found(index, 0x401205, b.b().offset_of(last.start), 0x401200);
  expect_not_found(index, 0x401105, 0);
}

TEST(CfiIndexTest, HeaderEntryOutsideTheSection) {
  Fixture f(kFdes);
  // Build a sorted table whose second entry names an address past .eh_frame.
  SectionBuilder b;
  PointerBases bases;
  bases.section_address = kHdrAddress;
  bases.data = kHdrAddress;
  bases.has_data = true;
  b.u8(1).u8(pe::kPcrel | pe::kSdata4).u8(pe::kUdata4).u8(pe::kDatarel | pe::kSdata4);
  b.encoded(pe::kPcrel | pe::kSdata4, kEhFrameAddress, 8, bases);
  b.u32(3);
  const uint64_t entries[3][2] = {{0x401000, f.fde_address(0)},
                                  {0x401100, kEhFrameAddress + 0x10000},
                                  {0x401200, kEhFrameAddress - 8}};
  for (const auto& e : entries) {
    b.encoded(pe::kDatarel | pe::kSdata4, e[0], 8, bases);
    b.encoded(pe::kDatarel | pe::kSdata4, e[1], 8, bases);
  }
  const auto bytes = b.finish();
  auto hdr = EhFrameHdr::parse(bytes, Endian::kLittle, 8, kHdrAddress);
  ASSERT_TRUE(hdr.ok());
  const CfiIndex index = CfiIndex::build(f.section(), &*hdr);
  ASSERT_TRUE(index.uses_eh_frame_hdr());
  expect_found(index, 0x401000, f.fde_offset(0), 0x401000);
  for (uint64_t pc : {uint64_t{0x401100}, uint64_t{0x401200}}) {
    auto m = index.find(pc);
    ASSERT_FALSE(m.ok());
    EXPECT_EQ(m.error().code, ErrorCode::kBadEhFrameHdr);
    EXPECT_EQ(m.error().offset, 0u);
  }
}

TEST(CfiIndexTest, HeaderEntryNamingACie) {
  Fixture f(kFdes);
  SectionBuilder b;
  PointerBases bases;
  bases.section_address = kHdrAddress;
  bases.data = kHdrAddress;
  bases.has_data = true;
  b.u8(1).u8(pe::kPcrel | pe::kSdata4).u8(pe::kUdata4).u8(pe::kDatarel | pe::kSdata4);
  b.encoded(pe::kPcrel | pe::kSdata4, kEhFrameAddress, 8, bases);
  b.u32(1);
  b.encoded(pe::kDatarel | pe::kSdata4, 0x401000, 8, bases);
  b.encoded(pe::kDatarel | pe::kSdata4, kEhFrameAddress, 8, bases);  // the CIE at offset 0
  const auto bytes = b.finish();
  auto hdr = EhFrameHdr::parse(bytes, Endian::kLittle, 8, kHdrAddress);
  ASSERT_TRUE(hdr.ok());
  const CfiIndex index = CfiIndex::build(f.section(), &*hdr);
  ASSERT_TRUE(index.uses_eh_frame_hdr());
  auto m = index.find(0x401000);
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.error().code, ErrorCode::kNotFound);
  EXPECT_EQ(m.error().offset, 0u);
}

}  // namespace
}  // namespace framewalk::dwarf

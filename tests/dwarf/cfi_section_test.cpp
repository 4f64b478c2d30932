// CIE and FDE parsing for .eh_frame and .debug_frame: versions, DWARF 32/64,
// augmentations, terminators, the two CIE-pointer conventions and every error
// with its offset.
#include "dwarf/cfi_section.hpp"

#include <gtest/gtest.h>

#include <vector>

#include "support/section_builder.hpp"

namespace framewalk::dwarf {
namespace {

using test::CfiBuilder;
using test::CieSpec;
using test::FdeSpec;
using test::Label;
using test::RecordLabels;
using test::SectionBuilder;

constexpr uint64_t kSectionAddress = 0x600000;

struct Walk {
  std::vector<CfiSection::Entry> entries;
  std::vector<CfiDiagnostic> diagnostics;
};

Walk walk(const CfiSection& s) {
  Walk w;
  s.for_each([&](const CfiSection::Entry& e) { w.entries.push_back(e); return true; },
             [&](const CfiDiagnostic& d) { w.diagnostics.push_back(d); });
  return w;
}

// Parses the record at `offset`, expecting an error.
void expect_entry_error(const CfiSection& s, uint64_t offset, ErrorCode code, uint64_t error_offset) {
  uint64_t next = 0;
  auto e = s.entry_at(offset, &next);
  ASSERT_FALSE(e.ok());
  EXPECT_EQ(e.error().code, code) << to_string(e.error().code);
  EXPECT_EQ(e.error().offset, error_offset);
}

CfiSection::Entry entry_ok(const CfiSection& s, uint64_t offset) {
  uint64_t next = 0;
  auto e = s.entry_at(offset, &next);
  EXPECT_TRUE(e.ok()) << (e.ok() ? "" : to_string(e.error().code)) << " at " << (e.ok() ? 0 : e.error().offset);
  if (!e.ok()) return CfiSection::Entry{CfiSection::Entry::Type::kTerminator, 0, 0, nullptr, {}};
  EXPECT_EQ(next, e->next);
  return *e;
}

uint64_t at(CfiBuilder& b, Label l) { return b.b().offset_of(l); }

std::vector<uint8_t> vec(Bytes b) { return std::vector<uint8_t>(b.begin(), b.end()); }

// ---- CIE versions -------------------------------------------------------------

TEST(CfiSectionTest, EhFrameCieVersion1) {
  CfiBuilder b(CfiKind::kEhFrame, Endian::kLittle, kSectionAddress);
  CieSpec cs;
  cs.code_alignment = 1;
  cs.data_alignment = -8;
  cs.return_address_register = 16;
  cs.instructions = {0x0c, 0x07, 0x08, 0x90, 0x01};
  const RecordLabels l = b.cie(cs);
  const auto data = b.finish();
  CfiSection s(data, b.info());
  const auto e = entry_ok(s, 0);
  ASSERT_EQ(e.type, CfiSection::Entry::Type::kCie);
  const Cie& c = *e.cie;
  EXPECT_EQ(c.offset, 0u);
  EXPECT_EQ(c.length, data.size() - 4);
  EXPECT_EQ(c.end, data.size());
  EXPECT_EQ(e.next, data.size());
  EXPECT_FALSE(c.dwarf64);
  EXPECT_EQ(c.id, 0u);
  EXPECT_EQ(c.version, 1);
  EXPECT_EQ(c.augmentation, "zR");
  EXPECT_EQ(c.address_size, 8);
  EXPECT_EQ(c.segment_size, 0);
  EXPECT_EQ(c.code_alignment, 1u);
  EXPECT_EQ(c.data_alignment, -8);
  EXPECT_EQ(c.return_address_register, 16u);
  EXPECT_TRUE(c.has_augmentation_data);
  EXPECT_EQ(vec(c.augmentation_data), (std::vector<uint8_t>{0x1b}));
  EXPECT_EQ(c.fde_encoding, 0x1b);
  EXPECT_EQ(c.lsda_encoding, 0xff);
  EXPECT_EQ(c.personality_encoding, 0xff);
  EXPECT_FALSE(c.signal_frame);
  EXPECT_EQ(vec(c.instructions), cs.instructions);
  EXPECT_EQ(c.instructions_offset, at(b, l.instructions));
  // Header: length 4, id 4, version 1, "zR\0" 3, code 1, data 1, ra 1, aug len 1, aug 1.
  EXPECT_EQ(c.instructions_offset, 17u);
}

TEST(CfiSectionTest, CieVersion3HasAUlebReturnAddressRegister) {
  CfiBuilder b(CfiKind::kEhFrame);
  CieSpec cs;
  cs.version = 3;
  cs.return_address_register = 129;
  cs.code_alignment = 4;
  cs.data_alignment = -4;
  cs.instructions = {0x00};
  b.cie(cs);
  const auto data = b.finish();
  CfiSection s(data, b.info());
  const auto e = entry_ok(s, 0);
  ASSERT_NE(e.cie, nullptr);
  EXPECT_EQ(e.cie->version, 3);
  EXPECT_EQ(e.cie->return_address_register, 129u);
  EXPECT_EQ(e.cie->code_alignment, 4u);
  EXPECT_EQ(e.cie->data_alignment, -4);
  EXPECT_EQ(vec(e.cie->instructions), (std::vector<uint8_t>{0x00}));
}

TEST(CfiSectionTest, CieVersion4AddressAndSegmentSize) {
  // .debug_frame, version 4: 4-byte addresses and a 2-byte segment selector in
  // a file whose default address size is 8.
  CfiBuilder b(CfiKind::kDebugFrame, Endian::kBig);
  CieSpec cs;
  cs.version = 4;
  cs.augmentation = "";
  cs.address_size = 4;
  cs.segment_size = 2;
  cs.return_address_register = 65;
  const RecordLabels cie = b.cie(cs);
  FdeSpec fs;
  fs.encoding = pe::kAbsptr;
  fs.address_size = 4;
  fs.segment_size = 2;
  fs.segment_selector = 0x1234;
  fs.pc_begin = 0x80001000;
  fs.pc_range = 0x40;
  fs.augmentation = false;
  fs.instructions = {0x41};
  const RecordLabels fde = b.fde(cie.start, fs);
  const auto data = b.finish();
  CfiSection s(data, b.info(8));
  const auto c = entry_ok(s, 0);
  ASSERT_NE(c.cie, nullptr);
  EXPECT_EQ(c.cie->version, 4);
  EXPECT_EQ(c.cie->id, 0xffffffffu);
  EXPECT_EQ(c.cie->address_size, 4);
  EXPECT_EQ(c.cie->segment_size, 2);
  EXPECT_FALSE(c.cie->has_augmentation_data);
  EXPECT_EQ(c.cie->return_address_register, 65u);
  const auto f = entry_ok(s, at(b, fde.start));
  ASSERT_EQ(f.type, CfiSection::Entry::Type::kFde);
  EXPECT_EQ(f.fde.segment_selector, 0x1234u);
  EXPECT_EQ(f.fde.pc_begin, 0x80001000u);
  EXPECT_EQ(f.fde.pc_range, 0x40u);
  EXPECT_EQ(f.fde.cie_pointer, 0u);
  EXPECT_EQ(f.fde.cie_offset, 0u);
  EXPECT_EQ(vec(f.fde.instructions), (std::vector<uint8_t>{0x41}));
  EXPECT_EQ(f.fde.instructions_offset, at(b, fde.instructions));
}

TEST(CfiSectionTest, CieVersion4BadAddressOrSegmentSize) {
  for (uint8_t bad : {uint8_t{0}, uint8_t{3}, uint8_t{16}}) {
    CfiBuilder b(CfiKind::kDebugFrame);
    CieSpec cs;
    cs.version = 4;
    cs.augmentation = "";
    cs.address_size = bad;
    const RecordLabels l = b.cie(cs);
    const auto data = b.finish();
    CfiSection s(data, b.info());
    // length 4, id 4, version 1, "" 1: the address size byte is at 10.
    expect_entry_error(s, 0, ErrorCode::kBadAddressSize, at(b, l.body) + 2);
  }
  CfiBuilder b(CfiKind::kDebugFrame);
  CieSpec cs;
  cs.version = 4;
  cs.augmentation = "";
  cs.address_size = 8;
  cs.segment_size = 9;
  b.cie(cs);
  const auto data = b.finish();
  CfiSection s(data, b.info());
  expect_entry_error(s, 0, ErrorCode::kBadSegmentSize, 11);
}

TEST(CfiSectionTest, BadCieVersion) {
  for (uint8_t version : {uint8_t{0}, uint8_t{2}, uint8_t{5}, uint8_t{255}}) {
    CfiBuilder b(CfiKind::kEhFrame);
    b.b().zeros(8);  // something before, so that the offsets are not trivial
    CieSpec cs;
    cs.version = version;
    const RecordLabels l = b.cie(cs);
    const auto data = b.finish();
    CfiSection s(data, b.info());
    expect_entry_error(s, 8, ErrorCode::kBadCieVersion, at(b, l.body));
  }
}

// ---- DWARF 32 / 64 and the two section flavours ------------------------------------

TEST(CfiSectionTest, EhFrameDwarf64) {
  CfiBuilder b(CfiKind::kEhFrame, Endian::kLittle, kSectionAddress);
  CieSpec cs;
  cs.dwarf64 = true;
  const RecordLabels cie = b.cie(cs);
  FdeSpec fs;
  fs.dwarf64 = true;
  fs.pc_begin = 0x601000;
  fs.pc_range = 0x20;
  const RecordLabels fde = b.fde(cie.start, fs);
  const auto data = b.finish();
  CfiSection s(data, b.info());
  const auto c = entry_ok(s, 0);
  ASSERT_EQ(c.type, CfiSection::Entry::Type::kCie);
  EXPECT_TRUE(c.cie->dwarf64);
  EXPECT_EQ(c.cie->id, 0u);
  EXPECT_EQ(c.cie->length, at(b, cie.end) - 12);
  EXPECT_EQ(at(b, cie.id), 12u);
  const auto f = entry_ok(s, at(b, fde.start));
  ASSERT_EQ(f.type, CfiSection::Entry::Type::kFde);
  EXPECT_TRUE(f.fde.dwarf64);
  EXPECT_EQ(f.fde.cie_pointer, at(b, fde.id));  // back to offset 0
  EXPECT_EQ(f.fde.cie_offset, 0u);
  EXPECT_EQ(f.fde.pc_begin, 0x601000u);
  EXPECT_EQ(f.fde.pc_range, 0x20u);
  EXPECT_EQ(f.fde.end, data.size());
  EXPECT_EQ(f.cie, c.cie);
}

TEST(CfiSectionTest, DebugFrameDwarf32) {
  CfiBuilder b(CfiKind::kDebugFrame);
  b.b().zeros(4).u32(0);  // padding and a terminator before the CIE
  CieSpec cs;
  cs.version = 3;
  cs.augmentation = "";
  const RecordLabels cie = b.cie(cs);
  FdeSpec fs;
  fs.encoding = pe::kAbsptr;
  fs.augmentation = false;
  fs.pc_begin = 0xffffffff80001000ull;
  fs.pc_range = 0x123;
  const RecordLabels fde = b.fde(cie.start, fs);
  const auto data = b.finish();
  CfiSection s(data, b.info());
  const auto c = entry_ok(s, 8);
  ASSERT_EQ(c.type, CfiSection::Entry::Type::kCie);
  EXPECT_EQ(c.cie->id, 0xffffffffu);
  EXPECT_EQ(c.cie->fde_encoding, pe::kAbsptr);
  const auto f = entry_ok(s, at(b, fde.start));
  ASSERT_EQ(f.type, CfiSection::Entry::Type::kFde);
  EXPECT_EQ(f.fde.cie_pointer, 8u);  // a section offset
  EXPECT_EQ(f.fde.cie_offset, 8u);
  EXPECT_EQ(f.fde.pc_begin, 0xffffffff80001000ull);
  EXPECT_EQ(f.fde.pc_range, 0x123u);
  EXPECT_TRUE(f.fde.augmentation_data.empty());
}

TEST(CfiSectionTest, DebugFrameDwarf64) {
  CfiBuilder b(CfiKind::kDebugFrame, Endian::kBig);
  CieSpec cs;
  cs.dwarf64 = true;
  cs.version = 4;
  cs.augmentation = "";
  cs.address_size = 8;
  const RecordLabels cie = b.cie(cs);
  FdeSpec fs;
  fs.dwarf64 = true;
  fs.encoding = pe::kAbsptr;
  fs.augmentation = false;
  fs.pc_begin = 0x1000;
  fs.pc_range = 0x10;
  const RecordLabels fde = b.fde(cie.start, fs);
  const auto data = b.finish();
  CfiSection s(data, b.info());
  const auto c = entry_ok(s, 0);
  EXPECT_EQ(c.cie->id, ~uint64_t{0});
  EXPECT_TRUE(c.cie->dwarf64);
  const auto f = entry_ok(s, at(b, fde.start));
  ASSERT_EQ(f.type, CfiSection::Entry::Type::kFde);
  EXPECT_EQ(f.fde.cie_pointer, 0u);
  EXPECT_EQ(f.fde.pc_begin, 0x1000u);
  // A 32-bit CIE id in a 64-bit record is a CIE pointer, not a CIE.
  CfiBuilder b2(CfiKind::kDebugFrame);
  CieSpec bad = cs;
  bad.id = 0xffffffffu;
  const RecordLabels l2 = b2.cie(bad);
  const auto d2 = b2.finish();
  CfiSection s2(d2, b2.info());
  expect_entry_error(s2, 0, ErrorCode::kBadCiePointer, at(b2, l2.id));
}

TEST(CfiSectionTest, DebugFrameCiePointerZeroNamesTheFirstCie) {
  // In .debug_frame an id of 0 is an FDE whose CIE is at offset 0.
  CfiBuilder b(CfiKind::kDebugFrame);
  CieSpec cs;
  cs.augmentation = "";
  b.cie(cs);
  FdeSpec fs;
  fs.encoding = pe::kAbsptr;
  fs.augmentation = false;
  fs.pc_begin = 0x5000;
  fs.pc_range = 8;
  fs.cie_pointer = 0;
  const RecordLabels fde = b.fde({}, fs);
  const auto data = b.finish();
  CfiSection s(data, b.info());
  const auto f = entry_ok(s, at(b, fde.start));
  ASSERT_EQ(f.type, CfiSection::Entry::Type::kFde);
  EXPECT_EQ(f.fde.cie_offset, 0u);
  EXPECT_EQ(f.fde.pc_begin, 0x5000u);
}

TEST(CfiSectionTest, EhFrameCieIdOfDebugFrameIsAnFdePointer) {
  // 0xffffffff in .eh_frame is a CIE pointer, and points far outside the section.
  CfiBuilder b(CfiKind::kEhFrame);
  CieSpec cs;
  cs.id = 0xffffffffu;
  const RecordLabels l = b.cie(cs);
  const auto data = b.finish();
  CfiSection s(data, b.info());
  expect_entry_error(s, 0, ErrorCode::kBadCiePointer, at(b, l.id));
}

TEST(CfiSectionTest, BigEndianEhFrame) {
  CfiBuilder b(CfiKind::kEhFrame, Endian::kBig, kSectionAddress);
  CieSpec cs;
  cs.instructions = {0x0c, 0x01, 0x00};
  const RecordLabels cie = b.cie(cs);
  FdeSpec fs;
  fs.pc_begin = 0x5ff000;  // below the section: a negative pcrel offset
  fs.pc_range = 0x1234;
  const RecordLabels fde = b.fde(cie.start, fs);
  const auto data = b.finish();
  CfiSection s(data, b.info());
  const auto f = entry_ok(s, at(b, fde.start));
  ASSERT_EQ(f.type, CfiSection::Entry::Type::kFde);
  EXPECT_EQ(f.fde.pc_begin, 0x5ff000u);
  EXPECT_EQ(f.fde.pc_range, 0x1234u);
  EXPECT_EQ(f.fde.pc_end(), 0x600234u);
  EXPECT_TRUE(f.fde.contains(0x5ff000));
  EXPECT_TRUE(f.fde.contains(0x600233));
  EXPECT_FALSE(f.fde.contains(0x600234));
  EXPECT_FALSE(f.fde.contains(0x5fefff));
}

TEST(CfiSectionTest, FdeRangeIsUnsignedEvenWithASignedEncoding) {
  CfiBuilder b(CfiKind::kEhFrame, Endian::kLittle, kSectionAddress);
  const RecordLabels cie = b.cie(CieSpec{});
  FdeSpec fs;
  fs.pc_begin = 0x601000;
  fs.pc_range = 0x90000000;  // negative as an sdata4
  const RecordLabels fde = b.fde(cie.start, fs);
  const auto data = b.finish();
  CfiSection s(data, b.info());
  const auto f = entry_ok(s, at(b, fde.start));
  EXPECT_EQ(f.fde.pc_range, 0x90000000u);
}

TEST(CfiSectionTest, FourByteAddresses) {
  CfiBuilder b(CfiKind::kEhFrame, Endian::kLittle, 0x8000);
  CieSpec cs;
  cs.augmentation = "zR";
  cs.fde_encoding = pe::kAbsptr;
  cs.address_size = 4;
  const RecordLabels cie = b.cie(cs);
  FdeSpec fs;
  fs.encoding = pe::kAbsptr;
  fs.address_size = 4;
  fs.pc_begin = 0xfffff000;
  fs.pc_range = 0x10;
  const RecordLabels fde = b.fde(cie.start, fs);
  const auto data = b.finish();
  CfiSection s(data, b.info(4));
  const auto f = entry_ok(s, at(b, fde.start));
  EXPECT_EQ(f.cie->address_size, 4);
  EXPECT_EQ(f.fde.pc_begin, 0xfffff000u);
  EXPECT_EQ(f.fde.pc_range, 0x10u);
  EXPECT_EQ(f.fde.instructions_offset, at(b, fde.instructions));
}

// ---- augmentations --------------------------------------------------------------------

TEST(CfiSectionTest, AugmentationPersonalityLsdaAndFdeEncoding) {
  CfiBuilder b(CfiKind::kEhFrame, Endian::kLittle, kSectionAddress);
  CieSpec cs;
  cs.augmentation = "zPLR";
  cs.personality_encoding = pe::kPcrel | pe::kSdata4 | pe::kIndirect;
  cs.personality = 0x604000;  // the address of the pointer to the personality routine
  cs.lsda_encoding = pe::kPcrel | pe::kSdata4;
  cs.fde_encoding = pe::kPcrel | pe::kSdata4;
  const RecordLabels cie = b.cie(cs);
  FdeSpec fs;
  fs.pc_begin = 0x601000;
  fs.pc_range = 0x80;
  fs.lsda = 0x605010;
  const RecordLabels fde = b.fde(cie.start, fs);
  FdeSpec no_lsda = fs;
  no_lsda.lsda.reset();  // augmentation length 0: no LSDA
  const RecordLabels fde2 = b.fde(cie.start, no_lsda);
  const auto data = b.finish();
  CfiSection s(data, b.info());
  const auto c = entry_ok(s, 0);
  ASSERT_EQ(c.type, CfiSection::Entry::Type::kCie);
  EXPECT_EQ(c.cie->augmentation, "zPLR");
  EXPECT_EQ(c.cie->personality_encoding, 0x9b);
  EXPECT_EQ(c.cie->personality, 0x604000u);
  EXPECT_EQ(c.cie->lsda_encoding, 0x1b);
  EXPECT_EQ(c.cie->fde_encoding, 0x1b);
  EXPECT_EQ(c.cie->augmentation_data.size(), 7u);  // P: 1 + 4, L: 1, R: 1
  const auto f = entry_ok(s, at(b, fde.start));
  EXPECT_TRUE(f.fde.has_lsda);
  EXPECT_EQ(f.fde.lsda, 0x605010u);
  EXPECT_EQ(f.fde.augmentation_data.size(), 4u);
  EXPECT_EQ(f.fde.pc_begin, 0x601000u);
  const auto f2 = entry_ok(s, at(b, fde2.start));
  EXPECT_FALSE(f2.fde.has_lsda);
  EXPECT_TRUE(f2.fde.augmentation_data.empty());
}

TEST(CfiSectionTest, AugmentationPersonalityAbsolute) {
  CfiBuilder b(CfiKind::kEhFrame);
  CieSpec cs;
  cs.augmentation = "zP";
  cs.personality_encoding = pe::kUdata8;
  cs.personality = 0x1122334455667788ull;
  b.cie(cs);
  const auto data = b.finish();
  CfiSection s(data, b.info());
  const auto c = entry_ok(s, 0);
  EXPECT_EQ(c.cie->personality, 0x1122334455667788ull);
  EXPECT_EQ(c.cie->fde_encoding, pe::kAbsptr);  // no 'R'
}

TEST(CfiSectionTest, AugmentationBadPersonalityEncoding) {
  CfiBuilder b(CfiKind::kEhFrame);
  CieSpec cs;
  cs.augmentation = "zP";
  cs.raw_augmentation_data = std::vector<uint8_t>{0x0f, 0, 0, 0, 0};
  const RecordLabels l = b.cie(cs);
  const auto data = b.finish();
  CfiSection s(data, b.info());
  // After "zP\0", code, data, ra and the augmentation length: the encoding byte,
  // then the pointer it cannot decode.
  expect_entry_error(s, 0, ErrorCode::kBadPointerEncoding, at(b, l.instructions) - 4);
}

TEST(CfiSectionTest, AugmentationSignalFrameBKeyAndMte) {
  CfiBuilder b(CfiKind::kEhFrame);
  CieSpec cs;
  cs.augmentation = "zRSBG";
  b.cie(cs);
  const auto data = b.finish();
  CfiSection s(data, b.info());
  const auto c = entry_ok(s, 0);
  EXPECT_TRUE(c.cie->signal_frame);
  EXPECT_TRUE(c.cie->b_key);
  EXPECT_TRUE(c.cie->mte_tagged);
  CfiBuilder plain(CfiKind::kEhFrame);
  plain.cie(CieSpec{});
  const auto d2 = plain.finish();
  CfiSection s2(d2, plain.info());
  const auto c2 = entry_ok(s2, 0);
  EXPECT_FALSE(c2.cie->signal_frame);
  EXPECT_FALSE(c2.cie->b_key);
  EXPECT_FALSE(c2.cie->mte_tagged);
}

TEST(CfiSectionTest, UnknownAugmentationLetterStopsInterpretation) {
  // 'X' is unknown: the rest ('R') is not read, but 'z' says how much to skip.
  CfiBuilder b(CfiKind::kEhFrame);
  CieSpec cs;
  cs.augmentation = "zXR";
  cs.raw_augmentation_data = std::vector<uint8_t>{0xaa, 0xbb, 0x1b};
  cs.instructions = {0x0c, 0x07, 0x08};
  const RecordLabels l = b.cie(cs);
  const auto data = b.finish();
  CfiSection s(data, b.info());
  const auto c = entry_ok(s, 0);
  EXPECT_EQ(c.cie->fde_encoding, pe::kAbsptr);
  EXPECT_EQ(c.cie->augmentation_data.size(), 3u);
  EXPECT_EQ(c.cie->instructions_offset, at(b, l.instructions));
  EXPECT_EQ(vec(c.cie->instructions), cs.instructions);
}

TEST(CfiSectionTest, OldEhAugmentation) {
  for (uint8_t address_size : {uint8_t{4}, uint8_t{8}}) {
    CfiBuilder b(CfiKind::kEhFrame);
    CieSpec cs;
    cs.augmentation = "eh";
    cs.eh_data = 0xdeadbeef;
    cs.address_size = address_size;
    cs.code_alignment = 2;
    cs.data_alignment = -4;
    cs.return_address_register = 14;
    cs.instructions = {0x0c, 0x0d, 0x00};
    const RecordLabels cie = b.cie(cs);
    FdeSpec fs;
    fs.encoding = pe::kAbsptr;
    fs.address_size = address_size;
    fs.augmentation = false;
    fs.pc_begin = 0x2000;
    fs.pc_range = 0x30;
    const RecordLabels fde = b.fde(cie.start, fs);
    const auto data = b.finish();
    CfiSection s(data, b.info(address_size));
    const auto c = entry_ok(s, 0);
    EXPECT_EQ(c.cie->augmentation, "eh");
    EXPECT_FALSE(c.cie->has_augmentation_data);
    EXPECT_EQ(c.cie->code_alignment, 2u);
    EXPECT_EQ(c.cie->data_alignment, -4);
    EXPECT_EQ(c.cie->return_address_register, 14u);
    EXPECT_EQ(c.cie->instructions_offset, at(b, cie.instructions));
    const auto f = entry_ok(s, at(b, fde.start));
    EXPECT_EQ(f.fde.pc_begin, 0x2000u);
    EXPECT_EQ(f.fde.pc_range, 0x30u);
  }
}

TEST(CfiSectionTest, AugmentationWithoutZ) {
  for (const char* aug : {"R", "xyz", "e", "ehz"}) {
    CfiBuilder b(CfiKind::kEhFrame);
    b.b().zeros(12);
    CieSpec cs;
    cs.augmentation = aug;
    const RecordLabels cie = b.cie(cs);
    FdeSpec fs;
    const RecordLabels fde = b.fde(cie.start, fs);
    const auto data = b.finish();
    CfiSection s(data, b.info());
    expect_entry_error(s, 12, ErrorCode::kBadAugmentation, 12);
    // Its FDEs cannot be parsed either.
    expect_entry_error(s, at(b, fde.start), ErrorCode::kBadCiePointer, at(b, fde.id));
  }
}

TEST(CfiSectionTest, AugmentationDataLongerThanTheCie) {
  CfiBuilder b(CfiKind::kEhFrame);
  CieSpec cs;
  cs.augmentation = "zR";
  const RecordLabels l = b.cie(cs);
  auto data = b.finish();
  // Patch the augmentation length (just before the 'R' data byte) to 0x7f.
  const uint64_t aug_len = at(b, l.instructions) - 2;
  ASSERT_EQ(data[aug_len], 1);
  data[aug_len] = 0x7f;
  CfiSection s(data, b.info());
  expect_entry_error(s, 0, ErrorCode::kTruncated, aug_len + 1);
}

TEST(CfiSectionTest, CiePaddedWithNops) {
  CfiBuilder b(CfiKind::kEhFrame);
  CieSpec cs;
  cs.instructions = {0x0c, 0x07, 0x08};
  cs.pad_to = 8;
  const RecordLabels l = b.cie(cs);
  const auto data = b.finish();
  EXPECT_EQ(data.size() % 8, 0u);
  CfiSection s(data, b.info());
  const auto c = entry_ok(s, 0);
  EXPECT_EQ(c.cie->instructions.size(), at(b, l.end) - at(b, l.instructions));
  EXPECT_EQ(c.cie->instructions[3], 0x00);
}

// ---- terminators and walking ------------------------------------------------------------

TEST(CfiSectionTest, ZeroTerminators) {
  CfiBuilder b(CfiKind::kEhFrame, Endian::kLittle, kSectionAddress);
  const RecordLabels cie = b.cie(CieSpec{});
  FdeSpec fs;
  fs.pc_begin = 0x601000;
  fs.pc_range = 0x10;
  b.fde(cie.start, fs);
  const uint64_t term = b.b().size();
  b.terminator();
  b.terminator();
  // A record after the terminators is still read (as readelf does).
  fs.pc_begin = 0x602000;
  const RecordLabels late = b.fde(cie.start, fs);
  const auto data = b.finish();
  CfiSection s(data, b.info());
  const auto t = entry_ok(s, term);
  EXPECT_EQ(t.type, CfiSection::Entry::Type::kTerminator);
  EXPECT_EQ(t.offset, term);
  EXPECT_EQ(t.next, term + 4);
  const Walk w = walk(s);
  EXPECT_TRUE(w.diagnostics.empty());
  ASSERT_EQ(w.entries.size(), 5u);
  EXPECT_EQ(w.entries[0].type, CfiSection::Entry::Type::kCie);
  EXPECT_EQ(w.entries[1].type, CfiSection::Entry::Type::kFde);
  EXPECT_EQ(w.entries[2].type, CfiSection::Entry::Type::kTerminator);
  EXPECT_EQ(w.entries[3].type, CfiSection::Entry::Type::kTerminator);
  EXPECT_EQ(w.entries[3].offset, term + 4);
  EXPECT_EQ(w.entries[4].type, CfiSection::Entry::Type::kFde);
  EXPECT_EQ(w.entries[4].offset, at(b, late.start));
  EXPECT_EQ(w.entries[4].fde.pc_begin, 0x602000u);
}

TEST(CfiSectionTest, Dwarf64ZeroLengthIsATerminator) {
  CfiBuilder b(CfiKind::kDebugFrame);
  b.b().u32(0xffffffffu).u64(0);
  CieSpec cs;
  cs.augmentation = "";
  b.cie(cs);
  const auto data = b.finish();
  CfiSection s(data, b.info());
  const auto t = entry_ok(s, 0);
  EXPECT_EQ(t.type, CfiSection::Entry::Type::kTerminator);
  EXPECT_EQ(t.next, 12u);
  const Walk w = walk(s);
  ASSERT_EQ(w.entries.size(), 2u);
  EXPECT_EQ(w.entries[1].type, CfiSection::Entry::Type::kCie);
  EXPECT_EQ(w.entries[1].offset, 12u);
  EXPECT_TRUE(w.diagnostics.empty());
}

TEST(CfiSectionTest, TrailingBytesShorterThanALength) {
  CfiBuilder b(CfiKind::kEhFrame);
  b.cie(CieSpec{});
  const uint64_t tail = b.b().size();
  b.b().u16(0);
  const auto data = b.finish();
  CfiSection s(data, b.info());
  const Walk w = walk(s);
  ASSERT_EQ(w.entries.size(), 1u);
  ASSERT_EQ(w.diagnostics.size(), 1u);
  EXPECT_EQ(w.diagnostics[0].error.code, ErrorCode::kTruncated);
  EXPECT_EQ(w.diagnostics[0].error.offset, tail);
  EXPECT_EQ(w.diagnostics[0].entry_offset, tail);
}

TEST(CfiSectionTest, ForEachStopsWhenTheCallbackSaysSo) {
  CfiBuilder b(CfiKind::kEhFrame, Endian::kLittle, kSectionAddress);
  const RecordLabels cie = b.cie(CieSpec{});
  FdeSpec fs;
  fs.pc_begin = 0x601000;
  fs.pc_range = 0x10;
  b.fde(cie.start, fs);
  b.fde(cie.start, fs);
  const auto data = b.finish();
  CfiSection s(data, b.info());
  int seen = 0;
  s.for_each([&](const CfiSection::Entry&) { return ++seen < 2; }, nullptr);
  EXPECT_EQ(seen, 2);
}

// ---- errors ------------------------------------------------------------------------------

TEST(CfiSectionTest, TruncatedCie) {
  // A CIE whose length covers only the id and the version: the augmentation
  // string has no terminator inside the record.
  CfiBuilder b(CfiKind::kEhFrame);
  b.b().u32(5).u32(0).u8(1);
  const uint64_t good = b.b().size();
  b.cie(CieSpec{});
  const auto data = b.finish();
  CfiSection s(data, b.info());
  expect_entry_error(s, 0, ErrorCode::kTruncated, 9);
  const Walk w = walk(s);
  ASSERT_EQ(w.diagnostics.size(), 1u);
  EXPECT_EQ(w.diagnostics[0].entry_offset, 0u);
  EXPECT_EQ(w.diagnostics[0].error.code, ErrorCode::kTruncated);
  EXPECT_EQ(w.diagnostics[0].error.offset, 9u);
  ASSERT_EQ(w.entries.size(), 1u);  // the next record is still read
  EXPECT_EQ(w.entries[0].offset, good);
  EXPECT_EQ(w.entries[0].type, CfiSection::Entry::Type::kCie);
}

TEST(CfiSectionTest, TruncatedCieFields) {
  // The length stops inside the code alignment ULEB.
  CfiBuilder b(CfiKind::kEhFrame);
  b.b().u32(8).u32(0).u8(1).u8(0).u8(0x80).u8(0x80);
  const auto data = b.finish();
  CfiSection s(data, b.info());
  expect_entry_error(s, 0, ErrorCode::kTruncated, 10);
}

TEST(CfiSectionTest, RecordTooShortForItsId) {
  CfiBuilder b(CfiKind::kEhFrame);
  b.b().u32(2).u16(0);
  b.cie(CieSpec{});
  const auto data = b.finish();
  CfiSection s(data, b.info());
  expect_entry_error(s, 0, ErrorCode::kTruncated, 4);
  const Walk w = walk(s);
  EXPECT_EQ(w.diagnostics.size(), 1u);
  EXPECT_EQ(w.entries.size(), 1u);
}

TEST(CfiSectionTest, TruncatedFde) {
  CfiBuilder b(CfiKind::kEhFrame, Endian::kLittle, kSectionAddress);
  const RecordLabels cie = b.cie(CieSpec{});
  // An FDE whose length covers the CIE pointer and 2 bytes of the 4-byte pc_begin.
  const uint64_t fde = b.b().size();
  SectionBuilder::Ref back;
  back.minus = cie.start;
  back.plus_self = true;
  b.b().u32(6).ref(back, 4).u16(0x1234);
  FdeSpec fs;
  fs.pc_begin = 0x601000;
  fs.pc_range = 4;
  const RecordLabels next = b.fde(cie.start, fs);
  const auto data = b.finish();
  CfiSection s(data, b.info());
  expect_entry_error(s, fde, ErrorCode::kTruncated, fde + 8);
  const Walk w = walk(s);
  ASSERT_EQ(w.diagnostics.size(), 1u);
  EXPECT_EQ(w.diagnostics[0].entry_offset, fde);
  ASSERT_EQ(w.entries.size(), 2u);
  EXPECT_EQ(w.entries[1].offset, at(b, next.start));
}

TEST(CfiSectionTest, TruncatedFdeAugmentation) {
  CfiBuilder b(CfiKind::kEhFrame, Endian::kLittle, kSectionAddress);
  const RecordLabels cie = b.cie(CieSpec{});
  FdeSpec fs;
  fs.pc_begin = 0x601000;
  fs.pc_range = 4;
  fs.augmentation = false;  // the CIE has 'z': the length is missing
  const RecordLabels fde = b.fde(cie.start, fs);
  const auto data = b.finish();
  CfiSection s(data, b.info());
  expect_entry_error(s, at(b, fde.start), ErrorCode::kTruncated, at(b, fde.end));
}

TEST(CfiSectionTest, LengthPastTheSection) {
  CfiBuilder b(CfiKind::kEhFrame);
  b.cie(CieSpec{});
  const uint64_t bad = b.b().size();
  b.b().u32(0x1000).u32(0).u8(1);
  const auto data = b.finish();
  CfiSection s(data, b.info());
  expect_entry_error(s, bad, ErrorCode::kBadLength, bad);
  const Walk w = walk(s);
  ASSERT_EQ(w.diagnostics.size(), 1u);
  EXPECT_EQ(w.diagnostics[0].error.code, ErrorCode::kBadLength);
  EXPECT_EQ(w.diagnostics[0].error.offset, bad);
  EXPECT_EQ(w.entries.size(), 1u);
}

TEST(CfiSectionTest, LengthPastTheSectionStopsTheWalk) {
  // After an untrustworthy length nothing further is read, even a good record.
  CfiBuilder b(CfiKind::kEhFrame);
  b.b().u32(0x20);
  b.cie(CieSpec{});
  const auto data = b.finish();
  ASSERT_LT(data.size(), 0x24u);
  CfiSection s(data, b.info());
  const Walk w = walk(s);
  EXPECT_TRUE(w.entries.empty());
  ASSERT_EQ(w.diagnostics.size(), 1u);
  EXPECT_EQ(w.diagnostics[0].error.code, ErrorCode::kBadLength);
  EXPECT_EQ(w.diagnostics[0].error.offset, 0u);
}

TEST(CfiSectionTest, Length64PastTheSection) {
  CfiBuilder b(CfiKind::kDebugFrame);
  CieSpec cs;
  cs.dwarf64 = true;
  cs.length = 0x100000000ull;
  b.cie(cs);
  const auto data = b.finish();
  CfiSection s(data, b.info());
  expect_entry_error(s, 0, ErrorCode::kBadLength, 0);
}

TEST(CfiSectionTest, ReservedLength) {
  CfiBuilder b(CfiKind::kEhFrame);
  b.cie(CieSpec{});
  const uint64_t bad = b.b().size();
  b.b().u32(0xfffffff5u).zeros(16);
  const auto data = b.finish();
  CfiSection s(data, b.info());
  expect_entry_error(s, bad, ErrorCode::kBadLength, bad);
}

TEST(CfiSectionTest, EhFrameCiePointerBeforeTheSection) {
  CfiBuilder b(CfiKind::kEhFrame, Endian::kLittle, kSectionAddress);
  const RecordLabels cie = b.cie(CieSpec{});
  FdeSpec fs;
  fs.pc_begin = 0x601000;
  fs.pc_range = 4;
  fs.cie_pointer = 0x1000;  // larger than the field's own offset
  const RecordLabels fde = b.fde(cie.start, fs);
  const auto data = b.finish();
  CfiSection s(data, b.info());
  expect_entry_error(s, at(b, fde.start), ErrorCode::kBadCiePointer, at(b, fde.id));
}

TEST(CfiSectionTest, EhFrameCiePointerToAnFde) {
  CfiBuilder b(CfiKind::kEhFrame, Endian::kLittle, kSectionAddress);
  const RecordLabels cie = b.cie(CieSpec{});
  FdeSpec fs;
  fs.pc_begin = 0x601000;
  fs.pc_range = 4;
  const RecordLabels first = b.fde(cie.start, fs);
  const RecordLabels second = b.fde(first.start, fs);  // names an FDE
  const RecordLabels third = b.fde(cie.id, fs);        // names the middle of the CIE
  const auto data = b.finish();
  CfiSection s(data, b.info());
  expect_entry_error(s, at(b, second.start), ErrorCode::kBadCiePointer, at(b, second.id));
  expect_entry_error(s, at(b, third.start), ErrorCode::kBadCiePointer, at(b, third.id));
  // for_each reports both and keeps going.
  const Walk w = walk(s);
  ASSERT_EQ(w.entries.size(), 2u);
  ASSERT_EQ(w.diagnostics.size(), 2u);
  EXPECT_EQ(w.diagnostics[0].entry_offset, at(b, second.start));
  EXPECT_EQ(w.diagnostics[1].entry_offset, at(b, third.start));
}

TEST(CfiSectionTest, DebugFrameCiePointerOutsideTheSection) {
  CfiBuilder b(CfiKind::kDebugFrame);
  CieSpec cs;
  cs.augmentation = "";
  b.cie(cs);
  FdeSpec fs;
  fs.encoding = pe::kAbsptr;
  fs.augmentation = false;
  fs.cie_pointer = 0x7000;
  const RecordLabels fde = b.fde({}, fs);
  const auto data = b.finish();
  CfiSection s(data, b.info());
  expect_entry_error(s, at(b, fde.start), ErrorCode::kBadCiePointer, at(b, fde.id));
}

TEST(CfiSectionTest, FdeOfABrokenCieIsABadCiePointer) {
  CfiBuilder b(CfiKind::kEhFrame, Endian::kLittle, kSectionAddress);
  CieSpec cs;
  cs.version = 9;
  const RecordLabels cie = b.cie(cs);
  FdeSpec fs;
  fs.pc_begin = 0x601000;
  fs.pc_range = 4;
  const RecordLabels fde = b.fde(cie.start, fs);
  const auto data = b.finish();
  CfiSection s(data, b.info());
  expect_entry_error(s, at(b, fde.start), ErrorCode::kBadCiePointer, at(b, fde.id));
}

TEST(CfiSectionTest, ForEachSkipsABrokenRecordAndContinues) {
  CfiBuilder b(CfiKind::kEhFrame, Endian::kLittle, kSectionAddress);
  const RecordLabels cie = b.cie(CieSpec{});
  FdeSpec fs;
  fs.pc_begin = 0x601000;
  fs.pc_range = 0x10;
  const RecordLabels a = b.fde(cie.start, fs);
  FdeSpec broken = fs;
  broken.cie_pointer = 0x10000;
  const RecordLabels bad = b.fde(cie.start, broken);
  CieSpec bad_version;
  bad_version.version = 2;
  const RecordLabels bad_cie = b.cie(bad_version);
  fs.pc_begin = 0x602000;
  const RecordLabels c = b.fde(cie.start, fs);
  b.terminator();
  const auto data = b.finish();
  CfiSection s(data, b.info());
  const Walk w = walk(s);
  ASSERT_EQ(w.entries.size(), 4u);
  EXPECT_EQ(w.entries[0].offset, 0u);
  EXPECT_EQ(w.entries[1].offset, at(b, a.start));
  EXPECT_EQ(w.entries[2].offset, at(b, c.start));
  EXPECT_EQ(w.entries[2].fde.pc_begin, 0x602000u);
  EXPECT_EQ(w.entries[3].type, CfiSection::Entry::Type::kTerminator);
  ASSERT_EQ(w.diagnostics.size(), 2u);
  EXPECT_EQ(w.diagnostics[0].entry_offset, at(b, bad.start));
  EXPECT_EQ(w.diagnostics[0].error.code, ErrorCode::kBadCiePointer);
  EXPECT_EQ(w.diagnostics[0].error.offset, at(b, bad.id));
  EXPECT_EQ(w.diagnostics[1].entry_offset, at(b, bad_cie.start));
  EXPECT_EQ(w.diagnostics[1].error.code, ErrorCode::kBadCieVersion);
  EXPECT_EQ(w.diagnostics[1].error.offset, at(b, bad_cie.body));
}

TEST(CfiSectionTest, CieAtAndFdeAt) {
  CfiBuilder b(CfiKind::kEhFrame, Endian::kLittle, kSectionAddress);
  const RecordLabels cie = b.cie(CieSpec{});
  FdeSpec fs;
  fs.pc_begin = 0x601000;
  fs.pc_range = 0x10;
  const RecordLabels fde = b.fde(cie.start, fs);
  const auto data = b.finish();
  CfiSection s(data, b.info());
  auto c1 = s.cie_at(0);
  ASSERT_TRUE(c1.ok());
  auto c2 = s.cie_at(0);
  ASSERT_TRUE(c2.ok());
  EXPECT_EQ(*c1, *c2);  // parsed once, then cached
  // entry_at returns the same cached CIE.
  EXPECT_EQ(entry_ok(s, 0).cie, *c1);
  auto not_cie = s.cie_at(at(b, fde.start));
  ASSERT_FALSE(not_cie.ok());
  EXPECT_EQ(not_cie.error().code, ErrorCode::kBadCiePointer);
  EXPECT_EQ(not_cie.error().offset, at(b, fde.start));
  auto outside = s.cie_at(data.size());
  ASSERT_FALSE(outside.ok());
  EXPECT_EQ(outside.error().code, ErrorCode::kBadCiePointer);
  EXPECT_EQ(outside.error().offset, data.size());

  const Cie* owner = nullptr;
  auto f = s.fde_at(at(b, fde.start), &owner);
  ASSERT_TRUE(f.ok());
  EXPECT_EQ(owner, *c1);
  EXPECT_EQ(f->pc_begin, 0x601000u);
  auto on_cie = s.fde_at(0, nullptr);
  ASSERT_FALSE(on_cie.ok());
  EXPECT_EQ(on_cie.error().code, ErrorCode::kNotFound);
  EXPECT_EQ(on_cie.error().offset, 0u);
}

}  // namespace
}  // namespace framewalk::dwarf

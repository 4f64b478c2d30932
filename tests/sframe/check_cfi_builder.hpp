// Hand-written x86-64 .eh_frame for the SFrame generator and checker tests:
// a CIE like gcc's (CFA = rsp+8, rip at CFA-8), one with 'S' for signal
// frames, and one FDE per function with the instructions given; and AArch64
// .eh_frame in either byte order (Aarch64CfiFixture): gcc's CIE (CFA = sp,
// RA column x30, code alignment 4), one with 'B' (PAC key B); s390x
// .eh_frame (S390xCfiFixture: CFA = r15 + 160, RA column r14); and
// expect_agreement, a check report without disagreements or holes.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <deque>
#include <memory>
#include <vector>

#include "arch/aarch64/registers.hpp"
#include "dwarf/cfi_section.hpp"
#include "sframe/sframe_check.hpp"
#include "support/section_builder.hpp"

namespace framewalk::sframe::test {

using Insns = std::vector<uint8_t>;

inline Insns operator+(Insns a, const Insns& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

// DW_CFA_* instructions (code alignment 1, data alignment -8).
namespace cfa {
inline Insns uleb(uint64_t v) { return framewalk::test::uleb_bytes(v); }
inline Insns sleb(int64_t v) { return framewalk::test::sleb_bytes(v); }
inline Insns advance(uint64_t n) {
  if (n < 64) return {static_cast<uint8_t>(0x40 | n)};
  if (n < 256) return {0x02, static_cast<uint8_t>(n)};
  return {0x03, static_cast<uint8_t>(n), static_cast<uint8_t>(n >> 8)};
}
inline Insns def_cfa(uint16_t reg, uint64_t off) { return Insns{0x0c} + uleb(reg) + uleb(off); }
inline Insns def_cfa_offset(uint64_t off) { return Insns{0x0e} + uleb(off); }
inline Insns def_cfa_register(uint16_t reg) { return Insns{0x0d} + uleb(reg); }
// Saved at CFA + offset (offset a multiple of -8).
inline Insns offset(uint16_t reg, int64_t off) { return Insns{static_cast<uint8_t>(0x80 | reg)} + uleb(static_cast<uint64_t>(off / -8)); }
inline Insns def_cfa_expression(const Insns& e) { return Insns{0x0f} + uleb(e.size()) + e; }
inline Insns expression(uint16_t reg, const Insns& e) { return Insns{0x10} + uleb(reg) + uleb(e.size()) + e; }
inline Insns val_expression(uint16_t reg, const Insns& e) { return Insns{0x16} + uleb(reg) + uleb(e.size()) + e; }
inline Insns val_offset(uint16_t reg, int64_t off) { return Insns{0x14} + uleb(reg) + uleb(static_cast<uint64_t>(off / -8)); }
inline Insns undefined(uint16_t reg) { return Insns{0x07} + uleb(reg); }
inline Insns same_value(uint16_t reg) { return Insns{0x08} + uleb(reg); }
inline Insns in_register(uint16_t reg, uint16_t holder) { return Insns{0x09} + uleb(reg) + uleb(holder); }
inline Insns restore(uint16_t reg) { return {static_cast<uint8_t>(0xc0 | reg)}; }
// AArch64: paciasp/autiasp toggle "RA signed" (opcode 0x2d on AArch64).
inline Insns negate_ra_state() { return {0x2d}; }
}  // namespace cfa

// DW_OP_* pieces.
namespace op {
inline Insns breg(uint16_t reg, int64_t off) { return Insns{static_cast<uint8_t>(0x70 + reg)} + cfa::sleb(off); }
inline Insns bregx(uint16_t reg, int64_t off) { return Insns{0x92} + cfa::uleb(reg) + cfa::sleb(off); }
inline Insns deref() { return {0x06}; }
inline Insns lit(uint8_t n) { return {static_cast<uint8_t>(0x30 + n)}; }
inline Insns plus_uconst(uint64_t n) { return Insns{0x23} + cfa::uleb(n); }
// The CFA of glibc/ld PLT entries: rsp + 8 + (((rip & 15) >= K) << 3).
inline Insns plt(uint8_t threshold = 11) {
  return breg(7, 8) + breg(16, 0) + lit(15) + Insns{0x1a} + lit(threshold) + Insns{0x2a} + lit(3) + Insns{0x24, 0x22};
}
}  // namespace op

constexpr uint16_t kRax = 0, kRdx = 1, kRcx = 2, kRbx = 3, kRbp = 6, kRsp = 7, kR8 = 8, kR10 = 10, kRip = 16;

struct FunctionCfi {
  uint64_t begin = 0;
  uint64_t size = 0;
  Insns insns;
  bool signal = false;  // use the 'S' CIE
  bool b_key = false;   // AArch64: use the 'B' CIE
};

// Owns the section bytes; section() parses them. A .debug_frame has no
// augmentations (so no signal CIE) and absolute FDE addresses.
class CfiFixture {
 public:
  static constexpr uint64_t kSectionAddress = 0x600000;

  explicit CfiFixture(const std::vector<FunctionCfi>& functions, dwarf::CfiKind kind = dwarf::CfiKind::kEhFrame) {
    using framewalk::test::CfiBuilder;
    using framewalk::test::CieSpec;
    using framewalk::test::FdeSpec;
    const bool eh = kind == dwarf::CfiKind::kEhFrame;
    CfiBuilder b(kind, Endian::kLittle, eh ? kSectionAddress : 0);
    CieSpec cs;
    cs.augmentation = eh ? "zR" : "";
    cs.instructions = cfa::def_cfa(kRsp, 8) + cfa::offset(kRip, -8);
    const auto plain = b.cie(cs);
    cs.augmentation = "zRS";
    const auto signal = eh ? b.cie(cs) : plain;
    for (const FunctionCfi& f : functions) {
      FdeSpec fs;
      fs.pc_begin = f.begin;
      fs.pc_range = f.size;
      fs.instructions = f.insns;
      if (!eh) {
        fs.encoding = framewalk::pe::kAbsptr;
        fs.augmentation = false;
      }
      b.fde(f.signal ? signal.start : plain.start, fs);
    }
    if (eh) b.terminator();
    bytes_ = std::make_unique<std::vector<uint8_t>>(b.finish());
    section_ = std::make_unique<dwarf::CfiSection>(Bytes(*bytes_), b.info());
  }

  const dwarf::CfiSection& section() const { return *section_; }

 private:
  std::unique_ptr<std::vector<uint8_t>> bytes_;
  std::unique_ptr<dwarf::CfiSection> section_;
};

// .eh_frame in either byte order: one CIE, a second with augmentation
// `b_key_augmentation` (when given) for the functions with b_key, and one
// FDE per function; CFA instructions read as `arch`'s (null: generic).
class EhFrameFixture {
 public:
  static constexpr uint64_t kSectionAddress = 0x600000;

  EhFrameFixture(const std::vector<FunctionCfi>& functions, Endian endian, framewalk::test::CieSpec cs,
                 const char* b_key_augmentation, const arch::ArchInfo* arch) {
    using framewalk::test::CfiBuilder;
    using framewalk::test::FdeSpec;
    CfiBuilder b(dwarf::CfiKind::kEhFrame, endian, kSectionAddress);
    const auto plain = b.cie(cs);
    auto key_b = plain;
    if (b_key_augmentation) {
      cs.augmentation = b_key_augmentation;
      key_b = b.cie(cs);
    }
    for (const FunctionCfi& f : functions) {
      FdeSpec fs;
      fs.pc_begin = f.begin;
      fs.pc_range = f.size;
      fs.instructions = f.insns;
      b.fde(f.b_key ? key_b.start : plain.start, fs);
    }
    b.terminator();
    bytes_ = std::make_unique<std::vector<uint8_t>>(b.finish());
    dwarf::CfiSectionInfo info = b.info();
    if (arch) info.arch = arch;
    section_ = std::make_unique<dwarf::CfiSection>(Bytes(*bytes_), info);
  }

  const dwarf::CfiSection& section() const { return *section_; }

 private:
  std::unique_ptr<std::vector<uint8_t>> bytes_;
  std::unique_ptr<dwarf::CfiSection> section_;
};

constexpr uint16_t kX9 = 9, kX19 = 19, kX29 = 29, kX30 = 30, kSp = 31;

// AArch64 .eh_frame as gcc writes it: CIE "zR" (or "zRB" for functions
// with b_key), code alignment 4 (advance(n) moves 4n bytes), data alignment
// -8, RA column x30, initial CFA = sp + 0 and no register rules.
class Aarch64CfiFixture : public EhFrameFixture {
 public:
  explicit Aarch64CfiFixture(const std::vector<FunctionCfi>& functions, Endian endian = Endian::kLittle)
      : EhFrameFixture(functions, endian, cie(), "zRB", &arch::aarch64::kArchInfo) {}  // 0x2d is negate_ra_state

 private:
  static framewalk::test::CieSpec cie() {
    framewalk::test::CieSpec cs;
    cs.augmentation = "zR";
    cs.code_alignment = 4;
    cs.data_alignment = -8;
    cs.return_address_register = kX30;
    cs.instructions = cfa::def_cfa(kSp, 0);
    return cs;
  }
};

constexpr uint16_t kR1 = 1, kR11 = 11, kR14 = 14, kR15 = 15, kF0 = 16, kF2 = 17, kF4 = 18;  // s390x (f0: 16)

// s390x .eh_frame as gcc writes it (big-endian): CIE "zR", code alignment 1,
// data alignment -8, RA column r14, CFA = r15 + 160.
class S390xCfiFixture : public EhFrameFixture {
 public:
  explicit S390xCfiFixture(const std::vector<FunctionCfi>& functions)
      : EhFrameFixture(functions, Endian::kBig, cie(), nullptr, nullptr) {}

 private:
  static framewalk::test::CieSpec cie() {
    framewalk::test::CieSpec cs;
    cs.return_address_register = kR14;
    cs.instructions = cfa::def_cfa(kR15, 160);
    return cs;
  }
};

// The checker found CFI and SFrame in agreement at every PC both cover, and
// neither covers a PC the other does not.
inline void expect_agreement(const CheckReport& r) {
  EXPECT_EQ(r.disagreements, 0u);
  EXPECT_EQ(r.sframe_only_bytes, 0u);
  EXPECT_EQ(r.cfi_only_bytes, 0u);
  EXPECT_EQ(r.sframe_errors + r.cfi_errors, 0u);
  EXPECT_GT(r.rows_compared, 0u);
  for (const RowDifference& d : r.differences)
    ADD_FAILURE() << "differ at 0x" << std::hex << d.begin << ": " << check_items_text(d.items);
}

}  // namespace framewalk::sframe::test

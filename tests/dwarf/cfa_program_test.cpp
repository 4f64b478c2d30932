// Execution of call frame instructions into rows: one test per DW_CFA opcode,
// row boundaries, remember/restore state, restore to the CIE's rule, the
// alignment factors, expression blocks, errors and row_for_pc.
#include "dwarf/cfa_program.hpp"

#include <gtest/gtest.h>

#include "arch/arch.hpp"

#include <memory>
#include <vector>

#include "support/section_builder.hpp"

namespace framewalk::dwarf {
namespace {

using test::CfiBuilder;
using test::CieSpec;
using test::FdeSpec;
using test::SectionBuilder;

constexpr uint64_t kSectionAddress = 0x400000;
constexpr uint64_t kPc = 0x401000;
constexpr uint64_t kRange = 0x100;

struct ProgramSpec {
  std::vector<uint8_t> cie_insns;
  std::vector<uint8_t> fde_insns;
  uint64_t code_alignment = 1;
  int64_t data_alignment = -8;
  uint64_t return_address_register = 16;
  uint8_t version = 1;
  std::string augmentation = "zR";
  uint64_t pc_begin = kPc;
  uint64_t pc_range = kRange;
  Endian endian = Endian::kLittle;
  const arch::ArchInfo* arch = nullptr;  // the file's machine (opcode 0x2d)
};

struct Rows {
  Result<void> status;
  std::vector<UnwindRow> rows;
  std::vector<bool> last;
};

// One CIE and one FDE in an .eh_frame, parsed back with CfiSection.
class Program {
 public:
  explicit Program(const ProgramSpec& spec) {
    CfiBuilder b(CfiKind::kEhFrame, spec.endian, kSectionAddress);
    CieSpec cs;
    cs.version = spec.version;
    cs.augmentation = spec.augmentation;
    cs.code_alignment = spec.code_alignment;
    cs.data_alignment = spec.data_alignment;
    cs.return_address_register = spec.return_address_register;
    cs.instructions = spec.cie_insns;
    const auto cie = b.cie(cs);
    FdeSpec fs;
    fs.pc_begin = spec.pc_begin;
    fs.pc_range = spec.pc_range;
    fs.instructions = spec.fde_insns;
    const auto fde = b.fde(cie.start, fs);
    b.terminator();
    data_ = b.finish();
    cie_offset_ = b.b().offset_of(cie.start);
    cie_insns_ = b.b().offset_of(cie.instructions);
    fde_offset_ = b.b().offset_of(fde.start);
    fde_insns_ = b.b().offset_of(fde.instructions);
    CfiSectionInfo info = b.info();
    info.arch = spec.arch;
    section_ = std::make_unique<CfiSection>(data_, info);
    uint64_t next = 0;
    auto entry = section_->entry_at(fde_offset_, &next);
    EXPECT_TRUE(entry.ok()) << (entry.ok() ? "" : to_string(entry.error().code));
    if (entry.ok()) {
      cie_ = entry->cie;
      fde_ = entry->fde;
    }
  }

  const CfiSection& section() const { return *section_; }
  const Cie& cie() const { return *cie_; }
  const Fde& fde() const { return fde_; }
  uint64_t cie_offset() const { return cie_offset_; }
  uint64_t cie_insns() const { return cie_insns_; }  // section offset of the CIE's first instruction
  uint64_t fde_offset() const { return fde_offset_; }
  uint64_t fde_insns() const { return fde_insns_; }  // section offset of the FDE's first instruction

  Result<UnwindRow> initial(const CfaLimits& limits = {}) const { return run_cie(*section_, *cie_, limits); }

  Rows run(const CfaLimits& limits = {}) const {
    Rows out{ok(), {}, {}};
    auto init = initial(limits);
    if (!init.ok()) {
      out.status = init.error();
      return out;
    }
    out.status = run_fde(*section_, *cie_, fde_, *init, [&](const UnwindRow& row, bool last) {
      out.rows.push_back(row);
      out.last.push_back(last);
      return true;
    }, limits);
    return out;
  }

 private:
  std::vector<uint8_t> data_;
  std::unique_ptr<CfiSection> section_;
  const Cie* cie_ = nullptr;
  Fde fde_;
  uint64_t cie_offset_ = 0, cie_insns_ = 0, fde_offset_ = 0, fde_insns_ = 0;
};

// The usual x86-64 CIE: CFA = rsp + 8, return address at CFA - 8.
std::vector<uint8_t> x86_64_cie() {
  SectionBuilder b;
  b.u8(cfa::kDefCfa).uleb(7).uleb(8).u8(cfa::kOffset | 16).uleb(1);
  return b.finish();
}

ProgramSpec spec_with(std::vector<uint8_t> fde_insns) {
  ProgramSpec s;
  s.cie_insns = x86_64_cie();
  s.fde_insns = std::move(fde_insns);
  return s;
}

SectionBuilder insns() { return SectionBuilder(); }

void expect_rule(const UnwindRow& row, uint16_t reg, RuleKind kind, int64_t value) {
  const RegisterRule* r = row.find(reg);
  ASSERT_NE(r, nullptr) << "no rule for r" << reg;
  EXPECT_EQ(r->kind, kind) << "r" << reg;
  EXPECT_EQ(r->value, value) << "r" << reg;
}

void expect_cfa(const UnwindRow& row, uint16_t reg, int64_t offset) {
  EXPECT_EQ(row.cfa.kind, CfaKind::kRegisterOffset);
  EXPECT_EQ(row.cfa.reg, reg);
  EXPECT_EQ(row.cfa.offset, offset);
}

void expect_range(const UnwindRow& row, uint64_t begin, uint64_t end) {
  EXPECT_EQ(row.pc_begin, begin);
  EXPECT_EQ(row.pc_end, end);
}

void expect_error(const Result<void>& r, ErrorCode code, uint64_t offset) {
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, code) << to_string(r.error().code);
  EXPECT_EQ(r.error().offset, offset);
}

// ---- the CIE and the shape of the table -----------------------------------

TEST(CfaProgramTest, CieInitialRow) {
  Program p(spec_with({}));
  auto init = p.initial();
  ASSERT_TRUE(init.ok());
  expect_cfa(*init, 7, 8);
  expect_rule(*init, 16, RuleKind::kOffset, -8);
  EXPECT_EQ(init->rule_count, 1);
  EXPECT_EQ(init->return_address_register, 16);
  EXPECT_FALSE(init->signal_frame);
  EXPECT_EQ(init->pc_begin, 0u);
  EXPECT_EQ(init->pc_end, 0u);
}

TEST(CfaProgramTest, EmptyCieLeavesTheCfaUndefined) {
  ProgramSpec s;
  Program p(s);
  auto init = p.initial();
  ASSERT_TRUE(init.ok());
  EXPECT_EQ(init->cfa.kind, CfaKind::kUndefined);
  EXPECT_EQ(init->rule_count, 0);
}

TEST(CfaProgramTest, FdeWithoutInstructionsIsOneRowCoveringTheFde) {
  Program p(spec_with({}));
  const Rows run = p.run();
  ASSERT_TRUE(run.status.ok());
  ASSERT_EQ(run.rows.size(), 1u);
  EXPECT_TRUE(run.last[0]);
  expect_range(run.rows[0], kPc, kPc + kRange);
  expect_cfa(run.rows[0], 7, 8);
  expect_rule(run.rows[0], 16, RuleKind::kOffset, -8);
}

TEST(CfaProgramTest, AdvanceLocSplitsRowsAndTheLastReachesTheEnd) {
  Program p(spec_with(insns()
                          .u8(cfa::kAdvanceLoc | 1).u8(cfa::kDefCfaOffset).uleb(16)
                          .u8(cfa::kAdvanceLoc | 8).u8(cfa::kDefCfaOffset).uleb(8)
                          .finish()));
  const Rows run = p.run();
  ASSERT_TRUE(run.status.ok());
  ASSERT_EQ(run.rows.size(), 3u);
  expect_range(run.rows[0], kPc, kPc + 1);
  expect_cfa(run.rows[0], 7, 8);
  expect_range(run.rows[1], kPc + 1, kPc + 9);
  expect_cfa(run.rows[1], 7, 16);
  expect_range(run.rows[2], kPc + 9, kPc + kRange);
  expect_cfa(run.rows[2], 7, 8);
  EXPECT_EQ(run.last, (std::vector<bool>{false, false, true}));
}

TEST(CfaProgramTest, AdvanceLocUsesTheCodeAlignmentFactor) {
  ProgramSpec s = spec_with(insns().u8(cfa::kAdvanceLoc | 3).u8(cfa::kNop).finish());
  s.code_alignment = 4;
  Program p(s);
  const Rows run = p.run();
  ASSERT_TRUE(run.status.ok());
  ASSERT_EQ(run.rows.size(), 2u);
  expect_range(run.rows[0], kPc, kPc + 12);
  expect_range(run.rows[1], kPc + 12, kPc + kRange);
}

TEST(CfaProgramTest, AdvanceLoc1) {
  ProgramSpec s = spec_with(insns().u8(cfa::kAdvanceLoc1).u8(0x30).u8(cfa::kDefCfaOffset).uleb(24).finish());
  s.code_alignment = 2;
  Program p(s);
  const Rows run = p.run();
  ASSERT_TRUE(run.status.ok());
  ASSERT_EQ(run.rows.size(), 2u);
  expect_range(run.rows[0], kPc, kPc + 0x60);
  expect_range(run.rows[1], kPc + 0x60, kPc + kRange);
  expect_cfa(run.rows[1], 7, 24);
}

TEST(CfaProgramTest, AdvanceLoc2) {
  ProgramSpec s = spec_with(insns().u8(cfa::kAdvanceLoc2).u16(0x0123).finish());
  s.pc_range = 0x1000;
  Program p(s);
  const Rows run = p.run();
  ASSERT_TRUE(run.status.ok());
  ASSERT_EQ(run.rows.size(), 2u);
  expect_range(run.rows[0], kPc, kPc + 0x123);
  expect_range(run.rows[1], kPc + 0x123, kPc + 0x1000);
}

TEST(CfaProgramTest, AdvanceLoc2BigEndian) {
  ProgramSpec s = spec_with(insns().u8(cfa::kAdvanceLoc2).u16(0x0123, Endian::kBig).finish());
  s.endian = Endian::kBig;
  s.pc_range = 0x1000;
  Program p(s);
  const Rows run = p.run();
  ASSERT_TRUE(run.status.ok());
  ASSERT_EQ(run.rows.size(), 2u);
  expect_range(run.rows[0], kPc, kPc + 0x123);
  expect_cfa(run.rows[1], 7, 8);
}

TEST(CfaProgramTest, AdvanceLoc4) {
  ProgramSpec s = spec_with(insns().u8(cfa::kAdvanceLoc4).u32(0x12345).finish());
  s.pc_range = 0x100000;
  s.code_alignment = 4;
  Program p(s);
  const Rows run = p.run();
  ASSERT_TRUE(run.status.ok());
  ASSERT_EQ(run.rows.size(), 2u);
  expect_range(run.rows[0], kPc, kPc + 4 * 0x12345);
}

TEST(CfaProgramTest, MipsAdvanceLoc8) {
  ProgramSpec s = spec_with(insns().u8(cfa::kMipsAdvanceLoc8).u64(0x10).u8(cfa::kDefCfaOffset).uleb(32).finish());
  Program p(s);
  const Rows run = p.run();
  ASSERT_TRUE(run.status.ok());
  ASSERT_EQ(run.rows.size(), 2u);
  expect_range(run.rows[0], kPc, kPc + 0x10);
  expect_range(run.rows[1], kPc + 0x10, kPc + kRange);
  expect_cfa(run.rows[1], 7, 32);
}

TEST(CfaProgramTest, SetLocUsesTheFdePointerEncoding) {
  // The CIE's 'R' is pcrel|sdata4, so set_loc's operand is relative to itself.
  CfiBuilder b2(CfiKind::kEhFrame, Endian::kLittle, kSectionAddress);
  CieSpec cs;
  cs.instructions = x86_64_cie();
  const auto cie2 = b2.cie(cs);
  const uint64_t fde_start = b2.b().size();
  // length(4) + CIE pointer(4) + pc_begin(4) + pc_range(4) + augmentation length(1) + opcode(1).
  const uint64_t field = fde_start + 4 + 4 + 4 + 4 + 1 + 1;
  const uint64_t target = kPc + 0x40;
  FdeSpec fs2;
  fs2.pc_begin = kPc;
  fs2.pc_range = kRange;
  fs2.instructions = insns()
                         .u8(cfa::kSetLoc)
                         .u32(static_cast<uint32_t>(target - (kSectionAddress + field)))
                         .u8(cfa::kDefCfaOffset).uleb(16)
                         .finish();
  const auto fde2 = b2.fde(cie2.start, fs2);
  ASSERT_EQ(b2.b().offset_of(fde2.instructions) + 1, field);
  const auto data = b2.finish();
  CfiSection section(data, b2.info());
  const Cie* c = nullptr;
  auto f = section.fde_at(fde_start, &c);
  ASSERT_TRUE(f.ok());
  auto init = run_cie(section, *c);
  ASSERT_TRUE(init.ok());
  std::vector<UnwindRow> rows;
  ASSERT_TRUE(run_fde(section, *c, *f, *init, [&](const UnwindRow& r, bool) {
                rows.push_back(r);
                return true;
              }).ok());
  ASSERT_EQ(rows.size(), 2u);
  expect_range(rows[0], kPc, kPc + 0x40);
  expect_cfa(rows[0], 7, 8);
  expect_range(rows[1], kPc + 0x40, kPc + kRange);
  expect_cfa(rows[1], 7, 16);
}

TEST(CfaProgramTest, ZeroAdvanceGivesAnEmptyRow) {
  Program p(spec_with(insns()
                          .u8(cfa::kAdvanceLoc | 0).u8(cfa::kDefCfaOffset).uleb(16)
                          .u8(cfa::kAdvanceLoc1).u8(0)
                          .finish()));
  const Rows run = p.run();
  ASSERT_TRUE(run.status.ok());
  ASSERT_EQ(run.rows.size(), 3u);
  expect_range(run.rows[0], kPc, kPc);  // empty: before def_cfa_offset
  expect_cfa(run.rows[0], 7, 8);
  expect_range(run.rows[1], kPc, kPc);  // empty again
  expect_cfa(run.rows[1], 7, 16);
  expect_range(run.rows[2], kPc, kPc + kRange);
  expect_cfa(run.rows[2], 7, 16);
}

// ---- register rules ----------------------------------------------------------

TEST(CfaProgramTest, Offset) {
  Program p(spec_with(insns().u8(cfa::kOffset | 6).uleb(2).finish()));
  const Rows run = p.run();
  ASSERT_TRUE(run.status.ok());
  expect_rule(run.rows.back(), 6, RuleKind::kOffset, -16);
  expect_rule(run.rows.back(), 16, RuleKind::kOffset, -8);
  EXPECT_EQ(run.rows.back().rule_count, 2);
}

TEST(CfaProgramTest, OffsetExtended) {
  Program p(spec_with(insns().u8(cfa::kOffsetExtended).uleb(200).uleb(3).finish()));
  const Rows run = p.run();
  ASSERT_TRUE(run.status.ok());
  expect_rule(run.rows.back(), 200, RuleKind::kOffset, -24);
}

TEST(CfaProgramTest, OffsetExtendedSf) {
  Program p(spec_with(insns().u8(cfa::kOffsetExtendedSf).uleb(3).sleb(-2).u8(cfa::kOffsetExtendedSf).uleb(4).sleb(2).finish()));
  const Rows run = p.run();
  ASSERT_TRUE(run.status.ok());
  expect_rule(run.rows.back(), 3, RuleKind::kOffset, 16);
  expect_rule(run.rows.back(), 4, RuleKind::kOffset, -16);
}

TEST(CfaProgramTest, GnuNegativeOffsetExtended) {
  Program p(spec_with(insns().u8(cfa::kGnuNegativeOffsetExtended).uleb(3).uleb(2).finish()));
  const Rows run = p.run();
  ASSERT_TRUE(run.status.ok());
  expect_rule(run.rows.back(), 3, RuleKind::kOffset, 16);  // -(2 * -8)
}

TEST(CfaProgramTest, ValOffset) {
  Program p(spec_with(insns().u8(cfa::kValOffset).uleb(7).uleb(2).finish()));
  const Rows run = p.run();
  ASSERT_TRUE(run.status.ok());
  expect_rule(run.rows.back(), 7, RuleKind::kValOffset, -16);
}

TEST(CfaProgramTest, ValOffsetSf) {
  Program p(spec_with(insns().u8(cfa::kValOffsetSf).uleb(7).sleb(-1).finish()));
  const Rows run = p.run();
  ASSERT_TRUE(run.status.ok());
  expect_rule(run.rows.back(), 7, RuleKind::kValOffset, 8);
}

TEST(CfaProgramTest, PositiveDataAlignmentFactor) {
  ProgramSpec s = spec_with(insns().u8(cfa::kOffset | 5).uleb(3).u8(cfa::kDefCfaSf).uleb(1).sleb(-2).finish());
  s.data_alignment = 4;
  Program p(s);
  const Rows run = p.run();
  ASSERT_TRUE(run.status.ok());
  expect_rule(run.rows.back(), 5, RuleKind::kOffset, 12);
  expect_cfa(run.rows.back(), 1, -8);
  // The CIE's own instructions are factored too: offset r16, 1 -> +4.
  expect_rule(run.rows.back(), 16, RuleKind::kOffset, 4);
}

TEST(CfaProgramTest, Undefined) {
  Program p(spec_with(insns().u8(cfa::kUndefined).uleb(16).finish()));
  const Rows run = p.run();
  ASSERT_TRUE(run.status.ok());
  expect_rule(run.rows.back(), 16, RuleKind::kUndefined, 0);
}

TEST(CfaProgramTest, SameValue) {
  Program p(spec_with(insns().u8(cfa::kSameValue).uleb(3).finish()));
  const Rows run = p.run();
  ASSERT_TRUE(run.status.ok());
  expect_rule(run.rows.back(), 3, RuleKind::kSameValue, 0);
}

TEST(CfaProgramTest, Register) {
  Program p(spec_with(insns().u8(cfa::kRegister).uleb(16).uleb(30).finish()));
  const Rows run = p.run();
  ASSERT_TRUE(run.status.ok());
  expect_rule(run.rows.back(), 16, RuleKind::kRegister, 30);
}

TEST(CfaProgramTest, RulesStaySortedByRegister) {
  Program p(spec_with(insns()
                          .u8(cfa::kOffset | 12).uleb(2)
                          .u8(cfa::kOffset | 3).uleb(3)
                          .u8(cfa::kSameValue).uleb(40)
                          .u8(cfa::kOffset | 12).uleb(4)  // replaces
                          .finish()));
  const Rows run = p.run();
  ASSERT_TRUE(run.status.ok());
  const UnwindRow& row = run.rows.back();
  ASSERT_EQ(row.rule_count, 4);
  EXPECT_EQ(row.rules[0].reg, 3);
  EXPECT_EQ(row.rules[1].reg, 12);
  EXPECT_EQ(row.rules[1].value, -32);
  EXPECT_EQ(row.rules[2].reg, 16);
  EXPECT_EQ(row.rules[3].reg, 40);
}

TEST(CfaProgramTest, RestoreReturnsToTheCieRule) {
  Program p(spec_with(insns()
                          .u8(cfa::kOffset | 16).uleb(4)
                          .u8(cfa::kAdvanceLoc | 2)
                          .u8(cfa::kRestore | 16)
                          .finish()));
  const Rows run = p.run();
  ASSERT_TRUE(run.status.ok());
  ASSERT_EQ(run.rows.size(), 2u);
  expect_rule(run.rows[0], 16, RuleKind::kOffset, -32);
  expect_rule(run.rows[1], 16, RuleKind::kOffset, -8);
}

TEST(CfaProgramTest, RestoreOfARegisterTheCieDoesNotNameMakesItUnspecified) {
  Program p(spec_with(insns()
                          .u8(cfa::kOffset | 6).uleb(2)
                          .u8(cfa::kAdvanceLoc | 2)
                          .u8(cfa::kRestore | 6)
                          .finish()));
  const Rows run = p.run();
  ASSERT_TRUE(run.status.ok());
  ASSERT_EQ(run.rows.size(), 2u);
  expect_rule(run.rows[0], 6, RuleKind::kOffset, -16);
  EXPECT_EQ(run.rows[1].find(6), nullptr);
  EXPECT_EQ(run.rows[1].rule_count, 1);
}

TEST(CfaProgramTest, RestoreExtended) {
  Program p(spec_with(insns()
                          .u8(cfa::kUndefined).uleb(16)
                          .u8(cfa::kSameValue).uleb(100)
                          .u8(cfa::kAdvanceLoc | 2)
                          .u8(cfa::kRestoreExtended).uleb(16)
                          .u8(cfa::kRestoreExtended).uleb(100)
                          .finish()));
  const Rows run = p.run();
  ASSERT_TRUE(run.status.ok());
  ASSERT_EQ(run.rows.size(), 2u);
  expect_rule(run.rows[0], 16, RuleKind::kUndefined, 0);
  expect_rule(run.rows[0], 100, RuleKind::kSameValue, 0);
  expect_rule(run.rows[1], 16, RuleKind::kOffset, -8);
  EXPECT_EQ(run.rows[1].find(100), nullptr);
}

TEST(CfaProgramTest, RestoreInsideTheCieMakesTheRegisterUnspecified) {
  ProgramSpec s;
  s.cie_insns = insns().u8(cfa::kDefCfa).uleb(7).uleb(8).u8(cfa::kOffset | 16).uleb(1).u8(cfa::kRestore | 16).finish();
  Program p(s);
  auto init = p.initial();
  ASSERT_TRUE(init.ok());
  EXPECT_EQ(init->find(16), nullptr);
  EXPECT_EQ(init->rule_count, 0);
}

// ---- remember / restore state ----------------------------------------------

TEST(CfaProgramTest, RememberAndRestoreStateNested) {
  Program p(spec_with(insns()
                          .u8(cfa::kDefCfaOffset).uleb(16).u8(cfa::kOffset | 6).uleb(2)
                          .u8(cfa::kRememberState)                                   // A: +16, r6
                          .u8(cfa::kAdvanceLoc | 1)
                          .u8(cfa::kDefCfaOffset).uleb(32).u8(cfa::kOffset | 3).uleb(3)
                          .u8(cfa::kRememberState)                                   // B: +32, r3, r6
                          .u8(cfa::kAdvanceLoc | 1)
                          .u8(cfa::kDefCfa).uleb(6).uleb(16).u8(cfa::kUndefined).uleb(6)
                          .u8(cfa::kAdvanceLoc | 1)
                          .u8(cfa::kRestoreState)                                    // back to B
                          .u8(cfa::kAdvanceLoc | 1)
                          .u8(cfa::kRestoreState)                                    // back to A
                          .finish()));
  const Rows run = p.run();
  ASSERT_TRUE(run.status.ok());
  ASSERT_EQ(run.rows.size(), 5u);
  expect_cfa(run.rows[0], 7, 16);
  expect_cfa(run.rows[1], 7, 32);
  expect_cfa(run.rows[2], 6, 16);
  expect_rule(run.rows[2], 6, RuleKind::kUndefined, 0);
  // Restored to B.
  expect_range(run.rows[3], kPc + 3, kPc + 4);
  expect_cfa(run.rows[3], 7, 32);
  expect_rule(run.rows[3], 6, RuleKind::kOffset, -16);
  expect_rule(run.rows[3], 3, RuleKind::kOffset, -24);
  // Restored to A: r3 is unspecified again. The location is not restored.
  expect_range(run.rows[4], kPc + 4, kPc + kRange);
  expect_cfa(run.rows[4], 7, 16);
  EXPECT_EQ(run.rows[4].find(3), nullptr);
  expect_rule(run.rows[4], 6, RuleKind::kOffset, -16);
}

TEST(CfaProgramTest, RestoreStateWithoutRemember) {
  Program p(spec_with(insns()
                          .u8(cfa::kAdvanceLoc | 4)
                          .u8(cfa::kNop)
                          .u8(cfa::kRestoreState)
                          .finish()));
  const Rows run = p.run();
  expect_error(run.status, ErrorCode::kRestoreWithoutRemember, p.fde_insns() + 2);
  ASSERT_EQ(run.rows.size(), 1u);  // the row before the error was delivered
  expect_range(run.rows[0], kPc, kPc + 4);
}

TEST(CfaProgramTest, RestoreStateMoreOftenThanRemember) {
  Program p(spec_with(insns().u8(cfa::kRememberState).u8(cfa::kRestoreState).u8(cfa::kRestoreState).finish()));
  expect_error(p.run().status, ErrorCode::kRestoreWithoutRemember, p.fde_insns() + 2);
}

TEST(CfaProgramTest, RememberStackOverflowAtTheDefaultDepth) {
  SectionBuilder b;
  for (int i = 0; i < CfaLimits::kMaxRememberDepth; ++i) b.u8(cfa::kRememberState);
  for (int i = 0; i < CfaLimits::kMaxRememberDepth; ++i) b.u8(cfa::kRestoreState);
  Program ok_depth(spec_with(b.finish()));
  EXPECT_TRUE(ok_depth.run().status.ok());

  SectionBuilder over;
  for (int i = 0; i <= CfaLimits::kMaxRememberDepth; ++i) over.u8(cfa::kRememberState);
  Program p(spec_with(over.finish()));
  expect_error(p.run().status, ErrorCode::kRememberStackOverflow,
               p.fde_insns() + CfaLimits::kMaxRememberDepth);
}

TEST(CfaProgramTest, RememberStackOverflowWithASmallerLimit) {
  Program p(spec_with(insns().u8(cfa::kRememberState).u8(cfa::kNop).u8(cfa::kRememberState)
                          .u8(cfa::kRememberState).finish()));
  CfaLimits limits;
  limits.max_remember_depth = 2;
  expect_error(p.run(limits).status, ErrorCode::kRememberStackOverflow, p.fde_insns() + 3);
  // A limit above the storage is clamped to it.
  SectionBuilder over;
  for (int i = 0; i <= CfaLimits::kMaxRememberDepth; ++i) over.u8(cfa::kRememberState);
  Program q(spec_with(over.finish()));
  limits.max_remember_depth = 1000;
  expect_error(q.run(limits).status, ErrorCode::kRememberStackOverflow,
               q.fde_insns() + CfaLimits::kMaxRememberDepth);
}

// ---- the CFA ----------------------------------------------------------------

TEST(CfaProgramTest, DefCfa) {
  Program p(spec_with(insns().u8(cfa::kDefCfa).uleb(6).uleb(0x90).finish()));
  const Rows run = p.run();
  ASSERT_TRUE(run.status.ok());
  expect_cfa(run.rows.back(), 6, 0x90);  // not factored
}

TEST(CfaProgramTest, DefCfaRegisterKeepsTheOffset) {
  Program p(spec_with(insns().u8(cfa::kDefCfaOffset).uleb(24).u8(cfa::kDefCfaRegister).uleb(6).finish()));
  const Rows run = p.run();
  ASSERT_TRUE(run.status.ok());
  expect_cfa(run.rows.back(), 6, 24);
}

TEST(CfaProgramTest, DefCfaOffsetKeepsTheRegister) {
  Program p(spec_with(insns().u8(cfa::kDefCfaOffset).uleb(0x1000).finish()));
  const Rows run = p.run();
  ASSERT_TRUE(run.status.ok());
  expect_cfa(run.rows.back(), 7, 0x1000);
}

TEST(CfaProgramTest, DefCfaSfIsFactored) {
  Program p(spec_with(insns().u8(cfa::kDefCfaSf).uleb(6).sleb(-2).finish()));
  const Rows run = p.run();
  ASSERT_TRUE(run.status.ok());
  expect_cfa(run.rows.back(), 6, 16);
}

TEST(CfaProgramTest, DefCfaOffsetSfIsFactored) {
  Program p(spec_with(insns().u8(cfa::kDefCfaOffsetSf).sleb(-3).finish()));
  const Rows run = p.run();
  ASSERT_TRUE(run.status.ok());
  expect_cfa(run.rows.back(), 7, 24);
}

TEST(CfaProgramTest, DefCfaOffsetOnAnEmptyCieMakesARegisterRule) {
  ProgramSpec s;
  s.fde_insns = insns().u8(cfa::kDefCfaOffset).uleb(8).finish();
  Program p(s);
  const Rows run = p.run();
  ASSERT_TRUE(run.status.ok());
  expect_cfa(run.rows.back(), 0, 8);
}

TEST(CfaProgramTest, DefCfaExpression) {
  Program p(spec_with(insns()
                          .u8(cfa::kAdvanceLoc | 1)
                          .u8(cfa::kDefCfaExpression).uleb(3).u8(0x77).u8(0x08).u8(0x06)
                          .finish()));
  const Rows run = p.run();
  ASSERT_TRUE(run.status.ok());
  ASSERT_EQ(run.rows.size(), 2u);
  const CfaRule& c = run.rows[1].cfa;
  EXPECT_EQ(c.kind, CfaKind::kExpression);
  ASSERT_EQ(c.expression.size(), 3u);
  EXPECT_EQ(c.expression[0], 0x77);
  EXPECT_EQ(c.expression[1], 0x08);
  EXPECT_EQ(c.expression[2], 0x06);
  EXPECT_EQ(c.expression_offset, p.fde_insns() + 3);
  // The expression points into the section itself.
  EXPECT_EQ(c.expression.data(), p.section().data().data() + p.fde_insns() + 3);
  expect_cfa(run.rows[0], 7, 8);
}

TEST(CfaProgramTest, DefCfaOffsetKeepsAnExpressionAndDefCfaRegisterReplacesIt) {
  Program p(spec_with(insns()
                          .u8(cfa::kDefCfaExpression).uleb(1).u8(0x57)
                          .u8(cfa::kDefCfaOffset).uleb(40)
                          .u8(cfa::kAdvanceLoc | 1)
                          .u8(cfa::kDefCfaRegister).uleb(6)
                          .finish()));
  const Rows run = p.run();
  ASSERT_TRUE(run.status.ok());
  ASSERT_EQ(run.rows.size(), 2u);
  EXPECT_EQ(run.rows[0].cfa.kind, CfaKind::kExpression);
  EXPECT_EQ(run.rows[0].cfa.expression.size(), 1u);
  expect_cfa(run.rows[1], 6, 40);
}

TEST(CfaProgramTest, Expression) {
  Program p(spec_with(insns().u8(cfa::kExpression).uleb(6).uleb(2).u8(0x70).u8(0x10).finish()));
  const Rows run = p.run();
  ASSERT_TRUE(run.status.ok());
  const RegisterRule* r = run.rows.back().find(6);
  ASSERT_NE(r, nullptr);
  EXPECT_EQ(r->kind, RuleKind::kExpression);
  ASSERT_EQ(r->expression().size(), 2u);
  EXPECT_EQ(r->expression()[0], 0x70);
  EXPECT_EQ(r->expression()[1], 0x10);
  EXPECT_EQ(r->expression_offset, p.fde_insns() + 3);
}

TEST(CfaProgramTest, ValExpression) {
  Program p(spec_with(insns().u8(cfa::kValExpression).uleb(7).uleb(3).u8(0x77).u8(0x20).u8(0x06).finish()));
  const Rows run = p.run();
  ASSERT_TRUE(run.status.ok());
  const RegisterRule* r = run.rows.back().find(7);
  ASSERT_NE(r, nullptr);
  EXPECT_EQ(r->kind, RuleKind::kValExpression);
  ASSERT_EQ(r->expression().size(), 3u);
  EXPECT_EQ(r->expression()[1], 0x20);
  EXPECT_EQ(r->expression_offset, p.fde_insns() + 3);
}

// ---- the rest ------------------------------------------------------------------

TEST(CfaProgramTest, NopChangesNothing) {
  Program p(spec_with(insns().u8(cfa::kNop).u8(cfa::kNop).u8(cfa::kNop).finish()));
  const Rows run = p.run();
  ASSERT_TRUE(run.status.ok());
  ASSERT_EQ(run.rows.size(), 1u);
  auto init = p.initial();
  EXPECT_TRUE(run.rows[0].same_rules(*init));
}

// 0x2d is DW_CFA_AARCH64_negate_ra_state on AArch64 and
// DW_CFA_GNU_window_save on SPARC: its meaning comes from the file's machine.
TEST(CfaProgramTest, Opcode2dTogglesNegateRaStateOnAarch64Only) {
  ProgramSpec spec = spec_with(insns()
                                   .u8(cfa::kGnuWindowSave)
                                   .u8(cfa::kAdvanceLoc | 4)
                                   .u8(cfa::kGnuWindowSave)
                                   .finish());
  spec.arch = arch::arch_for(usual_machine_key(183));
  Program aarch64(spec);
  const Rows run = aarch64.run();
  ASSERT_TRUE(run.status.ok());
  ASSERT_EQ(run.rows.size(), 2u);
  EXPECT_TRUE(run.rows[0].negate_ra_state);
  EXPECT_FALSE(run.rows[1].negate_ra_state);
  for (const arch::ArchInfo* other : {arch::arch_for(usual_machine_key(62)), arch::arch_for(usual_machine_key(40)),
                                      static_cast<const arch::ArchInfo*>(nullptr)}) {
    SCOPED_TRACE(other ? other->name : "unknown machine");
    spec.arch = other;
    Program p(spec);
    const Rows r = p.run();
    ASSERT_FALSE(r.status.ok());
    EXPECT_EQ(r.status.error().code, ErrorCode::kUnknownCfaOpcode);
  }
}

// On SPARC (sparc64, 32-bit SPARC) 0x2d says `save` has run, in every row
// from there on: a flag, the rules unchanged (as readelf shows it).
TEST(CfaProgramTest, Opcode2dIsTheWindowSaveOnSparc) {
  ProgramSpec spec = spec_with(insns()
                                   .u8(cfa::kAdvanceLoc | 4)
                                   .u8(cfa::kGnuWindowSave)
                                   .u8(cfa::kAdvanceLoc | 4)
                                   .u8(cfa::kGnuWindowSave)
                                   .finish());
  for (const MachineKey& key : {MachineKey{kEmSparcv9, true, Endian::kBig, 0},
                                MachineKey{kEmSparc, false, Endian::kBig, 0}}) {
    spec.arch = arch::arch_for(key);
    ASSERT_NE(spec.arch, nullptr) << machine_name(key);
    Program p(spec);
    const Rows run = p.run();
    ASSERT_TRUE(run.status.ok());
    ASSERT_EQ(run.rows.size(), 3u);
    EXPECT_FALSE(run.rows[0].window_saved);
    EXPECT_TRUE(run.rows[1].window_saved);
    EXPECT_TRUE(run.rows[2].window_saved);
    EXPECT_FALSE(run.rows[1].negate_ra_state);
    EXPECT_TRUE(run.rows[1].same_rules(run.rows[0]));
  }
}

TEST(CfaProgramTest, GnuArgsSize) {
  Program p(spec_with(insns()
                          .u8(cfa::kGnuArgsSize).uleb(16)
                          .u8(cfa::kAdvanceLoc | 4)
                          .u8(cfa::kGnuArgsSize).uleb(0)
                          .finish()));
  const Rows run = p.run();
  ASSERT_TRUE(run.status.ok());
  ASSERT_EQ(run.rows.size(), 2u);
  EXPECT_EQ(run.rows[0].args_size, 16u);
  EXPECT_EQ(run.rows[1].args_size, 0u);
}

TEST(CfaProgramTest, SignalFrameCie) {
  ProgramSpec s = spec_with({});
  s.augmentation = "zRS";
  Program p(s);
  EXPECT_TRUE(p.cie().signal_frame);
  const Rows run = p.run();
  ASSERT_TRUE(run.status.ok());
  EXPECT_TRUE(run.rows[0].signal_frame);
}

// ---- errors ------------------------------------------------------------------------

TEST(CfaProgramTest, UnknownOpcodeInTheFde) {
  Program p(spec_with(insns().u8(cfa::kAdvanceLoc | 1).u8(cfa::kNop).u8(0x3c).u8(cfa::kNop).finish()));
  const Rows run = p.run();
  expect_error(run.status, ErrorCode::kUnknownCfaOpcode, p.fde_insns() + 2);
  EXPECT_EQ(run.rows.size(), 1u);
}

TEST(CfaProgramTest, UnknownOpcodeInTheCie) {
  ProgramSpec s;
  s.cie_insns = insns().u8(cfa::kDefCfa).uleb(7).uleb(8).u8(0x20).finish();
  Program p(s);
  auto init = p.initial();
  ASSERT_FALSE(init.ok());
  EXPECT_EQ(init.error().code, ErrorCode::kUnknownCfaOpcode);
  EXPECT_EQ(init.error().offset, p.cie_insns() + 3);
}

TEST(CfaProgramTest, TruncatedInstructionInTheFde) {
  Program p(spec_with(insns().u8(cfa::kNop).u8(cfa::kDefCfa).uleb(7).finish()));
  expect_error(p.run().status, ErrorCode::kTruncated, p.fde_insns() + 3);
}

TEST(CfaProgramTest, RegisterNumberTooLarge) {
  Program p(spec_with(insns().u8(cfa::kNop).u8(cfa::kOffsetExtended).uleb(0x10000).uleb(1).finish()));
  expect_error(p.run().status, ErrorCode::kBadRegister, p.fde_insns() + 1);
  Program q(spec_with(insns().u8(cfa::kRegister).uleb(3).uleb(0x10000).finish()));
  expect_error(q.run().status, ErrorCode::kBadRegister, q.fde_insns());
  Program r(spec_with(insns().u8(cfa::kDefCfa).uleb(0x12345).uleb(0).finish()));
  expect_error(r.run().status, ErrorCode::kBadRegister, r.fde_insns());
  // 0xffff itself is fine.
  Program s(spec_with(insns().u8(cfa::kSameValue).uleb(0xffff).finish()));
  ASSERT_TRUE(s.run().status.ok());
}

TEST(CfaProgramTest, TooManyRulesInOneRow) {
  SectionBuilder b;
  // The CIE already has a rule for r16: 31 more fill the row, the 32nd overflows.
  std::vector<uint64_t> offsets;
  uint16_t reg = 100;
  for (int i = 0; i < UnwindRow::kMaxRules; ++i) {
    offsets.push_back(b.size());
    b.u8(cfa::kSameValue).uleb(reg++);
  }
  Program p(spec_with(b.finish()));
  expect_error(p.run().status, ErrorCode::kTooManyRules, p.fde_insns() + offsets.back());
  // Replacing an existing rule in a full row is fine.
  SectionBuilder full;
  reg = 100;
  for (int i = 0; i < UnwindRow::kMaxRules - 1; ++i) full.u8(cfa::kSameValue).uleb(reg++);
  full.u8(cfa::kUndefined).uleb(100).u8(cfa::kUndefined).uleb(16);
  Program q(spec_with(full.finish()));
  const Rows run = q.run();
  ASSERT_TRUE(run.status.ok());
  EXPECT_EQ(run.rows.back().rule_count, UnwindRow::kMaxRules);
  expect_rule(run.rows.back(), 100, RuleKind::kUndefined, 0);
}

TEST(CfaProgramTest, ReturnAddressRegisterTooLarge) {
  ProgramSpec s;
  s.version = 3;
  s.return_address_register = 0x10000;
  Program p(s);
  auto init = p.initial();
  ASSERT_FALSE(init.ok());
  EXPECT_EQ(init.error().code, ErrorCode::kBadRegister);
  EXPECT_EQ(init.error().offset, p.cie_offset());
}

TEST(CfaProgramTest, RunFdeStopsWhenTheCallbackSaysSo) {
  Program p(spec_with(insns()
                          .u8(cfa::kAdvanceLoc | 1).u8(cfa::kAdvanceLoc | 1)
                          .u8(cfa::kAdvanceLoc | 1).u8(0x3f)  // never reached
                          .finish()));
  auto init = p.initial();
  ASSERT_TRUE(init.ok());
  int calls = 0;
  auto status = run_fde(p.section(), p.cie(), p.fde(), *init, [&](const UnwindRow&, bool) {
    return ++calls < 2;
  });
  EXPECT_TRUE(status.ok());
  EXPECT_EQ(calls, 2);
}

// ---- row_for_pc --------------------------------------------------------------------

TEST(CfaProgramTest, RowForPc) {
  Program p(spec_with(insns()
                          .u8(cfa::kAdvanceLoc | 1).u8(cfa::kDefCfaOffset).uleb(16)
                          .u8(cfa::kAdvanceLoc | 0).u8(cfa::kOffset | 6).uleb(2)  // empty row at +1
                          .u8(cfa::kAdvanceLoc | 8).u8(cfa::kDefCfaOffset).uleb(8)
                          .finish()));
  auto at = [&](uint64_t pc) { return row_for_pc(p.section(), p.cie(), p.fde(), pc); };
  auto r0 = at(kPc);
  ASSERT_TRUE(r0.ok());
  expect_range(*r0, kPc, kPc + 1);
  expect_cfa(*r0, 7, 8);
  auto r1 = at(kPc + 1);
  ASSERT_TRUE(r1.ok());
  expect_range(*r1, kPc + 1, kPc + 9);
  expect_cfa(*r1, 7, 16);
  expect_rule(*r1, 6, RuleKind::kOffset, -16);
  auto r8 = at(kPc + 8);
  ASSERT_TRUE(r8.ok());
  expect_range(*r8, kPc + 1, kPc + 9);
  auto r9 = at(kPc + 9);
  ASSERT_TRUE(r9.ok());
  expect_range(*r9, kPc + 9, kPc + kRange);
  expect_cfa(*r9, 7, 8);
  auto last = at(kPc + kRange - 1);
  ASSERT_TRUE(last.ok());
  expect_range(*last, kPc + 9, kPc + kRange);
  // Outside the FDE.
  for (uint64_t pc : {kPc - 1, kPc + kRange, uint64_t{0}}) {
    auto r = at(pc);
    ASSERT_FALSE(r.ok()) << pc;
    EXPECT_EQ(r.error().code, ErrorCode::kNotFound);
    EXPECT_EQ(r.error().offset, p.fde_offset());
  }
}

TEST(CfaProgramTest, RowForPcReportsProgramErrors) {
  Program p(spec_with(insns().u8(cfa::kAdvanceLoc | 1).u8(cfa::kRestoreState).finish()));
  auto r = row_for_pc(p.section(), p.cie(), p.fde(), kPc + 5);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, ErrorCode::kRestoreWithoutRemember);
  EXPECT_EQ(r.error().offset, p.fde_insns() + 1);
  // A PC in a row before the error is found without running into it.
  auto early = row_for_pc(p.section(), p.cie(), p.fde(), kPc);
  ASSERT_TRUE(early.ok());
  expect_range(*early, kPc, kPc + 1);
}

}  // namespace
}  // namespace framewalk::dwarf

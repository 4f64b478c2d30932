// The CFI -> SFrame conversion on hand-written x86-64 CFI, one test per case:
// DEFAULT FDEs, FLEX for DRAP and register-held RA/FP, PCMASK for the PLT
// expression, RA undefined, signal frames, and each reason for leaving a
// function out (per version). Every converted function is also written, read
// back with the SFrame reader and compared with the CFI rows by the checker.
#include "sframe/sframe_generate.hpp"

#include <gtest/gtest.h>

#include "sframe/check_cfi_builder.hpp"
#include "sframe/sframe_check.hpp"
#include "sframe/sframe_rows.hpp"

namespace framewalk::sframe {
namespace {

using namespace test;

constexpr uint64_t kSframeAddress = 0x800000;

Conversion convert(const CfiFixture& cfi, uint8_t version = 3) {
  GenerateOptions o;
  o.version = version;
  o.section_address = kSframeAddress;
  return convert_cfi(cfi.section(), o);
}

Rule cfa_reg(uint16_t reg, int64_t off, bool deref = false) { return Rule{Rule::Kind::kRegister, deref, reg, off, 0}; }
Rule at_cfa(int64_t off) { return Rule{Rule::Kind::kCfa, true, 0, off, 0}; }
Rule in_reg(uint16_t reg, int64_t off = 0, bool deref = false) { return Rule{Rule::Kind::kRegister, deref, reg, off, 0}; }

FrameRules rules(Rule cfa, Rule fp = {}, Rule ra = at_cfa(-8)) {
  FrameRules r;
  r.cfa = cfa;
  r.ra = ra;
  r.fp = fp;
  return r;
}

// Writes the conversion, reads it back and checks it against the CFI: the
// round trip every conversion test ends with.
CheckReport round_trip(const CfiFixture& cfi, const Conversion& conv, uint8_t version = 3) {
  static std::deque<std::vector<uint8_t>> kept;
  const WriterOptions wo = writer_options_for(Abi::kAmd64Little, version, kSframeAddress);
  WrittenSection w = write_section(wo, conv.fdes);
  EXPECT_TRUE(w.problem.ok()) << to_string(w.problem.what);
  const auto& bytes = kept.emplace_back(std::move(w.bytes));
  auto section = Section::parse(Bytes(bytes), kSframeAddress);
  EXPECT_TRUE(section.ok()) << (section.ok() ? "" : to_string(section.error().code));
  if (!section.ok()) return {};
  EXPECT_EQ(section->fdes().size(), conv.fdes.size());
  return check_rows(cfi.section(), *section);
}

void expect_clean(const CheckReport& r) {
  EXPECT_EQ(r.disagreements, 0u);
  EXPECT_EQ(r.sframe_only_bytes, 0u);
  EXPECT_EQ(r.sframe_errors + r.cfi_errors, 0u);
  for (const RowDifference& d : r.differences) ADD_FAILURE() << "differ at 0x" << std::hex << d.begin << ": " << check_items_text(d.items);
}

// push %rbp; mov %rsp,%rbp; ...; pop %rbp; ret
Insns frame_pointer_function() {
  return cfa::advance(1) + cfa::def_cfa_offset(16) + cfa::offset(kRbp, -16) + cfa::advance(3) +
         cfa::def_cfa_register(kRbp) + cfa::advance(10) + cfa::def_cfa(kRsp, 8);
}

TEST(GenerateConvert, DefaultFdeForAFramePointerFunction) {
  CfiFixture cfi({{0x401000, 0x20, frame_pointer_function()}});
  const Conversion c = convert(cfi);
  ASSERT_EQ(c.fdes.size(), 1u);
  const FdeDesc& f = c.fdes[0];
  EXPECT_EQ(f.start, 0x401000u);
  EXPECT_EQ(f.size, 0x20u);
  EXPECT_EQ(f.fde_type, FdeType::kDefault);
  EXPECT_EQ(f.pc_type, PcType::kInc);
  ASSERT_EQ(f.fres.size(), 4u);
  EXPECT_EQ(f.fres[0].start, 0u);
  EXPECT_EQ(f.fres[0].rules, rules(cfa_reg(kRsp, 8)));
  EXPECT_EQ(f.fres[1].start, 1u);
  EXPECT_EQ(f.fres[1].rules, rules(cfa_reg(kRsp, 16), at_cfa(-16)));
  EXPECT_EQ(f.fres[2].start, 4u);
  EXPECT_EQ(f.fres[2].rules, rules(cfa_reg(kRbp, 16), at_cfa(-16)));
  EXPECT_EQ(f.fres[3].start, 14u);
  EXPECT_EQ(f.fres[3].rules, rules(cfa_reg(kRsp, 8), at_cfa(-16)));
  EXPECT_EQ(c.stats.represented_fdes, 1u);
  EXPECT_EQ(c.stats.represented_bytes, 0x20u);
  EXPECT_TRUE(c.stats.skipped.empty());
  for (uint8_t v : {1, 2, 3}) expect_clean(round_trip(cfi, convert(cfi, v), v));
}

TEST(GenerateConvert, RowsThatDifferOnlyInOtherRegistersMerge) {
  // rbx saved at +2 changes the CFI row but not what SFrame tracks.
  CfiFixture cfi({{0x401000, 0x10, cfa::advance(1) + cfa::def_cfa_offset(16) + cfa::advance(1) + cfa::offset(kRbx, -16)}});
  const Conversion c = convert(cfi);
  ASSERT_EQ(c.fdes.size(), 1u);
  EXPECT_EQ(c.fdes[0].fres.size(), 2u);
  expect_clean(round_trip(cfi, c));
}

// gcc's DRAP prologue and epilogue (stack realignment):
//   lea 0x8(%rsp),%r10; and $-16,%rsp; pushq -8(%r10); push %rbp; mov %rsp,%rbp; push %r10
//   ... lea -8(%rbp),%rsp? ; pop %r10; pop %rbp; lea -8(%r10),%rsp; ret
Insns drap_function() {
  return cfa::advance(5) + cfa::def_cfa(kR10, 0) + cfa::advance(8) + cfa::expression(kRbp, op::breg(kRbp, 0)) +
         cfa::advance(4) + cfa::def_cfa_expression(op::breg(kRbp, -8) + op::deref()) + cfa::advance(20) +
         cfa::def_cfa(kR10, 0) + cfa::restore(kRbp) + cfa::advance(4) + cfa::def_cfa(kRsp, 8);
}

TEST(GenerateConvert, FlexFdeForDrap) {
  CfiFixture cfi({{0x402000, 0x30, drap_function()}});
  const Conversion c = convert(cfi);
  ASSERT_EQ(c.fdes.size(), 1u);
  const FdeDesc& f = c.fdes[0];
  EXPECT_EQ(f.fde_type, FdeType::kFlex);
  ASSERT_EQ(f.fres.size(), 6u);
  EXPECT_EQ(f.fres[0].rules, rules(cfa_reg(kRsp, 8)));
  EXPECT_EQ(f.fres[1].rules, rules(cfa_reg(kR10, 0)));
  EXPECT_EQ(f.fres[2].rules, rules(cfa_reg(kR10, 0), in_reg(kRbp, 0, true)));
  EXPECT_EQ(f.fres[3].start, 17u);
  EXPECT_EQ(f.fres[3].rules, rules(cfa_reg(kRbp, -8, true), in_reg(kRbp, 0, true)));
  EXPECT_EQ(f.fres[4].rules, rules(cfa_reg(kR10, 0)));
  EXPECT_EQ(f.fres[5].rules, rules(cfa_reg(kRsp, 8)));
  expect_clean(round_trip(cfi, c));

  // Read back: CFA = *(rbp-8) as an expression row, r10-based rows topmost-only.
  const WrittenSection w = write_section(writer_options_for(Abi::kAmd64Little, 3, kSframeAddress), c.fdes);
  auto s = Section::parse(Bytes(w.bytes), kSframeAddress);
  ASSERT_TRUE(s.ok());
  auto rows = fde_rows(*s, s->fdes()[0]);
  ASSERT_TRUE(rows.ok());
  EXPECT_TRUE((*rows)[1].topmost_only);
  EXPECT_EQ((*rows)[3].row.cfa.kind, CfaKind::kExpression);
  EXPECT_FALSE((*rows)[3].topmost_only);

  // v2 and v1 have no FLEX: the function is left out, with the reason.
  for (uint8_t v : {1, 2}) {
    const Conversion old = convert(cfi, v);
    EXPECT_TRUE(old.fdes.empty());
    ASSERT_EQ(old.stats.skipped.size(), 1u);
    EXPECT_EQ(old.stats.skipped.begin()->first, "CFA based on a register other than rsp/rbp needs FLEX (v3)");
    EXPECT_EQ(old.stats.skipped.begin()->second.bytes, 0x30u);
  }
}

TEST(GenerateConvert, FlexFdeForAReturnAddressInARegister) {
  // glibc's __longjmp style: rip in rdx, then rsp+8 again.
  CfiFixture cfi({{0x403000, 0x10, cfa::advance(2) + cfa::in_register(kRip, kRdx) + cfa::advance(4) + cfa::offset(kRip, -8)}});
  const Conversion c = convert(cfi);
  ASSERT_EQ(c.fdes.size(), 1u);
  EXPECT_EQ(c.fdes[0].fde_type, FdeType::kFlex);
  ASSERT_EQ(c.fdes[0].fres.size(), 3u);
  EXPECT_EQ(c.fdes[0].fres[1].rules, rules(cfa_reg(kRsp, 8), {}, in_reg(kRdx)));
  expect_clean(round_trip(cfi, c));
  EXPECT_EQ(convert(cfi, 2).stats.skipped.begin()->first, "register rule needs FLEX (v3)");
}

TEST(GenerateConvert, PcmaskFdeForThePltExpression) {
  // PLT0 (16 bytes: rsp+16, then rsp+24 from +6) and four 16-byte entries.
  const Insns insns = cfa::def_cfa_offset(16) + cfa::advance(6) + cfa::def_cfa_offset(24) + cfa::advance(10) +
                      cfa::def_cfa_expression(op::plt(11));
  CfiFixture cfi({{0x401020, 0x50, insns}});
  const Conversion c = convert(cfi);
  ASSERT_EQ(c.fdes.size(), 2u);
  const FdeDesc& plt0 = c.fdes[0];
  EXPECT_EQ(plt0.start, 0x401020u);
  EXPECT_EQ(plt0.size, 16u);
  EXPECT_EQ(plt0.pc_type, PcType::kInc);
  ASSERT_EQ(plt0.fres.size(), 2u);
  EXPECT_EQ(plt0.fres[1].rules, rules(cfa_reg(kRsp, 24)));
  const FdeDesc& pltn = c.fdes[1];
  EXPECT_EQ(pltn.start, 0x401030u);
  EXPECT_EQ(pltn.size, 0x40u);
  EXPECT_EQ(pltn.pc_type, PcType::kMask);
  EXPECT_EQ(pltn.rep_size, 16);
  EXPECT_EQ(pltn.fde_type, FdeType::kDefault);
  ASSERT_EQ(pltn.fres.size(), 2u);
  EXPECT_EQ(pltn.fres[0].start, 0u);
  EXPECT_EQ(pltn.fres[0].rules, rules(cfa_reg(kRsp, 8)));
  EXPECT_EQ(pltn.fres[1].start, 11u);
  EXPECT_EQ(pltn.fres[1].rules, rules(cfa_reg(kRsp, 16)));
  EXPECT_EQ(c.stats.represented_fdes, 1u);
  for (uint8_t v : {1, 2, 3}) {
    const CheckReport r = round_trip(cfi, convert(cfi, v), v);
    expect_clean(r);
    EXPECT_EQ(r.pcs_evaluated_singly, 0x40u);  // the expression reads rip: every PC compared
  }
}

TEST(GenerateConvert, PltExpressionOnAnUnalignedBlockIsLeftOut) {
  CfiFixture cfi({{0x401028, 0x40, cfa::def_cfa_expression(op::plt(11))}});
  const Conversion c = convert(cfi);
  EXPECT_TRUE(c.fdes.empty());
  EXPECT_EQ(c.stats.skipped.begin()->first, "PLT expression on a block SFrame cannot repeat");
}

TEST(GenerateConvert, RaUndefinedForTheOutermostFrame) {
  // _start: rip undefined from the first instruction.
  CfiFixture cfi({{0x401000, 0x26, cfa::undefined(kRip) + cfa::advance(4) + cfa::def_cfa_offset(16)}});
  const Conversion c = convert(cfi);
  ASSERT_EQ(c.fdes.size(), 1u);
  ASSERT_EQ(c.fdes[0].fres.size(), 1u);  // rows differing only in the CFA merge under RA undefined
  EXPECT_TRUE(c.fdes[0].fres[0].rules.ra_undefined);
  EXPECT_EQ(c.fdes[0].fde_type, FdeType::kDefault);
  for (uint8_t v : {2, 3}) expect_clean(round_trip(cfi, convert(cfi, v), v));
  const Conversion v1 = convert(cfi, 1);
  EXPECT_TRUE(v1.fdes.empty());
  EXPECT_EQ(v1.stats.skipped.begin()->first, "RA-undefined FRE needs SFrame v2 or later");
}

TEST(GenerateConvert, RaUndefinedAfterOrdinaryRows) {
  CfiFixture cfi({{0x401000, 0x10, cfa::advance(4) + cfa::undefined(kRip)}});
  const Conversion c = convert(cfi);
  ASSERT_EQ(c.fdes.size(), 1u);
  ASSERT_EQ(c.fdes[0].fres.size(), 2u);
  EXPECT_FALSE(c.fdes[0].fres[0].rules.ra_undefined);
  EXPECT_TRUE(c.fdes[0].fres[1].rules.ra_undefined);
  expect_clean(round_trip(cfi, c));
}

TEST(GenerateConvert, SignalFrameWithRulesSframeCanSay) {
  // glibc's __restore_rt: everything from the ucontext at rsp.
  const Insns insns = cfa::def_cfa_expression(op::breg(kRsp, 160) + op::deref()) +
                      cfa::expression(kRbp, op::breg(kRsp, 120)) + cfa::expression(kRsp, op::breg(kRsp, 160)) +
                      cfa::expression(kRip, op::breg(kRsp, 168)) + cfa::expression(kRbx, op::breg(kRsp, 128));
  CfiFixture cfi({{0x404000, 0x9, insns, true}});
  const Conversion c = convert(cfi);
  ASSERT_EQ(c.fdes.size(), 1u);
  EXPECT_TRUE(c.fdes[0].signal);
  EXPECT_EQ(c.fdes[0].fde_type, FdeType::kFlex);
  ASSERT_EQ(c.fdes[0].fres.size(), 1u);
  EXPECT_EQ(c.fdes[0].fres[0].rules, rules(cfa_reg(kRsp, 160, true), in_reg(kRsp, 120, true), in_reg(kRsp, 168, true)));
  expect_clean(round_trip(cfi, c));
  EXPECT_EQ(convert(cfi, 2).stats.skipped.begin()->first, "signal frame (no signal bit before v3)");
}

TEST(GenerateConvert, SignalFrameSframeCannotSayBecomesAMarker) {
  CfiFixture cfi({{0x404000, 0x9, cfa::def_cfa_expression(op::breg(kRsp, 8) + op::deref() + op::plus_uconst(8)), true}});
  const Conversion c = convert(cfi);
  ASSERT_EQ(c.fdes.size(), 1u);
  EXPECT_TRUE(c.fdes[0].signal);
  EXPECT_TRUE(c.fdes[0].fres.empty());
  EXPECT_EQ(c.stats.signal_markers, 1u);
  EXPECT_EQ(c.stats.represented_fdes, 0u);
  EXPECT_EQ(c.stats.skipped.begin()->first, "signal frame written without rows: CFA expression");
  const CheckReport r = round_trip(cfi, c);
  EXPECT_EQ(r.disagreements, 0u);
  EXPECT_EQ(r.no_row_bytes, 9u);
  EXPECT_EQ(r.rows_compared, 0u);
}

struct Unrepresentable {
  const char* name;
  Insns insns;
  const char* reason;
};

TEST(GenerateConvert, FunctionsSframeCannotDescribeAreLeftOutWithTheirReason) {
  const Unrepresentable cases[] = {
      {"CFA = *(rsp+8) + 8", cfa::advance(2) + cfa::def_cfa_expression(op::breg(kRsp, 8) + op::deref() + op::plus_uconst(8)),
       "CFA expression"},
      {"caller's rsp in r8", cfa::advance(2) + cfa::in_register(kRsp, kR8), "SP rule other than SP = CFA"},
      {"rip same value", cfa::same_value(kRip), "RA rule same-value"},
      {"rbp undefined", cfa::undefined(kRbp), "FP (rbp) rule undefined"},
      {"rbp saved at *(rsp+8)", cfa::expression(kRbp, op::breg(kRsp, 8) + op::deref()), "FP (rbp) rule is an expression"},
      {"rip = CFA + 8 (a value)", cfa::val_offset(kRip, 8), "RA rule not expressible by a FLEX control word"},
  };
  for (const Unrepresentable& u : cases) {
    SCOPED_TRACE(u.name);
    CfiFixture cfi({{0x405000, 0x10, u.insns}});
    const Conversion c = convert(cfi);
    EXPECT_TRUE(c.fdes.empty());
    ASSERT_EQ(c.stats.skipped.size(), 1u);
    EXPECT_EQ(c.stats.skipped.begin()->first, u.reason);
    EXPECT_EQ(c.stats.skipped.begin()->second.fdes, 1u);
    EXPECT_EQ(c.stats.skipped.begin()->second.first_pc, 0x405000u);
    EXPECT_EQ(c.stats.represented_fdes, 0u);
    EXPECT_EQ(c.stats.cfi_fdes, 1u);
    // What was not written is a coverage hole for the checker, not a disagreement.
    const CheckReport r = round_trip(cfi, c);
    EXPECT_EQ(r.disagreements, 0u);
    EXPECT_EQ(r.cfi_only_bytes, 0x10u);
  }
}

TEST(GenerateConvert, OverlapsAndCodeRanges) {
  CfiFixture cfi({{0x401000, 0x20, {}}, {0x401010, 0x20, {}}, {0x409000, 0x10, {}}});
  GenerateOptions o;
  o.code_ranges = {{0x401000, 0x402000}};
  const Conversion c = convert_cfi(cfi.section(), o);
  ASSERT_EQ(c.fdes.size(), 1u);
  EXPECT_EQ(c.fdes[0].start, 0x401000u);
  EXPECT_EQ(c.stats.skipped.at("overlaps another FDE").fdes, 1u);
  EXPECT_EQ(c.stats.skipped.at("outside the code sections").first_pc, 0x409000u);
  EXPECT_EQ(c.stats.cfi_fdes, 3u);
}

// An FDE left out for lying outside the code still holds the PCs it covers
// (the checker takes the earlier of overlapping FDEs): a later FDE inside it
// must not be written with rules the earlier one contradicts.
TEST(GenerateConvert, FdesLeftOutStillHoldWhatTheyOverlap) {
  CfiFixture cfi({{0x401000, 0x2000, cfa::advance(0x100) + cfa::def_cfa_offset(16)},
                  {0x401800, 0x20, cfa::advance(2) + cfa::def_cfa_offset(24)}});
  GenerateOptions o;
  o.section_address = kSframeAddress;
  o.code_ranges = {{0x401000, 0x402000}};
  const Conversion c = convert_cfi(cfi.section(), o);
  EXPECT_TRUE(c.fdes.empty());
  EXPECT_EQ(c.stats.skipped.at("outside the code sections").first_pc, 0x401000u);
  EXPECT_EQ(c.stats.skipped.at("overlaps another FDE").first_pc, 0x401800u);
  const CheckReport r = round_trip(cfi, c);
  EXPECT_EQ(r.disagreements, 0u);
  EXPECT_EQ(r.sframe_only_bytes, 0u);
}

// Byte counts cover the address space at most: a range that wraps counts up
// to its end, and overlapping huge ranges saturate instead of wrapping around.
TEST(GenerateConvert, ByteCountsNeverWrapAround) {
  CfiFixture cfi({{0x1000, 0x20, {}},
                  {0xfffffffffffff000ull, 0x2000, {}},  // wraps
                  {0x2000, 0xffffffffffff0000ull, {}},
                  {0x3000, 0xffffffffffff0000ull, {}}},  // overlaps the one before
                 dwarf::CfiKind::kDebugFrame);
  GenerateOptions o;
  o.section_address = kSframeAddress;
  const Conversion c = convert_cfi(cfi.section(), o);
  EXPECT_EQ(c.stats.cfi_fdes, 4u);
  EXPECT_EQ(c.stats.cfi_bytes, ~uint64_t{0});
  EXPECT_EQ(c.stats.skipped.at("function runs past the end of the address space").bytes, 0x1000u);
  EXPECT_EQ(c.stats.skipped.at("overlaps another FDE").bytes, 0xffffffffffff0000ull);
  EXPECT_EQ(c.stats.skipped.at("function of 4 GiB or more (SFrame sizes and FRE offsets are 32-bit)").bytes,
            0xffffffffffff0000ull);
  EXPECT_EQ(c.stats.represented_bytes, 0x20u);
}

// V1/V2 start fields hold 32 bits: functions out of their reach are left out
// one by one, down to an empty section if need be.
TEST(GenerateConvert, GenerationLeavesOutEveryFunctionOutOfReach) {
  CfiFixture cfi({{0x101000000, 0x10, {}}, {0x101000020, 0x10, {}}, {0x101000040, 0x10, {}}},
                 dwarf::CfiKind::kDebugFrame);
  const dwarf::CfiSection* sections[] = {&cfi.section()};
  GenerateOptions o;
  o.section_address = kSframeAddress;
  for (uint8_t version : {1, 2}) {
    o.version = version;
    auto g = generate_sframe(sections, o);
    ASSERT_TRUE(g.ok()) << to_string(g.error().code);
    EXPECT_EQ(g->stats.sframe_fdes, 0u);
    EXPECT_EQ(g->stats.represented_fdes, 0u);
    EXPECT_EQ(g->stats.skipped.at(to_string(Unencodable::kStartRange)).fdes, 3u);
    auto s = Section::parse(Bytes(g->bytes), kSframeAddress);
    ASSERT_TRUE(s.ok());
    EXPECT_TRUE(s->fdes().empty());
  }
  o.version = 3;
  auto v3 = generate_sframe(sections, o);
  ASSERT_TRUE(v3.ok());
  EXPECT_EQ(v3->stats.sframe_fdes, 3u);
}

TEST(GenerateConvert, DebugFrameFillsInWhatEhFrameLacks) {
  // .eh_frame for the start files only (as with -fno-asynchronous-unwind-tables
  // -g); .debug_frame for the program, and again for one .eh_frame function.
  CfiFixture eh({{0x401000, 0x20, cfa::undefined(kRip)}});
  CfiFixture debug({{0x401000, 0x20, cfa::advance(1) + cfa::def_cfa_offset(16)}, {0x401100, 0x20, frame_pointer_function()}},
                   dwarf::CfiKind::kDebugFrame);
  const dwarf::CfiSection* sections[] = {&eh.section(), &debug.section()};
  GenerateOptions o;
  o.section_address = kSframeAddress;
  const Conversion c = convert_cfi(sections, o);
  EXPECT_EQ(c.stats.cfi_section, ".eh_frame + .debug_frame");
  EXPECT_EQ(c.stats.cfi_fdes, 2u);  // the duplicate is not counted
  ASSERT_EQ(c.fdes.size(), 2u);
  EXPECT_TRUE(c.fdes[0].fres[0].rules.ra_undefined);  // .eh_frame's rows win
  EXPECT_EQ(c.fdes[1].start, 0x401100u);
  EXPECT_EQ(c.fdes[1].fres.size(), 4u);
  const WrittenSection w = write_section(writer_options_for(Abi::kAmd64Little, 3, kSframeAddress), c.fdes);
  auto s = Section::parse(Bytes(w.bytes), kSframeAddress);
  ASSERT_TRUE(s.ok());
  const CheckReport r = check_rows(sections, *s);
  EXPECT_EQ(r.cfi_sections, ".eh_frame + .debug_frame");
  EXPECT_EQ(r.cfi_fdes, 2u);
  expect_clean(r);
  EXPECT_EQ(r.bytes_compared, 0x40u);
}

TEST(GenerateConvert, LargeOffsetsAndLongFunctionsPickWiderFields) {
  // A 70000-byte frame and a row 300 bytes in: 4-byte data words, 2-byte FRE starts.
  CfiFixture cfi({{0x410000, 0x400, cfa::advance(300) + cfa::def_cfa_offset(70000) + cfa::advance(200) + cfa::def_cfa_offset(8)}});
  const Conversion c = convert(cfi);
  ASSERT_EQ(c.fdes.size(), 1u);
  const WrittenSection w = write_section(writer_options_for(Abi::kAmd64Little, 3, kSframeAddress), c.fdes);
  auto s = Section::parse(Bytes(w.bytes), kSframeAddress);
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s->fdes()[0].fre_type, FreType::kAddr2);
  auto fre = s->fre(s->fdes()[0], 1);
  ASSERT_TRUE(fre.ok());
  EXPECT_EQ(fre->word_size, 4);
  EXPECT_EQ(fre->words[0], 70000);
  expect_clean(round_trip(cfi, c));
}

// SFrame sizes and FRE offsets are 32-bit: a function of 4 GiB or more is left
// out with its reason, not written with its size and row offsets cut to 32
// bits (which made rows past 4 GiB claim PCs near the start).
TEST(GenerateConvert, FunctionsOfFourGibibytesOrMoreAreLeftOut) {
  const Insns insns = Insns{0x04, 0xff, 0xff, 0xff, 0xff} + cfa::advance(8) + cfa::def_cfa(kR10, 0) +
                      cfa::advance(7) + cfa::def_cfa(kRsp, 8);
  // .debug_frame: absolute 8-byte ranges (.eh_frame's are 4 bytes here).
  CfiFixture cfi({{0x401000, 0x100000020, insns}, {0x100400000, 0x10, {}}, {0x200000000, 0x10, {}}},
                 dwarf::CfiKind::kDebugFrame);
  const Conversion c = convert(cfi);
  const auto& skipped = c.stats.skipped;
  ASSERT_EQ(skipped.count("function of 4 GiB or more (SFrame sizes and FRE offsets are 32-bit)"), 1u);
  EXPECT_EQ(skipped.at("function of 4 GiB or more (SFrame sizes and FRE offsets are 32-bit)").first_pc, 0x401000u);
  EXPECT_EQ(skipped.at("overlaps another FDE").first_pc, 0x100400000u);  // inside the first, which holds
  ASSERT_EQ(c.fdes.size(), 1u);
  EXPECT_EQ(c.fdes[0].start, 0x200000000u);
  const CheckReport r = round_trip(cfi, c);
  EXPECT_EQ(r.disagreements, 0u);
  EXPECT_EQ(r.sframe_only_bytes, 0u);
}

}  // namespace
}  // namespace framewalk::sframe

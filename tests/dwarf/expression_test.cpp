// The DWARF expression VM as CFI uses it: every supported operator, the stack
// and step limits, operators not allowed in CFI, 32-bit wrap-around, and the
// disassembler's text.
#include "dwarf/expression.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <map>
#include <vector>

#include "support/section_builder.hpp"

namespace framewalk::dwarf {
namespace {

using test::SectionBuilder;

constexpr uint64_t kBase = 0x500;  // section offset of the expression's first byte

// Registers and byte-addressed little-endian memory, recording every read.
class FakeInputs : public ExpressionInputs {
 public:
  std::map<uint16_t, uint64_t> registers;
  std::map<uint64_t, uint8_t> memory;
  std::vector<std::pair<uint64_t, unsigned>> reads;

  void store(uint64_t address, uint64_t value, unsigned size) {
    for (unsigned i = 0; i < size; ++i) memory[address + i] = static_cast<uint8_t>(value >> (8 * i));
  }
  Result<uint64_t> register_value(uint16_t reg) override {
    auto it = registers.find(reg);
    if (it == registers.end()) return Error{ErrorCode::kExprNeedsRegister, 0};
    return it->second;
  }
  Result<uint64_t> read_memory(uint64_t address, unsigned size) override {
    reads.emplace_back(address, size);
    uint64_t v = 0;
    for (unsigned i = 0; i < size; ++i) {
      auto it = memory.find(address + i);
      if (it == memory.end()) return Error{ErrorCode::kMemoryUnreadable, address};
      v |= uint64_t{it->second} << (8 * i);
    }
    return v;
  }
};

Result<uint64_t> eval(const std::vector<uint8_t>& expr, ExpressionInputs* inputs = nullptr,
                      const ExpressionOptions& o = {}) {
  return evaluate_expression(expr, kBase, o, inputs);
}

uint64_t eval_ok(const std::vector<uint8_t>& expr, ExpressionInputs* inputs = nullptr,
                 const ExpressionOptions& o = {}) {
  auto r = eval(expr, inputs, o);
  EXPECT_TRUE(r.ok()) << to_string(r.error().code) << " at " << r.error().offset;
  return r.ok() ? *r : 0xbadbadbadull;
}

void expect_error(const std::vector<uint8_t>& expr, ErrorCode code, uint64_t offset,
                  ExpressionInputs* inputs = nullptr, const ExpressionOptions& o = {}) {
  auto r = eval(expr, inputs, o);
  ASSERT_FALSE(r.ok()) << "value " << *r;
  EXPECT_EQ(r.error().code, code) << to_string(r.error().code);
  EXPECT_EQ(r.error().offset, offset);
}

ExpressionOptions four_byte() {
  ExpressionOptions o;
  o.address_size = 4;
  return o;
}

SectionBuilder ops() { return SectionBuilder(); }

// DW_OP_* values used below.
enum : uint8_t {
  kAddr = 0x03, kDeref = 0x06, kConst1u = 0x08, kConst1s = 0x09, kConst2u = 0x0a, kConst2s = 0x0b,
  kConst4u = 0x0c, kConst4s = 0x0d, kConst8u = 0x0e, kConst8s = 0x0f, kConstu = 0x10, kConsts = 0x11,
  kDup = 0x12, kDrop = 0x13, kOver = 0x14, kPick = 0x15, kSwap = 0x16, kRot = 0x17, kXderef = 0x18,
  kAbs = 0x19, kAnd = 0x1a, kDiv = 0x1b, kMinus = 0x1c, kMod = 0x1d, kMul = 0x1e, kNeg = 0x1f,
  kNot = 0x20, kOr = 0x21, kPlus = 0x22, kPlusUconst = 0x23, kShl = 0x24, kShr = 0x25, kShra = 0x26,
  kXor = 0x27, kBra = 0x28, kEq = 0x29, kGe = 0x2a, kGt = 0x2b, kLe = 0x2c, kLt = 0x2d, kNe = 0x2e,
  kSkip = 0x2f, kLit0 = 0x30, kReg0 = 0x50, kBreg0 = 0x70, kRegx = 0x90, kFbreg = 0x91, kBregx = 0x92,
  kPiece = 0x93, kDerefSize = 0x94, kXderefSize = 0x95, kNop = 0x96, kPushObjectAddress = 0x97,
  kCall2 = 0x98, kCall4 = 0x99, kCallRef = 0x9a, kFormTlsAddress = 0x9b, kCallFrameCfa = 0x9c,
  kBitPiece = 0x9d, kImplicitValue = 0x9e, kStackValue = 0x9f, kGnuPushTlsAddress = 0xe0,
};

uint8_t lit(int n) { return static_cast<uint8_t>(kLit0 + n); }

// ---- literals and constants ---------------------------------------------------

TEST(ExpressionTest, Literals) {
  for (int n = 0; n < 32; ++n) EXPECT_EQ(eval_ok({lit(n)}), static_cast<uint64_t>(n)) << n;
}

TEST(ExpressionTest, FixedSizeConstants) {
  EXPECT_EQ(eval_ok({kConst1u, 0xff}), 0xffu);
  EXPECT_EQ(eval_ok({kConst1s, 0xff}), ~uint64_t{0});
  EXPECT_EQ(eval_ok({kConst1s, 0x7f}), 0x7fu);
  EXPECT_EQ(eval_ok({kConst2u, 0xfe, 0xff}), 0xfffeu);
  EXPECT_EQ(eval_ok({kConst2s, 0xfe, 0xff}), static_cast<uint64_t>(-2));
  EXPECT_EQ(eval_ok({kConst4u, 0x78, 0x56, 0x34, 0x92}), 0x92345678u);
  EXPECT_EQ(eval_ok({kConst4s, 0x78, 0x56, 0x34, 0x92}), 0xffffffff92345678ull);
  EXPECT_EQ(eval_ok({kConst8u, 1, 2, 3, 4, 5, 6, 7, 0x88}), 0x8807060504030201ull);
  EXPECT_EQ(eval_ok({kConst8s, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}), ~uint64_t{0});
}

TEST(ExpressionTest, BigEndianConstants) {
  ExpressionOptions o;
  o.endian = Endian::kBig;
  EXPECT_EQ(eval_ok({kConst2u, 0x12, 0x34}, nullptr, o), 0x1234u);
  EXPECT_EQ(eval_ok({kConst4s, 0xff, 0xff, 0xff, 0xfe}, nullptr, o), static_cast<uint64_t>(-2));
}

TEST(ExpressionTest, LebConstants) {
  EXPECT_EQ(eval_ok(ops().u8(kConstu).uleb(624485).finish()), 624485u);
  EXPECT_EQ(eval_ok(ops().u8(kConstu).uleb(~uint64_t{0}).finish()), ~uint64_t{0});
  EXPECT_EQ(eval_ok(ops().u8(kConsts).sleb(-123456).finish()), static_cast<uint64_t>(-123456));
  EXPECT_EQ(eval_ok(ops().u8(kConsts).sleb(63).finish()), 63u);
}

TEST(ExpressionTest, Addr) {
  EXPECT_EQ(eval_ok({kAddr, 0x00, 0x10, 0x40, 0x00, 0x00, 0x00, 0x00, 0x00}), 0x401000u);
  EXPECT_EQ(eval_ok({kAddr, 0x00, 0x10, 0x40, 0x80}, nullptr, four_byte()), 0x80401000u);
  // With 4-byte addresses only 4 bytes are consumed: the lit1 after it is the result.
  EXPECT_EQ(eval_ok({kAddr, 0x00, 0x10, 0x40, 0x80, lit(1)}, nullptr, four_byte()), 1u);
  expect_error({kAddr, 0x00, 0x10, 0x40, 0x80}, ErrorCode::kTruncated, kBase + 1);
}

// ---- registers ---------------------------------------------------------------------

TEST(ExpressionTest, BregN) {
  FakeInputs in;
  for (int r = 0; r < 32; ++r) in.registers[static_cast<uint16_t>(r)] = 0x1000 * (r + 1);
  for (int r = 0; r < 32; ++r) {
    const auto expr = ops().u8(static_cast<uint8_t>(kBreg0 + r)).sleb(-8).finish();
    EXPECT_EQ(eval_ok(expr, &in), 0x1000u * (r + 1) - 8) << r;
  }
  EXPECT_EQ(eval_ok(ops().u8(kBreg0 + 7).sleb(100).finish(), &in), 0x8000u + 100);
}

TEST(ExpressionTest, Bregx) {
  FakeInputs in;
  in.registers[17] = 0x7fff0000;
  in.registers[300] = 0x10;
  EXPECT_EQ(eval_ok(ops().u8(kBregx).uleb(17).sleb(-16).finish(), &in), 0x7ffefff0u);
  EXPECT_EQ(eval_ok(ops().u8(kBregx).uleb(300).sleb(0).finish(), &in), 0x10u);
}

TEST(ExpressionTest, MissingRegister) {
  FakeInputs in;
  in.registers[7] = 0x100;
  expect_error(ops().u8(kNop).u8(kBreg0 + 6).sleb(0).finish(), ErrorCode::kExprNeedsRegister, kBase + 1, &in);
  expect_error(ops().u8(kBreg0 + 7).sleb(0).finish(), ErrorCode::kExprNeedsRegister, kBase, nullptr);
  expect_error(ops().u8(kBregx).uleb(0x10000).sleb(0).finish(), ErrorCode::kExprNeedsRegister, kBase, &in);
  expect_error(ops().u8(kLit0).u8(kBregx).uleb(8).sleb(0).finish(), ErrorCode::kExprNeedsRegister, kBase + 1, &in);
}

// ---- memory ------------------------------------------------------------------------

TEST(ExpressionTest, Deref) {
  FakeInputs in;
  in.registers[7] = 0x7000;
  in.store(0x7008, 0x1122334455667788ull, 8);
  // DW_OP_breg7 8; DW_OP_deref
  EXPECT_EQ(eval_ok(ops().u8(kBreg0 + 7).sleb(8).u8(kDeref).finish(), &in), 0x1122334455667788ull);
  ASSERT_EQ(in.reads.size(), 1u);
  EXPECT_EQ(in.reads[0], std::make_pair(uint64_t{0x7008}, 8u));
}

TEST(ExpressionTest, DerefUsesTheAddressSize) {
  FakeInputs in;
  in.store(0x100, 0xaabbccdd11223344ull, 8);
  EXPECT_EQ(eval_ok({kConst2u, 0x00, 0x01, kDeref}, &in, four_byte()), 0x11223344u);
  EXPECT_EQ(in.reads.back(), std::make_pair(uint64_t{0x100}, 4u));
}

TEST(ExpressionTest, DerefSize) {
  FakeInputs in;
  in.store(0x100, 0xaabbccdd11223344ull, 8);
  EXPECT_EQ(eval_ok({kConst2u, 0x00, 0x01, kDerefSize, 1}, &in), 0x44u);
  EXPECT_EQ(eval_ok({kConst2u, 0x00, 0x01, kDerefSize, 2}, &in), 0x3344u);
  EXPECT_EQ(eval_ok({kConst2u, 0x00, 0x01, kDerefSize, 4}, &in), 0x11223344u);
  EXPECT_EQ(eval_ok({kConst2u, 0x00, 0x01, kDerefSize, 8}, &in), 0xaabbccdd11223344ull);
  EXPECT_EQ(in.reads.back(), std::make_pair(uint64_t{0x100}, 8u));
  // Sizes 0 and above 8 are refused.
  expect_error({kConst2u, 0x00, 0x01, kDerefSize, 0}, ErrorCode::kExprUnsupported, kBase + 3, &in);
  expect_error({kConst2u, 0x00, 0x01, kDerefSize, 9}, ErrorCode::kExprUnsupported, kBase + 3, &in);
}

TEST(ExpressionTest, DerefErrors) {
  FakeInputs in;
  // No inputs at all: the memory is not available.
  expect_error({lit(8), kDeref}, ErrorCode::kExprNeedsMemory, kBase + 1);
  expect_error({lit(8), kDerefSize, 4}, ErrorCode::kExprNeedsMemory, kBase + 1);
  // Unreadable memory: the input's error code at the operator.
  expect_error({lit(8), kNop, kDeref}, ErrorCode::kMemoryUnreadable, kBase + 2, &in);
  // Nothing to dereference.
  expect_error({kDeref}, ErrorCode::kExprStackUnderflow, kBase, &in);
}

// ---- stack operations -------------------------------------------------------------

TEST(ExpressionTest, DupDropOverSwapRot) {
  EXPECT_EQ(eval_ok({lit(5), kDup, kPlus}), 10u);
  EXPECT_EQ(eval_ok({lit(1), lit(2), kDrop}), 1u);
  EXPECT_EQ(eval_ok({lit(1), lit(2), kOver}), 1u);
  EXPECT_EQ(eval_ok({lit(1), lit(2), kOver, kDrop}), 2u);
  EXPECT_EQ(eval_ok({lit(1), lit(2), kSwap}), 1u);
  EXPECT_EQ(eval_ok({lit(1), lit(2), kSwap, kDrop}), 2u);
  // rot: the top becomes third, the second becomes the top, the third second.
  // [1 2 3] (3 on top) -> [3 1 2] (2 on top)
  EXPECT_EQ(eval_ok({lit(1), lit(2), lit(3), kRot}), 2u);
  EXPECT_EQ(eval_ok({lit(1), lit(2), lit(3), kRot, kDrop}), 1u);
  EXPECT_EQ(eval_ok({lit(1), lit(2), lit(3), kRot, kDrop, kDrop}), 3u);
}

TEST(ExpressionTest, Pick) {
  EXPECT_EQ(eval_ok({lit(7), lit(8), lit(9), kPick, 0}), 9u);
  EXPECT_EQ(eval_ok({lit(7), lit(8), lit(9), kPick, 1}), 8u);
  EXPECT_EQ(eval_ok({lit(7), lit(8), lit(9), kPick, 2}), 7u);
  expect_error({lit(7), lit(8), lit(9), kPick, 3}, ErrorCode::kExprStackUnderflow, kBase + 3);
  expect_error({kPick, 0}, ErrorCode::kExprStackUnderflow, kBase);
}

TEST(ExpressionTest, StackUnderflow) {
  struct Case {
    std::vector<uint8_t> expr;
    uint64_t offset;
  } cases[] = {
      {{kDrop}, 0},
      {{kDup}, 0},
      {{lit(1), kOver}, 1},
      {{lit(1), kSwap}, 1},
      {{lit(1), lit(2), kRot}, 2},
      {{lit(1), kPlus}, 1},
      {{lit(1), kNop, kMinus}, 2},
      {{kNeg}, 0},
      {{kAbs}, 0},
      {{kNot}, 0},
      {{kPlusUconst, 1}, 0},
      {{kBra, 0, 0}, 0},
      {{lit(1), lit(2), kDrop, kDrop, kDrop}, 4},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(testing::PrintToString(c.expr));
    expect_error(c.expr, ErrorCode::kExprStackUnderflow, kBase + c.offset);
  }
}

TEST(ExpressionTest, StackOverflow) {
  std::vector<uint8_t> expr(ExpressionLimits::kStackSize, lit(1));
  EXPECT_EQ(eval_ok(expr), 1u);  // exactly full is fine
  expr.push_back(lit(2));
  expect_error(expr, ErrorCode::kExprStackOverflow, kBase + ExpressionLimits::kStackSize);
  // The initial value counts.
  std::vector<uint8_t> full(ExpressionLimits::kStackSize, lit(1));
  ExpressionOptions o;
  o.push_initial = true;
  expect_error(full, ErrorCode::kExprStackOverflow, kBase + ExpressionLimits::kStackSize - 1, nullptr, o);
  // dup and pick push too.
  std::vector<uint8_t> dups = {lit(3)};
  for (int i = 1; i < ExpressionLimits::kStackSize; ++i) dups.push_back(kDup);
  EXPECT_EQ(eval_ok(dups), 3u);
  dups.push_back(kPick);
  dups.push_back(0);
  expect_error(dups, ErrorCode::kExprStackOverflow, kBase + ExpressionLimits::kStackSize);
}

// ---- arithmetic and logic -----------------------------------------------------------

TEST(ExpressionTest, Arithmetic) {
  EXPECT_EQ(eval_ok({lit(7), lit(5), kPlus}), 12u);
  EXPECT_EQ(eval_ok({lit(5), lit(7), kMinus}), static_cast<uint64_t>(-2));
  EXPECT_EQ(eval_ok({lit(6), lit(7), kMul}), 42u);
  EXPECT_EQ(eval_ok({kConst1s, 0xf9, lit(2), kDiv}), static_cast<uint64_t>(-3));  // -7 / 2, signed
  EXPECT_EQ(eval_ok({lit(7), kConst1s, 0xfe, kDiv}), static_cast<uint64_t>(-3));  // 7 / -2
  EXPECT_EQ(eval_ok({lit(7), lit(3), kMod}), 1u);
  EXPECT_EQ(eval_ok({kConst1s, 0xff, lit(16), kMod}), 15u);                       // unsigned
  EXPECT_EQ(eval_ok({lit(5), kNeg}), static_cast<uint64_t>(-5));
  EXPECT_EQ(eval_ok({kConst1s, 0xfb, kAbs}), 5u);
  EXPECT_EQ(eval_ok({lit(5), kAbs}), 5u);
  EXPECT_EQ(eval_ok(ops().u8(lit(1)).u8(kPlusUconst).uleb(300).finish()), 301u);
}

TEST(ExpressionTest, MostNegativeValue) {
  const std::vector<uint8_t> min = {kConst8s, 0, 0, 0, 0, 0, 0, 0, 0x80};
  std::vector<uint8_t> abs = min;
  abs.push_back(kAbs);
  EXPECT_EQ(eval_ok(abs), 0x8000000000000000ull);
  std::vector<uint8_t> div = min;
  div.insert(div.end(), {kConst1s, 0xff, kDiv});
  EXPECT_EQ(eval_ok(div), 0x8000000000000000ull);
  std::vector<uint8_t> neg = min;
  neg.push_back(kNeg);
  EXPECT_EQ(eval_ok(neg), 0x8000000000000000ull);
}

TEST(ExpressionTest, DivideByZero) {
  expect_error({lit(1), lit(0), kDiv}, ErrorCode::kExprDivideByZero, kBase + 2);
  expect_error({lit(1), lit(0), kNop, kMod}, ErrorCode::kExprDivideByZero, kBase + 3);
}

TEST(ExpressionTest, Logic) {
  EXPECT_EQ(eval_ok({lit(12), lit(10), kAnd}), 8u);
  EXPECT_EQ(eval_ok({lit(12), lit(10), kOr}), 14u);
  EXPECT_EQ(eval_ok({lit(12), lit(10), kXor}), 6u);
  EXPECT_EQ(eval_ok({lit(0), kNot}), ~uint64_t{0});
  EXPECT_EQ(eval_ok({lit(5), kNot}), ~uint64_t{5});
}

TEST(ExpressionTest, Shifts) {
  EXPECT_EQ(eval_ok({lit(1), lit(4), kShl}), 16u);
  EXPECT_EQ(eval_ok({lit(1), kConst1u, 63, kShl}), 0x8000000000000000ull);
  EXPECT_EQ(eval_ok({lit(1), kConst1u, 64, kShl}), 0u);
  EXPECT_EQ(eval_ok({kConst1u, 0x80, lit(4), kShr}), 8u);
  EXPECT_EQ(eval_ok({kConst1s, 0x80, lit(4), kShr}), 0x0ffffffffffffff8ull);   // logical
  EXPECT_EQ(eval_ok({kConst1s, 0x80, lit(4), kShra}), static_cast<uint64_t>(-8));  // arithmetic
  EXPECT_EQ(eval_ok({kConst1s, 0x80, kConst1u, 64, kShr}), 0u);
  EXPECT_EQ(eval_ok({kConst1s, 0x80, kConst1u, 200, kShra}), ~uint64_t{0});
  EXPECT_EQ(eval_ok({lit(16), kConst1u, 200, kShra}), 0u);
  EXPECT_EQ(eval_ok({lit(16), lit(2), kShra}), 4u);
}

TEST(ExpressionTest, ComparisonsAreSigned) {
  struct Case {
    uint8_t op;
    int a, b;
    uint64_t want;
  } cases[] = {
      {kEq, 3, 3, 1}, {kEq, 3, 4, 0}, {kNe, 3, 4, 1}, {kNe, -1, -1, 0},
      {kLt, -1, 1, 1}, {kLt, 1, -1, 0}, {kLt, 2, 2, 0},
      {kLe, -1, -1, 1}, {kLe, 1, -1, 0},
      {kGt, 1, -1, 1}, {kGt, -1, 1, 0}, {kGt, 2, 2, 0},
      {kGe, -2, -2, 1}, {kGe, -3, -2, 0},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(testing::Message() << int{c.op} << " " << c.a << " " << c.b);
    const auto expr = ops().u8(kConsts).sleb(c.a).u8(kConsts).sleb(c.b).u8(c.op).finish();
    EXPECT_EQ(eval_ok(expr), c.want);
  }
}

// ---- control flow ------------------------------------------------------------------

TEST(ExpressionTest, Skip) {
  // skip over lit5: the result is lit7.
  EXPECT_EQ(eval_ok({lit(7), kSkip, 1, 0, lit(5)}), 7u);
  // skip 0 is a no-op.
  EXPECT_EQ(eval_ok({kSkip, 0, 0, lit(2)}), 2u);
  // To exactly the end is allowed.
  EXPECT_EQ(eval_ok({lit(3), kSkip, 2, 0, lit(4), lit(5)}), 3u);
}

TEST(ExpressionTest, Bra) {
  // if (cond) push 1 else push 2
  const std::vector<uint8_t> prog = {kBra, 4, 0, lit(2), kSkip, 1, 0, lit(1)};
  std::vector<uint8_t> t = {lit(9)};
  t.insert(t.end(), prog.begin(), prog.end());
  EXPECT_EQ(eval_ok(t), 1u);
  std::vector<uint8_t> f = {lit(0)};
  f.insert(f.end(), prog.begin(), prog.end());
  EXPECT_EQ(eval_ok(f), 2u);
}

TEST(ExpressionTest, BackwardBranchLoop) {
  // Count down from 5 to 0 with a backward bra:
  //   0: lit5
  //   1: lit1; 2: minus; 3: dup; 4: bra -6 (from 7 back to 1)
  EXPECT_EQ(eval_ok({lit(5), lit(1), kMinus, kDup, kBra, 0xfa, 0xff}), 0u);
}

TEST(ExpressionTest, BranchOutsideTheExpression) {
  expect_error({kSkip, 2, 0, lit(1)}, ErrorCode::kExprBadBranch, kBase);           // past the end
  expect_error({lit(1), kSkip, 0xfb, 0xff}, ErrorCode::kExprBadBranch, kBase + 1);  // before the start
  expect_error({lit(1), kBra, 0x10, 0x00}, ErrorCode::kExprBadBranch, kBase + 1);
  // An untaken bra does not check its target.
  EXPECT_EQ(eval_ok({lit(2), lit(0), kBra, 0x10, 0x00}), 2u);
  // A branch into the middle of an operand is allowed and decodes from there.
  EXPECT_EQ(eval_ok({kSkip, 1, 0, kConst1u, lit(6)}), 6u);
}

TEST(ExpressionTest, InfiniteLoopHitsTheStepLimit) {
  // skip -3 jumps back to itself.
  expect_error({kSkip, 0xfd, 0xff}, ErrorCode::kExprTooManySteps, kBase);
  ExpressionOptions o;
  o.limits.max_steps = 5;
  // lit1 then nops: the 6th operator is refused.
  expect_error({lit(1), kNop, kNop, kNop, kNop, kNop, kNop}, ErrorCode::kExprTooManySteps, kBase + 5, nullptr, o);
  EXPECT_EQ(eval_ok({lit(1), kNop, kNop, kNop, kNop}, nullptr, o), 1u);
}

TEST(ExpressionTest, Nop) {
  EXPECT_EQ(eval_ok({kNop, lit(4), kNop}), 4u);
  expect_error({kNop}, ErrorCode::kExprEmptyStack, kBase + 1);
}

// ---- the initial value, the end, and malformed input ----------------------------------

TEST(ExpressionTest, InitialValueIsPushedFirst) {
  ExpressionOptions o;
  o.push_initial = true;
  o.initial = 0x7fff1000;
  EXPECT_EQ(eval_ok({}, nullptr, o), 0x7fff1000u);
  EXPECT_EQ(eval_ok({kConst1u, 16, kMinus}, nullptr, o), 0x7fff0ff0u);
  o.address_size = 4;
  o.initial = 0x123456789ull;
  EXPECT_EQ(eval_ok({}, nullptr, o), 0x23456789u);
}

TEST(ExpressionTest, EmptyStackAtTheEnd) {
  expect_error({}, ErrorCode::kExprEmptyStack, kBase);
  expect_error({lit(1), kDrop}, ErrorCode::kExprEmptyStack, kBase + 2);
}

TEST(ExpressionTest, UnknownOperators) {
  for (uint8_t op : {uint8_t{0x00}, uint8_t{0x01}, uint8_t{0x02}, uint8_t{0x04}, uint8_t{0x05},
                     uint8_t{0x07}, uint8_t{0xa0}, uint8_t{0xf3}, uint8_t{0xff}}) {
    SCOPED_TRACE(int{op});
    expect_error({lit(1), op}, ErrorCode::kExprUnknownOpcode, kBase + 1);
    EXPECT_EQ(op_name(op), nullptr);
  }
}

TEST(ExpressionTest, OperatorsNotAllowedInCfi) {
  struct Case {
    std::vector<uint8_t> op;
  } cases[] = {
      {{kReg0}}, {{kReg0 + 31}}, {{kRegx, 3}}, {{kFbreg, 8}}, {{kPiece, 8}}, {{kXderef}},
      {{kXderefSize, 4}}, {{kPushObjectAddress}}, {{kCall2, 0, 0}}, {{kCall4, 0, 0, 0, 0}},
      {{kCallRef, 0, 0, 0, 0}}, {{kFormTlsAddress}}, {{kCallFrameCfa}}, {{kBitPiece, 1, 2}},
      {{kImplicitValue, 1, 0xaa}}, {{kStackValue}}, {{kGnuPushTlsAddress}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(int{c.op[0]});
    std::vector<uint8_t> expr = {lit(1), lit(2)};
    expr.insert(expr.end(), c.op.begin(), c.op.end());
    expect_error(expr, ErrorCode::kExprUnsupported, kBase + 2);
  }
}

TEST(ExpressionTest, TruncatedOperands) {
  expect_error({kConst2u, 0x01}, ErrorCode::kTruncated, kBase + 1);
  expect_error({kConst8s, 1, 2, 3}, ErrorCode::kTruncated, kBase + 1);
  expect_error({kConstu, 0x80}, ErrorCode::kTruncated, kBase + 1);
  expect_error({lit(1), kSkip, 0x01}, ErrorCode::kTruncated, kBase + 2);
  expect_error({kBregx, 0x01}, ErrorCode::kTruncated, kBase + 2);
  expect_error({lit(1), kPick}, ErrorCode::kTruncated, kBase + 2);
}

// ---- 4-byte addresses ----------------------------------------------------------------

TEST(ExpressionTest, FourByteAddressesWrapAround) {
  const ExpressionOptions o = four_byte();
  EXPECT_EQ(eval_ok({lit(0), lit(1), kMinus}, nullptr, o), 0xffffffffu);
  EXPECT_EQ(eval_ok({lit(1), kNeg}, nullptr, o), 0xffffffffu);
  EXPECT_EQ(eval_ok({lit(0), kNot}, nullptr, o), 0xffffffffu);
  EXPECT_EQ(eval_ok({kConst4u, 0xff, 0xff, 0xff, 0xff, kPlusUconst, 2}, nullptr, o), 1u);
  EXPECT_EQ(eval_ok({kConst4u, 0, 0, 1, 0, kConst4u, 0, 0, 1, 0, kMul}, nullptr, o), 0u);
  EXPECT_EQ(eval_ok({kConst1s, 0xff}, nullptr, o), 0xffffffffu);
  EXPECT_EQ(eval_ok({kConst8u, 1, 0, 0, 0, 1, 0, 0, 0}, nullptr, o), 1u);
  EXPECT_EQ(eval_ok({lit(1), kConst1u, 31, kShl}, nullptr, o), 0x80000000u);
  EXPECT_EQ(eval_ok({lit(1), kConst1u, 32, kShl}, nullptr, o), 0u);
  FakeInputs in;
  in.registers[4] = 0xfffffff0;
  EXPECT_EQ(eval_ok(ops().u8(kBreg0 + 4).sleb(0x20).finish(), &in, o), 0x10u);
}

TEST(ExpressionTest, FourByteSignedOperations) {
  const ExpressionOptions o = four_byte();
  // 0xfffffffe is -2 at 32 bits.
  EXPECT_EQ(eval_ok({kConst4u, 0xfe, 0xff, 0xff, 0xff, lit(2), kDiv}, nullptr, o), 0xffffffffu);
  EXPECT_EQ(eval_ok({kConst4u, 0xfe, 0xff, 0xff, 0xff, kAbs}, nullptr, o), 2u);
  EXPECT_EQ(eval_ok({kConst4u, 0xfe, 0xff, 0xff, 0xff, lit(0), kLt}, nullptr, o), 1u);
  EXPECT_EQ(eval_ok({kConst4u, 0xfe, 0xff, 0xff, 0xff, lit(1), kShra}, nullptr, o), 0xffffffffu);
  EXPECT_EQ(eval_ok({kConst4u, 0xfe, 0xff, 0xff, 0xff, lit(1), kShr}, nullptr, o), 0x7fffffffu);
  EXPECT_EQ(eval_ok({kConst4u, 0, 0, 0, 0x80, kConst1s, 0xff, kDiv}, nullptr, o), 0x80000000u);
  // 0x80000000 compares below 0 at 32 bits, above it at 64.
  EXPECT_EQ(eval_ok({kConst4u, 0, 0, 0, 0x80, lit(0), kGt}, nullptr, o), 0u);
  EXPECT_EQ(eval_ok({kConst4u, 0, 0, 0, 0x80, lit(0), kGt}), 1u);
}

// ---- the disassembler ------------------------------------------------------------------

std::string disasm(const std::vector<uint8_t>& expr, const arch::ArchInfo* arch = arch::arch_for(usual_machine_key(62)),
                   const ExpressionOptions& o = {}) {
  return disassemble_expression(expr, o, arch);
}

TEST(ExpressionTest, DisassemblyInTheStyleOfReadelf) {
  // These lines are what readelf 2.40 prints for the same bytes.
  EXPECT_EQ(disasm({0x77, 0x08, kDeref}), "DW_OP_breg7 (rsp): 8; DW_OP_deref");
  EXPECT_EQ(disasm({kConst1u, 0xff, kConst1s, 0xff, kBregx, 0x07, 0x78, kSkip, 0xfd, 0xff, kBra, 0x02, 0x00,
                    kDerefSize, 0x04}),
            "DW_OP_const1u: 255; DW_OP_const1s: -1; DW_OP_bregx: 7 (rsp) -8; DW_OP_skip: -3; "
            "DW_OP_bra: 2; DW_OP_deref_size: 4");
  EXPECT_EQ(disasm({kConst2u, 0x34, 0x12, kConst2s, 0xfe, 0xff, kConst4u, 1, 0, 0, 0, kConst4s, 0xff, 0xff,
                    0xff, 0xff, kConstu, 0x80, 0x01, kConsts, 0x7f, kPick, 0x02}),
            "DW_OP_const2u: 4660; DW_OP_const2s: -2; DW_OP_const4u: 1; DW_OP_const4s: -1; "
            "DW_OP_constu: 128; DW_OP_consts: -1; DW_OP_pick: 2");
  EXPECT_EQ(disasm({kConst8u, 1, 2, 3, 4, 5, 6, 7, 8, kConst8s, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
                    kNop}),
            "DW_OP_const8u: 578437695752307201; DW_OP_const8s: -1; DW_OP_nop");
  EXPECT_EQ(disasm({lit(1), lit(31), lit(0), kAbs, kAnd, kDiv, kMinus, kMod}),
            "DW_OP_lit1; DW_OP_lit31; DW_OP_lit0; DW_OP_abs; DW_OP_and; DW_OP_div; DW_OP_minus; DW_OP_mod");
  EXPECT_EQ(disasm({kMul, kNeg, kNot, kOr, kPlus, kShl, kShr, kShra, kXor, kEq, kGe, kGt, kLe, kLt, kNe, kDrop,
                    kOver, kRot, kSwap, kDup}),
            "DW_OP_mul; DW_OP_neg; DW_OP_not; DW_OP_or; DW_OP_plus; DW_OP_shl; DW_OP_shr; DW_OP_shra; "
            "DW_OP_xor; DW_OP_eq; DW_OP_ge; DW_OP_gt; DW_OP_le; DW_OP_lt; DW_OP_ne; DW_OP_drop; "
            "DW_OP_over; DW_OP_rot; DW_OP_swap; DW_OP_dup");
  EXPECT_EQ(disasm({kBreg0, 0x00, kBreg0 + 31, 0x7f, kPlusUconst, 0x80, 0x01}),
            "DW_OP_breg0 (rax): 0; DW_OP_breg31 (xmm14): -1; DW_OP_plus_uconst: 128");
  EXPECT_EQ(disasm({kCallFrameCfa, kStackValue, kPiece, 0x08, kFbreg, 0x7c}),
            "DW_OP_call_frame_cfa; DW_OP_stack_value; DW_OP_piece: 8; DW_OP_fbreg: -4");
}

TEST(ExpressionTest, DisassemblyOwnFormats) {
  // Where framewalk differs from readelf: addresses in hex with 0x, no
  // register names for DW_OP_reg*, plain numbers for the rest.
  EXPECT_EQ(disasm({kAddr, 0x10, 0x20, 0x30, 0x40, 0x50, 0x60, 0x70, 0x00}), "DW_OP_addr: 0x70605040302010");
  ExpressionOptions o4;
  o4.address_size = 4;
  EXPECT_EQ(disasm({kAddr, 0x00, 0x10, 0x40, 0x00, lit(1)}, nullptr, o4), "DW_OP_addr: 0x401000; DW_OP_lit1");
  EXPECT_EQ(disasm({kReg0 + 5, kRegx, 0x00}), "DW_OP_reg5; DW_OP_regx: 0");
  EXPECT_EQ(disasm({kBitPiece, 0x01, 0x02, kCall2, 0x01, 0x00}), "DW_OP_bit_piece: 1 2; DW_OP_call2: 1");
  EXPECT_EQ(disasm({kImplicitValue, 0x02, 0xaa, 0xbb, kGnuPushTlsAddress}),
            "DW_OP_implicit_value: 2; DW_OP_GNU_push_tls_address");
}

TEST(ExpressionTest, DisassemblyRegisterNames) {
  // Unknown registers and a null architecture print "?".
  EXPECT_EQ(disasm({0x77, 0x08}, nullptr), "DW_OP_breg7 (?): 8");
  EXPECT_EQ(disasm({kBregx, 0xe8, 0x07, 0x00}), "DW_OP_bregx: 1000 (?) 0");
  EXPECT_EQ(disasm({kBregx, 0x10, 0x08}), "DW_OP_bregx: 16 (rip) 8");
  EXPECT_EQ(disasm({0x77, 0x08}, arch::arch_for(usual_machine_key(3))), "DW_OP_breg7 (edi): 8");
}

TEST(ExpressionTest, DisassemblyOfMalformedInput) {
  EXPECT_EQ(disasm({}), "");
  EXPECT_EQ(disasm({lit(1), 0x01}), "DW_OP_lit1; <bad>");
  EXPECT_EQ(disasm({lit(1), kConst4u, 0x01}), "DW_OP_lit1; <bad>");
  EXPECT_EQ(disasm({0xff}), "<bad>");
}

TEST(ExpressionTest, OperatorNames) {
  EXPECT_STREQ(op_name(kAddr), "DW_OP_addr");
  EXPECT_STREQ(op_name(lit(17)), "DW_OP_lit17");
  EXPECT_STREQ(op_name(kReg0 + 31), "DW_OP_reg31");
  EXPECT_STREQ(op_name(kBreg0 + 12), "DW_OP_breg12");
  EXPECT_STREQ(op_name(kGnuPushTlsAddress), "DW_OP_GNU_push_tls_address");
  EXPECT_STREQ(op_name(kNop), "DW_OP_nop");
}

}  // namespace
}  // namespace framewalk::dwarf

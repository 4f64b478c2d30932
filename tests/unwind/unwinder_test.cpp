// The step loop on synthetic stacks: fallback rows, stop reasons, and the
// application of every rule kind.
#include <gtest/gtest.h>

#include <cstring>
#include <map>
#include <vector>

#include "arch/x86_64/frames.hpp"
#include "arch/x86_64/registers.hpp"
#include "unwind/unwinder.hpp"

namespace framewalk {
namespace {

namespace x = arch::x86_64;

// Sparse memory: 8-byte words and byte strings at chosen addresses.
class FakeMemory final : public Memory {
 public:
  void word(uint64_t address, uint64_t value) { fill(address, 8, value); }
  void code(uint64_t address, const uint8_t* data, size_t n) {
    for (size_t i = 0; i < n; ++i) cells_[address + i] = data[i];
  }
  size_t read(uint64_t address, void* out, size_t size) override {
    auto* dst = static_cast<uint8_t*>(out);
    for (size_t i = 0; i < size; ++i) {
      auto it = cells_.find(address + i);
      if (it == cells_.end()) return i;
      dst[i] = it->second;
    }
    return size;
  }

 private:
  void fill(uint64_t address, size_t n, uint64_t value) {
    for (size_t i = 0; i < n; ++i) cells_[address + i] = static_cast<uint8_t>(value >> (8 * i));
  }
  std::map<uint64_t, uint8_t> cells_;
};

struct Walk {
  std::vector<Frame> frames;
  WalkResult result;
};

// One module without a file over the fake code addresses, so that
// frame-pointer guesses can be checked to land after a call.
const ModuleMap& fake_modules() {
  static const ModuleMap map = [] {
    ModuleMap m;
    Module code;
    code.start = 0x1000;
    code.end = 0x6000;
    code.name = "fake";
    m.add(code);
    return m;
  }();
  return map;
}

// A `call rel32` just before each return address the fake stacks use.
void calls_before(FakeMemory& mem, std::initializer_list<uint64_t> return_addresses) {
  static const uint8_t kCall[5] = {0xe8, 0, 0, 0, 0};
  for (uint64_t ra : return_addresses) mem.code(ra - 5, kCall, 5);
}

Walk walk(Memory& memory, const arch::RegisterFile& regs, UnwindOptions options = {}) {
  Unwinder unwinder(fake_modules(), memory, 62);
  Walk w;
  w.result = unwinder.walk(regs, [&](const Frame& f) {
    w.frames.push_back(f);
    return true;
  }, options);
  return w;
}

arch::RegisterFile regs_at(uint64_t pc, uint64_t sp, uint64_t rbp) {
  arch::RegisterFile r;
  r.set(x::kRip, pc);
  r.set(x::kRsp, sp);
  r.set(x::kRbp, rbp);
  return r;
}

TEST(Unwinder, ActivationWithoutUnwindInfoStops) {
  FakeMemory mem;
  const Walk w = walk(mem, regs_at(0x1000, 0x7000, 0x7100));
  ASSERT_EQ(w.frames.size(), 1u);
  EXPECT_TRUE(w.frames[0].activation);
  EXPECT_EQ(w.frames[0].source, FrameSource::kContext);
  EXPECT_EQ(w.result.reason, StopReason::kNoUnwindInfo);
  EXPECT_EQ(w.result.address, 0x1000u);
}

TEST(Unwinder, FramePointerChainToOutermost) {
  FakeMemory mem;
  // Three frames: rbp chain 0x7100 -> 0x7200 -> 0x7300 (saved rbp 0, return 0).
  mem.word(0x7100, 0x7200);
  mem.word(0x7108, 0x2000);
  mem.word(0x7200, 0x7300);
  mem.word(0x7208, 0x3000);
  mem.word(0x7300, 0);
  mem.word(0x7308, 0);
  calls_before(mem, {0x2000, 0x3000});
  UnwindOptions o;
  o.first_is_return_address = true;
  const Walk w = walk(mem, regs_at(0x1000, 0x7000, 0x7100), o);
  ASSERT_EQ(w.frames.size(), 3u);
  EXPECT_EQ(w.frames[1].pc, 0x2000u);
  EXPECT_EQ(w.frames[1].source, FrameSource::kFramePointer);
  EXPECT_EQ(w.frames[1].sp, 0x7110u);
  EXPECT_EQ(w.frames[2].pc, 0x3000u);
  EXPECT_FALSE(w.frames[2].activation);
  EXPECT_EQ(w.result.reason, StopReason::kOutermost);
}

TEST(Unwinder, MaxFrames) {
  FakeMemory mem;
  for (uint64_t i = 0; i < 10; ++i) {
    mem.word(0x7100 + i * 0x100, 0x7200 + i * 0x100);
    mem.word(0x7108 + i * 0x100, 0x2000 + 0x10 * i);
    calls_before(mem, {0x2000 + 0x10 * i});
  }
  UnwindOptions o;
  o.first_is_return_address = true;
  o.max_frames = 4;
  const Walk w = walk(mem, regs_at(0x1000, 0x7000, 0x7100), o);
  EXPECT_EQ(w.frames.size(), 4u);
  EXPECT_EQ(w.result.reason, StopReason::kMaxFrames);
}

TEST(Unwinder, UnreadableSavedFramePointer) {
  FakeMemory mem;  // nothing readable at rbp
  UnwindOptions o;
  o.first_is_return_address = true;
  const Walk w = walk(mem, regs_at(0x1000, 0x7000, 0x7100), o);
  EXPECT_EQ(w.result.reason, StopReason::kBadMemory);
  EXPECT_EQ(w.result.address, 0x7100u);  // rules apply in register order: rbp's slot first
}

TEST(Unwinder, CallerStackBelowCalleeStops) {
  FakeMemory mem;
  // The frame pointer chain points back down the stack: a corrupt stack.
  mem.word(0x7100, 0x7180);
  mem.word(0x7108, 0x2000);
  mem.word(0x7180, 0x6000);
  mem.word(0x7188, 0x3000);
  calls_before(mem, {0x2000, 0x3000});
  UnwindOptions o;
  o.first_is_return_address = true;
  const Walk w = walk(mem, regs_at(0x1000, 0x7000, 0x7100), o);
  // 0x7180 is above 0x7110, fine; the next caller would have sp 0x6010 < 0x7190.
  ASSERT_GE(w.frames.size(), 2u);
  EXPECT_NE(w.result.reason, StopReason::kOutermost);
}

TEST(Unwinder, GuessThatDoesNotLandAfterACallStops) {
  FakeMemory mem;
  mem.word(0x7100, 0x7200);
  mem.word(0x7108, 0x2000);  // no call instruction before 0x2000
  UnwindOptions o;
  o.first_is_return_address = true;
  const Walk w = walk(mem, regs_at(0x1000, 0x7000, 0x7100), o);
  ASSERT_EQ(w.frames.size(), 1u);
  EXPECT_EQ(w.result.reason, StopReason::kNoUnwindInfo);
}

TEST(Unwinder, SignalTrampolineWithoutCfi) {
  FakeMemory mem;
  const uint64_t trampoline = 0x5000;
  mem.code(trampoline, x::kSigreturnCode, sizeof x::kSigreturnCode);
  // At the trampoline, sp points at the ucontext; fill its gregs.
  const uint64_t uc = 0x8000;
  for (unsigned i = 0; i < 17; ++i) mem.word(uc + x::kUcontextGregsOffset + 8 * i, 0x100 + i);
  mem.word(uc + x::kUcontextGregsOffset + 8 * 15, 0x9000);  // rsp of the interrupted code
  mem.word(uc + x::kUcontextGregsOffset + 8 * 16, 0x4444);  // rip of the interrupted code
  UnwindOptions o;
  o.first_is_return_address = true;  // the handler returned into the trampoline
  const Walk w = walk(mem, regs_at(trampoline, uc, 0), o);
  ASSERT_EQ(w.frames.size(), 2u);
  EXPECT_TRUE(w.frames[0].signal_trampoline);
  EXPECT_EQ(w.frames[1].pc, 0x4444u);
  EXPECT_EQ(w.frames[1].sp, 0x9000u);
  EXPECT_TRUE(w.frames[1].activation);  // interrupted: its PC is exact
  EXPECT_EQ(w.frames[1].source, FrameSource::kSignal);
  EXPECT_EQ(w.result.reason, StopReason::kNoUnwindInfo);  // and nothing is known about 0x4444
}

TEST(Unwinder, ApplyRowEveryRuleKind) {
  FakeMemory mem;
  mem.word(0x7010, 0xaaaa);  // [CFA-8] with CFA 0x7018
  mem.word(0x7000, 0xbbbb);  // where the expression rule points
  static const uint8_t kExprAddr[] = {0x77, 0x00};      // DW_OP_breg7 (rsp) 0 -> 0x7000
  static const uint8_t kExprValue[] = {0x08, 0x2a};     // DW_OP_const1u 42
  static const uint8_t kCfaExpr[] = {0x77, 0x18};       // DW_OP_breg7 (rsp) 24
  UnwindRow row;
  row.cfa.kind = CfaKind::kExpression;
  row.cfa.expression = Bytes(kCfaExpr, sizeof kCfaExpr);
  row.return_address_register = x::kRip;
  ASSERT_TRUE(row.set({x::kRip, RuleKind::kOffset, -8, {}, 0}).ok());
  ASSERT_TRUE(row.set({x::kRbx, RuleKind::kValOffset, 16, {}, 0}).ok());
  ASSERT_TRUE(row.set({x::kR12, RuleKind::kRegister, x::kRdi, {}, 0}).ok());
  ASSERT_TRUE(row.set({x::kR13, RuleKind::kExpression, 0, Bytes(kExprAddr, 2), 0}).ok());
  ASSERT_TRUE(row.set({x::kR14, RuleKind::kValExpression, 0, Bytes(kExprValue, 2), 0}).ok());
  ASSERT_TRUE(row.set({x::kR15, RuleKind::kUndefined, 0, {}, 0}).ok());
  ASSERT_TRUE(row.set({x::kRbp, RuleKind::kSameValue, 0, {}, 0}).ok());
  arch::RegisterFile callee = regs_at(0x1000, 0x7000, 0x1234);
  callee.set(x::kRdi, 0x5555);
  callee.set(x::kR15, 0x15);
  static const ModuleMap no_modules;
  Unwinder unwinder(no_modules, mem, 62);
  auto caller = unwinder.apply_row(row, callee);
  ASSERT_TRUE(caller.ok()) << to_string(caller.error().code);
  EXPECT_EQ(caller->get(x::kRsp), 0x7018u);
  EXPECT_EQ(caller->get(x::kRip), 0xaaaau);
  EXPECT_EQ(caller->get(x::kRbx), 0x7028u);
  EXPECT_EQ(caller->get(x::kR12), 0x5555u);
  EXPECT_EQ(caller->get(x::kR13), 0xbbbbu);
  EXPECT_EQ(caller->get(x::kR14), 42u);
  EXPECT_FALSE(caller->known(x::kR15));
  EXPECT_EQ(caller->get(x::kRbp), 0x1234u);
}

TEST(Unwinder, CfaFromUnknownRegisterIsAnError) {
  FakeMemory mem;
  UnwindRow row = x::frame_pointer_row();
  arch::RegisterFile callee;
  callee.set(x::kRip, 0x1000);
  callee.set(x::kRsp, 0x7000);  // rbp unknown
  static const ModuleMap no_modules;
  Unwinder unwinder(no_modules, mem, 62);
  auto caller = unwinder.apply_row(row, callee);
  ASSERT_FALSE(caller.ok());
  EXPECT_EQ(caller.error().code, ErrorCode::kExprNeedsRegister);
}

}  // namespace
}  // namespace framewalk

// The step loop on synthetic stacks: fallback rows, stop reasons, the
// application of every rule kind, and SFrame as the only source (with why it
// gave no row).
#include <gtest/gtest.h>

#include <cstring>
#include <map>
#include <vector>

#include "arch/capture.hpp"
#include "arch/x86_64/frames.hpp"
#include "arch/x86_64/registers.hpp"
#include "elf/elf_writer.hpp"
#include "sframe/sframe_builder.hpp"
#include "support/section_builder.hpp"
#include "support/sparse_memory.hpp"
#include "support/tiny_elf.hpp"
#include "unwind/symbolize.hpp"
#include "unwind/unwinder.hpp"

namespace framewalk {
namespace {

namespace x = arch::x86_64;

// Sparse memory with 8-byte words.
class FakeMemory final : public test::SparseMemory {
 public:
  void word(uint64_t address, uint64_t value) { put(address, value, 8); }
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

Walk walk(Memory& memory, const arch::RegisterFile& regs, UnwindOptions options = {},
          const ModuleMap& modules = fake_modules()) {
  Unwinder unwinder(modules, memory, usual_machine_key(62));
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

// A signal handler without CFI returns into the trampoline: a frame-pointer
// guess landing there is a return address although no call precedes it.
TEST(Unwinder, HandlerWithoutCfiReturnsIntoTheTrampoline) {
  FakeMemory mem;
  const uint64_t trampoline = 0x5000;
  mem.code(trampoline, x::kSigreturnCode, sizeof x::kSigreturnCode);
  const uint64_t uc = 0x7110;  // the handler's CFA: where the kernel put the ucontext
  mem.word(0x7100, 0x9100);     // the handler's saved rbp
  mem.word(0x7108, trampoline);  // its return address
  for (unsigned i = 0; i < 17; ++i) mem.word(uc + x::kUcontextGregsOffset + 8 * i, 0x100 + i);
  mem.word(uc + x::kUcontextGregsOffset + 8 * 15, 0x9000);
  mem.word(uc + x::kUcontextGregsOffset + 8 * 16, 0x4444);
  UnwindOptions o;
  o.first_is_return_address = true;
  const Walk w = walk(mem, regs_at(0x1000, 0x7000, 0x7100), o);
  ASSERT_EQ(w.frames.size(), 3u);
  EXPECT_EQ(w.frames[1].pc, trampoline);
  EXPECT_EQ(w.frames[1].source, FrameSource::kFramePointer);
  EXPECT_TRUE(w.frames[1].signal_trampoline);
  EXPECT_EQ(w.frames[2].pc, 0x4444u);
  EXPECT_TRUE(w.frames[2].activation);
}

// A CFI expression's multi-byte operands are in its machine's byte order:
// on s390x (big-endian) `DW_OP_const2u 0x0102` is 258 and `DW_OP_skip 2` is
// 00 02, and DW_OP_deref reads a big-endian word.
TEST(Unwinder, ExpressionOperandsInTheMachinesByteOrder) {
  FakeMemory mem;
  static const uint8_t kCfa[] = {
      0x0a, 0x01, 0x02,  // DW_OP_const2u 0x0102
      0x2f, 0x00, 0x02,  // DW_OP_skip +2 (over the next two bytes)
      0x30, 0x30,        // DW_OP_lit0; DW_OP_lit0 (skipped)
      0x7f, 0x00,        // DW_OP_breg15 0
      0x22,              // DW_OP_plus: r15 + 258
  };
  static const uint8_t kRaDeref[] = {0x7f, 0x08, 0x06};  // DW_OP_breg15 8; DW_OP_deref (a value)
  mem.put_big(0x8008, 0x1234, 8);  // big-endian 0x1234 at r15 + 8
  UnwindRow row;
  row.cfa.kind = CfaKind::kExpression;
  row.cfa.expression = Bytes(kCfa, sizeof kCfa);
  row.return_address_register = 14;
  ASSERT_TRUE(row.set({14, RuleKind::kValExpression, 0, Bytes(kRaDeref, sizeof kRaDeref), 0}).ok());
  arch::RegisterFile callee;
  callee.set(15, 0x8000);
  callee.set(14, 0x1000);
  static const ModuleMap no_modules;
  Unwinder unwinder(no_modules, mem, usual_machine_key(kEmS390));
  auto caller = unwinder.apply_row(row, callee);
  ASSERT_TRUE(caller.ok()) << to_string(caller.error().code);
  EXPECT_EQ(caller->get(14), 0x1234u);
  // s390x's caller SP is the CFA less 160.
  EXPECT_EQ(caller->get(15), 0x8000u + 0x102 - 160);
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
  Unwinder unwinder(no_modules, mem, usual_machine_key(62));
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

// A register saved where memory cannot be read (below a perf sample's stack
// copy): the walk fails, unless the unwinder is told to take it as unknown
// (the return address must still be read).
TEST(Unwinder, UnreadableSavedRegisterUnknownWhenAsked) {
  FakeMemory mem;
  mem.word(0x7010, 0xaaaa);  // the return address at CFA-8; rbx's slot at CFA-40 is unreadable
  UnwindRow row;
  row.cfa.kind = CfaKind::kRegisterOffset;
  row.cfa.reg = x::kRsp;
  row.cfa.offset = 0x18;
  row.return_address_register = x::kRip;
  ASSERT_TRUE(row.set({x::kRip, RuleKind::kOffset, -8, {}, 0}).ok());
  ASSERT_TRUE(row.set({x::kRbx, RuleKind::kOffset, -40, {}, 0}).ok());
  arch::RegisterFile callee = regs_at(0x1000, 0x7000, 0x1234);
  callee.set(x::kRbx, 0x77);
  static const ModuleMap no_modules;
  Unwinder unwinder(no_modules, mem, usual_machine_key(62));
  auto strict = unwinder.apply_row(row, callee);
  ASSERT_FALSE(strict.ok());
  EXPECT_EQ(strict.error().code, ErrorCode::kMemoryUnreadable);
  unwinder.set_unreadable_saved_registers_unknown(true);
  auto lenient = unwinder.apply_row(row, callee);
  ASSERT_TRUE(lenient.ok()) << to_string(lenient.error().code);
  EXPECT_EQ(lenient->get(x::kRip), 0xaaaau);
  EXPECT_FALSE(lenient->known(x::kRbx));
  // The return address unreadable: an error either way.
  ASSERT_TRUE(row.set({x::kRip, RuleKind::kOffset, -48, {}, 0}).ok());
  EXPECT_FALSE(unwinder.apply_row(row, callee).ok());
}

// A row the cache keeps flat steps exactly as the row: the same registers
// (every one, known or not) or the same error, strict and lenient about
// unreadable saved registers; rows of other shapes are not made flat.
TEST(Unwinder, FlatRowStepsAsTheRowDoes) {
  FakeMemory mem;
  for (uint64_t a = 0x7000; a < 0x7100; a += 8) mem.word(a, 0x100000 + a);
  const arch::Machine& m = *arch::machine_for(usual_machine_key(62));
  auto offset_row = [](uint16_t cfa_reg, int64_t cfa_offset, std::initializer_list<std::pair<uint16_t, int64_t>> saved) {
    UnwindRow row;
    row.cfa.kind = CfaKind::kRegisterOffset;
    row.cfa.reg = cfa_reg;
    row.cfa.offset = cfa_offset;
    row.return_address_register = x::kRip;
    for (auto [reg, off] : saved) EXPECT_TRUE(row.set({reg, RuleKind::kOffset, off, {}, 0}).ok());
    return row;
  };
  std::vector<UnwindRow> rows = {
      offset_row(x::kRsp, 8, {{x::kRip, -8}}),
      offset_row(x::kRsp, 56, {{x::kRip, -8}, {x::kRbx, -16}, {x::kR12, -24}, {x::kR13, -32}, {x::kRbp, -40}}),
      offset_row(x::kRbp, 16, {{x::kRip, -8}, {x::kRbp, -16}}),
      offset_row(x::kRbx, 32, {{x::kRip, -8}}),         // a base the callee does not know
      offset_row(x::kRsp, 0x200, {{x::kRip, -8}}),      // the return address beyond the memory
      offset_row(x::kRsp, 24, {{x::kRip, -8}, {x::kR14, -0x80}}),  // a saved register below it
  };
  UnwindRow same = offset_row(x::kRsp, 16, {{x::kRip, -8}});
  ASSERT_TRUE(same.set({x::kR15, RuleKind::kSameValue, 0, {}, 0}).ok());
  rows.push_back(same);
  static const ModuleMap no_modules;
  for (bool lenient : {false, true}) {
    Unwinder unwinder(no_modules, mem, usual_machine_key(62));
    unwinder.set_unreadable_saved_registers_unknown(lenient);
    for (size_t i = 0; i < rows.size(); ++i) {
      SCOPED_TRACE("row " + std::to_string(i) + (lenient ? ", lenient" : ""));
      const RowCache::FlatRow flat = RowCache::flatten(m, rows[i]);
      ASSERT_TRUE(flat.usable);
      arch::RegisterFile by_row = regs_at(0x1000, 0x7010, 0x7040);
      by_row.set(x::kR15, 0x15);
      arch::RegisterFile by_flat = by_row;
      auto a = unwinder.apply_row_in_place(rows[i], &by_row);
      auto b = unwinder.apply_flat_in_place(flat, &by_flat);
      ASSERT_EQ(a.ok(), b.ok());
      if (!a.ok()) {
        EXPECT_EQ(a.error().code, b.error().code);
        EXPECT_EQ(a.error().offset, b.error().offset);
        continue;
      }
      for (unsigned r = 0; r < arch::RegisterFile::kMaxRegisters; ++r) {
        EXPECT_EQ(by_row.known(r), by_flat.known(r)) << "register " << r;
        EXPECT_EQ(by_row.value_or(r, 0), by_flat.value_or(r, 0)) << "register " << r;
      }
    }
  }
  // Not flat: an expression CFA, a signal frame, a value rule, a rule for
  // the stack pointer, no return-address rule.
  UnwindRow expression = rows[0];
  static const uint8_t kCfaExpr[] = {0x77, 0x18};
  expression.cfa.kind = CfaKind::kExpression;
  expression.cfa.expression = Bytes(kCfaExpr, sizeof kCfaExpr);
  UnwindRow signal = rows[0];
  signal.signal_frame = true;
  UnwindRow value = rows[0];
  ASSERT_TRUE(value.set({x::kRbx, RuleKind::kValOffset, 16, {}, 0}).ok());
  UnwindRow sp = rows[0];
  ASSERT_TRUE(sp.set({x::kRsp, RuleKind::kOffset, -16, {}, 0}).ok());
  UnwindRow no_ra = offset_row(x::kRsp, 16, {{x::kRbx, -16}});
  for (const UnwindRow* r : {&expression, &signal, &value, &sp, &no_ra}) EXPECT_FALSE(RowCache::flatten(m, *r).usable);
}

#if defined(__x86_64__)  // the host's own capture
// framewalk_x86_64_capture stores zero for the caller-saved registers: they
// are not known, so an expression reading one fails instead of reading 0.
TEST(Unwinder, CapturedContextKnowsOnlyTheRegistersCaptured) {
  uint64_t raw[x::kCapturedRegisters];
  x::framewalk_x86_64_capture(raw);
  const arch::RegisterFile captured = x::from_capture(raw);
  for (uint16_t reg : {x::kRbx, x::kRbp, x::kRsp, x::kR12, x::kR13, x::kR14, x::kR15, x::kRip})
    EXPECT_EQ(captured.get(reg), raw[reg]) << "register " << reg;
  for (uint16_t reg : {x::kRax, x::kRdx, x::kRcx, x::kRsi, x::kRdi, x::kR8, x::kR9, x::kR10, x::kR11})
    EXPECT_FALSE(captured.known(reg)) << "register " << reg;

  FakeMemory mem;
  static const ModuleMap no_modules;
  Unwinder unwinder(no_modules, mem, usual_machine_key(62));
  static const uint8_t kCfaFromRax[] = {0x70, 0x08};  // DW_OP_breg0 (rax) 8
  UnwindRow row;
  row.cfa.kind = CfaKind::kExpression;
  row.cfa.expression = Bytes(kCfaFromRax, sizeof kCfaFromRax);
  row.return_address_register = x::kRip;
  ASSERT_TRUE(row.set({x::kRip, RuleKind::kOffset, -8, {}, 0}).ok());
  auto caller = unwinder.apply_row(row, captured);
  ASSERT_FALSE(caller.ok());
  EXPECT_EQ(caller.error().code, ErrorCode::kExprNeedsRegister);
  // A register rule copying a caller-saved register leaves it unknown, not 0.
  UnwindRow copy = x::entry_row();
  ASSERT_TRUE(copy.set({x::kRbx, RuleKind::kRegister, x::kRdi, {}, 0}).ok());
  mem.word(*captured.get(x::kRsp), 0x1111);
  auto copied = unwinder.apply_row(copy, captured);
  ASSERT_TRUE(copied.ok()) << to_string(copied.error().code);
  EXPECT_FALSE(copied->known(x::kRbx));
}
#elif defined(__aarch64__)
// framewalk_capture on AArch64 knows x19-x30, sp and pc; x0-x18 are zero
// placeholders, unknown.
TEST(Unwinder, CapturedContextKnowsOnlyTheRegistersCaptured) {
  uint64_t raw[arch::kCaptureWords];
  arch::framewalk_capture(raw);
  const arch::RegisterFile captured = arch::from_host_capture(raw);
  for (uint16_t reg = 19; reg <= 32; ++reg) EXPECT_EQ(captured.get(reg), raw[reg]) << "register " << reg;
  for (uint16_t reg = 0; reg < 19; ++reg) EXPECT_FALSE(captured.known(reg)) << "register " << reg;
  EXPECT_EQ(raw[30], raw[32]) << "the PC is the return address";
}
#elif defined(__arm__)
// framewalk_capture on 32-bit ARM knows r4-r11, sp, lr, pc and the T bit.
TEST(Unwinder, CapturedContextKnowsOnlyTheRegistersCaptured) {
  uint64_t raw[arch::kCaptureWords];
  arch::framewalk_capture(raw);
  const arch::RegisterFile captured = arch::from_host_capture(raw);
  for (uint16_t reg = 4; reg <= 11; ++reg) EXPECT_EQ(captured.get(reg), raw[reg]) << "register " << reg;
  for (uint16_t reg : {0, 1, 2, 3, 12}) EXPECT_FALSE(captured.known(reg)) << "register " << reg;
  EXPECT_EQ(raw[15], raw[14] & ~uint64_t{1}) << "the PC is the return address, without the Thumb bit";
  EXPECT_EQ(raw[16], (raw[14] & 1) << 5) << "the T bit";
}
#endif

TEST(Unwinder, CfaFromUnknownRegisterIsAnError) {
  FakeMemory mem;
  UnwindRow row = x::frame_pointer_row();
  arch::RegisterFile callee;
  callee.set(x::kRip, 0x1000);
  callee.set(x::kRsp, 0x7000);  // rbp unknown
  static const ModuleMap no_modules;
  Unwinder unwinder(no_modules, mem, usual_machine_key(62));
  auto caller = unwinder.apply_row(row, callee);
  ASSERT_FALSE(caller.ok());
  EXPECT_EQ(caller.error().code, ErrorCode::kExprNeedsRegister);
}

// A machine without a descriptor: no frame, a reason, and no guess made
// with another machine's registers.
TEST(Unwinder, UnsupportedMachineStopsBeforeTheFirstFrame) {
  FakeMemory mem;
  mem.word(0x7000, 0x2000);
  static const ModuleMap no_modules;
  constexpr uint16_t kEmMips = 8;
  const Unwinder unwinder(no_modules, mem, usual_machine_key(kEmMips));
  EXPECT_EQ(unwinder.machine(), nullptr);
  size_t frames = 0;
  const WalkResult result = unwinder.walk(regs_at(0x1000, 0x7000, 0x7100), [&](const Frame&) {
    ++frames;
    return true;
  });
  EXPECT_EQ(frames, 0u);
  EXPECT_EQ(result.frames, 0u);
  EXPECT_EQ(result.reason, StopReason::kUnsupportedMachine);
  EXPECT_EQ(result.address, kEmMips);
  EXPECT_STREQ(to_string(result.reason), "unsupported-machine");
  auto caller = unwinder.apply_row(x::entry_row(), regs_at(0x1000, 0x7000, 0x7100));
  ASSERT_FALSE(caller.ok());
  EXPECT_EQ(caller.error().code, ErrorCode::kUnsupportedMachine);
  EXPECT_EQ(caller.error().offset, kEmMips);
}

// ---- SFrame as the only source ------------------------------------------------

// A module at [0x10000, 0x20000) made of `file`.
Module module_of(std::shared_ptr<const elf::ElfFile> file, const std::string& name) {
  Module m;
  m.start = 0x10000;
  m.end = 0x20000;
  m.name = name;
  m.data = std::make_shared<ModuleData>(name, std::move(file));
  return m;
}

// The tiny test ELF (no CFI) plus the .sframe of `spec`, built for where
// elf_writer puts it.
Module sframe_module(sframe::test::SectionSpec spec) {
  auto tiny = elf::ElfFile::parse(FileImage::from_buffer(test::tiny_elf(true, Endian::kLittle)), "tiny");
  EXPECT_TRUE(tiny.ok());
  auto placement = elf::plan_added_section(**tiny, elf::SegmentPolicy::kAuto);
  EXPECT_TRUE(placement.ok());
  spec.address = placement->address;
  const std::vector<uint8_t> section = sframe::test::build(spec);
  elf::NewSection s;
  s.name = ".sframe";
  s.type = elf::kShtGnuSframe;
  s.data = section;
  auto bytes = elf::add_section(**tiny, *placement, s);
  EXPECT_TRUE(bytes.ok());
  auto copy = elf::ElfFile::parse(FileImage::from_buffer(std::move(*bytes)), "tiny+sframe");
  EXPECT_TRUE(copy.ok());
  return module_of(*copy, "tiny+sframe");
}

sframe::test::FdeSpec sframe_function(uint64_t start, std::vector<sframe::test::FreSpec> fres, unsigned type = 0) {
  sframe::test::FdeSpec f;
  f.start = start;
  f.size = 0x40;
  f.fde_type = type;
  f.fres = std::move(fres);
  return f;
}

// 0x11000: CFA = rsp+8 (RA at CFA-8, from the header); 0x11100: no FREs;
// 0x11200: a signal FDE without FREs; 0x11300: its first FRE at +0x10;
// 0x11400: FLEX, CFA = r12+16; 0x11500: RA undefined; nothing at 0x11800.
sframe::test::SectionSpec sframe_functions() {
  using sframe::test::ctrl;
  using sframe::test::fre;
  sframe::test::SectionSpec spec;
  spec.version = 3;
  spec.fdes = {sframe_function(0x11000, {fre(0, {8})}), sframe_function(0x11100, {}),
               sframe_function(0x11200, {}), sframe_function(0x11300, {fre(0x10, {8})}),
               sframe_function(0x11400, {fre(0, {ctrl(x::kR12, false), 16})}, 1),
               sframe_function(0x11500, {fre(0, {})})};
  spec.fdes[2].signal = true;
  return spec;
}

Walk sframe_walk(const ModuleMap& modules, Memory& memory, const arch::RegisterFile& regs) {
  UnwindOptions o;
  o.sources = SourceOrder::kSframe;
  o.allow_frame_pointer = false;  // no fallback: the walk stops and says why
  return walk(memory, regs, o, modules);
}

TEST(Unwinder, SframeOnlyNamesWhyItHasNoRow) {
  ModuleMap modules;
  modules.add(sframe_module(sframe_functions()));
  FakeMemory mem;
  struct Case {
    uint64_t pc;
    SframeMiss miss;
  } cases[] = {{0x11800, SframeMiss::kNoFde},       {0x11110, SframeMiss::kNoRow},
               {0x11210, SframeMiss::kSignalWithoutRows}, {0x11308, SframeMiss::kNoRow},
               {0x30000, SframeMiss::kNoModule}};
  for (const Case& c : cases) {
    SCOPED_TRACE(c.pc);
    const Walk w = sframe_walk(modules, mem, regs_at(c.pc, 0x7000, 0x7100));
    ASSERT_EQ(w.frames.size(), 1u);
    EXPECT_EQ(w.result.reason, StopReason::kNoUnwindInfo);
    EXPECT_EQ(w.result.sframe_miss, c.miss) << to_string(w.result.sframe_miss);
  }
}

TEST(Unwinder, SframeRowsAndTheirLimits) {
  ModuleMap modules;
  modules.add(sframe_module(sframe_functions()));
  FakeMemory mem;
  // 0x11010 returns to 0x11410 (FLEX: r12-based CFA, topmost only), which
  // returns to 0x11510 (RA undefined).
  mem.word(0x7000, 0x11410);
  mem.word(0x7008, 0x11510);
  Walk w = sframe_walk(modules, mem, regs_at(0x11010, 0x7000, 0x7100));
  ASSERT_EQ(w.frames.size(), 2u);
  EXPECT_EQ(w.frames[1].source, FrameSource::kSframe);
  EXPECT_EQ(w.frames[1].sframe_miss, SframeMiss::kNone);
  EXPECT_EQ(w.result.reason, StopReason::kNoUnwindInfo);
  EXPECT_EQ(w.result.sframe_miss, SframeMiss::kTopmostOnly);
  // The same FLEX row as the topmost frame: r12 is known there.
  arch::RegisterFile top = regs_at(0x11410, 0x6f00, 0x7200);
  top.set(x::kR12, 0x6ff8);  // CFA 0x7008: RA at 0x7000
  w = sframe_walk(modules, mem, top);
  ASSERT_EQ(w.frames.size(), 2u);
  EXPECT_EQ(w.frames[1].pc, 0x11410u);
  EXPECT_EQ(w.frames[1].source, FrameSource::kSframe);
  // An RA-undefined row (it has no CFA) ends the stack as its outermost frame.
  w = sframe_walk(modules, mem, regs_at(0x11510, 0x7000, 0x7100));
  ASSERT_EQ(w.frames.size(), 1u);
  EXPECT_EQ(w.result.reason, StopReason::kOutermost);
}

TEST(Unwinder, SframeOnlyWithoutOrUnsortedSection) {
  auto tiny = elf::ElfFile::parse(FileImage::from_buffer(test::tiny_elf(true, Endian::kLittle)), "tiny");
  ASSERT_TRUE(tiny.ok());
  ModuleMap without;
  without.add(module_of(*tiny, "tiny"));
  FakeMemory mem;
  EXPECT_EQ(sframe_walk(without, mem, regs_at(0x11010, 0x7000, 0x7100)).result.sframe_miss, SframeMiss::kNoSection);
  sframe::test::SectionSpec unsorted = sframe_functions();
  unsorted.flags = sframe::kFlagFuncStartPcrel;
  ModuleMap modules;
  modules.add(sframe_module(unsorted));
  EXPECT_EQ(sframe_walk(modules, mem, regs_at(0x11010, 0x7000, 0x7100)).result.sframe_miss, SframeMiss::kUnsorted);
}

// ---- the return address, and unwind information that cannot be read -------

TEST(Unwinder, ReturnAddressWithoutRuleIsAnErrorNotTheEnd) {
  FakeMemory mem;
  UnwindRow row;
  row.cfa = {CfaKind::kRegisterOffset, x::kRsp, 8, {}, 0};
  row.return_address_register = x::kRip;
  static const ModuleMap no_modules;
  Unwinder unwinder(no_modules, mem, usual_machine_key(62));
  auto caller = unwinder.apply_row(row, regs_at(0x1000, 0x7000, 0x7100));
  ASSERT_FALSE(caller.ok());
  EXPECT_EQ(caller.error().code, ErrorCode::kReturnAddressNoRule);
}

TEST(Unwinder, ReturnAddressFromAnUnknownRegisterIsAnError) {
  FakeMemory mem;
  static const ModuleMap no_modules;
  Unwinder unwinder(no_modules, mem, usual_machine_key(62));
  for (RuleKind kind : {RuleKind::kRegister, RuleKind::kSameValue}) {
    SCOPED_TRACE(static_cast<int>(kind));
    UnwindRow row;
    row.cfa = {CfaKind::kRegisterOffset, x::kRsp, 8, {}, 0};
    row.return_address_register = x::kRip;
    ASSERT_TRUE(row.set({x::kRip, kind, x::kR11, {}, 0}).ok());
    arch::RegisterFile callee;
    callee.set(x::kRsp, 0x7000);  // neither rip nor r11 known
    auto caller = unwinder.apply_row(row, callee);
    ASSERT_FALSE(caller.ok());
    EXPECT_EQ(caller.error().code, ErrorCode::kReturnAddressUnknown);
    // With the register known, the same row gives the caller's PC.
    callee.set(x::kR11, 0x2345);
    callee.set(x::kRip, 0x2345);
    caller = unwinder.apply_row(row, callee);
    ASSERT_TRUE(caller.ok());
    EXPECT_EQ(caller->get(x::kRip), 0x2345u);
  }
}

// The tiny test ELF plus an .eh_frame with one FDE over [0x11000, 0x11040)
// running `instructions` after the CIE's `cie_instructions` (default: CFA =
// rsp+8, rip at CFA-8) with return-address column `ra_column`.
Module eh_frame_module(const std::vector<uint8_t>& instructions,
                       std::vector<uint8_t> cie_instructions = {0x0c, x::kRsp, 8, 0x80 | x::kRip, 1},
                       uint16_t ra_column = x::kRip) {
  auto tiny = elf::ElfFile::parse(FileImage::from_buffer(test::tiny_elf(true, Endian::kLittle)), "tiny");
  EXPECT_TRUE(tiny.ok());
  auto placement = elf::plan_added_section(**tiny, elf::SegmentPolicy::kAuto);
  EXPECT_TRUE(placement.ok());
  test::CfiBuilder b(dwarf::CfiKind::kEhFrame, Endian::kLittle, placement->address);
  test::CieSpec cie;
  cie.instructions = std::move(cie_instructions);
  cie.return_address_register = ra_column;
  const auto c = b.cie(cie);
  test::FdeSpec fde;
  fde.pc_begin = 0x11000;
  fde.pc_range = 0x40;
  fde.instructions = instructions;
  b.fde(c.start, fde);
  b.terminator();
  const std::vector<uint8_t> section = b.finish();
  elf::NewSection s;
  s.name = ".eh_frame";
  s.data = section;
  auto bytes = elf::add_section(**tiny, *placement, s);
  EXPECT_TRUE(bytes.ok());
  auto copy = elf::ElfFile::parse(FileImage::from_buffer(std::move(*bytes)), "tiny+eh_frame");
  EXPECT_TRUE(copy.ok());
  return module_of(*copy, "tiny+eh_frame");
}

TEST(Unwinder, WalkStopsWithAnErrorWhereTheReturnAddressIsUnknown) {
  ModuleMap modules;
  modules.add(eh_frame_module({0x09, x::kRip, x::kR11}));  // DW_CFA_register rip, r11
  FakeMemory mem;
  const Walk w = walk(mem, regs_at(0x11010, 0x7000, 0x7100), {}, modules);  // r11 unknown
  ASSERT_EQ(w.frames.size(), 1u);
  EXPECT_EQ(w.result.reason, StopReason::kBadUnwindInfo);  // not outermost: nothing said the stack ends
  EXPECT_EQ(w.result.error, ErrorCode::kReturnAddressUnknown);
  EXPECT_EQ(w.result.address, 0x11010u);
  // DW_CFA_undefined rip: the natural end.
  ModuleMap outermost;
  outermost.add(eh_frame_module({0x07, x::kRip}));
  const Walk end = walk(mem, regs_at(0x11010, 0x7000, 0x7100), {}, outermost);
  EXPECT_EQ(end.result.reason, StopReason::kOutermost);
}

// AArch64 (a link-register machine): the CIE says CFA = sp and nothing of
// x30, as gcc's do. An activation there (a leaf) returns to x30; a frame at
// a return address has made a call, so a row without an x30 rule cannot be
// right for it.
TEST(Unwinder, LinkRegisterWithoutRuleHoldsOnlyForAnActivation) {
  constexpr uint16_t kX30 = 30, kSp = 31, kPc = 32;
  ModuleMap modules;
  modules.add(eh_frame_module({}, {0x0c, kSp, 0}, kX30));  // def_cfa sp+0
  FakeMemory mem;
  arch::RegisterFile regs;
  regs.set(kPc, 0x11010);
  regs.set(kSp, 0x7000);
  regs.set(kX30, 0x0012000000011024);  // PAC-signed: stripped
  auto run = [&](bool first_is_return_address) {
    UnwindOptions o;
    o.first_is_return_address = first_is_return_address;
    o.max_frames = 2;
    Unwinder unwinder(modules, mem, usual_machine_key(183));
    Walk w;
    w.result = unwinder.walk(regs, [&](const Frame& f) {
      w.frames.push_back(f);
      return true;
    }, o);
    return w;
  };
  const Walk leaf = run(false);
  ASSERT_EQ(leaf.frames.size(), 2u);
  EXPECT_EQ(leaf.frames[1].pc, 0x11024u);
  EXPECT_EQ(leaf.frames[1].sp, 0x7000u);
  EXPECT_EQ(leaf.result.reason, StopReason::kMaxFrames);
  const Walk caller = run(true);
  ASSERT_EQ(caller.frames.size(), 1u);
  EXPECT_EQ(caller.result.reason, StopReason::kBadUnwindInfo);
  EXPECT_EQ(caller.result.error, ErrorCode::kReturnAddressNoRule);
}

TEST(Unwinder, BrokenFdeCoveringThePcStopsInsteadOfAGuess) {
  // A frame-pointer chain a guess would follow: rbp -> [saved rbp, return address].
  FakeMemory mem;
  mem.word(0x7100, 0x7200);
  mem.word(0x7108, 0x11805);
  calls_before(mem, {0x11805});
  UnwindOptions o;
  o.first_is_return_address = true;  // a return-address frame: the guess is allowed
  ModuleMap good;
  good.add(eh_frame_module({}));
  ModuleMap broken;
  broken.add(eh_frame_module({0x41, 0x17}));  // advance 1; 0x17 is no DW_CFA opcode
  // Outside the FDE, the guess is taken; inside the broken one, the walk stops.
  const Walk guess = walk(mem, regs_at(0x11081, 0x7000, 0x7100), o, broken);
  ASSERT_GE(guess.frames.size(), 2u);
  EXPECT_EQ(guess.frames[1].source, FrameSource::kFramePointer);
  const Walk w = walk(mem, regs_at(0x11011, 0x7000, 0x7100), o, broken);
  ASSERT_EQ(w.frames.size(), 1u);
  EXPECT_EQ(w.result.reason, StopReason::kBadUnwindInfo);
  EXPECT_EQ(w.result.error, ErrorCode::kUnknownCfaOpcode);
  EXPECT_EQ(w.result.address, 0x11011u);
  // The row cache keeps the error too.
  RowCache cache;
  o.row_cache = &cache;
  for (int i = 0; i < 2; ++i) {
    const Walk cached = walk(mem, regs_at(0x11011, 0x7000, 0x7100), o, broken);
    EXPECT_EQ(cached.result.reason, StopReason::kBadUnwindInfo);
  }
  // A sound FDE there is used as it is: its return address, 0, ends the stack.
  mem.word(0x7000, 0);
  o.row_cache = nullptr;
  const Walk ok = walk(mem, regs_at(0x11011, 0x7000, 0x7100), o, good);
  EXPECT_EQ(ok.result.reason, StopReason::kOutermost);
}

namespace replaced {

// One function at 0x11000 whose CFA is rsp + `cfa_offset` (its return address
// at CFA - 8).
Module module_with_cfa(int64_t cfa_offset) {
  using sframe::test::fre;
  sframe::test::SectionSpec spec;
  spec.version = 3;
  spec.fdes = {sframe_function(0x11000, {fre(0, {cfa_offset})})};
  return sframe_module(spec);
}

}  // namespace replaced

// A module unloaded and another loaded at its address between two walks that
// share one RowCache: the second walk gets the new module's rules, not the
// rows cached for the old one (the cache is keyed by module id, never reused).
TEST(Unwinder, AModuleReplacedAtItsAddressGetsItsOwnRows) {
  FakeMemory mem;
  mem.word(0x7000, 0x11aa0);  // the return address if CFA = rsp + 8
  mem.word(0x7010, 0x11bb0);  // ... if CFA = rsp + 24
  RowCache cache;
  UnwindOptions o;
  o.sources = SourceOrder::kSframe;
  o.allow_frame_pointer = false;
  o.row_cache = &cache;
  o.max_frames = 2;
  ModuleMap modules;
  const uint64_t first = modules.add(replaced::module_with_cfa(8));
  const uint64_t generation = modules.generation();
  Walk w = walk(mem, regs_at(0x11010, 0x7000, 0x7100), o, modules);
  ASSERT_EQ(w.frames.size(), 2u);
  EXPECT_EQ(w.frames[1].pc, 0x11aa0u);
  EXPECT_EQ(cache.size(), 2u);  // both frames' rows (the second: none, cached too)
  EXPECT_TRUE(modules.remove(first));
  const uint64_t second = modules.add(replaced::module_with_cfa(24));
  EXPECT_NE(first, second);
  EXPECT_NE(modules.generation(), generation);
  w = walk(mem, regs_at(0x11010, 0x7000, 0x7100), o, modules);
  ASSERT_EQ(w.frames.size(), 2u);
  EXPECT_EQ(w.frames[1].pc, 0x11bb0u);
  EXPECT_EQ(w.frames[0].module->id, second);
}

TEST(ModuleMap, IdsGenerationsAndStableAddresses) {
  ModuleMap map;
  EXPECT_EQ(map.generation(), 0u);
  Module a;
  a.start = 0x1000;
  a.end = 0x2000;
  a.name = "a";
  const uint64_t ida = map.add(a);
  const Module* pa = map.find(0x1800);
  ASSERT_NE(pa, nullptr);
  EXPECT_EQ(pa->id, ida);
  // Modules added before and after it do not move it.
  for (uint64_t i = 0; i < 100; ++i) {
    Module m;
    m.start = i < 50 ? 0x100 + i : 0x10000 + 0x1000 * i;
    m.end = m.start + 1;
    map.add(m);
  }
  EXPECT_EQ(map.find(0x1800), pa);
  EXPECT_EQ(map.by_id(ida), pa);
  const uint64_t after_adds = map.generation();
  EXPECT_NE(after_adds, 0u);
  // Ids are never reused, also by another map.
  ModuleMap other;
  EXPECT_NE(other.add(a), ida);
  EXPECT_TRUE(map.remove(ida));
  EXPECT_FALSE(map.remove(ida));
  EXPECT_EQ(map.find(0x1800), nullptr);
  EXPECT_EQ(map.by_id(ida), nullptr);
  const uint64_t after_remove = map.generation();
  EXPECT_NE(after_remove, after_adds);
  // Generations are never reused, also by another map: a map and its
  // generation name one content.
  EXPECT_NE(other.generation(), after_adds);
  EXPECT_NE(other.generation(), after_remove);
  // remove_range: every module overlapping the range (an munmap).
  EXPECT_EQ(map.remove_range(0x100, 0x120), 0x20u);
  EXPECT_EQ(map.size(), 68u);
  const uint64_t after_range = map.generation();
  EXPECT_NE(after_range, after_remove);
  EXPECT_EQ(map.remove_range(0x5000, 0x6000), 0u);
  EXPECT_EQ(map.generation(), after_range);  // nothing removed, nothing changed
  // A hint found in one content is not used for another with the same map:
  // the map assigned a copy whose module holds the address differently.
  ModuleMap nested;
  Module outer;
  outer.start = 0x10000;
  outer.end = 0x20000;
  nested.add(outer);
  ModuleMap::FindHint hint;
  const Module* found = nested.find(0x18000, &hint);
  ASSERT_NE(found, nullptr);
  ModuleMap with_inner = nested;
  Module inner;
  inner.start = 0x17000;
  inner.end = 0x19000;
  with_inner.add(inner);
  nested = with_inner;
  const Module* now = nested.find(0x18000, &hint);
  ASSERT_NE(now, nullptr);
  EXPECT_EQ(now->start, 0x17000u);
  EXPECT_EQ(nested.find(0x10800, &hint)->start, 0x10000u);
}

TEST(RowCache, BoundedKeyedByModuleIdAndForgetful) {
  RowCache cache(4);  // 16 entries
  RowCache::Entry e;
  e.found = true;
  e.row.pc_begin = 1;
  for (uint64_t pc = 0; pc < 1000; ++pc) cache.add(7, pc, 0, e);
  EXPECT_LE(cache.size(), cache.capacity());
  EXPECT_EQ(cache.capacity(), 16u);
  cache.add(7, 5000, 0, e);
  ASSERT_NE(cache.find(7, 5000, 0), nullptr);
  EXPECT_EQ(cache.find(8, 5000, 0), nullptr);  // another module at the same offset
  EXPECT_EQ(cache.find(7, 5000, 1), nullptr);  // another variant
  cache.forget_module(7);
  EXPECT_EQ(cache.find(7, 5000, 0), nullptr);
  EXPECT_EQ(cache.size(), 0u);
}

// A long-lived map and cache over a process that maps and unmaps 10,000
// libraries: the files no module uses are closed beyond the cache's bound.
TEST(ModuleCache, TenThousandLibrariesMappedAndUnmappedStayBounded) {
  ModuleCache cache(8);
  ModuleMap map;
  for (int i = 0; i < 10000; ++i) {
    std::vector<uint8_t> image = test::tiny_elf(true, Endian::kLittle);
    image.push_back(static_cast<uint8_t>(i));  // each library its own bytes
    image.push_back(static_cast<uint8_t>(i >> 8));
    auto data = cache.from_bytes(std::move(image), "lib" + std::to_string(i), "lib" + std::to_string(i));
    ASSERT_TRUE(data.ok());
    Module m;
    m.start = 0x10000;
    m.end = 0x20000;
    m.data = *data;
    const uint64_t id = map.add(std::move(m));
    if (i % 3 == 0) continue;  // a third stays mapped a while
    map.remove(id);
    if (i % 300 == 299) map.remove_range(0, ~uint64_t{0});
  }
  EXPECT_LE(cache.size(), 8u + map.size() + 1);
  EXPECT_LE(map.size(), 100u);
}

// A module without a file: code a JIT made, described by a bare .eh_frame and
// a symbol list. The walk takes its rows and names its function; a second
// function, without a row, is walked by its frame pointer through the
// image's code bytes.
TEST(ModuleData, FromABareEhFrameAndASymbolList) {
  constexpr uint64_t kCode = 0x50000, kEhFrame = 0x60000;
  test::CfiBuilder b(dwarf::CfiKind::kEhFrame, Endian::kLittle, kEhFrame);
  test::CieSpec cie;
  cie.instructions = {0x0c, x::kRsp, 8, 0x80 | x::kRip, 1};  // CFA = rsp + 8, rip at CFA - 8
  cie.return_address_register = x::kRip;
  const auto c = b.cie(cie);
  test::FdeSpec fde;
  fde.pc_begin = kCode;
  fde.pc_range = 0x40;
  fde.instructions = {0x0e, 24};  // DW_CFA_def_cfa_offset 24
  b.fde(c.start, fde);
  b.terminator();
  elf::SyntheticImage image;
  image.machine = 62;
  image.code_address = kCode;
  image.code_size = 0x100;
  image.code.assign(0x100, 0x90);
  // jit_b at +0x80: push rbp; mov rbp, rsp; call ...; its return address at +0x89.
  const uint8_t prologue[] = {0x55, 0x48, 0x89, 0xe5, 0xe8, 0, 0, 0, 0};
  std::copy(std::begin(prologue), std::end(prologue), image.code.begin() + 0x80);
  image.eh_frame = b.finish();
  image.eh_frame_address = kEhFrame;
  image.symbols = {{"jit_a", kCode, 0x40}, {"jit_b", kCode + 0x80, 0x40}};
  auto data = module_data_from_image(image, "[jit]");
  ASSERT_TRUE(data.ok()) << to_string(data.error().code);
  ModuleMap modules;
  Module m;
  m.start = kCode;
  m.end = kCode + image.code_size;
  m.name = "[jit]";
  m.data = *data;
  modules.add(m);
  FakeMemory mem;
  mem.word(0x7010, kCode + 0x89);  // jit_a's return address (CFA = 0x7000 + 24): into jit_b
  mem.word(0x7100, 0);             // jit_b's frame record: the outermost
  mem.word(0x7108, 0);
  const Walk w = walk(mem, regs_at(kCode + 0x10, 0x7000, 0x7100), {}, modules);
  ASSERT_GE(w.frames.size(), 2u);
  EXPECT_EQ(w.frames[1].pc, kCode + 0x89);
  EXPECT_EQ(w.frames[1].source, FrameSource::kEhFrame);
  const FrameSymbol s0 = symbolize(w.frames[0]), s1 = symbolize(w.frames[1]);
  EXPECT_EQ(s0.function, "jit_a");
  EXPECT_EQ(s0.offset, 0x10u);
  EXPECT_EQ(s1.function, "jit_b");
  ASSERT_EQ(w.frames.size(), 2u);
  EXPECT_EQ(w.result.reason, StopReason::kOutermost) << to_string(w.result.reason);
}

}  // namespace
}  // namespace framewalk

namespace framewalk {
namespace {

// Rows from the test itself: `row` for every frame (the step loop's
// RowFinder, as the in-process path gives its rows).
class OneRow final : public RowFinder {
 public:
  explicit OneRow(const UnwindRow& row) : row_(row) {}
  bool find(const Frame&, UnwindRow* row) const override {
    *row = row_;
    return true;
  }
  FrameSource source() const override { return FrameSource::kEhFrame; }
  bool in_code(uint64_t address) const override { return fake_modules().find(address) != nullptr; }

 private:
  UnwindRow row_;
};

// CFA = rsp + 16, the return address at CFA - 8 (x86-64).
UnwindRow call_frame_row() {
  UnwindRow row;
  row.cfa = {CfaKind::kRegisterOffset, x::kRsp, 16, {}, 0};
  row.return_address_register = x::kRip;
  EXPECT_TRUE(row.set({x::kRip, RuleKind::kOffset, -8, {}, 0}).ok());
  return row;
}

// A row that restores more registers than the register file has room for
// (numbers of 128 and up beyond its list) stops the walk with
// bad-unwind-info naming the first register that did not fit: dropping it
// would leave the callee's value in the caller's register.
TEST(Unwinder, RowWithMoreRegistersThanTheFileHoldsStops) {
  FakeMemory mem;
  mem.word(0x7008, 0x2000);
  calls_before(mem, {0x2000});
  // High registers the thread's own file holds already (a row holds 36
  // rules, fewer than the list: the rest of the list is taken).
  static_assert(arch::RegisterFile::kMaxHighRegisters > 24 && arch::RegisterFile::kMaxHighRegisters - 24 < 34);
  for (unsigned already : {24u, arch::RegisterFile::kMaxHighRegisters - 8}) {
    SCOPED_TRACE(already);
    UnwindRow row = call_frame_row();
    const unsigned room = arch::RegisterFile::kMaxHighRegisters - already;
    for (unsigned i = 0; i <= room; ++i)
      ASSERT_TRUE(row.set({static_cast<uint16_t>(300 + i), RuleKind::kValOffset, 8 * i, {}, 0}).ok());
    arch::RegisterFile regs = regs_at(0x1000, 0x7000, 0x7100);
    for (unsigned i = 0; i < already; ++i) ASSERT_TRUE(regs.set(400 + i, i));
    const OneRow rows(row);
    UnwindOptions o;
    o.row_finder = &rows;
    const Walk w = walk(mem, regs, o);
    ASSERT_EQ(w.frames.size(), 1u);
    EXPECT_EQ(w.result.reason, StopReason::kBadUnwindInfo);
    EXPECT_EQ(w.result.error, ErrorCode::kTooManyRegisters);
    EXPECT_EQ(w.result.address, 0x1000u);
    EXPECT_EQ(w.result.register_number, 300u + room);
    // apply_row says the same, with the register as the error's offset.
    static const ModuleMap no_modules;
    Unwinder unwinder(no_modules, mem, usual_machine_key(62));
    auto caller = unwinder.apply_row(row, regs);
    ASSERT_FALSE(caller.ok());
    EXPECT_EQ(caller.error().code, ErrorCode::kTooManyRegisters);
    EXPECT_EQ(caller.error().offset, 300u + room);
    // One register fewer fits, every one of them kept.
    row.erase(static_cast<uint16_t>(300 + room));
    caller = unwinder.apply_row(row, regs);
    ASSERT_TRUE(caller.ok()) << to_string(caller.error().code);
    for (unsigned i = 0; i < room; ++i) EXPECT_EQ(caller->get(300 + i), 0x7010u + 8 * i) << i;
    for (unsigned i = 0; i < already; ++i) EXPECT_EQ(caller->get(400 + i), i);
    EXPECT_EQ(caller->get(x::kRip), 0x2000u);
  }
  EXPECT_EQ(to_string(ErrorCode::kTooManyRegisters), std::string("more registers than the register file holds"));
}

// ppc64's numbering: cr 64, lr 65, ctr 66, cr2-cr4 70-72, xer 76, the
// AltiVec registers v20-v31 97-108, vrsave 109, up to 113. A row restoring
// what ppc64's rows restore keeps every one beside all of 0-63.
TEST(Unwinder, Ppc64RegisterNumbersUpTo113AreKept) {
  FakeMemory mem;
  mem.word(0x7008, 0x2000);  // lr's slot
  UnwindRow row;
  row.cfa = {CfaKind::kRegisterOffset, x::kRsp, 16, {}, 0};
  row.return_address_register = 65;
  ASSERT_TRUE(row.set({65, RuleKind::kOffset, -8, {}, 0}).ok());
  for (uint16_t cr = 70; cr <= 72; ++cr) ASSERT_TRUE(row.set({cr, RuleKind::kValOffset, cr, {}, 0}).ok());
  for (uint16_t v = 97; v <= 109; ++v) ASSERT_TRUE(row.set({v, RuleKind::kValOffset, v, {}, 0}).ok());
  ASSERT_TRUE(row.set({113, RuleKind::kRegister, 1, {}, 0}).ok());
  arch::RegisterFile callee;
  for (unsigned reg = 0; reg < 64; ++reg) callee.set(reg, 0x100000 + reg);
  for (unsigned reg : {64u, 65u, 66u, 76u}) callee.set(reg, 0x100000 + reg);
  callee.set(x::kRsp, 0x7000);
  static const ModuleMap no_modules;
  Unwinder unwinder(no_modules, mem, usual_machine_key(62));
  auto caller = unwinder.apply_row(row, callee);
  ASSERT_TRUE(caller.ok()) << to_string(caller.error().code);
  EXPECT_EQ(caller->get(65), 0x2000u);
  EXPECT_EQ(caller->get(x::kRip), 0x2000u);  // the return address becomes the PC
  for (unsigned cr = 70; cr <= 72; ++cr) EXPECT_EQ(caller->get(cr), 0x7010u + cr) << cr;
  for (unsigned v = 97; v <= 109; ++v) EXPECT_EQ(caller->get(v), 0x7010u + v) << v;
  EXPECT_EQ(caller->get(113), 0x100001u);
  // Registers without a rule keep the callee's values.
  for (unsigned reg : {0u, 3u, 31u, 32u, 63u, 64u, 66u, 76u}) EXPECT_EQ(caller->get(reg), 0x100000u + reg) << reg;
  EXPECT_FALSE(caller->known(67));
  EXPECT_EQ(caller->high_count(), 4u + 3u + 13u + 1u);
  // Every rule reads the callee's values: r1 restored from r2, r2 from r1, swapped.
  UnwindRow swap = row;
  ASSERT_TRUE(swap.set({1, RuleKind::kRegister, 2, {}, 0}).ok());
  ASSERT_TRUE(swap.set({2, RuleKind::kRegister, 1, {}, 0}).ok());
  caller = unwinder.apply_row(swap, callee);
  ASSERT_TRUE(caller.ok());
  EXPECT_EQ(caller->get(1), 0x100002u);
  EXPECT_EQ(caller->get(2), 0x100001u);
  EXPECT_EQ(caller->get(113), 0x100001u);
}

}  // namespace
}  // namespace framewalk

namespace framewalk {
namespace {

// Jit code: executable memory no file backs, between the fake file's code.
ModuleMap with_jit_code() {
  ModuleMap m = fake_modules();
  m.add(jit_module(0x10000, 0x11000, ""));
  return m;
}

// An activation in jit code, past its prologue, walked by its frame pointer
// (a file's code without unwind information would stop there): through a
// second jit frame into the file's code, to the end of the chain.
TEST(Unwinder, JitCodeWalkedByFramePointer) {
  const ModuleMap modules = with_jit_code();
  FakeMemory mem;
  static const uint8_t kNop = 0x90;
  mem.code(0x10010, &kNop, 1);
  mem.word(0x7100, 0x7200);
  mem.word(0x7108, 0x10105);  // into the jit code, after a call
  mem.word(0x7200, 0x7300);
  mem.word(0x7208, 0x2000);
  mem.word(0x7300, 0);
  mem.word(0x7308, 0);
  calls_before(mem, {0x10105, 0x2000});
  const Walk w = walk(mem, regs_at(0x10010, 0x7000, 0x7100), {}, modules);
  ASSERT_EQ(w.frames.size(), 3u);
  EXPECT_TRUE(w.frames[0].module && w.frames[0].module->jit);
  EXPECT_EQ(w.frames[0].module->name, "[anon]");
  EXPECT_EQ(w.frames[1].pc, 0x10105u);
  EXPECT_EQ(w.frames[1].source, FrameSource::kJit);
  EXPECT_EQ(w.frames[2].pc, 0x2000u);
  EXPECT_EQ(w.frames[2].source, FrameSource::kJit);
  EXPECT_EQ(w.result.reason, StopReason::kOutermost);
  EXPECT_STREQ(to_string(FrameSource::kJit), "jit");
  // The same code as a file's without unwind information: no guess at an activation.
  const Walk file = walk(mem, regs_at(0x2010, 0x7000, 0x7100));
  EXPECT_EQ(file.frames.size(), 1u);
  EXPECT_EQ(file.result.reason, StopReason::kNoUnwindInfo);
}

// At `push %rbp` the frame is not built: the return address is at rsp.
// After it (at `mov %rsp,%rbp`), above the saved rbp. At a `ret`, at rsp.
TEST(Unwinder, JitActivationInItsPrologueOrAtItsReturn) {
  const ModuleMap modules = with_jit_code();
  struct Case {
    std::vector<uint8_t> code;
    uint64_t return_slot;
  } cases[] = {{{0x55, 0x48, 0x89, 0xe5}, 0x7000}, {{0x48, 0x89, 0xe5}, 0x7008}, {{0xc3}, 0x7000}, {{0x48, 0x8b, 0xec}, 0x7008}};
  for (const Case& c : cases) {
    FakeMemory mem;
    mem.code(0x10010, c.code.data(), c.code.size());
    mem.word(0x7000, c.return_slot == 0x7000 ? 0x2000 : 0x7300);  // return address, or the saved rbp
    mem.word(0x7008, 0x2000);
    calls_before(mem, {0x2000});
    UnwindOptions o;
    o.max_frames = 2;
    // rbp is the caller's: a frame-pointer guess would skip the caller.
    const Walk w = walk(mem, regs_at(0x10010, 0x7000, 0x7400), o, modules);
    ASSERT_EQ(w.frames.size(), 2u) << int(c.code[0]);
    EXPECT_EQ(w.frames[1].pc, 0x2000u) << int(c.code[0]);
    EXPECT_EQ(w.frames[1].sp, c.return_slot + 8) << int(c.code[0]);
    EXPECT_EQ(w.frames[1].source, FrameSource::kPrologue);
  }
}

// A frame pointer that leads to an address in jit code is taken without a
// call before it (HotSpot's interpreter returns to its bytecodes' return
// entries, after a dispatch jump); one that leads to a file's code no call
// precedes is no frame: the walk stops rather than report it.
TEST(Unwinder, JitReturnAddressesNeedNoCall) {
  const ModuleMap modules = with_jit_code();
  FakeMemory mem;
  static const uint8_t kNop = 0x90;
  mem.code(0x10010, &kNop, 1);
  mem.word(0x7100, 0x7200);
  mem.word(0x7108, 0x10200);  // jit code, after a jump
  static const uint8_t kJump[4] = {0x41, 0xff, 0x24, 0xda};  // jmp *(%r10,%rbx,8)
  mem.code(0x10200 - 4, kJump, 4);
  mem.word(0x7200, 0);
  mem.word(0x7208, 0);
  const Walk w = walk(mem, regs_at(0x10010, 0x7000, 0x7100), {}, modules);
  ASSERT_EQ(w.frames.size(), 2u);
  EXPECT_EQ(w.frames[1].pc, 0x10200u);
  EXPECT_EQ(w.frames[1].source, FrameSource::kJit);
  mem.word(0x7108, 0x2200);  // a file's code, after the same jump
  mem.code(0x2200 - 4, kJump, 4);
  const Walk file = walk(mem, regs_at(0x10010, 0x7000, 0x7100), {}, modules);
  ASSERT_EQ(file.frames.size(), 1u);
  EXPECT_EQ(file.result.reason, StopReason::kNoUnwindInfo);
  EXPECT_EQ(file.result.address, 0x10010u);
}

// A perf sample holds the stack alone: where the jit code cannot be read,
// a return address into it cannot be checked, and is taken.
TEST(Unwinder, UnreadableJitCodeTakenOnItsFramePointer) {
  const ModuleMap modules = with_jit_code();
  FakeMemory mem;  // no code at all
  mem.word(0x7100, 0x7200);
  mem.word(0x7108, 0x10200);
  mem.word(0x7200, 0);
  mem.word(0x7208, 0);
  const Walk w = walk(mem, regs_at(0x10010, 0x7000, 0x7100), {}, modules);
  ASSERT_EQ(w.frames.size(), 2u);
  EXPECT_EQ(w.frames[1].pc, 0x10200u);
  EXPECT_EQ(w.frames[1].source, FrameSource::kJit);
  EXPECT_EQ(w.result.reason, StopReason::kOutermost);
  // Not so into a file's code: its bytes are there to check.
  mem.word(0x7108, 0x2000);
  EXPECT_EQ(walk(mem, regs_at(0x10010, 0x7000, 0x7100), {}, modules).frames.size(), 1u);
}

}  // namespace
}  // namespace framewalk

namespace framewalk {
namespace {

// In jit code, a frame-pointer register of 0 is no end of a chain (the code
// may use it as any other register): the walk stops there, not "outermost".
TEST(Unwinder, ZeroFramePointerInJitCodeIsNoChainEnd) {
  ModuleMap modules = fake_modules();
  modules.add(jit_module(0x10000, 0x11000, ""));
  FakeMemory mem;
  UnwindOptions o;
  o.first_is_return_address = true;
  const Walk jit = walk(mem, regs_at(0x10010, 0x7000, 0), o, modules);
  EXPECT_EQ(jit.frames.size(), 1u);
  EXPECT_EQ(jit.result.reason, StopReason::kNoUnwindInfo);
  const Walk file = walk(mem, regs_at(0x2010, 0x7000, 0), o, modules);
  EXPECT_EQ(file.result.reason, StopReason::kOutermost);
}

}  // namespace
}  // namespace framewalk

namespace framewalk {
namespace {

// find() through a hint gives what find() gives: the hinted module while it
// holds the address and none nests there, else a lookup (and a new hint);
// a hint of another map or an older generation is not used.
TEST(ModuleMap, FindThroughAHint) {
  ModuleMap map;
  Module outer = jit_module(0x1000, 0x9000, "outer");
  map.add(outer);
  map.add(jit_module(0x4000, 0x5000, "nested"));
  map.add(jit_module(0xa000, 0xb000, "after"));
  ModuleMap::FindHint hint;
  for (uint64_t address : {0x1000, 0x3fff, 0x4000, 0x4fff, 0x5000, 0x8fff, 0x9000, 0xa000, 0xafff, 0x2000, 0x4800})
    EXPECT_EQ(map.find(address, &hint), map.find(address)) << std::hex << address;
  EXPECT_EQ(map.find(0x2000, &hint)->name, "outer");
  EXPECT_EQ(map.find(0x4800, &hint)->name, "nested");
  // Another map at the same index: the hint is not taken for it.
  ModuleMap other;
  other.add(jit_module(0x100000, 0x200000, "other"));
  EXPECT_EQ(other.find(0x4800, &hint), nullptr);
  EXPECT_EQ(other.find(0x100000, &hint)->name, "other");
  // A module removed: the generation moves on, the hint goes stale.
  EXPECT_EQ(map.find(0xa000, &hint)->name, "after");
  map.remove_range(0xa000, 0xb000);
  EXPECT_EQ(map.find(0xa000, &hint), nullptr);
}

}  // namespace
}  // namespace framewalk

// The 32-bit ARM machine descriptor on hand-written code: calls before a
// return address in both instruction sets, every sigreturn trampoline form
// and its row, the registers of a gregset and a ucontext, and the fallback
// rows from Thumb and ARM prologues.
#include <gtest/gtest.h>

#include <vector>

#include "arch/arm/frames.hpp"
#include "arch/arm/instruction.hpp"
#include "arch/arm/machine.hpp"
#include "arch/machine.hpp"

namespace framewalk::arch {
namespace {

namespace a = arm;

constexpr uint64_t kCodeBase = 0x10000;

const Machine& m() { return a::machine(); }

// Little-endian halfwords / words as code bytes.
std::vector<uint8_t> thumb(std::vector<uint16_t> halfwords) {
  std::vector<uint8_t> out;
  for (uint16_t h : halfwords) {
    out.push_back(static_cast<uint8_t>(h));
    out.push_back(static_cast<uint8_t>(h >> 8));
  }
  return out;
}
std::vector<uint8_t> arm_code(std::vector<uint32_t> words) {
  std::vector<uint8_t> out;
  for (uint32_t w : words)
    for (int i = 0; i < 4; ++i) out.push_back(static_cast<uint8_t>(w >> (8 * i)));
  return out;
}

// One whole instruction through the prologue decoders.
a::PrologueInstruction decoded_thumb(std::vector<uint16_t> halfwords) {
  const auto bytes = thumb(halfwords);
  return *a::decode_thumb_prologue(Bytes(bytes.data(), bytes.size()));
}
a::PrologueInstruction decoded_arm(uint32_t word) {
  const auto bytes = arm_code({word});
  return *a::decode_arm_prologue(Bytes(bytes.data(), bytes.size()));
}

// Eight bytes of zeros (not a call in either set), then `tail`, ending at the return address.
bool follows_call(const std::vector<uint8_t>& tail) {
  std::vector<uint8_t> bytes(8, 0);
  bytes.insert(bytes.end(), tail.begin(), tail.end());
  BufferMemory memory(Bytes(bytes.data(), bytes.size()), kCodeBase);
  return m().follows_call(memory, kCodeBase + bytes.size());
}

TEST(MachineFor, Arm) {
  const Machine* arm = machine_for(usual_machine_key(40));
  ASSERT_NE(arm, nullptr);
  EXPECT_EQ(arm, &a::machine());
  EXPECT_EQ(arm->elf_machine(), 40);
  EXPECT_EQ(arm->stack_pointer(), a::kSp);
  EXPECT_EQ(arm->program_counter(), a::kPc);
  EXPECT_EQ(arm->return_address_column(), a::kLr);
  EXPECT_TRUE(arm->link_register());
  EXPECT_EQ(arm->address_size(), 4);
  EXPECT_EQ(arm->endian(), Endian::kLittle);
  EXPECT_EQ(arm->address(0x1'0000'1234u), 0x1234u);
}

TEST(ArmMachine, ReturnAddressesLoseTheThumbBit) {
  EXPECT_EQ(m().clean_return_address(0x3f6e81a1, 0), 0x3f6e81a0u);
  EXPECT_EQ(m().clean_return_address(0x10400, 0), 0x10400u);
}

TEST(ArmMachine, LookupPcIsInsideTheCall) {
  EXPECT_EQ(m().lookup_pc(0x10400, true), 0x10400u);
  EXPECT_EQ(m().lookup_pc(0x10400, false), 0x103feu);
}

TEST(ArmMachine, FollowsEveryCallForm) {
  EXPECT_TRUE(follows_call(arm_code({0xebfffffe})));  // bl (always)
  EXPECT_TRUE(follows_call(arm_code({0x0b000010})));  // bleq
  EXPECT_TRUE(follows_call(arm_code({0xfa000001})));  // blx <imm>
  EXPECT_TRUE(follows_call(arm_code({0xfb000001})));  // blx <imm> with H
  EXPECT_TRUE(follows_call(arm_code({0xe12fff33})));  // blx r3
  EXPECT_TRUE(follows_call(thumb({0xf000, 0xf800})));  // bl (Thumb-2)
  EXPECT_TRUE(follows_call(thumb({0xf7ff, 0xeffe})));  // blx <imm> (Thumb-2)
  EXPECT_TRUE(follows_call(thumb({0x4798})));         // blx r3
  // Thumb code need not be word-aligned.
  EXPECT_TRUE(follows_call(thumb({0x0000, 0xf000, 0xf800})));
}

TEST(ArmMachine, RejectsWhatIsNotACall) {
  EXPECT_FALSE(follows_call({}));
  EXPECT_FALSE(follows_call(arm_code({0xea000010})));  // b
  EXPECT_FALSE(follows_call(arm_code({0xe12fff13})));  // bx r3
  EXPECT_FALSE(follows_call(arm_code({0xe12fff1e})));  // bx lr
  EXPECT_FALSE(follows_call(thumb({0x4718})));         // bx r3
  EXPECT_FALSE(follows_call(thumb({0xf000, 0xb800})));  // b.w
  // An ARM call needs a word-aligned return address.
  EXPECT_FALSE(follows_call(thumb({0x0000, 0xfffe, 0xebff}) /* ends 2 bytes off a word */));
  // Only two bytes readable before the return address: a 16-bit blx fits, nothing else.
  const std::vector<uint8_t> blx = thumb({0x4798});
  BufferMemory two(Bytes(blx.data(), blx.size()), kCodeBase);
  EXPECT_TRUE(m().follows_call(two, kCodeBase + 2));
  EXPECT_FALSE(m().follows_call(two, 2));
}

struct TrampolineCase {
  std::vector<uint8_t> code;
  a::Trampoline kind;
};

TEST(ArmMachine, EverySigreturnTrampolineForm) {
  const std::vector<TrampolineCase> cases = {
      {arm_code({0xe3a07077, 0xef000000}), a::Trampoline::kSigreturn},    // glibc ARM: mov r7,#119; svc 0
      {arm_code({0xe3a070ad, 0xef000000}), a::Trampoline::kRtSigreturn},  // mov r7,#173; svc 0
      {arm_code({0xe3a07077, 0xef900077}), a::Trampoline::kSigreturn},    // kernel/qemu page: svc #0x900077
      {arm_code({0xe3a070ad, 0xef9000ad}), a::Trampoline::kRtSigreturn},
      {arm_code({0xef900077, 0}), a::Trampoline::kSigreturn},             // OABI svc alone
      {arm_code({0xef9000ad, 0}), a::Trampoline::kRtSigreturn},
      {thumb({0x2777, 0xdf00, 0, 0}), a::Trampoline::kSigreturn},         // movs r7,#119; svc 0
      {thumb({0x27ad, 0xdf00, 0, 0}), a::Trampoline::kRtSigreturn},
      {thumb({0xf04f, 0x0777, 0xdf00, 0}), a::Trampoline::kSigreturn},    // glibc Thumb-2: mov.w r7,#119; svc 0
      {thumb({0xf04f, 0x07ad, 0xdf00, 0}), a::Trampoline::kRtSigreturn},
  };
  for (const TrampolineCase& c : cases) {
    EXPECT_EQ(a::trampoline_at(Bytes(c.code.data(), c.code.size())), c.kind);
    BufferMemory memory(Bytes(c.code.data(), c.code.size()), kCodeBase);
    EXPECT_TRUE(m().is_signal_trampoline(memory, kCodeBase));
    EXPECT_TRUE(m().is_signal_trampoline(memory, kCodeBase + 1));  // a Thumb address
  }
  for (const std::vector<uint8_t>& not_one :
       {arm_code({0xe3a07078, 0xef000000}),    // mov r7,#120 (clone)
        arm_code({0xe3a07077, 0xef900078}),    // the svc's number disagrees
        arm_code({0xe3a07077, 0xe1a00000}),    // mov r7,#119; nop
        thumb({0x2777, 0xbf00, 0, 0}),         // movs r7,#119; nop
        thumb({0xf04f, 0x0777, 0xbf00, 0}),    // mov.w r7,#119; nop
        thumb({0xf04f, 0x0777})}) {            // cut off before the svc
    EXPECT_EQ(a::trampoline_at(Bytes(not_one.data(), not_one.size())), a::Trampoline::kNone);
  }
}

TEST(ArmMachine, SignalRowsReadTheUcontextOfEachFrameKind) {
  UnwindRow row;
  const std::vector<uint8_t> rt = thumb({0xf04f, 0x07ad, 0xdf00, 0});
  BufferMemory rt_memory(Bytes(rt.data(), rt.size()), kCodeBase);
  ASSERT_TRUE(m().signal_frame_row(rt_memory, kCodeBase, &row));
  EXPECT_TRUE(row.signal_frame);
  EXPECT_EQ(row.return_address_register, a::kPc);
  EXPECT_EQ(row.cfa.reg, a::kSp);
  EXPECT_EQ(row.cfa.offset, 0);
  // rt_sigframe: siginfo (128), then the ucontext: arm_r0 at +32, arm_pc at +92, arm_cpsr at +96.
  EXPECT_EQ(row.find(0)->value, 128 + 32);
  EXPECT_EQ(row.find(a::kSp)->value, 128 + 32 + 4 * 13);
  EXPECT_EQ(row.find(a::kPc)->value, 128 + 92);
  EXPECT_EQ(row.find(a::kCpsr)->value, 128 + 96);
  const std::vector<uint8_t> plain = thumb({0xf04f, 0x0777, 0xdf00, 0});
  BufferMemory plain_memory(Bytes(plain.data(), plain.size()), kCodeBase);
  ASSERT_TRUE(m().signal_frame_row(plain_memory, kCodeBase, &row));
  EXPECT_EQ(row.find(a::kPc)->value, 92);
  EXPECT_EQ(row.find(a::kLr)->value, 32 + 4 * 14);
  EXPECT_EQ(row.rule_count, 17);
}

TEST(ArmMachine, RegistersFromTheGregsetKeepTheCpsr) {
  std::vector<uint32_t> words;
  for (uint32_t i = 0; i < 16; ++i) words.push_back(0x1000 + i);
  words.push_back(0x60070030);  // cpsr: Thumb
  words.push_back(0xdead);      // orig_r0
  const std::vector<uint8_t> gregset = arm_code(words);
  ASSERT_EQ(m().gregset_size(), gregset.size());
  const RegisterFile r = m().registers_from_gregset(Bytes(gregset.data(), gregset.size()));
  EXPECT_EQ(r.get(0), 0x1000u);
  EXPECT_EQ(r.get(a::kSp), 0x100du);
  EXPECT_EQ(r.get(a::kPc), 0x100fu);
  EXPECT_EQ(r.get(a::kCpsr), 0x60070030u);
  EXPECT_EQ(r.known_mask(), (uint64_t{1} << 17) - 1);
  const RegisterFile cut = m().registers_from_gregset(Bytes(gregset.data(), 4 * 16));
  EXPECT_TRUE(cut.known(a::kPc));
  EXPECT_FALSE(cut.known(a::kCpsr));
}

TEST(ArmMachine, RegistersFromAUcontext) {
  std::vector<uint32_t> words(8, 0xeeeeeeee);  // uc_flags .. sigcontext.oldmask
  for (uint32_t i = 0; i < 16; ++i) words.push_back(0x2000 + i);
  words.push_back(0x10);  // cpsr: ARM, user mode
  const std::vector<uint8_t> uc = arm_code(words);
  const RegisterFile r = m().registers_from_ucontext(Bytes(uc.data(), uc.size()));
  EXPECT_EQ(r.get(0), 0x2000u);
  EXPECT_EQ(r.get(a::kPc), 0x200fu);
  EXPECT_EQ(r.get(a::kCpsr), 0x10u);
}

RegisterFile registers(uint64_t sp, uint64_t fp, uint32_t cpsr) {
  RegisterFile r;
  r.set(a::kSp, sp);
  r.set(a::kR11, fp);
  r.set(a::kR7, fp);
  r.set(a::kCpsr, cpsr);
  r.set(a::kPc, 0x10000);
  return r;
}

void expect_saved(const UnwindRow& row, uint16_t reg, int64_t offset) {
  const RegisterRule* r = row.find(reg);
  ASSERT_NE(r, nullptr) << reg;
  EXPECT_EQ(r->kind, RuleKind::kOffset);
  EXPECT_EQ(r->value, offset) << reg;
}

// What the fallbacks get for a function whose code is `code`: for a frame at
// a return address (its first bytes), or for an activation stopped at an
// offset (the bytes before the PC and those from it on).
struct FunctionInput {
  FunctionInput(const std::vector<uint8_t>& function, const RegisterFile& regs) : code(function) {
    in.registers = &regs;
    in.function_known = true;
    in.function_code = Bytes(code.data(), code.size());
  }
  const FallbackInput& activation_at(size_t offset) {
    in.activation = true;
    in.pc_offset = offset;
    in.function_code = Bytes(code.data(), offset);
    in.code_at_pc = Bytes(code.data() + offset, code.size() - offset);
    return in;
  }
  const std::vector<uint8_t>& code;
  FallbackInput in;
};

// The registers the step loop passes for an activation in code an EXIDX
// entry covers: the PC and SP, no CPSR.
RegisterFile pc_and_sp() {
  RegisterFile r;
  r.set(a::kPc, 0x10002);
  r.set(a::kSp, 0x7000);
  return r;
}

// push {r4, r7, lr}; sub sp, #12; add r7, sp, #0; (body) movs r0, #1; ...
const std::vector<uint8_t> kThumbFramed = thumb({0xb590, 0xb083, 0xaf00, 0x2001, 0x4770});
// push {fp, lr}; add fp, sp, #4; sub sp, sp, #8; (body) mov r0, #1
const std::vector<uint8_t> kArmFramed = arm_code({0xe92d4800, 0xe28db004, 0xe24dd008, 0xe3a00001});

TEST(ArmMachine, ThumbR7FrameFromThePrologue) {
  const RegisterFile regs = registers(0x7000, 0x7100, 0x30);
  FallbackInput in;
  in.registers = &regs;
  in.function_known = true;
  in.function_code = Bytes(kThumbFramed.data(), kThumbFramed.size());
  UnwindRow row;
  // A return-address frame: r7 = entry sp - 12 - 12, so CFA = r7 + 24.
  ASSERT_EQ(m().fallback_row(in, &row), FallbackKind::kFramePointer);
  EXPECT_EQ(row.cfa.reg, a::kR7);
  EXPECT_EQ(row.cfa.offset, 24);
  EXPECT_EQ(row.return_address_register, a::kLr);
  expect_saved(row, 4, -12);
  expect_saved(row, a::kR7, -8);
  expect_saved(row, a::kLr, -4);
  // An activation after the push and the sub only: CFA = sp + 24, from sp.
  in.activation = true;
  in.pc_offset = 4;
  in.function_code = Bytes(kThumbFramed.data(), 4);
  in.code_at_pc = Bytes(kThumbFramed.data() + 4, kThumbFramed.size() - 4);
  ASSERT_EQ(m().fallback_row(in, &row), FallbackKind::kPrologue);
  EXPECT_EQ(row.cfa.reg, a::kSp);
  EXPECT_EQ(row.cfa.offset, 24);
  // At the first instruction: nothing pushed, the return address is in lr.
  in.pc_offset = 0;
  in.function_code = Bytes();
  in.code_at_pc = Bytes(kThumbFramed.data(), kThumbFramed.size());
  ASSERT_EQ(m().fallback_row(in, &row), FallbackKind::kPrologue);
  EXPECT_EQ(row.cfa.offset, 0);
  EXPECT_EQ(row.find(a::kLr), nullptr);
}

// gcc's shrink-wrapped Thumb-2 (fp_over_cfi.c's fp_inner): a test and a
// branch to an early exit before the prologue,
//   cmp.w r0, #1000; beq.n 1f; push {r3, r4, r7, lr}; mov r4, r0;
//   ldr r0, [pc, #44]; add r7, sp, #0; add r0, pc; blx ...; ... 1: movs r0, #0; bx lr
const std::vector<uint8_t> kThumbShrinkWrapped =
    thumb({0xf5b0, 0x7f7a, 0xd015, 0xb598, 0x4604, 0x480b, 0xaf00, 0x4478, 0xf7ff, 0xef40});

TEST(ArmMachine, ThumbShrinkWrappedPrologue) {
  // r7 as the frame's caller left it: the return address does not say Thumb
  // (bit 1 clear), the code does, past the compare and the branch.
  RegisterFile regs = registers(0x7000, 0x7010, 0x30);
  regs.set(a::kPc, 0x10630);
  FunctionInput f(kThumbShrinkWrapped, regs);
  UnwindRow row;
  ASSERT_EQ(m().fallback_row(f.in, &row), FallbackKind::kFramePointer);
  EXPECT_EQ(row.cfa.reg, a::kR7);
  EXPECT_EQ(row.cfa.offset, 16);
  expect_saved(row, 3, -16);
  expect_saved(row, 4, -12);
  expect_saved(row, a::kR7, -8);
  expect_saved(row, a::kLr, -4);
  // An activation after the push, the early exit (at 0x32) beyond it: the push has run.
  ASSERT_EQ(m().fallback_row(f.activation_at(8), &row), FallbackKind::kPrologue);
  EXPECT_EQ(row.cfa.reg, a::kSp);
  EXPECT_EQ(row.cfa.offset, 16);
  expect_saved(row, a::kLr, -4);
  // An activation at the early exit itself: the branch may have gone there, past the push.
  std::vector<uint8_t> exit_path = kThumbShrinkWrapped;
  exit_path.resize(0x32, 0);  // zeros: movs r0, r0 (no stack change)
  const std::vector<uint8_t> tail = thumb({0x2000, 0x4770});
  exit_path.insert(exit_path.end(), tail.begin(), tail.end());
  FunctionInput g(exit_path, regs);
  ASSERT_EQ(m().fallback_row(g.activation_at(0x32), &row), FallbackKind::kPrologue);
  EXPECT_EQ(row.cfa.reg, a::kSp);
  EXPECT_EQ(row.cfa.offset, 0) << "at its bx lr, nothing on the stack";
  EXPECT_EQ(row.find(a::kLr), nullptr);
}

TEST(ArmMachine, ArmR11FrameFromThePrologue) {
  const RegisterFile regs = registers(0x7000, 0x7100, 0x10);
  FallbackInput in;
  in.registers = &regs;
  in.function_known = true;
  in.function_code = Bytes(kArmFramed.data(), kArmFramed.size());
  UnwindRow row;
  // fp = entry sp - 8 + 4: CFA = fp + 4, lr at CFA-4, fp at CFA-8.
  ASSERT_EQ(m().fallback_row(in, &row), FallbackKind::kFramePointer);
  EXPECT_EQ(row.cfa.reg, a::kR11);
  EXPECT_EQ(row.cfa.offset, 4);
  expect_saved(row, a::kR11, -8);
  expect_saved(row, a::kLr, -4);
  // An ARM activation (CPSR T clear) right after the push.
  in.activation = true;
  in.pc_offset = 4;
  in.function_code = Bytes(kArmFramed.data(), 4);
  in.code_at_pc = Bytes(kArmFramed.data() + 4, kArmFramed.size() - 4);
  ASSERT_EQ(m().fallback_row(in, &row), FallbackKind::kPrologue);
  EXPECT_EQ(row.cfa.reg, a::kSp);
  EXPECT_EQ(row.cfa.offset, 8);
}

TEST(ArmMachine, ALeafActivationAndOneAtItsReturn) {
  const RegisterFile regs = registers(0x7000, 0x7100, 0x30);
  FallbackInput in;
  in.registers = &regs;
  in.function_known = true;
  in.activation = true;
  // movs r0, #1; bx lr — stopped at the bx.
  const std::vector<uint8_t> leaf = thumb({0x2001, 0x4770});
  in.pc_offset = 2;
  in.function_code = Bytes(leaf.data(), 2);
  in.code_at_pc = Bytes(leaf.data() + 2, 2);
  UnwindRow row;
  ASSERT_EQ(m().fallback_row(in, &row), FallbackKind::kPrologue);
  EXPECT_EQ(row.cfa.offset, 0);
  EXPECT_EQ(row.rule_count, 0);
  // The framed function at its final `bx lr` (after the pops): a leaf again.
  in.pc_offset = 8;
  in.function_code = Bytes(kThumbFramed.data(), 8);
  in.code_at_pc = Bytes(kThumbFramed.data() + 8, 2);
  ASSERT_EQ(m().fallback_row(in, &row), FallbackKind::kPrologue);
  EXPECT_EQ(row.cfa.offset, 0);
  // In the kuser helpers page, without a symbol.
  RegisterFile in_vectors = regs;
  in_vectors.set(a::kPc, 0xffff0fe0);
  FallbackInput v;
  v.registers = &in_vectors;
  v.activation = true;
  ASSERT_EQ(m().fallback_row(v, &row), FallbackKind::kPrologue);
  EXPECT_EQ(row.cfa.offset, 0);
}

TEST(ArmMachine, AReturnAddressFrameMustHaveSavedLr) {
  const RegisterFile regs = registers(0x7000, 0x6000, 0x30);  // fp below sp: no guess either
  FallbackInput in;
  in.registers = &regs;
  in.function_known = true;
  const std::vector<uint8_t> no_lr = thumb({0xb490, 0x2001});  // push {r4, r7}; movs r0, #1
  in.function_code = Bytes(no_lr.data(), no_lr.size());
  UnwindRow row;
  EXPECT_EQ(m().fallback_row(in, &row), std::nullopt);
  // Nothing of a prologue at all.
  const std::vector<uint8_t> none = thumb({0x2001, 0x4770});
  in.function_code = Bytes(none.data(), none.size());
  EXPECT_EQ(m().fallback_row(in, &row), std::nullopt);
}

TEST(ArmMachine, ArmFramePointerGuessOnlyWhereFpLooksLikeOne) {
  UnwindRow row;
  FallbackInput in;
  const RegisterFile good = registers(0x7000, 0x7104, 0x10);
  in.registers = &good;
  ASSERT_EQ(m().fallback_row(in, &row), FallbackKind::kFramePointer);
  EXPECT_EQ(row.cfa.reg, a::kR11);
  in.activation = true;
  EXPECT_EQ(m().fallback_row(in, &row), std::nullopt);
  in.activation = false;
  for (const RegisterFile& bad : {registers(0x7000, 0x6ffc, 0x10), registers(0x7000, 0x7102, 0x10),
                                  registers(0x7000, 0x7000 + (1u << 27), 0x10), RegisterFile{}}) {
    in.registers = &bad;
    EXPECT_EQ(m().fallback_row(in, &row), std::nullopt);
  }
}

TEST(ArmInstruction, ThumbInstructionsScheduledAmongThePushes) {
  auto op = [](std::vector<uint16_t> h) {
    const auto bytes = thumb(h);
    return a::decode_thumb_prologue(Bytes(bytes.data(), bytes.size()))->op;
  };
  using a::PrologueOp;
  EXPECT_EQ(op({0x4a4e}), PrologueOp::kNeutral);          // ldr r2, [pc, #312]
  EXPECT_EQ(op({0xee1d, 0x4f70}), PrologueOp::kNeutral);  // mrc 15, 0, r4, cr13, cr0, {3}
  EXPECT_EQ(op({0xf5a4, 0x64a0}), PrologueOp::kNeutral);  // sub.w r4, r4, #1280
  EXPECT_EQ(op({0x447a}), PrologueOp::kNeutral);          // add r2, pc
  EXPECT_EQ(op({0xf04f, 0x0300}), PrologueOp::kNeutral);  // mov.w r3, #0
  EXPECT_EQ(op({0x9323}), PrologueOp::kNeutral);          // str r3, [sp, #140]
  EXPECT_EQ(op({0xf8d0, 0x3008}), PrologueOp::kNeutral);  // ldr.w r3, [r0, #8]
  EXPECT_EQ(op({0xbf00}), PrologueOp::kNeutral);          // nop
  // What may not be stepped over: writes of r7, sp or pc, branches, IT.
  EXPECT_EQ(op({0x9f00}), PrologueOp::kOther);            // ldr r7, [sp]
  EXPECT_EQ(op({0x469d}), PrologueOp::kOther);            // mov sp, r3
  EXPECT_EQ(op({0x4487}), PrologueOp::kOther);            // add pc, r0
  EXPECT_EQ(op({0xb002}), PrologueOp::kOther);            // add sp, #8
  EXPECT_EQ(op({0xbd80}), PrologueOp::kOther);            // pop {r7, pc}
  EXPECT_EQ(op({0xbf18}), PrologueOp::kOther);            // it ne
  EXPECT_EQ(op({0x4718}), PrologueOp::kOther);            // bx r3
  EXPECT_EQ(op({0xf000, 0xf800}), PrologueOp::kOther);    // bl
  EXPECT_EQ(op({0xf8df, 0xf004}), PrologueOp::kOther);    // ldr.w pc, [pc, #4]
  EXPECT_EQ(op({0xf85d, 0x7b04}), PrologueOp::kOther);    // ldr.w r7, [sp], #4
  EXPECT_EQ(op({0xf1bd, 0x0d08}), PrologueOp::kOther);    // subs.w sp, sp, #8 (flags: not gcc's)
  EXPECT_EQ(op({0xf10d, 0x0d08}), PrologueOp::kOther);    // add.w sp, sp, #8
  EXPECT_EQ(op({0xe8bd, 0x8080}), PrologueOp::kOther);    // pop.w {r7, pc}
  EXPECT_EQ(op({0xecbd, 0x8b10}), PrologueOp::kOther);    // vpop {d8-d15}
  // VFP arithmetic and moves into VFP registers write no core register.
  EXPECT_EQ(op({0xee20, 0x0b00}), PrologueOp::kNeutral);  // vmul.f64 d0, d0, d0
  EXPECT_EQ(op({0xee07, 0x2a90}), PrologueOp::kNeutral);  // vmov s15, r2
  EXPECT_EQ(op({0xeeb0, 0x1b00}), PrologueOp::kNeutral);  // vmov.f64 d1, #2.0
  EXPECT_EQ(op({0xee17, 0x7a90}), PrologueOp::kOther);    // vmov r7, s15
  // Compares and tests write no register (their rd field is pc).
  EXPECT_EQ(op({0xf5b0, 0x7f7a}), PrologueOp::kNeutral);  // cmp.w r0, #1000
  EXPECT_EQ(op({0xea10, 0x0f01}), PrologueOp::kNeutral);  // tst.w r0, r1
  EXPECT_EQ(op({0xf1b0, 0x0f00}), PrologueOp::kNeutral);  // cmp.w r0, #0
}

// Conditional branches, with their targets (offsets from the branch, as
// objdump gives them), for shrink-wrapped prologues.
TEST(ArmInstruction, ConditionalBranchesAndTheirTargets) {
  using a::PrologueOp;
  auto thumb_branch = [](std::vector<uint16_t> h) {
    const a::PrologueInstruction in = decoded_thumb(h);
    return in.op == PrologueOp::kConditionalBranch ? in.branch_offset : -1000;
  };
  EXPECT_EQ(thumb_branch({0xd010}), 0x24);          // beq.n +0x24
  EXPECT_EQ(thumb_branch({0xb110}), 8);             // cbz r0, +8
  EXPECT_EQ(thumb_branch({0xd1fe}), 0);             // bne.n to itself
  EXPECT_EQ(thumb_branch({0xf000, 0x8012}), 0x28);  // beq.w +0x28
  EXPECT_EQ(thumb_branch({0xf47f, 0xaffe}), 0);     // bne.w to itself
  EXPECT_EQ(thumb_branch({0xdf00}), -1000);         // svc 0: no branch
  EXPECT_EQ(thumb_branch({0xf000, 0xf800}), -1000); // bl
  auto arm_branch = [](uint32_t w) {
    const a::PrologueInstruction in = decoded_arm(w);
    return in.op == PrologueOp::kConditionalBranch ? in.branch_offset : -1000;
  };
  EXPECT_EQ(arm_branch(0x0a000004), 0x18);  // beq +0x18
  EXPECT_EQ(arm_branch(0x1afffffd), -4);    // bne -4
  EXPECT_EQ(arm_branch(0xea000004), -1000); // b: not conditional
  EXPECT_EQ(arm_branch(0x0b000004), -1000); // bleq: a call
}

TEST(ArmMachine, GlibcAbortsPrologueWithScheduledInstructions) {
  // The start of Debian armhf libc's abort(): loads, mrc and arithmetic
  // around `push {r7, lr}` and `sub sp, #144`, up to the first branch.
  const std::vector<uint8_t> code = thumb({0x4a4e, 0xee1d, 0x4f70, 0x4b4e, 0xf5a4, 0x64a0, 0x447a, 0x484d, 0xb580,
                                           0x4478, 0x58d3, 0xb0a4, 0x681b, 0x9323, 0xf04f, 0x0300, 0x6883, 0x42a3,
                                           0xd010, 0x2301});
  EXPECT_EQ(a::starts_as_thumb(Bytes(code.data(), code.size())), true);
  RegisterFile regs = registers(0x7000, 0x6000, 0x10);
  regs.set(a::kPc, 0x100a4);  // word-aligned: the first instructions say Thumb
  FallbackInput in;
  in.registers = &regs;
  in.function_known = true;
  in.function_code = Bytes(code.data(), code.size());
  UnwindRow row;
  ASSERT_EQ(m().fallback_row(in, &row), FallbackKind::kPrologue);
  EXPECT_EQ(row.cfa.reg, a::kSp);
  EXPECT_EQ(row.cfa.offset, 8 + 144);
  expect_saved(row, a::kR7, -8);
  expect_saved(row, a::kLr, -4);
  // An activation stopped among the scheduled instructions before the push: a leaf.
  in.activation = true;
  in.pc_offset = 14;
  in.function_code = Bytes(code.data(), 14);
  in.code_at_pc = Bytes(code.data() + 14, code.size() - 14);
  regs.set(a::kCpsr, 0x30);
  ASSERT_EQ(m().fallback_row(in, &row), FallbackKind::kPrologue);
  EXPECT_EQ(row.cfa.offset, 0);
  EXPECT_EQ(row.rule_count, 0);
}

TEST(ArmInstruction, ArmInstructionsScheduledAmongThePushes) {
  auto op = [](uint32_t word) {
    const auto bytes = arm_code({word});
    return a::decode_arm_prologue(Bytes(bytes.data(), bytes.size()))->op;
  };
  using a::PrologueOp;
  EXPECT_EQ(op(0xe3a00003), PrologueOp::kNeutral);  // mov r0, #3
  EXPECT_EQ(op(0xe2800005), PrologueOp::kNeutral);  // add r0, r0, #5
  EXPECT_EQ(op(0xeeb70b00), PrologueOp::kNeutral);  // vmov.f64 d0, #1.0
  EXPECT_EQ(op(0xe59f3010), PrologueOp::kNeutral);  // ldr r3, [pc, #16]
  EXPECT_EQ(op(0xe1530002), PrologueOp::kNeutral);  // cmp r3, r2
  EXPECT_EQ(op(0xee073a90), PrologueOp::kNeutral);  // vmov s15, r3
  EXPECT_EQ(op(0xee17ba90), PrologueOp::kOther);    // vmov fp, s15
  EXPECT_EQ(op(0xe3a0b000), PrologueOp::kOther);    // mov fp, #0
  EXPECT_EQ(op(0xe1a0d003), PrologueOp::kOther);    // mov sp, r3
  EXPECT_EQ(op(0xe49df004), PrologueOp::kOther);    // pop {pc} (ldr pc, [sp], #4)
  EXPECT_EQ(op(0x03a00003), PrologueOp::kOther);    // moveq r0, #3
  EXPECT_EQ(op(0xe12fff1e), PrologueOp::kOther);    // bx lr
  EXPECT_EQ(op(0xebfffff9), PrologueOp::kOther);    // bl
  EXPECT_EQ(op(0xe0000291), PrologueOp::kOther);    // mul (not followed)
}

TEST(ArmMachine, ArmPrologueAfterAScheduledMove) {
  // g++ -O2 -marm: mov r0, #3; push {r4, lr}; bl (a noreturn call).
  const std::vector<uint8_t> code = arm_code({0xe3a00003, 0xe92d4010, 0xebfffff9});
  EXPECT_EQ(a::starts_as_thumb(Bytes(code.data(), code.size())), false);
  RegisterFile regs = registers(0x7000, 0x6000, 0x10);
  regs.set(a::kPc, 0x10a74);
  FallbackInput in;
  in.registers = &regs;
  in.function_known = true;
  in.function_code = Bytes(code.data(), code.size());
  UnwindRow row;
  ASSERT_EQ(m().fallback_row(in, &row), FallbackKind::kPrologue);
  EXPECT_EQ(row.cfa.offset, 8);
  expect_saved(row, 4, -8);
  expect_saved(row, a::kLr, -4);
}

TEST(ArmMachine, AReturnAddressOffAWordIsThumb) {
  // push {r4, lr} as Thumb; the same bytes mean nothing in ARM.
  const std::vector<uint8_t> code = thumb({0x2001, 0xb510, 0x2002, 0xd000});
  RegisterFile regs = registers(0x7000, 0x6000, 0x10);
  regs.set(a::kPc, 0x100a6);
  FallbackInput in;
  in.registers = &regs;
  in.function_known = true;
  in.function_code = Bytes(code.data(), code.size());
  UnwindRow row;
  ASSERT_EQ(m().fallback_row(in, &row), FallbackKind::kPrologue);
  EXPECT_EQ(row.cfa.offset, 8);
}

TEST(ArmFrames, EpilogueReturns) {
  auto epilogue = [](const std::vector<uint8_t>& code, bool in_thumb, UnwindRow* row) {
    return a::epilogue_row(Bytes(code.data(), code.size()), in_thumb, row);
  };
  UnwindRow row;
  ASSERT_TRUE(epilogue(thumb({0xbd90}), true, &row));  // pop {r4, r7, pc}
  EXPECT_EQ(row.cfa.offset, 12);
  EXPECT_EQ(row.return_address_register, a::kPc);
  expect_saved(row, 4, -12);
  expect_saved(row, a::kR7, -8);
  expect_saved(row, a::kPc, -4);
  ASSERT_TRUE(epilogue(thumb({0xb002, 0xbd80}), true, &row));  // add sp, #8; pop {r7, pc}
  EXPECT_EQ(row.cfa.offset, 16);
  expect_saved(row, a::kPc, -4);
  ASSERT_TRUE(epilogue(thumb({0xe8bd, 0x8ff0}), true, &row));  // pop.w {r4-r11, pc}
  EXPECT_EQ(row.cfa.offset, 36);
  expect_saved(row, 11, -8);
  ASSERT_TRUE(epilogue(thumb({0xf85d, 0xfb04}), true, &row));  // ldr.w pc, [sp], #4
  EXPECT_EQ(row.cfa.offset, 4);
  ASSERT_TRUE(epilogue(thumb({0x4770}), true, &row));  // bx lr
  EXPECT_EQ(row.rule_count, 0);
  EXPECT_EQ(row.return_address_register, a::kLr);
  ASSERT_TRUE(epilogue(arm_code({0xe8bd8810}), false, &row));  // pop {r4, fp, pc}
  EXPECT_EQ(row.cfa.offset, 12);
  expect_saved(row, a::kR11, -8);
  ASSERT_TRUE(epilogue(arm_code({0xe28dd008, 0xe8bd8800}), false, &row));  // add sp, sp, #8; pop {fp, pc}
  EXPECT_EQ(row.cfa.offset, 16);
  ASSERT_TRUE(epilogue(arm_code({0xe49df004}), false, &row));  // pop {pc}
  EXPECT_EQ(row.cfa.offset, 4);
  ASSERT_TRUE(epilogue(arm_code({0xe12fff1e}), false, &row));  // bx lr
  EXPECT_EQ(row.cfa.offset, 0);
  EXPECT_FALSE(epilogue(thumb({0xbc10, 0x2001}), true, &row));  // pop {r4}; movs r0, #1: not the return yet
  EXPECT_FALSE(epilogue(arm_code({0xe8bd4010}), false, &row));  // pop {r4, lr}, then nothing
  EXPECT_FALSE(epilogue(thumb({0x4770}), false, &row));        // Thumb bytes read as ARM
}

TEST(ArmMachine, ActivationsOutsideTheBodyForTablesOfTheBody) {
  // push {r7, lr}; sub sp, #8; add r7, sp, #0; movs r0, #1; bl; movs r0, #2; add sp, #8; pop {r7, pc}
  const std::vector<uint8_t> code =
      thumb({0xb580, 0xb082, 0xaf00, 0x2001, 0xf000, 0xf800, 0x2002, 0xb002, 0xbd80});
  const RegisterFile regs = pc_and_sp();
  FunctionInput f(code, regs);
  UnwindRow row;
  f.activation_at(2);  // after the push
  ASSERT_TRUE(m().activation_row_outside_body(f.in, &row));
  EXPECT_EQ(row.cfa.reg, a::kSp);
  EXPECT_EQ(row.cfa.offset, 8);
  f.activation_at(6);  // the frame pointer set
  ASSERT_TRUE(m().activation_row_outside_body(f.in, &row));
  EXPECT_EQ(row.cfa.reg, a::kR7);
  f.activation_at(12);  // after the bl: the body, the table holds
  EXPECT_FALSE(m().activation_row_outside_body(f.in, &row));
  f.activation_at(14);  // at the add sp before the pop
  ASSERT_TRUE(m().activation_row_outside_body(f.in, &row));
  EXPECT_EQ(row.cfa.offset, 16);
  f.activation_at(16);  // at the pop
  ASSERT_TRUE(m().activation_row_outside_body(f.in, &row));
  EXPECT_EQ(row.cfa.reg, a::kSp);
  EXPECT_EQ(row.cfa.offset, 8);
  expect_saved(row, a::kPc, -4);
  f.activation_at(12);
  f.in.activation = false;
  EXPECT_FALSE(m().activation_row_outside_body(f.in, &row));
  // The x86-64 machine's CFI holds everywhere.
  EXPECT_FALSE(machine_for(usual_machine_key(62))->activation_row_outside_body(f.in, &row));
}

TEST(ArmInstruction, PrologueForms) {
  const auto t = &decoded_thumb;
  const auto w = &decoded_arm;
  EXPECT_EQ(t({0xb580}).registers, (1u << 7) | (1u << 14));      // push {r7, lr}
  EXPECT_EQ(t({0xe92d, 0x4ff0}).registers, 0x4ff0u);             // push.w {r4-r11, lr}
  EXPECT_EQ(t({0xe92d, 0x4ff0}).size, 4);
  EXPECT_EQ(t({0xf84d, 0xed04}).registers, 1u << 14);            // str.w lr, [sp, #-4]!
  EXPECT_EQ(t({0xb082}).amount, 8u);                             // sub sp, #8
  EXPECT_EQ(t({0xaf02}).amount, 8u);                             // add r7, sp, #8
  EXPECT_EQ(t({0x466f}).op, a::PrologueOp::kSetFramePointer);    // mov r7, sp
  EXPECT_EQ(t({0xf000, 0xb800}).op, a::PrologueOp::kOther);      // b.w
  EXPECT_EQ(t({0xf000, 0xb800}).size, 4);
  EXPECT_FALSE(a::decode_thumb_prologue(Bytes(thumb({0xe92d}).data(), 2)).has_value());  // cut off
  EXPECT_EQ(w(0xe92d4ff0).registers, 0x4ff0u);                    // push {r4-r11, lr}
  EXPECT_EQ(w(0xe52de004).registers, 1u << 14);                  // str lr, [sp, #-4]!
  EXPECT_EQ(w(0xe24ddf41).amount, 0x104u);                       // sub sp, sp, #260 (rotated)
  EXPECT_EQ(w(0xe28db004).amount, 4u);                           // add fp, sp, #4
  EXPECT_EQ(w(0xe1a0b00d).op, a::PrologueOp::kSetFramePointer);  // mov fp, sp
  EXPECT_EQ(w(0xea000000).op, a::PrologueOp::kOther);                // b
}

// The prologues gcc 12 -O2 emits where they go beyond a push and a 16-bit
// `sub sp`: Thumb-2 `sub.w sp` with a modified immediate (T3) and `subw`
// (T4), vpush of the callee-saved D registers, -mapcs-frame's `mov ip, sp;
// push {fp, ip, lr, pc}; sub fp, ip, #4`.
TEST(ArmInstruction, WideStackAdjustments) {
  const auto t = &decoded_thumb;
  EXPECT_EQ(t({0xf5ad, 0x7d7a}).op, a::PrologueOp::kSubSp);  // sub.w sp, sp, #1000
  EXPECT_EQ(t({0xf5ad, 0x7d7a}).amount, 1000u);
  EXPECT_EQ(t({0xf5ad, 0x7d7a}).size, 4);
  EXPECT_EQ(t({0xf5ad, 0x6dff}).amount, 2040u);               // sub.w sp, sp, #2040
  EXPECT_EQ(t({0xf1ad, 0x0d08}).amount, 8u);                  // sub.w sp, sp, #8 (no rotation)
  EXPECT_EQ(t({0xf6ad, 0x0d08}).op, a::PrologueOp::kSubSp);  // subw sp, sp, #2056
  EXPECT_EQ(t({0xf6ad, 0x0d08}).amount, 2056u);
  EXPECT_EQ(t({0xf2ad, 0x0d04}).amount, 4u);                  // subw sp, sp, #4
  EXPECT_EQ(t({0xf6ad, 0x7dff}).amount, 4095u);               // subw sp, sp, #4095
  // ThumbExpandImm's four patterns of imm8 and its rotations.
  EXPECT_EQ(a::thumb_modified_immediate(0xf1ad, 0x0dab), 0xabu);
  EXPECT_EQ(a::thumb_modified_immediate(0xf1ad, 0x1dab), 0x00ab00abu);
  EXPECT_EQ(a::thumb_modified_immediate(0xf1ad, 0x2dab), 0xab00ab00u);
  EXPECT_EQ(a::thumb_modified_immediate(0xf1ad, 0x3dab), 0xababababu);
  EXPECT_EQ(a::thumb_modified_immediate(0xf5ad, 0x6d81), 0x408u);   // 1032
  EXPECT_EQ(a::thumb_modified_immediate(0xf1ad, 0x4d00), 0x80000000u);
  // Not sp: an ordinary scheduled instruction.
  EXPECT_EQ(t({0xf5a4, 0x64a0}).op, a::PrologueOp::kNeutral);  // sub.w r4, r4, #1280
}

TEST(ArmInstruction, VfpPushes) {
  const auto t = &decoded_thumb;
  const auto w = &decoded_arm;
  for (const a::PrologueInstruction& in : {t({0xed2d, 0x8b10}), w(0xed2d8b10)}) {  // vpush {d8-d15}
    EXPECT_EQ(in.op, a::PrologueOp::kVfpPush);
    EXPECT_EQ(in.vfp_first, a::kD0 + 8);
    EXPECT_EQ(in.vfp_count, 8);
    EXPECT_EQ(in.vfp_bytes, 8);
    EXPECT_EQ(in.amount, 64u);
    EXPECT_EQ(in.size, 4);
  }
  EXPECT_EQ(t({0xed2d, 0x8b0a}).vfp_count, 5);          // vpush {d8-d12}
  EXPECT_EQ(t({0xed6d, 0x0b04}).vfp_first, a::kD0 + 16);  // vpush {d16-d17}: the D bit
  const a::PrologueInstruction singles = t({0xed2d, 0x8a10});  // vpush {s16-s31}
  EXPECT_EQ(singles.op, a::PrologueOp::kVfpPush);
  EXPECT_EQ(singles.vfp_first, 64 + 16);
  EXPECT_EQ(singles.vfp_count, 16);
  EXPECT_EQ(singles.amount, 64u);
  EXPECT_EQ(t({0xed6d, 0x7a02}).vfp_first, 64 + 15);     // vpush {s15-s16}: Vd:D
  // Not a compiler's push: FSTMX's odd word count, more than 16 D registers,
  // past d31, none at all.
  EXPECT_EQ(t({0xed2d, 0x8b11}).op, a::PrologueOp::kOther);
  EXPECT_EQ(t({0xed2d, 0x0b22}).op, a::PrologueOp::kOther);
  EXPECT_EQ(t({0xed6d, 0xeb06}).op, a::PrologueOp::kOther);  // d30-d32
  EXPECT_EQ(w(0xed2d8b00).op, a::PrologueOp::kOther);
  EXPECT_EQ(w(0x0d2d8b10).op, a::PrologueOp::kOther);       // vpusheq
}

TEST(ArmInstruction, ApcsFrameForms) {
  const auto w = &decoded_arm;
  EXPECT_EQ(w(0xe1a0c00d).op, a::PrologueOp::kCopySpToIp);  // mov ip, sp
  EXPECT_EQ(w(0xe1a0c00d).amount, 0u);
  EXPECT_EQ(w(0xe28dc008).op, a::PrologueOp::kCopySpToIp);  // add ip, sp, #8
  EXPECT_EQ(w(0xe28dc008).amount, 8u);
  const a::PrologueInstruction fp = w(0xe24cb004);           // sub fp, ip, #4
  EXPECT_EQ(fp.op, a::PrologueOp::kSetFramePointer);
  EXPECT_TRUE(fp.from_ip);
  EXPECT_EQ(fp.amount, 4u);
  EXPECT_EQ(fp.frame_pointer, 11);
  EXPECT_EQ(w(0xe92dd800).registers, 0xd800u);                // push {fp, ip, lr, pc}
  // What writes ip among the scheduled instructions, and what does not.
  EXPECT_TRUE(w(0xe1a0c000).clobbers_ip);    // mov ip, r0
  EXPECT_TRUE(w(0xe59fc010).clobbers_ip);    // ldr ip, [pc, #16]
  EXPECT_TRUE(w(0xe5bc3004).clobbers_ip);    // ldr r3, [ip, #4]!
  EXPECT_FALSE(w(0xe2503000).clobbers_ip);   // subs r3, r0, #0
  EXPECT_FALSE(w(0xe3500000).clobbers_ip);   // cmp r0, #0
}

// Thumb `push {lr}; vmul.f64 d0, d0, d0; vpush {d8-d15}; sub sp, #20;
// vstr d0, [sp, #8]; bl` (the fixture prologues.c's vfp_frame), and the ARM
// build's `str lr, [sp, #-4]!; vmul; vpush; sub sp, sp, #20; vstr; bl`.
const std::vector<uint8_t> kThumbVfp = thumb({0xb500, 0xee20, 0x0b00, 0xed2d, 0x8b10, 0xb085, 0xed8d, 0x0b02, 0xf7ff,
                                              0xfffe});
const std::vector<uint8_t> kArmVfp = arm_code({0xe52de004, 0xee200b00, 0xed2d8b10, 0xe24dd014, 0xed8d0b02, 0xebfffffe});

TEST(ArmMachine, VpushSavesTheDRegistersInTheRow) {
  for (const auto& [code, cpsr] : {std::pair{&kThumbVfp, 0x30u}, std::pair{&kArmVfp, 0x10u}}) {
    SCOPED_TRACE(cpsr);
    const RegisterFile regs = registers(0x7000, 0x6000, cpsr);
    FunctionInput f(*code, regs);
    UnwindRow row;
    // A return-address frame: lr, then d8-d15 (d8 lowest), then 20 bytes.
    ASSERT_EQ(m().fallback_row(f.in, &row), FallbackKind::kPrologue);
    EXPECT_EQ(row.cfa.reg, a::kSp);
    EXPECT_EQ(row.cfa.offset, 4 + 64 + 20);
    expect_saved(row, a::kLr, -4);
    for (uint16_t d = 8; d < 16; ++d) expect_saved(row, a::kD0 + d, -4 - 64 + 8 * (d - 8));
    EXPECT_EQ(row.rule_count, 9);
    // An activation right after the vpush: nothing of the sub yet.
    ASSERT_EQ(m().fallback_row(f.activation_at(cpsr == 0x30u ? 10 : 12), &row), FallbackKind::kPrologue);
    EXPECT_EQ(row.cfa.offset, 4 + 64);
    expect_saved(row, a::kD0 + 15, -12);
  }
  EXPECT_EQ(m().register_size(a::kD0 + 8), 8);
  EXPECT_EQ(m().register_size(64 + 16), 4);
}

TEST(ArmMachine, WideThumbFramesFromThePrologue) {
  // push {r4, lr}; mov r2, r0; sub.w sp, sp, #1000; mov r4, sp; mov r0, r4; bl
  const std::vector<uint8_t> wide = thumb({0xb510, 0x4602, 0xf5ad, 0x7d7a, 0x466c, 0x4620, 0xf7ff, 0xfffe});
  // push {r4, lr}; mov r2, r0; subw sp, sp, #2056; add r4, sp, #4; mov r0, r4; bl
  const std::vector<uint8_t> odd = thumb({0xb510, 0x4602, 0xf6ad, 0x0d08, 0xac01, 0x4620, 0xf7ff, 0xfffe});
  const RegisterFile regs = registers(0x7000, 0x6000, 0x30);
  for (const auto& [code, frame] : {std::pair{&wide, 1000}, std::pair{&odd, 2056}}) {
    const FunctionInput f(*code, regs);
    UnwindRow row;
    ASSERT_EQ(m().fallback_row(f.in, &row), FallbackKind::kPrologue);
    EXPECT_EQ(row.cfa.offset, 8 + frame);
    expect_saved(row, 4, -8);
    expect_saved(row, a::kLr, -4);
  }
}

// leaf() of recursion.c built -O2 -marm -mapcs-frame: `cmp r0, #0; mov ip,
// sp; push {fp, ip, lr, pc}; sub fp, ip, #4; ldmne sp, {fp, sp, pc}; bl abort`.
const std::vector<uint8_t> kApcs = arm_code({0xe3500000, 0xe1a0c00d, 0xe92dd800, 0xe24cb004, 0x189da800, 0xebfffffe});

TEST(ArmMachine, ApcsFrameFromThePrologue) {
  EXPECT_EQ(a::starts_as_thumb(Bytes(kApcs.data(), kApcs.size())), false);
  RegisterFile regs = registers(0x7000, 0x7100, 0x10);
  regs.set(a::kPc, 0x10a74);
  FunctionInput f(kApcs, regs);
  UnwindRow row;
  // fp = entry sp - 4, at the saved pc: CFA = fp + 4; lr, ip, fp below; no rule for the stored pc.
  ASSERT_EQ(m().fallback_row(f.in, &row), FallbackKind::kFramePointer);
  EXPECT_EQ(row.cfa.reg, a::kR11);
  EXPECT_EQ(row.cfa.offset, 4);
  EXPECT_EQ(row.return_address_register, a::kLr);
  expect_saved(row, a::kR11, -16);
  expect_saved(row, a::kIp, -12);
  expect_saved(row, a::kLr, -8);
  EXPECT_EQ(row.find(a::kPc), nullptr);
  // Activations: before the push (a leaf), after it (sp-based), after the sub (fp-based).
  ASSERT_EQ(m().fallback_row(f.activation_at(8), &row), FallbackKind::kPrologue);
  EXPECT_EQ(row.cfa.offset, 0);
  ASSERT_EQ(m().fallback_row(f.activation_at(12), &row), FallbackKind::kPrologue);
  EXPECT_EQ(row.cfa.reg, a::kSp);
  EXPECT_EQ(row.cfa.offset, 16);
  ASSERT_EQ(m().fallback_row(f.activation_at(16), &row), FallbackKind::kFramePointer);
  EXPECT_EQ(row.cfa.reg, a::kR11);
  EXPECT_EQ(row.cfa.offset, 4);
  // ip written between the mov and the sub: fp is not at the frame, the row keeps to sp.
  const std::vector<uint8_t> clobbered = arm_code({0xe1a0c00d, 0xe92dd800, 0xe1a0c000, 0xe24cb004, 0xebfffffe});
  ASSERT_EQ(m().fallback_row(FunctionInput(clobbered, regs).in, &row), FallbackKind::kPrologue);
  EXPECT_EQ(row.cfa.reg, a::kSp);
  EXPECT_EQ(row.cfa.offset, 16);
  // `sub fp, ip, #4` without the mov: no frame pointer from it either.
  const std::vector<uint8_t> no_mov = arm_code({0xe92dd800, 0xe24cb004, 0xebfffffe});
  ASSERT_EQ(m().fallback_row(FunctionInput(no_mov, regs).in, &row), FallbackKind::kPrologue);
  EXPECT_EQ(row.cfa.reg, a::kSp);
}

TEST(ArmFrames, RestoringEpilogues) {
  auto epilogue = [](const std::vector<uint8_t>& code, bool in_thumb, UnwindRow* row) {
    return a::epilogue_row(Bytes(code.data(), code.size()), in_thumb, row);
  };
  UnwindRow row;
  // add.w sp, sp, #1000; pop {r4, pc}
  ASSERT_TRUE(epilogue(thumb({0xf50d, 0x7d7a, 0xbd10}), true, &row));
  EXPECT_EQ(row.cfa.offset, 1008);
  expect_saved(row, 4, -8);
  expect_saved(row, a::kPc, -4);
  // addw sp, sp, #2056; pop {r4, pc}
  ASSERT_TRUE(epilogue(thumb({0xf60d, 0x0d08, 0xbd10}), true, &row));
  EXPECT_EQ(row.cfa.offset, 2064);
  // add sp, #20; vpop {d8-d15}; ldr.w pc, [sp], #4
  ASSERT_TRUE(epilogue(thumb({0xb005, 0xecbd, 0x8b10, 0xf85d, 0xfb04}), true, &row));
  EXPECT_EQ(row.cfa.offset, 20 + 64 + 4);
  EXPECT_EQ(row.return_address_register, a::kPc);
  for (uint16_t d = 8; d < 16; ++d) expect_saved(row, a::kD0 + d, -68 + 8 * (d - 8));
  expect_saved(row, a::kPc, -4);
  // The same in ARM code, and at the vpop.
  ASSERT_TRUE(epilogue(arm_code({0xe28dd014, 0xecbd8b10, 0xe49df004}), false, &row));
  EXPECT_EQ(row.cfa.offset, 88);
  expect_saved(row, a::kD0 + 8, -68);
  ASSERT_TRUE(epilogue(arm_code({0xecbd8b10, 0xe49df004}), false, &row));
  EXPECT_EQ(row.cfa.offset, 68);
  expect_saved(row, a::kD0 + 15, -12);
  // Two adds: add sp, sp, #1024; add sp, sp, #12; ldr pc, [sp], #4
  ASSERT_TRUE(epilogue(arm_code({0xe28ddb01, 0xe28dd00c, 0xe49df004}), false, &row));
  EXPECT_EQ(row.cfa.offset, 1040);
  // `bx lr` after add sp: the return address is still in lr.
  ASSERT_TRUE(epilogue(thumb({0xb002, 0x4770}), true, &row));  // add sp, #8; bx lr
  EXPECT_EQ(row.cfa.offset, 8);
  EXPECT_EQ(row.rule_count, 0);
  EXPECT_EQ(row.return_address_register, a::kLr);
  ASSERT_TRUE(epilogue(arm_code({0xe28dd010, 0xe12fff1e}), false, &row));  // add sp, sp, #16; bx lr
  EXPECT_EQ(row.cfa.offset, 16);
  // A pop without pc, then `bx lr`: lr from the stack where it was popped, else still in lr.
  ASSERT_TRUE(epilogue(arm_code({0xe8bd4010, 0xe12fff1e}), false, &row));  // ldmfd sp!, {r4, lr}; bx lr
  EXPECT_EQ(row.cfa.offset, 8);
  EXPECT_EQ(row.return_address_register, a::kLr);
  expect_saved(row, 4, -8);
  expect_saved(row, a::kLr, -4);
  ASSERT_TRUE(epilogue(thumb({0xbc10, 0x4770}), true, &row));  // pop {r4}; bx lr
  EXPECT_EQ(row.cfa.offset, 4);
  expect_saved(row, 4, -4);
  EXPECT_EQ(row.find(a::kLr), nullptr);
  ASSERT_TRUE(epilogue(thumb({0xe8bd, 0x4010, 0x4770}), true, &row));  // pop.w {r4, lr}; bx lr
  expect_saved(row, a::kLr, -4);
  // -mapcs-frame's return: ldm sp, {fp, sp, pc} loads the caller's sp from its slot.
  ASSERT_TRUE(epilogue(arm_code({0xe89da800}), false, &row));
  EXPECT_EQ(row.cfa.offset, 12);
  EXPECT_EQ(row.return_address_register, a::kPc);
  expect_saved(row, a::kR11, -12);
  expect_saved(row, a::kSp, -8);
  expect_saved(row, a::kPc, -4);
  // Out of order or not an epilogue: add sp after the vpop or the pop, two
  // pops, vpop after a pop, a pop that loads sp with writeback, a
  // conditional return.
  EXPECT_FALSE(epilogue(thumb({0xecbd, 0x8b10, 0xb002, 0x4770}), true, &row));
  EXPECT_FALSE(epilogue(thumb({0xbc10, 0xb002, 0x4770}), true, &row));
  EXPECT_FALSE(epilogue(thumb({0xbc10, 0xbd10}), true, &row));
  EXPECT_FALSE(epilogue(arm_code({0xe8bd0010, 0xecbd8b10, 0xe12fff1e}), false, &row));
  EXPECT_FALSE(epilogue(arm_code({0xe8bda800}), false, &row));
  EXPECT_FALSE(epilogue(arm_code({0x189da800}), false, &row));
  EXPECT_FALSE(epilogue(thumb({0xb002}), true, &row));  // cut off
}

TEST(ArmMachine, ActivationsAtRestoringEpiloguesOfTableCoveredCode) {
  // Thumb `push {lr}; vpush {d8-d15}; sub sp, #20; bl; movs r0, #1; add sp,
  // #20; vpop {d8-d15}; ldr.w pc, [sp], #4`, an EXIDX entry covering it.
  const std::vector<uint8_t> code = thumb({0xb500, 0xed2d, 0x8b10, 0xb085, 0xf7ff, 0xfffe, 0x2001, 0xb005, 0xecbd,
                                           0x8b10, 0xf85d, 0xfb04});
  const RegisterFile regs = pc_and_sp();
  FunctionInput f(code, regs);
  UnwindRow row;
  // After push {lr}: before the vpush.
  ASSERT_TRUE(m().activation_row_outside_body(f.activation_at(2), &row));
  EXPECT_EQ(row.cfa.offset, 4);
  // After the bl: the body, the table holds.
  EXPECT_FALSE(m().activation_row_outside_body(f.activation_at(12), &row));
  // At the add sp, the vpop, the ldr.w pc.
  ASSERT_TRUE(m().activation_row_outside_body(f.activation_at(14), &row));
  EXPECT_EQ(row.cfa.offset, 88);
  ASSERT_TRUE(m().activation_row_outside_body(f.activation_at(16), &row));
  EXPECT_EQ(row.cfa.offset, 68);
  expect_saved(row, a::kD0 + 8, -68);
  ASSERT_TRUE(m().activation_row_outside_body(f.activation_at(20), &row));
  EXPECT_EQ(row.cfa.offset, 4);
  EXPECT_EQ(row.rule_count, 1);
}

}  // namespace
}  // namespace framewalk::arch

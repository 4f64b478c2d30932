#include "arch/ppc64le/frames.hpp"

#include "arch/capture.hpp"

namespace framewalk::arch::ppc64le {

RegisterFile from_capture(const uint64_t* captured) {
  RegisterFile r;
  for (uint16_t reg : kCapturedKnown) r.set(reg, captured[captured_word(reg)]);
  return r;
}

RegisterFile from_ucontext_bytes(Bytes bytes) {
  if (bytes.size() <= kUcontextGregsOffset) return {};
  RegisterFile regs = power::from_gregs_bytes(kAbi, bytes.subspan(kUcontextGregsOffset));
  if (bytes.size() > kUcontextFpregsOffset) power::add_fpregs_bytes(kAbi, bytes.subspan(kUcontextFpregsOffset), regs);
  return regs;
}

bool is_trampoline(Bytes code) {
  const size_t at = code.size() >= 4 && power::insn_at(kAbi, code, 0) == kAddiR1R1FrameSize ? 4 : 0;
  return power::is_sigreturn_at(kAbi, code, at, kNrRtSigreturn);
}

UnwindRow signal_frame_row() {
  // The CFA is the ucontext's gp_regs: the kernel's frame puts the
  // ucontext 128 bytes above r1, qemu-user 7.2's 144 (32-bit PowerPC's
  // 16-byte gap, which later qemu keeps to 32-bit frames). The sigcontext's `regs`,
  // 8 bytes before gp_regs, points at gp_regs: where it does 128 bytes up,
  // the kernel's layout, else qemu's.
  static constexpr uint8_t kGregs[] = {
      0x71, 0xe0, 0x02,  // DW_OP_breg1 352: the kernel's `regs`
      0x06,              // DW_OP_deref
      0x71, 0xe8, 0x02,  // DW_OP_breg1 360: the kernel's gp_regs
      0x29,              // DW_OP_eq
      0x28, 0x06, 0x00,  // DW_OP_bra +6
      0x71, 0xf8, 0x02,  // DW_OP_breg1 376: qemu's gp_regs
      0x2f, 0x03, 0x00,  // DW_OP_skip +3
      0x71, 0xe8, 0x02,  // DW_OP_breg1 360
  };
  static_assert(kSignalFrameSize + kUcontextGregsOffset == 360);
  UnwindRow row;
  row.cfa.kind = CfaKind::kExpression;
  row.cfa.expression = Bytes(kGregs, sizeof kGregs);
  row.return_address_register = kNip;
  row.signal_frame = true;
  power::add_gregs_rules(kAbi, kUcontextFpregsOffset - kUcontextGregsOffset, row);
  return row;
}

}  // namespace framewalk::arch::ppc64le

#include "arch/ppc/frames.hpp"

namespace framewalk::arch::ppc {

RegisterFile from_ucontext_bytes(Bytes bytes) {
  if (bytes.size() <= kUcontextMcontextOffset) return {};
  const Bytes mcontext = bytes.subspan(kUcontextMcontextOffset);
  RegisterFile regs = power::from_gregs_bytes(kAbi, mcontext);
  if (mcontext.size() > kMcontextFpregsOffset)
    power::add_fpregs_bytes(kAbi, mcontext.subspan(kMcontextFpregsOffset), regs);
  return regs;
}

Trampoline trampoline_of(Bytes code) {
  if (power::is_sigreturn_at(kAbi, code, 0, kNrSigreturn)) return Trampoline::kSigreturn;
  if (power::is_sigreturn_at(kAbi, code, 0, kNrRtSigreturn)) return Trampoline::kRtSigreturn;
  return Trampoline::kNone;
}

UnwindRow signal_frame_row(Trampoline trampoline) {
  // The CFA is the mcontext's gregs, which the frame points at: the
  // sigcontext's `regs` 64 + 28 bytes above r1, or the ucontext's uc_regs
  // 64 + 16 + 128 + 48.
  static constexpr uint8_t kSigframeRegs[] = {0x71, 0xdc, 0x00, 0x06};    // DW_OP_breg1 92; DW_OP_deref
  static constexpr uint8_t kRtSigframeRegs[] = {0x71, 0x80, 0x02, 0x06};  // DW_OP_breg1 256; DW_OP_deref
  static_assert(kSignalFrameSize + kSigcontextRegsOffset == 92);
  static_assert(kSignalFrameSize + kRtSigframeGap + kSiginfoSize + kUcontextRegsPointerOffset == 256);
  UnwindRow row;
  row.cfa.kind = CfaKind::kExpression;
  row.cfa.expression = trampoline == Trampoline::kSigreturn ? Bytes(kSigframeRegs, sizeof kSigframeRegs)
                                                            : Bytes(kRtSigframeRegs, sizeof kRtSigframeRegs);
  row.return_address_register = kNip;
  row.signal_frame = true;
  power::add_gregs_rules(kAbi, kMcontextFpregsOffset, row);
  return row;
}

}  // namespace framewalk::arch::ppc

// SPARC conversions at the back-end edge (core notes, ucontext, the
// kernel's signal frames) and the frame conventions of register windows:
// a `save` gives a function a new window whose %i registers are its
// caller's %o registers, and the caller's %l and %i registers go to the
// 16-word save area at the caller's %sp (+ 2047 on sparc64, the stack
// bias) when the window is spilled (always, by the time a kernel writes a
// core or delivers a signal). 32-bit SPARC: the same with 4-byte words and
// no bias.
#pragma once

#include <array>
#include <cstdint>

#include "arch/registers.hpp"
#include "arch/sparc/registers.hpp"
#include "base/byte_reader.hpp"
#include "model/unwind_row.hpp"

namespace framewalk::arch::sparc {

// The kernel's sparc64 elf_gregset_t (asm/elf_64.h, ELF_CORE_COPY_REGS):
// 36 words, %g0-%g7, %o0-%o7, then the %l and %i registers copied from the
// window save area, then tstate, tpc, tnpc and y.
inline constexpr unsigned kGregsCount = 36;
inline constexpr unsigned kGregsSize = kGregsCount * 8;
inline constexpr unsigned kGregsTpc = 33;
// From the bytes of an elf_gregset_t; words past the end of `bytes` are unknown.
RegisterFile from_gregs_bytes(Bytes bytes);

// glibc's sparc64 ucontext_t: uc_link, uc_flags, a sigmask word, then
// mcontext_t at 24: mc_gregs (tstate, pc, npc, y, %g1-%g7, %o0-%o7), then
// mc_fp and mc_i7 (the interrupted window's %i6 and %i7).
inline constexpr unsigned kUcontextGregsOffset = 24;
// From the bytes of a ucontext_t; registers past the end are unknown.
RegisterFile from_ucontext_bytes(Bytes bytes);

// The 32-bit kernel's elf_gregset_t (asm/elf_32.h, the genregs32 regset):
// 38 words of 4 bytes, %g0-%i7 as sparc64's, then psr, pc, npc, y, wim, tbr.
inline constexpr unsigned kGregs32Count = 38;
inline constexpr unsigned kGregs32Size = kGregs32Count * 4;
inline constexpr unsigned kGregs32Pc = 33;
RegisterFile from_gregs32_bytes(Bytes bytes);

// glibc's 32-bit ucontext_t: uc_flags, uc_link, uc_sigmask (128 bytes),
// uc_stack (12), then mcontext_t at 148: gregs (psr, pc, npc, y,
// %g1-%g7, %o0-%o7; no %fp or %i7: the window is at %sp).
inline constexpr unsigned kUcontext32GregsOffset = 148;
RegisterFile from_ucontext32_bytes(Bytes bytes);

// The signal-return trampolines, which the kernel has the handler return
// to (its %i7 is the trampoline less 8): sparc64's rt_sigreturn, glibc's
// __rt_sigreturn_stub, is `mov 101, %g1; ta 0x6d`; 32-bit SPARC's enter
// the kernel with `ta 0x10`, sigreturn being 216 there (glibc's
// __sigreturn_stub and __rt_sigreturn_stub, or the kernel's copy of them
// in the frame, signal_frame.insns, without SA_RESTORER).
inline constexpr uint32_t kMovRtSigreturnG1 = 0x82102065;
inline constexpr uint32_t kMovSigreturn32G1 = 0x821020d8;
inline constexpr uint32_t kTa6d = 0x91d0206d;
inline constexpr uint32_t kTa10 = 0x91d02010;
// Whether `code` (8 bytes at a PC) is sparc64's trampoline.
bool is_trampoline(Bytes code);

// Where a kernel's signal frame keeps the interrupted registers, from the
// CFA (the handler's %sp at the trampoline, + the bias): pt_regs's
// u_regs[16] (%g0-%o7) and its PC; the interrupted %l0-%i7 are the copy of
// their window that begins every frame (struct sparc_stackf ss), at the CFA.
struct SignalLayout {
  int64_t stack_bias;
  uint8_t word;
  int64_t u_regs;  // offset of u_regs
  // DW_OP_plus_uconst <pc's offset>; DW_OP_deref; DW_OP_lit8; DW_OP_minus:
  // the interrupted PC less 8, as a return address column holds a call's
  // own address (the Machine adds the 8 back to every return address).
  std::array<uint8_t, 6> pc_less_eight;
};
constexpr SignalLayout signal_layout(int64_t stack_bias, uint8_t word, int64_t u_regs, int64_t pc) {
  return {stack_bias, word, u_regs,
          {0x23, static_cast<uint8_t>(0x80 | (pc & 0x7f)), static_cast<uint8_t>(pc >> 7), 0x06, 0x38, 0x1c}};
}
// A signal frame of the trampoline whose first word is `mov`, or null.
const SignalLayout* signal32_layout(Bytes code);
// At the trampoline, the handler's window has been restored: %sp + 2047 is
// the kernel's struct rt_signal_frame { struct sparc_stackf ss (192 bytes);
// siginfo_t info (128); struct pt_regs regs; ... }. ss begins with a copy
// of the interrupted window (%l0-%i7), which the kernel also flushed to its
// save area at the interrupted %sp + 2047; qemu-user writes the copy only.
// pt_regs holds u_regs[16] (%g0-%o7 of the interrupted code), then
// tstate, tpc, tnpc. The row: CFA = %sp + 2047; %g1-%o7 and the PC from
// pt_regs, %l0-%i7 from the copy (window_saved).
inline constexpr int64_t kSignalRegsOffset = 192 + 128;
inline constexpr SignalLayout kRtSignal64 =
    signal_layout(kStackBias64, 8, kSignalRegsOffset, kSignalRegsOffset + 16 * 8 + 8);
// 32-bit (signal_32.c; qemu-user writes the same): ss is 96 bytes (24
// words). struct signal_frame: ss, then __siginfo32_t's si_regs, a pt_regs
// (psr, pc, npc, y, u_regs). struct rt_signal_frame: ss, siginfo_t (128
// bytes), pt_regs.
inline constexpr SignalLayout kSignal32 = signal_layout(0, 4, 96 + 16, 96 + 4);
inline constexpr SignalLayout kRtSignal32 = signal_layout(0, 4, 96 + 128 + 16, 96 + 128 + 4);
UnwindRow signal_frame_row(const SignalLayout& layout);

// Before `save` (a function's entry, a leaf that makes none): CFA = %sp +
// the bias, the return address still in %o7 (no rule: a link-register
// activation).
UnwindRow leaf_row(int64_t stack_bias);
// After `save`: CFA = %fp + the bias, the caller's window saved there
// (window_saved), its %o7 in this frame's %i7. What gcc's CFI says of
// every function with a frame, and the fallback where CFI is missing.
UnwindRow window_row(int64_t stack_bias);
// The end of the chain: %fp of 0 (_start's, as the kernel starts a program).
UnwindRow chain_end_row(int64_t stack_bias);

// Whether the function whose first bytes are `code` runs `save` within its
// first `pc_offset` bytes (an activation's PC past it).
bool saved_before(Bytes code, uint64_t pc_offset);
// Whether `insn` is a call linking in %o7: call, or jmpl ...,%o7.
bool is_call(uint32_t insn);

}  // namespace framewalk::arch::sparc

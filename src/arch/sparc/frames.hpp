// sparc64 conversions at the back-end edge (core notes, ucontext, the
// kernel's signal frame) and the frame conventions of register windows:
// a `save` gives a function a new window whose %i registers are its
// caller's %o registers, and the caller's %l and %i registers go to the
// 16-word save area at the caller's %sp + 2047 when the window is spilled
// (always, by the time a kernel writes a core or delivers a signal).
#pragma once

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

// The rt_sigreturn trampoline, glibc's __rt_sigreturn_stub, which the
// kernel has the handler return to (its %o7 is the stub less 8):
// `mov 101, %g1; ta 0x6d`.
inline constexpr uint32_t kMovRtSigreturnG1 = 0x82102065;
inline constexpr uint32_t kTa6d = 0x91d0206d;
// Whether `code` (8 bytes at a PC) is the trampoline.
bool is_trampoline(Bytes code);
// At the trampoline, the handler's window has been restored: %sp + 2047 is
// the kernel's struct rt_signal_frame { struct sparc_stackf ss (192 bytes);
// siginfo_t info (128); struct pt_regs regs; ... }. ss begins with a copy
// of the interrupted window (%l0-%i7), which the kernel also flushed to its
// save area at the interrupted %sp + 2047; qemu-user writes the copy only.
// pt_regs holds u_regs[16] (%g0-%o7 of the interrupted code), then
// tstate, tpc, tnpc. The row: CFA = %sp + 2047; %g1-%o7 and the PC from
// pt_regs, %l0-%i7 from the copy (window_saved).
inline constexpr int64_t kSignalRegsOffset = 192 + 128;
UnwindRow signal_frame_row();

// Before `save` (a function's entry, a leaf that makes none): CFA = %sp +
// 2047, the return address still in %o7 (no rule: a link-register
// activation).
UnwindRow leaf_row();
// After `save`: CFA = %fp + 2047, the caller's window saved there
// (window_saved), its %o7 in this frame's %i7. What gcc's CFI says of
// every function with a frame, and the fallback where CFI is missing.
UnwindRow window_row();
// The end of the chain: %fp of 0 (_start's, as the kernel starts a program).
UnwindRow chain_end_row();

// Whether the function whose first bytes are `code` runs `save` within its
// first `pc_offset` bytes (an activation's PC past it).
bool saved_before(Bytes code, uint64_t pc_offset);
// Whether `insn` is a call linking in %o7: call, or jmpl ...,%o7.
bool is_call(uint32_t insn);

}  // namespace framewalk::arch::sparc

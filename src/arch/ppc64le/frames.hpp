// ppc64le conversions at the back-end edge (core notes, ucontext) and the
// ELFv2 frame conventions: the kernel's (and qemu's) signal frame, the back
// chain, and the prologues gcc writes.
#pragma once

#include <cstdint>

#include "arch/ppc64le/registers.hpp"
#include "arch/registers.hpp"
#include "base/byte_reader.hpp"
#include "model/unwind_row.hpp"

namespace framewalk::arch::ppc64le {

// The kernel's `struct pt_regs` as elf_gregset_t (asm/ptrace.h): 48 words,
// r0-r31, nip, msr, orig_gpr3, ctr, link, xer, ccr, softe, trap, dar,
// dsisr, result.
inline constexpr unsigned kGregsCount = 48;
inline constexpr unsigned kGregsSize = kGregsCount * 8;
inline constexpr unsigned kGregNip = 32, kGregCtr = 35, kGregLink = 36, kGregXer = 37;
// From the bytes of an elf_gregset_t (NT_PRSTATUS's pr_reg); words past the
// end of `bytes` are unknown.
RegisterFile from_gregs_bytes(Bytes bytes);
// elf_fpregset_t (NT_PRFPREG): f0-f31, then fpscr; f0-f31 are DWARF 32-63.
inline constexpr unsigned kFpregsSize = 33 * 8;
void add_fpregs_bytes(Bytes bytes, RegisterFile& registers);

// ucontext_t (sys/ucontext.h, the kernel's struct ucontext): uc_flags,
// uc_link, uc_stack (24 bytes), uc_sigmask with room to grow (128 bytes),
// then uc_mcontext, the kernel's struct sigcontext: 4 unused words, signal,
// handler, oldmask, the pointer `regs`, then gp_regs[48] (a gregset) and
// fp_regs[33] (an fpregset).
inline constexpr unsigned kUcontextMcontextOffset = 168;
inline constexpr unsigned kUcontextGregsOffset = kUcontextMcontextOffset + 64;
inline constexpr unsigned kUcontextFpregsOffset = kUcontextGregsOffset + kGregsSize;
// From the bytes of a ucontext_t; registers past the end are unknown.
RegisterFile from_ucontext_bytes(Bytes bytes);

// The rt_sigreturn trampoline: `li r0,172; sc`, in the vDSO
// (__kernel_sigtramp_rt64) and in qemu-user's trampoline page; newer
// kernels' vDSO calls the handler itself and returns to `addi r1,r1,128`
// before it.
inline constexpr uint32_t kLiR0RtSigreturn = 0x380000ac;
inline constexpr uint32_t kSc = 0x44000002;
inline constexpr uint32_t kAddiR1R1FrameSize = 0x38210080;
// struct rt_sigframe starts with its ucontext, __SIGNAL_FRAMESIZE (128)
// bytes above the stack pointer the handler was given (and returns with);
// qemu-user 7.2 puts it 16 bytes higher.
inline constexpr int64_t kSignalFrameSize = 128;
// Whether `code` (8 or 12 bytes at a PC) starts with the trampoline.
bool is_trampoline(Bytes code);
// At the trampoline: the interrupted r0-r31, PC, LR, CTR, XER and f0-f31
// from the signal frame's ucontext (the CFA: its gp_regs, found through
// the sigcontext's `regs` pointer for either layout).
UnwindRow signal_frame_row();

// A function's first instruction, or a frameless leaf: CFA = r1, the
// return address still in LR (no rule: a link-register activation).
UnwindRow entry_row();
// A function that has built its frame: the back chain word at 0(r1) is its
// caller's stack pointer, the CFA; the return address is in the caller's
// frame, at the CFA + 16 (the ELFv2 LR save slot), or 0 (the end) where
// the back chain is null.
UnwindRow back_chain_row();
// The end of the chain: the return address undefined.
UnwindRow chain_end_row();

// Prologue analysis for an activation in a function without unwind
// information, up to `pc_offset` (only the instructions before it have
// run): the ELFv2 global entry's TOC setup (`addis r2,r12,n` or `lis
// r2,n`; `addi r2,r2,n`), `mflr r0`, `std r0,16(r1)`, stores of other
// registers through r1, `stdu r1,-n(r1)`, `mr r31,r1` and nops; it steps
// over instructions that neither branch nor write r1 (nor r0 between
// `mflr r0` and its store). True, with the row, where the instructions
// before the PC are all of those (a frameless leaf, or a linker's PLT call
// stub, `std r2,24(r1); ld r12,n(r2); mtctr r12; bctr`, which binutils
// gives no CFI: the entry row); false at any other.
bool prologue_row(Bytes code, uint64_t pc_offset, UnwindRow* row);

// Whether `insn` is a call: bl/bla, or bclrl/bcctrl/bctarl (blrl, bctrl).
bool is_call(uint32_t insn);

}  // namespace framewalk::arch::ppc64le

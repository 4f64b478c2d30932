// AArch64 conversions at the back-end edge (core notes, ucontext) and the
// architecture's frame conventions: the kernel's signal frame, frame
// records (x29/x30), and the prologues gcc and clang write.
#pragma once

#include <cstdint>

#include "arch/aarch64/registers.hpp"
#include "arch/registers.hpp"
#include "base/byte_reader.hpp"
#include "model/unwind_row.hpp"

namespace framewalk::arch::aarch64 {

// The kernel's `struct user_pt_regs` / ELF `elf_gregset_t`: x0-x30, sp, pc,
// pstate, 8 bytes each.
inline constexpr unsigned kUserRegsCount = 34;
inline constexpr unsigned kUserRegsSize = kUserRegsCount * 8;
// From the bytes of an elf_gregset_t (NT_PRSTATUS's pr_reg, PTRACE_GETREGSET
// NT_PRSTATUS); registers past the end of `bytes` are unknown.
RegisterFile from_user_regs_bytes(Bytes bytes, Endian endian);

// framewalk_capture (capture_context.S) stores x0..x30, sp, pc in DWARF
// order; only these are real (the others are zero placeholders).
inline constexpr uint16_t kCapturedKnown[] = {19, 20, 21, 22, 23, 24, 25, 26, 27, 28, kX29, kX30, kSp, kPc};
RegisterFile from_capture(const uint64_t* captured);

// The kernel's `struct rt_sigframe`: a siginfo (128 bytes), then the
// ucontext, whose uc_mcontext (struct sigcontext: fault_address, regs[31],
// sp, pc, pstate, then the __reserved records: FP/SIMD, SVE, ...) is 16-byte
// aligned at 176. The records after pstate vary in size (SVE's with the
// vector length), so everything the step loop needs lies before them.
inline constexpr unsigned kSiginfoSize = 128;
inline constexpr unsigned kUcontextMcontextOffset = 176;
inline constexpr unsigned kSigcontextRegsOffset = 8;
inline constexpr unsigned kSigcontextSpOffset = kSigcontextRegsOffset + 31 * 8;
inline constexpr unsigned kSigcontextPcOffset = kSigcontextSpOffset + 8;
// From the bytes of a ucontext_t; registers past the end are unknown.
RegisterFile from_ucontext_bytes(Bytes bytes, Endian endian);

// __kernel_rt_sigreturn in the vDSO, and the trampolines qemu-user and
// libcs write: `mov x8, #139` (rt_sigreturn); `svc #0`.
inline constexpr uint32_t kMovX8Sigreturn = 0xd2801168;
inline constexpr uint32_t kSvc0 = 0xd4000001;

// At the trampoline the stack pointer points at the rt_sigframe.
UnwindRow signal_frame_row();
// A function's first instruction, or a frameless leaf: CFA = sp, the return
// address still in x30 (no rule: a link-register activation).
UnwindRow entry_row();
// A frame record at x29 = the caller's x29 and x30; the caller's sp is the
// CFA, `record_to_cfa` bytes above the record.
UnwindRow frame_record_row(int64_t record_to_cfa);
// The end of the chain of frame records (AAPCS64: the outermost frame's
// x29 is 0; glibc's _start and a new thread's first frame set it so): the
// return address undefined, so that the walk ends as at an outermost row.
UnwindRow chain_end_row();

// Prologue analysis for a function without unwind information. `code` holds
// its first instructions; `pc_offset` is an activation's PC offset (only the
// instructions before it have run), or kReturnAddressFrame for a frame at a
// return address (it has run its prologue). Follows the hint-space
// instructions (paciasp/pacibsp, bti, nop), `stp x29, x30, [sp, #-n]!`,
// `sub sp, sp, #n`, `sub sp, sp, xm` after `mov xm, #n` (and `movk`),
// `stp x29, x30, [sp, #m]`, stores of other registers into the frame
// (`stp`/`str` at sp offsets, which move nothing), and `mov x29, sp` /
// `add x29, sp, #m`; steps over instructions compilers schedule among
// those (loads, stores, arithmetic, moves, adrp, mrs) that write neither
// sp, x29 nor x30, and, shrink-wrapping's test for an early exit, over a
// forward conditional branch (for an activation only one whose target lies
// past its PC). A call, any other branch, or an instruction that writes
// sp, x29 or x30 otherwise ends the prologue. True, with the row, where the
// instructions determine it:
//  - an activation: up to its PC (before the frame record is stored, the
//    return address is still in x30);
//  - a return-address frame: the prologue stored the frame record.
// False otherwise (an instruction that moves sp or writes x29/x30 in a way
// it does not follow, or a return-address frame with no frame record:
// a function that calls has saved x30 somewhere this cannot tell).
inline constexpr uint64_t kReturnAddressFrame = ~uint64_t{0};
bool prologue_row(Bytes code, uint64_t pc_offset, UnwindRow* row);

// Whether `insn` is a call: BL, BLR, BLRAA/BLRAB(Z).
bool is_call(uint32_t insn);

}  // namespace framewalk::arch::aarch64

// 32-bit ARM (armhf, Linux) conversions at the back-end edge (core notes,
// ptrace, ucontext) and the machine's frame conventions as rows.
#pragma once

#include <cstdint>
#include <optional>

#include "arch/arm/registers.hpp"
#include "arch/registers.hpp"
#include "base/byte_reader.hpp"
#include "model/unwind_row.hpp"

namespace framewalk::arch::arm {

// The kernel's elf_gregset_t (NT_PRSTATUS pr_reg, PTRACE_GETREGS):
// uregs[0..15] = r0..r15, [16] = cpsr, [17] = orig_r0, 4 bytes each.
inline constexpr unsigned kGregsetWords = 18;
inline constexpr unsigned kGregsetSize = kGregsetWords * 4;
// r0-r15, and the CPSR in the kCpsr slot (its T bit: frame 0's instruction
// set). Registers past the end of `bytes` are unknown; orig_r0 is dropped.
RegisterFile from_gregset_bytes(Bytes bytes);

// framewalk_capture (capture_context.S, on an ARM host) stores r0..r15 and
// the CPSR slot as 64-bit words; only these are real.
inline constexpr uint16_t kCapturedKnown[] = {4, 5, 6, 7, 8, 9, 10, 11, kSp, kLr, kPc, kCpsr};
RegisterFile from_capture(const uint64_t* captured);

// struct ucontext (arch/arm/include/asm/ucontext.h): uc_flags, uc_link,
// uc_stack (12), then uc_mcontext, a struct sigcontext: trap_no,
// error_code, oldmask, arm_r0..arm_r15, arm_cpsr, fault_address.
inline constexpr unsigned kUcontextRegsOffset = 32;  // arm_r0
inline constexpr unsigned kUcontextCpsrOffset = 96;  // arm_cpsr
RegisterFile from_ucontext_bytes(Bytes bytes);

// The kernel's signal frames at the SP a handler starts with: struct
// sigframe has the ucontext first; struct rt_sigframe has the 128-byte
// siginfo first, then a sigframe.
inline constexpr unsigned kSiginfoSize = 128;

// The sigreturn trampolines, by their code: the restorer glibc installs
// (SA_RESTORER, ARM or Thumb-2 build), the kernel's sigpage and qemu-user's
// page (ARM, Thumb), the old single `svc #0x900077` form.
enum class Trampoline : uint8_t { kNone, kSigreturn, kRtSigreturn };
// `code` holds the bytes at the trampoline's address (8 are enough).
Trampoline trampoline_at(Bytes code);

// The row at a sigreturn trampoline: every core register and the CPSR from
// the ucontext (at sp for sigreturn, sp + 128 for rt_sigreturn); an
// activation follows (the interrupted PC is exact).
UnwindRow signal_frame_row(Trampoline kind);

// A frameless leaf, or a function before its prologue's first push: the
// caller's SP is sp and the return address is still in lr (no rule for it).
UnwindRow leaf_row();

// The ARM-state frame-pointer record of gcc's `push {fp, lr}; add fp, sp,
// #4`: fp points at the saved lr, the saved fp is just below it. For code
// without a symbol only (its prologue cannot be read).
UnwindRow arm_frame_pointer_row();

// Prologue analysis of a function without unwind tables, in ARM or Thumb
// code: pushes (lowest register at the lowest address; a pushed pc, as
// -mapcs-frame stores it, is no register to restore), vpush of D registers
// (DWARF 256 + n, 8 bytes each) or S registers (64 + n), `sub sp, #n`
// (Thumb-2 `sub.w` and `subw` too), and the frame pointer set from sp
// (Thumb `add r7, sp, #n` / `mov r7, sp`, ARM `add fp, sp, #n` / `mov fp,
// sp`) or, in ARM code, from ip after `mov ip, sp` (-mapcs-frame: `mov ip,
// sp; push {fp, ip, lr, pc}; sub fp, ip, #4`). `pc_offset` as for x86-64
// (kReturnAddressFrame for a frame at a return address). True, with the
// row, where the bytes determine it:
inline constexpr uint64_t kReturnAddressFrame = ~uint64_t{0};
// `reached_pc`, if given, says whether the analysis of an activation ran up
// to its PC (every instruction before it was a prologue's or one scheduled
// among them, without a branch): the row is then exact at the PC.
bool prologue_row(Bytes code, uint64_t pc_offset, bool thumb, UnwindRow* row, bool* reached_pc = nullptr);

// An activation in an epilogue, from the code at its PC: `add sp, #n`
// (16-bit, add.w, addw; ARM), vpop, then a pop that loads pc (`pop {...,
// pc}`, `pop.w`, `ldr pc, [sp], #4`, ARM `ldmia sp!, {..., pc}`, and
// -mapcs-frame's `ldm sp, {fp, sp, pc}`, which loads the caller's sp), or a
// pop and then `bx lr`, or `bx lr` alone: every register the sequence still
// loads is on the stack at the PC, and the caller's SP is above them (or
// the loaded sp).
bool epilogue_row(Bytes code_at_pc, bool thumb, UnwindRow* row);

// Whether the function whose first bytes are `code` starts like Thumb code
// (a Thumb push, after instructions scheduled before it) rather than ARM
// code (the same in ARM encodings; Thumb is tried first): nullopt when
// neither.
std::optional<bool> starts_as_thumb(Bytes code);

}  // namespace framewalk::arch::arm

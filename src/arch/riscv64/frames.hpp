// riscv64 (LP64D) conversions at the back-end edge (core notes, ucontext,
// the kernel's signal frame) and the frame conventions: the return address
// in ra, gcc's frame pointer s0, the calls before a return address.
#pragma once

#include <cstdint>

#include "arch/registers.hpp"
#include "arch/riscv64/registers.hpp"
#include "base/byte_reader.hpp"
#include "model/unwind_row.hpp"

namespace framewalk::arch::riscv64 {

// The kernel's `struct user_regs_struct` as elf_gregset_t (asm/ptrace.h,
// sys/ucontext.h's __gregs): 32 words, pc then x1..x31 (x0 is always 0).
inline constexpr unsigned kGregsCount = 32;
inline constexpr unsigned kGregsSize = kGregsCount * 8;
// From the bytes of an elf_gregset_t; words past the end of `bytes` are unknown.
RegisterFile from_gregs_bytes(Bytes bytes);
// elf_fpregset_t with the D extension (__riscv_d_ext_state): f0..f31, fcsr.
void add_fpregs_bytes(Bytes bytes, RegisterFile& registers);

// framewalk_capture (capture_context.S) stores x0..x31 and the PC
// (arch/capture.hpp's captured_word); only these are real (the others are
// zero placeholders). gp and tp are the caller's: no function changes them.
inline constexpr uint16_t kCapturedKnown[] = {kRa, kSp, 3, 4, kFp, 9, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, kPc};
RegisterFile from_capture(const uint64_t* captured);

// ucontext_t (the kernel's struct ucontext): uc_flags, uc_link, uc_stack
// (24 bytes), uc_sigmask in a 1024-bit area (128 bytes), then uc_mcontext
// 16-aligned at 176: a gregset (sc_regs), then the FP state at 432.
inline constexpr unsigned kUcontextMcontextOffset = 176;
inline constexpr unsigned kUcontextFpregsOffset = kUcontextMcontextOffset + kGregsSize;
// From the bytes of a ucontext_t; registers past the end are unknown.
RegisterFile from_ucontext_bytes(Bytes bytes);

// The rt_sigreturn trampoline, `li a7,139; ecall`: the vDSO's
// __vdso_rt_sigreturn, and qemu-user's own copy on a page of its own. The
// handler returns to it with the stack pointer at struct rt_sigframe
// { siginfo_t info (128 bytes); struct ucontext uc; }, qemu's too.
inline constexpr uint32_t kLiA7RtSigreturn = 0x08b00893;
inline constexpr uint32_t kEcall = 0x00000073;
inline constexpr int64_t kSiginfoSize = 128;
// Whether `code` (8 bytes at a PC) is the trampoline.
bool is_trampoline(Bytes code);
// At the trampoline: CFA = sp; the interrupted PC, x1..x31 and f0..f31
// from the ucontext's mcontext.
UnwindRow signal_frame_row();

// A function's first instruction, a frameless leaf, or a return: CFA = sp,
// the return address still in ra (no rule: a link-register activation).
UnwindRow entry_row();
// gcc's frame pointer (-fno-omit-frame-pointer): s0 is the CFA, with ra
// saved at s0 - 8 and the caller's s0 at s0 - 16.
UnwindRow frame_pointer_row();
// The end of the chain (s0 is 0: _start's): the return address undefined.
UnwindRow chain_end_row();

// Prologue analysis for a function without unwind information (glibc's
// abort has none). `code` holds its first bytes; `pc_offset` is an
// activation's PC offset (only the instructions before it have run), or
// kReturnAddressFrame for a frame at a return address. Follows `addi
// sp,sp,-n` (c.addi, c.addi16sp) and the saves of ra and s0 through sp (sd,
// c.sdsp), stepping over instructions that neither branch nor write sp (nor
// ra before its save), up to the first branch, jump or call. True with the
// row (CFA = sp + the frame's size, ra and s0 where they were saved) for an
// activation, and for a return-address frame whose prologue saved ra.
inline constexpr uint64_t kReturnAddressFrame = ~uint64_t{0};
bool prologue_row(Bytes code, uint64_t pc_offset, UnwindRow* row);

// Whether `insn` (32-bit) is a call: jal or jalr linking in ra.
bool is_call(uint32_t insn);
// Whether `insn` (16-bit) is a compressed call: c.jalr (RV64 has no c.jal).
bool is_compressed_call(uint16_t insn);
// Whether the instruction at an activation's PC returns: `ret` (jalr
// x0,0(ra)) or `c.jr ra`. `code` holds at least 2 bytes.
bool at_return(Bytes code);

}  // namespace framewalk::arch::riscv64

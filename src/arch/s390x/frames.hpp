// s390x conversions at the back-end edge (core notes, ucontext, the
// kernel's signal frames) and the architecture's frame conventions: the
// register save area, the link register r14, the prologues gcc writes.
#pragma once

#include <cstdint>
#include <optional>

#include "arch/registers.hpp"
#include "arch/s390x/registers.hpp"
#include "base/byte_reader.hpp"
#include "model/unwind_row.hpp"

namespace framewalk::arch::s390x {

// Every caller keeps 160 bytes at its stack pointer for its callee to save
// registers in: the CFA is the caller's SP + 160 (ArchInfo's
// cfa_above_stack_pointer).
inline constexpr int64_t kRegisterSaveArea = 160;

// The DWARF number of floating-point register f`n` (the psABI numbers them
// f0 f2 f4 f6 f1 f3 f5 f7 f8 f10 f12 f14 f9 f11 f13 f15 from 16).
uint16_t fpr_dwarf(unsigned n);

// The kernel's `s390_regs` / elf_gregset_t (asm/ptrace.h): psw mask, psw
// address, gprs[16], acrs[16] (4 bytes each), orig_gpr2; big-endian.
inline constexpr unsigned kUserRegsSize = 8 + 8 + 16 * 8 + 16 * 4 + 8;
// Registers past the end of `bytes` are unknown.
RegisterFile from_user_regs_bytes(Bytes bytes);

// framewalk_capture (capture_context.S, on an s390x host) stores r0..r15
// in words 0-15 and the PC in the last word, kCapturedPcWord (its DWARF
// number, 65, lies past the words: arch/capture.hpp's captured_word); only
// r6-r15 and the PC are real (r0-r5 are zero placeholders).
inline constexpr unsigned kCapturedPcWord = 33;
RegisterFile from_capture(const uint64_t* captured);

// elf_fpregset_t (s390_fp_regs): fpc, a pad word, fprs[16] in f0..f15 order.
inline constexpr unsigned kFpregsFprsOffset = 8;
void add_fpregs_bytes(Bytes bytes, RegisterFile* registers);

// _sigregs (asm/sigcontext.h), the kernel's signal context and glibc's
// mcontext_t: psw mask, psw address, gprs[16], acrs[16], then fpregs (fpc,
// a pad word, fprs[16]).
inline constexpr int64_t kSigregsGprsOffset = 16;
inline constexpr int64_t kSigregsFprsOffset = 16 + 16 * 8 + 16 * 4 + 8;
inline constexpr unsigned kSigregsSize = kSigregsFprsOffset + 16 * 8;
// ucontext_t: uc_flags, uc_link, uc_stack (24 bytes), then uc_mcontext.
inline constexpr unsigned kUcontextMcontextOffset = 40;
// Registers past the end of `bytes` are unknown.
RegisterFile from_ucontext_bytes(Bytes bytes);

// The signal-return trampolines: `svc 119` (sigreturn) and `svc 173`
// (rt_sigreturn), in the vDSO of a kernel and on the signal frame (or a
// page of its own) under qemu-user. The handler returns to them with the
// stack pointer at the signal frame:
//  - struct sigframe { callee_used_stack[160]; struct sigcontext sc
//    { oldmask[1]; _sigregs* sregs; }; _sigregs sregs; ... }: the
//    _sigregs where sc.sregs points (sp + 168);
//  - struct rt_sigframe { callee_used_stack[160]; u16 svc_insn; siginfo_t
//    info (8-aligned, 128 bytes); ucontext uc; }: uc_mcontext at sp + 336.
inline constexpr uint8_t kSigreturnCode[2] = {0x0a, 0x77};
inline constexpr uint8_t kRtSigreturnCode[2] = {0x0a, 0xad};
inline constexpr int64_t kSigcontextSregsOffset = kRegisterSaveArea + 8;
inline constexpr int64_t kRtSigframeMcontextOffset = kRegisterSaveArea + 8 + 128 + kUcontextMcontextOffset;

enum class Trampoline : uint8_t { kSigreturn, kRtSigreturn };
// Which trampoline `code` starts with, if any.
std::optional<Trampoline> trampoline_at(Bytes code);
// The row at a trampoline: the CFA is the _sigregs, from which the
// interrupted PSW address, general and floating-point registers come back.
UnwindRow signal_frame_row(Trampoline kind);

// A function's first instruction, or a leaf that has built no frame: CFA =
// r15 + 160, the return address still in r14 (no rule).
UnwindRow entry_row();

// Prologue analysis for a function without unwind information. `code`
// holds its first bytes; `pc_offset` is an activation's PC offset (only the
// instructions before it have run), or kReturnAddressFrame for a frame at
// a return address. Follows `stmg %rA,%rB,d(%r15)` (the saves into the
// caller's register save area), `aghi`/`agfi %r15,-n`, `lay %r15,-n(%r15)`
// and `lgr %r11,%r15` (the frame pointer); steps over instructions
// compilers schedule among them that write no frame register (r10, r11,
// r14, r15): register-to-register operations, shifts, immediates, `larl`, `std`,
// compares, a conditional return (`b<cond>r %r14`) and a forward
// conditional branch (an early exit; for an activation only one whose
// target lies past its PC). True with the row where the
// instructions determine it: an activation up to its PC; a return-address
// frame whose prologue saved r14.
inline constexpr uint64_t kReturnAddressFrame = ~uint64_t{0};
bool prologue_row(Bytes code, uint64_t pc_offset, UnwindRow* row);

// Whether `code` at an activation's PC is `br %r14` (a return: the frame
// already taken down, or never built).
bool at_return(Bytes code);

// Whether the instruction that ends right before the end of `before` is a
// call: brasl (6 bytes), bras or bal (4), basr or balr (2).
bool ends_with_call(Bytes before);

}  // namespace framewalk::arch::s390x

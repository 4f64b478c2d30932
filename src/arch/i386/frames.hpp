// i386 conversions at the back-end edge (ptrace, core notes, ucontext, the
// kernel's signal frames) and the architecture's frame conventions.
#pragma once

#include <cstdint>
#include <optional>

#include "arch/i386/registers.hpp"
#include "arch/registers.hpp"
#include "base/byte_reader.hpp"
#include "model/unwind_row.hpp"

namespace framewalk::arch::i386 {

// framewalk_capture (capture_context.S, on an i386 host) stores eax..edi
// and eip as 64-bit words in DWARF order; only these are real.
inline constexpr uint16_t kCapturedKnown[] = {kEbx, kEsp, kEbp, kEsi, kEdi, kEip};
RegisterFile from_capture(const uint64_t* captured);

// The kernel's 32-bit `struct user_regs_struct` / `elf_gregset_t`, also what
// PTRACE_GETREGSET(NT_PRSTATUS) gives for a 32-bit task of a 64-bit kernel:
// ebx, ecx, edx, esi, edi, ebp, eax, xds, xes, xfs, xgs, orig_eax, eip, xcs,
// eflags, esp, xss.
inline constexpr unsigned kUserRegsCount = 17;
inline constexpr unsigned kUserRegsSize = kUserRegsCount * 4;
// Registers past the end of `bytes` are unknown.
RegisterFile from_user_regs_bytes(Bytes bytes);

// `struct sigcontext` (uapi/asm/sigcontext.h, the 32-bit one), which is also
// glibc's mcontext_t gregs: gs, fs, es, ds, edi, esi, ebp, esp, ebx, edx,
// ecx, eax, trapno, err, eip, cs, eflags, esp_at_signal, ss (4 bytes each).
inline constexpr unsigned kSigcontextSlots = 19;
// DWARF number of each slot (-1: none the unwinder uses).
inline constexpr int16_t kSigcontextToDwarf[kSigcontextSlots] = {
    kGs, kFs, kEs, kDs, kEdi, kEsi, kEbp, kEsp, kEbx, kEdx, kEcx, kEax, -1, -1, kEip, kCs, kEflags, -1, kSs};
// ucontext_t: uc_flags, uc_link, uc_stack (3 words), then uc_mcontext.
inline constexpr unsigned kUcontextMcontextOffset = 20;
// Registers past the end of `bytes` are unknown.
RegisterFile from_ucontext_bytes(Bytes bytes);

// The signal-return trampolines, the kernel's (vDSO __kernel_sigreturn and
// __kernel_rt_sigreturn) and glibc's and musl's (__restore, __restore_rt)
// alike:
//   sigreturn:    pop %eax; mov $119,%eax; int $0x80
//   rt_sigreturn: mov $173,%eax; int $0x80
inline constexpr uint8_t kSigreturnCode[8] = {0x58, 0xb8, 0x77, 0x00, 0x00, 0x00, 0xcd, 0x80};
inline constexpr uint8_t kRtSigreturnCode[7] = {0xb8, 0xad, 0x00, 0x00, 0x00, 0xcd, 0x80};

// Where the interrupted registers (a struct sigcontext) are, relative to
// the stack pointer at the trampoline (the handler's `ret` has popped
// pretcode):
//  - struct sigframe { pretcode; int sig; struct sigcontext sc; ... }:
//    sig at esp, sc at esp+4;
//  - struct rt_sigframe { pretcode; int sig; siginfo* pinfo; void* puc;
//    siginfo_t info (128 bytes); ucontext_t uc; ... }: uc at esp+140, its
//    uc_mcontext at esp+160.
inline constexpr int64_t kSigframeContextOffset = 4;
inline constexpr int64_t kRtSigframeContextOffset = 4 + 4 + 4 + 128 + kUcontextMcontextOffset;

enum class Trampoline : uint8_t { kSigreturn, kRtSigreturn };
// Which trampoline `code` starts with, if any.
std::optional<Trampoline> trampoline_at(Bytes code);
// The row at a trampoline: the interrupted registers from the sigcontext.
UnwindRow signal_frame_row(Trampoline kind);

// In a function body that keeps a frame pointer: CFA = ebp+8.
UnwindRow frame_pointer_row();
// At a function's first instruction: CFA = esp+4 (also a frameless leaf).
UnwindRow entry_row();
// The end of the frame chain (glibc's _start and the thread start clear
// ebp): the return address undefined.
UnwindRow chain_end_row();

// Prologue analysis for a function without CFI, as x86-64's (see
// x86_64::prologue_row for the contract): endbr32, pushes, `mov %esp,%ebp`,
// `sub`/`add $n,%esp`; between `push %ebp` and `mov %esp,%ebp` it steps
// over instructions that write neither esp nor ebp and do not branch. Also
// gcc's prologue of a function that realigns its stack (main: `lea
// 0x4(%esp),%ecx; and $-16,%esp; push -0x4(%ecx); push %ebp; ...; push
// %ecx`): the CFA is then the saved ecx below ebp.
inline constexpr uint64_t kReturnAddressFrame = ~uint64_t{0};
bool prologue_row(Bytes code, uint64_t pc_offset, UnwindRow* row);

// Whether `code` at an activation's PC is an epilogue's tail: register
// clearing up to a `ret` (the frame already taken down).
bool at_epilogue_tail(Bytes code);

}  // namespace framewalk::arch::i386

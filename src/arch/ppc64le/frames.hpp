// ppc64le's own frames: the kernel's (and qemu's) signal frame and its
// ucontext. What it shares with 32-bit PowerPC (the gregset, the back
// chain, prologues) is in arch/power/frames.hpp.
#pragma once

#include <cstdint>

#include "arch/power/frames.hpp"
#include "arch/ppc64le/registers.hpp"

namespace framewalk::arch::ppc64le {

// 8-byte little-endian words; a caller's LR save word 16 bytes above its r1.
inline constexpr power::Abi kAbi = {8, Endian::kLittle, 16};
using power::kGregsCount;
inline constexpr unsigned kGregsSize = kGregsCount * 8;

// framewalk_capture (capture_context.S) stores r0..r31, LR and the PC
// (arch/capture.hpp's captured_word); only these are real (the others are
// zero placeholders). r2 and r13 are the caller's: the TOC pointer is the
// same for a local call, and no function changes the thread pointer.
inline constexpr uint16_t kCapturedKnown[] = {kR1, kR2, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22,
                                              23, 24, 25, 26, 27, 28, 29, 30, kR31, kLr, kNip};
RegisterFile from_capture(const uint64_t* captured);

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
inline constexpr uint16_t kNrRtSigreturn = 172;
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

}  // namespace framewalk::arch::ppc64le

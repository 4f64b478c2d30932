// 32-bit PowerPC's own frames: the kernel's (and qemu's) two signal frames
// and the ucontext. What it shares with ppc64le (the gregset, the back
// chain, prologues) is in arch/power/frames.hpp.
#pragma once

#include <cstdint>

#include "arch/power/frames.hpp"
#include "arch/ppc/registers.hpp"

namespace framewalk::arch::ppc {

// 4-byte big-endian words; a caller's LR save word 4 bytes above its r1.
inline constexpr power::Abi kAbi = {4, Endian::kBig, 4};
using power::kGregsCount;
inline constexpr unsigned kGregsSize = kGregsCount * 4;

// struct mcontext (asm/ucontext.h): mc_gregs[48] (a gregset of 4-byte
// words), then mc_fregs[33] (8-byte doubles and fpscr).
inline constexpr unsigned kMcontextFpregsOffset = kGregsSize;
// The kernel's struct ucontext: uc_flags, uc_link, uc_stack (12 bytes),
// uc_pad[7], the pointer uc_regs (to uc_mcontext), uc_sigmask (8 bytes),
// uc_maskext[30], uc_pad2[3], then uc_mcontext: glibc's ucontext_t keeps
// the same offsets (uc_regs, then its 128-byte sigset_t and the register
// space the mcontext is in, 16-aligned).
inline constexpr unsigned kUcontextRegsPointerOffset = 48;
inline constexpr unsigned kUcontextMcontextOffset = 192;
// From the bytes of a ucontext_t; registers past the end are unknown.
RegisterFile from_ucontext_bytes(Bytes bytes);

// The trampolines: `li r0,119; sc` (sigreturn) and `li r0,172; sc`
// (rt_sigreturn), in the vDSO (__kernel_sigtramp32, __kernel_sigtramp_rt32)
// and in qemu-user's trampoline page.
inline constexpr uint16_t kNrSigreturn = 119, kNrRtSigreturn = 172;
// __SIGNAL_FRAMESIZE: the handler's r1 is this far below the frame (an rt
// frame has 16 bytes more of gap).
inline constexpr int64_t kSignalFrameSize = 64;
// struct sigframe: a struct sigcontext (4 unused words, signal, handler,
// oldmask, the pointer `regs` to the frame's mcontext), then the mcontext.
inline constexpr int64_t kSigcontextRegsOffset = 28;
// struct rt_sigframe: a siginfo (128 bytes), then the ucontext.
inline constexpr int64_t kRtSigframeGap = 16, kSiginfoSize = 128;

enum class Trampoline : uint8_t { kNone, kSigreturn, kRtSigreturn };
// Which trampoline `code` (8 bytes at a PC) is.
Trampoline trampoline_of(Bytes code);
// At a trampoline: the interrupted r0-r31, PC, LR, CTR, XER and f0-f31 from
// the signal frame's mcontext (the CFA: its gregs, through the pointer the
// frame keeps to it: sigcontext.regs or uc_regs).
UnwindRow signal_frame_row(Trampoline trampoline);

}  // namespace framewalk::arch::ppc

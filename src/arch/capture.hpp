// The calling function's registers, for the in-process paths. The host
// machine's arch/<name>/capture_context.S stores what its caller's registers
// are known to be: the callee-saved ones as they are, the stack pointer as
// the caller's, the PC as the return address into the caller; the others
// are left unknown (a rule that reads one fails instead of computing with a
// placeholder).
#pragma once

#include <cstdint>

#include "arch/registers.hpp"
#if defined(__s390x__)
#include "arch/s390x/frames.hpp"
#endif

namespace framewalk::arch {

// Words framewalk_capture stores, enough for every host machine.
inline constexpr unsigned kCaptureWords = 34;

extern "C" void framewalk_capture(uint64_t out[kCaptureWords]);

// What framewalk_capture stored, as the host machine's register file.
// Its words are indexed by DWARF register number (captured_word).
RegisterFile from_host_capture(const uint64_t* words);

// How far the CFA lies above the caller's stack pointer
// (ArchInfo::cfa_above_stack_pointer), for the in-process hot loop, which
// steps without the descriptor: s390x's callers keep a register save area
// of 160 bytes for their callees.
#if defined(__s390x__)
inline constexpr uint64_t kHostCfaAboveStackPointer = static_cast<uint64_t>(s390x::kRegisterSaveArea);
#else
inline constexpr uint64_t kHostCfaAboveStackPointer = 0;
#endif

// The host's link register where its DWARF number lies past the words
// (ppc64's 65), which framewalk_capture stores in the word before the last.
#if defined(__powerpc64__)
inline constexpr unsigned kHostCapturedLinkRegister = 65;
#else
inline constexpr unsigned kHostCapturedLinkRegister = kCaptureWords;  // none
#endif

// The word of framewalk_capture's that holds DWARF register `reg`: its
// number, but a register numbered past the words is in the last word (a PC
// the psABI leaves unnumbered: riscv64's 64, ppc64's 114; s390x's PSW
// address, 65) or, the link register, in the one before it.
constexpr unsigned captured_word(unsigned reg) {
  if (reg < kCaptureWords) return reg;
  return reg == kHostCapturedLinkRegister ? kCaptureWords - 2 : kCaptureWords - 1;
}

// What of a return address read from this process's own stack is the
// address, for the in-process hot loop (which cannot afford a virtual
// call): AArch64 code signed with pointer authentication keeps the
// signature in the bits above a 48-bit user address, which the host
// descriptor's clean_return_address strips with its default mask too.
// 32-bit ARM keeps the Thumb bit in bit 0 (clean_return_address strips it).
#if defined(__aarch64__)
inline constexpr uint64_t kHostCodeAddressMask = (uint64_t{1} << 48) - 1;
#elif defined(__arm__)
inline constexpr uint64_t kHostCodeAddressMask = ~uint64_t{1};
#else
inline constexpr uint64_t kHostCodeAddressMask = ~uint64_t{0};
#endif

// The host descriptor's saved_above_cfa (arch/arch.hpp), for the hot loop:
// ppc64 saves LR in the caller's frame, at CFA + 16.
#if defined(__powerpc64__)
inline constexpr uint64_t kHostSavedAboveCfa = 24;
#else
inline constexpr uint64_t kHostSavedAboveCfa = 0;
#endif

// Whether the host descriptor has a second frame pointer
// (Machine::second_frame_pointer: 32-bit ARM's r7), which the hot loop then
// tracks too; a compile-time fact, so that other hosts' loops carry nothing
// for it.
#if defined(__arm__)
inline constexpr bool kHostHasSecondFramePointer = true;
#else
inline constexpr bool kHostHasSecondFramePointer = false;
#endif

}  // namespace framewalk::arch

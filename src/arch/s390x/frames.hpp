// s390x conversions at the back-end edge (core notes, ucontext, the
// kernel's signal frames) and the architecture's frame conventions: the
// register save area, the link register r14, the prologues gcc writes.
// 31-bit s390 is a second ABI of the same instructions (Abi below).
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

// What differs between s390x and 31-bit s390, whose programs a 64-bit
// kernel runs in its compat layer (arch/s390/kernel/compat_signal.c): a
// general register or an address is a word of 8 bytes or 4 in memory; the
// register save area is 16 words and 32 bytes (160 or 96); the kernel's
// layouts of the registers follow; and a 31-bit return address or PSW
// address carries the addressing-mode bit 0x80000000 (bras, brasl and basr
// set it in r14 in 31-bit mode, the kernel in the PSW address it hands out).
struct Abi {
  unsigned word;
  int64_t register_save_area;    // the CFA's distance above the caller's r15
  unsigned user_regs_size;       // elf_gregset_t: s390_regs, s390_compat_regs
  unsigned ucontext_mcontext;    // uc_mcontext in ucontext_t, ucontext32
  int64_t sigcontext_sregs;      // struct sigframe: sc.sregs (a pointer), above its r15
  int64_t rt_sigframe_mcontext;  // struct rt_sigframe: uc.uc_mcontext, above its r15
  uint64_t address_mask;         // the address bits of a return or PSW address

  // _sigregs: psw mask and psw address (a word each), gprs[16], acrs[16]
  // (4 bytes each), then fpc, a pad word and fprs[16] (8 bytes each).
  constexpr int64_t sigregs_gprs() const { return 2 * word; }
  constexpr int64_t sigregs_fprs() const { return 18 * word + 16 * 4 + 8; }
};

// The DWARF number of floating-point register f`n` (the psABI numbers them
// f0 f2 f4 f6 f1 f3 f5 f7 f8 f10 f12 f14 f9 f11 f13 f15 from 16).
uint16_t fpr_dwarf(unsigned n);

// The kernel's `s390_regs` / elf_gregset_t (asm/ptrace.h): psw mask, psw
// address, gprs[16], acrs[16] (4 bytes each), orig_gpr2; big-endian.
inline constexpr unsigned kUserRegsSize = 8 + 8 + 16 * 8 + 16 * 4 + 8;
// Registers past the end of `bytes` are unknown.
RegisterFile from_user_regs_bytes(Bytes bytes, const Abi& abi);

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
RegisterFile from_ucontext_bytes(Bytes bytes, const Abi& abi);

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

inline constexpr Abi kS390xAbi = {8, kRegisterSaveArea, kUserRegsSize, kUcontextMcontextOffset, kSigcontextSregsOffset,
                                  kRtSigframeMcontextOffset, ~uint64_t{0}};
static_assert(kS390xAbi.sigregs_gprs() == kSigregsGprsOffset && kS390xAbi.sigregs_fprs() == kSigregsFprsOffset);

// 31-bit s390 (compat_linux.h; _sigregs32, its psw_compat_t and fprs are
// 8-aligned): s390_compat_regs is 140 bytes padded to 144; ucontext32's
// uc_mcontext follows uc_flags, uc_link and a 12-byte uc_stack at 24;
// sigframe32 { callee_used_stack[96]; sigcontext32 sc { oldmask[2];
// sregs; }; ... }: sc.sregs at 104; rt_sigframe32 { callee_used_stack[96];
// u16 svc_insn; compat_siginfo_t info (4-aligned, at 100); ucontext32 uc
// (at 232); }: uc_mcontext at 256.
inline constexpr Abi kS390Abi = {4, 96, 144, 24, 96 + 8, 232 + 24, 0x7fffffff};

enum class Trampoline : uint8_t { kSigreturn, kRtSigreturn };
// Which trampoline `code` starts with, if any.
std::optional<Trampoline> trampoline_at(Bytes code);
// The row at a trampoline: the CFA is the _sigregs, from which the
// interrupted PSW address, general and floating-point registers come back.
UnwindRow signal_frame_row(Trampoline kind, const Abi& abi);

// A function's first instruction, or a leaf that has built no frame: CFA =
// r15 + 160 (96), the return address still in r14 (no rule).
UnwindRow entry_row(const Abi& abi);

// Prologue analysis for a function without unwind information. `code`
// holds its first bytes; `pc_offset` is an activation's PC offset (only the
// instructions before it have run), or kReturnAddressFrame for a frame at
// a return address. Follows `stmg %rA,%rB,d(%r15)` (the saves into the
// caller's register save area), `aghi`/`agfi %r15,-n`, `lay %r15,-n(%r15)`
// and `lgr %r11,%r15` (the frame pointer); for 31-bit s390 `stm`/`stmy`,
// `ahi`/`afi`, `lay` and `lr`. Steps over instructions
// compilers schedule among them that write no frame register (r10, r11,
// r14 until saved, r15): register-to-register operations, shifts, immediates,
// `la`, `larl`, stores (`st`, `std`: the back chain's too),
// compares, a conditional return (`b<cond>r %r14`) and a forward
// conditional branch (an early exit; for an activation only one whose
// target lies past its PC). True with the row where the
// instructions determine it: an activation up to its PC; a return-address
// frame whose prologue saved r14.
inline constexpr uint64_t kReturnAddressFrame = ~uint64_t{0};
bool prologue_row(Bytes code, uint64_t pc_offset, UnwindRow* row, const Abi& abi);

// Whether `code` at an activation's PC is `br %r14` (a return: the frame
// already taken down, or never built).
bool at_return(Bytes code);

// Whether the instruction that ends right before the end of `before` is a
// call: brasl (6 bytes), bras or bal (4), basr or balr (2).
bool ends_with_call(Bytes before);

}  // namespace framewalk::arch::s390x

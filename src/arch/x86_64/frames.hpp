// x86-64 conversions at the back-end edge (ptrace, core notes, ucontext) and
// the architecture's frame conventions.
#pragma once

#include <cstdint>

#include "arch/registers.hpp"
#include "arch/x86_64/registers.hpp"
#include "base/byte_reader.hpp"

namespace framewalk::arch::x86_64 {

// framewalk_x86_64_capture (capture_context.S) stores the caller's registers
// in DWARF order, rax..r15 then rip: callee-saved ones as they are, rsp as the
// caller's, rip as the return address into the caller, the rest zero.
inline constexpr unsigned kCapturedRegisters = 17;
extern "C" void framewalk_x86_64_capture(uint64_t out[kCapturedRegisters]);
// The registers whose captured values are real: the zeros of the others are
// placeholders, so a rule that reads one must fail, not compute with 0.
inline constexpr uint16_t kCapturedKnown[] = {kRbx, kRbp, kRsp, kR12, kR13, kR14, kR15, kRip};
// The register file of a capture: only kCapturedKnown are known.
RegisterFile from_capture(const uint64_t* captured);

// The kernel's `struct user_regs_struct` / ELF `elf_gregset_t`: 27 longs.
inline constexpr unsigned kUserRegsCount = 27;
inline constexpr unsigned kUserRegsSize = kUserRegsCount * 8;

// From the bytes of an elf_gregset_t (little-endian): user_regs_struct
// (ptrace GETREGS) or NT_PRSTATUS's pr_reg. Registers past the end of
// `bytes` are unknown.
RegisterFile from_user_regs_bytes(Bytes bytes);

// Offsets in `struct ucontext_t` (glibc and kernel agree): uc_mcontext.gregs
// starts at 40; gregs order is r8..r15, rdi, rsi, rbp, rbx, rdx, rax, rcx, rsp, rip.
inline constexpr unsigned kUcontextGregsOffset = 40;
// DWARF number for each gregs index 0..16.
inline constexpr uint16_t kGregsToDwarf[17] = {kR8, kR9, kR10, kR11, kR12, kR13, kR14, kR15,
                                              kRdi, kRsi, kRbp, kRbx, kRdx, kRax, kRcx, kRsp, kRip};
// x32's ucontext_t keeps the 64-bit sigcontext after 4-byte flags, link
// and stack_t: its gregs start at 24.
inline constexpr unsigned kX32UcontextGregsOffset = 24;
// From the bytes of a ucontext_t (little-endian) whose gregs start at
// `gregs_offset`; registers past the end of `bytes` are unknown.
RegisterFile from_ucontext_bytes(Bytes bytes, unsigned gregs_offset = kUcontextGregsOffset);

// The signal-return trampoline glibc and musl install (SA_RESTORER):
// `mov $15,%rax; syscall` (rt_sigreturn).
inline constexpr uint8_t kSigreturnCode[9] = {0x48, 0xc7, 0xc0, 0x0f, 0x00, 0x00, 0x00, 0x0f, 0x05};
// x32's (rt_sigreturn, __X32_SYSCALL_BIT | 513): glibc's `mov $0x40000201,%rax;
// syscall`, or the shorter `mov $0x40000201,%eax; syscall` of others (gdb
// knows only this one).
inline constexpr uint8_t kX32SigreturnCode[9] = {0x48, 0xc7, 0xc0, 0x01, 0x02, 0x00, 0x40, 0x0f, 0x05};
inline constexpr uint8_t kX32SigreturnCodeShort[7] = {0xb8, 0x01, 0x02, 0x00, 0x40, 0x0f, 0x05};

// Frame-pointer prologue: push %rbp; mov %rsp,%rbp (both encodings of the mov).
inline constexpr uint8_t kPushRbp = 0x55;
inline constexpr uint8_t kMovRspRbp[2][3] = {{0x48, 0x89, 0xe5}, {0x48, 0x8b, 0xec}};

}  // namespace framewalk::arch::x86_64

#include "arch/x86_64/instruction.hpp"
#include "model/unwind_row.hpp"

namespace framewalk::arch::x86_64 {

// What the x86 family's ways of running its code (x86-64, x32 and i386)
// change in frames built without unwind information.
struct X86Abi {
  int64_t word;                // a push, a call's return address: 8, or 4 on i386
  // REX.W before `mov %rsp,%rbp` and `sub $n,%rsp`: required (x86-64),
  // optional (x32: the 32-bit forms set the whole register, zero-extended,
  // its addresses being below 4 GiB) or never (i386, where 0x48 is dec).
  enum class RexW : uint8_t { kRequired, kOptional, kNever } rex_w;
  uint8_t endbr_last;          // endbr64's last byte (0xfa), endbr32's (0xfb)
  uint16_t sp, fp, pc;         // DWARF numbers
  uint16_t push_reg[8];        // the DWARF register of `push` 0x50 + n
  bool rex_pushes;             // 41 50+n: push %r8..%r15
  // The decoder that steps over an instruction between `push %rbp` and
  // `mov %rsp,%rbp` (its length, the registers it writes, whether it branches).
  std::optional<Instruction> (*decode)(Bytes code);
};
extern const X86Abi kLp64Abi;
extern const X86Abi kX32Abi;

// Rows for frames without unwind information, in the one row model, for
// each ABI of the family (x86-64's when none is named).
// At __restore_rt: the stack pointer points at the ucontext the kernel
// saved, whose gregs start at `gregs_offset`.
UnwindRow signal_frame_row(unsigned gregs_offset = kUcontextGregsOffset);
// In a function body that keeps a frame pointer: CFA = rbp+16.
UnwindRow frame_pointer_row(const X86Abi& abi = kLp64Abi);
// At a function's first instruction: CFA = rsp+8 (also a frameless leaf).
UnwindRow entry_row(const X86Abi& abi = kLp64Abi);
// Between `push %rbp` and `mov %rsp,%rbp`: CFA = rsp+16.
UnwindRow after_push_rbp_row();
// The end of the frame chain (the psABI: the deepest frame's rbp is 0; the
// kernel starts a process with it 0 and glibc's _start clears it): the
// return address undefined, so that the walk ends as at an outermost row.
UnwindRow chain_end_row(const X86Abi& abi = kLp64Abi);

// Prologue analysis for a function without CFI. `code` holds its first
// bytes; `pc_offset` is the offset of an activation's PC (frame 0, or the
// frame a signal interrupted: only the instructions before it have run), or
// kReturnAddressFrame for a frame at a return address (it has run its
// prologue). Follows endbr64, pushes of any register, `mov %rsp,%rbp` and
// `sub`/`add $n,%rsp`; between `push %rbp` and `mov %rsp,%rbp` it also steps
// over instructions that write neither rsp nor rbp and do not branch
// (compilers schedule them there). The first other instruction ends the
// prologue. True, with the row (CFA, return address, each pushed register),
// where the bytes determine it:
//  - an activation: the analysis reached the PC, or the prologue ended
//    before it (a frameless leaf's body: CFA=rsp+8 when nothing was pushed);
//  - a return-address frame: the prologue set up the frame pointer, or
//    pushed registers or reserved stack without one (a frameless function).
// False where they do not: after `push %rbp` an instruction it cannot decode
// comes first (whether the frame pointer is then set up is unknown); the
// bytes end first; or, for a return-address frame, nothing of a prologue was
// read at all (a function that calls has always moved the stack pointer).
inline constexpr uint64_t kReturnAddressFrame = ~uint64_t{0};
bool prologue_row(Bytes code, uint64_t pc_offset, UnwindRow* row, const X86Abi& abi = kLp64Abi);

// Whether `code` starts with the sigreturn trampoline: x86-64's
// (kSigreturnCode), x32's (either kX32SigreturnCode*).
bool is_sigreturn_trampoline(Bytes code);
bool is_x32_sigreturn_trampoline(Bytes code);

// Whether `code`, the bytes at an activation's PC, is the tail of an
// epilogue that has already taken its frame down: nothing but register
// clearing (xor of registers, vzeroupper) up to a `ret`. The return address
// is then at the stack pointer (entry_row), whatever the prologue did.
bool at_epilogue_tail(Bytes code);

}  // namespace framewalk::arch::x86_64

// What 32-bit PowerPC (SysV) and ppc64le (ELFv2) frames share, parameterised
// by the word size, the byte order and where a caller's frame keeps the LR
// save word: the kernel's pt_regs as a gregset, the floating-point
// registers, the `li r0,N; sc` trampolines, calls, the back chain and the
// prologues gcc writes.
#pragma once

#include <cstdint>
#include <optional>

#include "arch/power/registers.hpp"
#include "arch/registers.hpp"
#include "base/byte_reader.hpp"
#include "base/memory.hpp"
#include "model/unwind_row.hpp"

namespace framewalk::arch::power {

// A PowerPC ABI's frame conventions.
struct Abi {
  uint8_t word;      // 4 (ppc32) or 8 (ppc64)
  Endian endian;
  uint8_t lr_save;   // the LR save word's offset above the caller's r1: 4 (SysV), 16 (ELFv2)
};

// The kernel's `struct pt_regs` as elf_gregset_t (asm/ptrace.h): 48 words,
// r0-r31, nip, msr, orig_gpr3, ctr, link, xer, ccr, mq (ppc32) or softe
// (ppc64), trap, dar, dsisr, result.
inline constexpr unsigned kGregsCount = 48;
inline constexpr unsigned kGregNip = 32, kGregCtr = 35, kGregLink = 36, kGregXer = 37;
// From the bytes of an elf_gregset_t; words past the end are unknown.
RegisterFile from_gregs_bytes(const Abi& abi, Bytes bytes);
// elf_fpregset_t (NT_PRFPREG): f0-f31 as 8-byte doubles, then fpscr; f0-f31 are DWARF 32-63.
inline constexpr unsigned kFpregsSize = 33 * 8;
void add_fpregs_bytes(const Abi& abi, Bytes bytes, RegisterFile& registers);

// The instruction at `offset` of `code` (callers check the size).
uint32_t insn_at(const Abi& abi, Bytes code, size_t offset);
// Whether `code` holds `li r0,syscall; sc` at `offset`.
bool is_sigreturn_at(const Abi& abi, Bytes code, size_t offset, uint16_t syscall);
// For a signal frame whose CFA is a saved gregset: r0-r31, the PC, LR,
// CTR and XER from it, f0-f31 from the fpregs `fpregs` bytes past it.
void add_gregs_rules(const Abi& abi, int64_t fpregs, UnwindRow& row);

// A function's first instruction, or a frameless leaf: CFA = r1, the
// return address still in LR (no rule: a link-register activation).
UnwindRow entry_row();
// A function that has built its frame: the back chain word at 0(r1) is its
// caller's stack pointer, the CFA; the return address is in the caller's
// frame at the CFA + abi.lr_save, or 0 (the end) where the back chain is null.
UnwindRow back_chain_row(const Abi& abi);
// The end of the chain: the return address undefined.
UnwindRow chain_end_row();

// Prologue analysis for an activation in a function without unwind
// information, up to `pc_offset` (only the instructions before it have
// run): `mflr r0`, the LR's store to the caller's save word, stores of
// other registers through r1, `stwu`/`stdu r1,-n(r1)` (before or after the
// mflr and its store, as gcc orders them for either ABI), `mr r31,r1`,
// ELFv2's TOC setup (`addis r2,r12,n` or `lis r2,n`; `addi r2,r2,n`),
// 32-bit PIC's `bcl 20,31,.+4` once LR is in r0, and nops; it steps over
// instructions that neither branch nor write r1 (nor r0 between `mflr r0`
// and its store). True, with the row, where the
// instructions before the PC are all of those (a frameless leaf, or a
// linker's call stub that moves neither r1 nor LR: the entry row); false
// at any other.
bool prologue_row(const Abi& abi, Bytes code, uint64_t pc_offset, UnwindRow* row);

// For a frame at a return address whose function's first bytes are `code`:
// adds to its back chain row where the prologue, up to its first branch,
// saved r14-r31 through r1 (std/stw, stmw), so that a caller whose CFI
// finds its CFA through r31 (glibc's start_thread) gets its own r31.
void add_prologue_saves(const Abi& abi, Bytes code, UnwindRow& row);

// Whether `insn` is a call: bl/bla, or bclrl/bcctrl/bctarl (blrl, bctrl).
bool is_call(uint32_t insn);
// Whether the word before `return_address` is a call.
bool follows_call(const Abi& abi, Memory& memory, uint64_t return_address);

}  // namespace framewalk::arch::power

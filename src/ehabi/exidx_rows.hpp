// From an EHABI index entry to the one row model: the lookup of the entry
// for a PC, and the executor that runs its unwind instructions (EHABI §10.3,
// the "virtual unwinder") into an UnwindRow that Unwinder::apply_row
// executes like a CFI row.
//
// The row. The caller's SP is the final vsp; vsp starts at the callee's r13
// and `vsp = r[n]` rebases it, so the CFA is "base register + offset" with
// the base r13 or r[n]. Each pop is a kOffset rule relative to that CFA
// (VFP registers as DWARF 256+n, iWMMX as 112+n / 104+n, the PAC code as
// 143: the RegisterFile keeps only registers below 64, and nothing needs
// more). What a row cannot express is refused with its own error, never
// approximated: `vsp = r[n]` after a pop (the saved registers and the CFA
// would have different bases) and a pop of r13 (the caller's SP would be
// loaded, not the final vsp).
//
// The return address. An ARM CIE's return-address column is r14, while the
// machine's PC is r15 (arch::Machine::program_counter). EHABI's `finish`
// copies r14 into r15 unless r15 was popped (remark c), so the row's
// return_address_register is 15 when the instructions pop r15 (signal
// restorers, `pop {..., pc}` entries) and 14 otherwise; without a pop of r14
// the row has no rule for it: the link register still holds the return
// address, which Unwinder::apply_row accepts for an activation (a leaf, a
// PC before the prologue's push) on a link-register machine.
//
// Never allocates: the entry's bytes go to a fixed buffer on the stack.
#pragma once

#include <cstdint>

#include "ehabi/exidx.hpp"
#include "model/unwind_row.hpp"

namespace framewalk::ehabi {

// The EHABI tables of one file, as the step loop reads them (link-time
// addresses).
struct ExidxTables {
  SectionWords index;  // .ARM.exidx, or the PT_ARM_EXIDX segment of a file without sections
  SectionWords extab;  // where table pointers lead: .ARM.extab, or the segment that holds it
};

// The entry covering `pc` (a link-time address): the last whose function
// start is at or below it, found by binary search (the index is sorted by
// function start, EHABI §5). Bit 0 (Thumb) of the PC and of the entries'
// starts is ignored. Fails with kNotFound (offset = pc) before the first
// entry or in an empty index, and with kBadExidxEntry (the entry's offset in
// the index) when the entry's function word has bit 31 set. `next_start`, if
// given, receives where the entry's range ends: the next entry's start, or
// UINT64_MAX for the last.
Result<IndexEntry> find_entry(const IndexTable& index, uint64_t pc, uint64_t* next_start = nullptr);

enum class EntryRow : uint8_t {
  kUnwinds,       // the row describes the caller
  // EXIDX_CANTUNWIND or "refuse to unwind": the row holds only an undefined
  // return address, the end of the stack (libgcc's unwinder reports
  // _URC_END_OF_STACK). The step loop takes it so only in the function of
  // the entry point: GNU ld also fills the index's gaps with CANTUNWIND.
  kCannotUnwind,
};

// Runs an entry's instruction bytes into `row`. Error offsets are those of
// `bytes.offset_of_byte`: the section offset of the word holding the
// instruction. Errors: kSpareUnwindOpcode and kTruncatedUnwindOpcode (what
// check_instruction refuses), kTruncated (the entry's declared words are not
// all in the section: at the first missing word), kExidxVspAfterPop,
// kExidxPopsStackPointer, kTooManyRules.
Result<EntryRow> execute_instructions(const OpcodeBuffer& bytes, UnwindRow* row);

// The row for the function of index entry `entry`: reads its table entry
// (inline, or in `tables.extab`) and executes it. Compact entries of
// personality 0, 1 and 2 carry their own bytes; a generic entry is read in
// the GNU routines' layout (a long compact word after the routine's), as
// every routine GNU toolchains emit uses it and a backtracer cannot call the
// routine to ask (libunwind assumes the same). Besides those of
// execute_instructions: kBadExtabPointer (the pointer leads outside
// tables.extab; offset in the index), kBadPersonalityIndex (offset of the
// compact word), kTruncated. `row` gets the entry's PC range
// [function, next_start).
Result<EntryRow> entry_row(const ExidxTables& tables, const IndexEntry& entry, uint64_t next_start, UnwindRow* row);

// find_entry and entry_row in one. An entry describes the function's body
// (EHABI tables are exact only at call sites); an exact PC (`exact_pc`: an
// activation) at the function's first instruction has run none of the
// prologue, so its row is the entry state: CFA = r13, the return address
// still in r14, whatever the instructions say (CANTUNWIND and refusals
// stand). Within the prologue and epilogue the entry's row is wrong for an
// activation: that is what EHABI records.
Result<EntryRow> row_for_pc(const ExidxTables& tables, uint64_t pc, bool exact_pc, UnwindRow* row);

}  // namespace framewalk::ehabi

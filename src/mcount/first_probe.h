/* The first probe of an arc: each thread keeps a direct-mapped array of
 * pointers to the arc-table slots of the arcs it counted last, indexed by a
 * hash of (from_pc, self_pc). A machine's entry stub that reads it
 * (src/arch/<machine>/mcount_entry.S, where the machine's mcount_context.hpp
 * sets kStubReadsFirstProbe) checks the slot it finds and adds the call with
 * one instruction, before it saves the registers the C side needs; any other
 * case (no entry, another arc there, a thread without state) goes the C way,
 * which fills the entry.
 *
 * Plain #defines: the stubs are assembled with these too. The index is
 *   ((from_pc ^ self_pc) * MULTIPLIER mod 2^word) >> SHIFT, its low BITS bits.
 * The multiplier fits a sign-extended 32-bit immediate. The slot layout is
 * ArcSlot's (arc_table.hpp: self_pc, from_pc, count), checked there. */
#ifndef FRAMEWALK_MCOUNT_FIRST_PROBE_H
#define FRAMEWALK_MCOUNT_FIRST_PROBE_H

#define FRAMEWALK_MCOUNT_PROBE_BITS 9
#define FRAMEWALK_MCOUNT_PROBE_MULTIPLIER 0x61C88647
#define FRAMEWALK_MCOUNT_PROBE_SHIFT 20

#define FRAMEWALK_MCOUNT_SLOT_SELF_PC 0
#define FRAMEWALK_MCOUNT_SLOT_FROM_PC __SIZEOF_POINTER__
#define FRAMEWALK_MCOUNT_SLOT_COUNT (2 * __SIZEOF_POINTER__)

#endif

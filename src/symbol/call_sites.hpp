// Call sites of a function (DW_TAG_call_site of DWARF 5, DW_TAG_GNU_call_site
// of the GNU extension to DWARF 4) and the search that rebuilds the frames a
// chain of tail calls left off the stack, as gdb does (dwarf2/loc.c,
// call_site_find_chain): between a physical callee and its caller, the
// functions that were entered by a jump.
//
// A function's call sites are read from its DW_TAG_subprogram DIE on first
// use (every call site under it, also those inside inlined subroutines and
// lexical blocks, not those of nested subprograms) and kept. Each call site
// has its return address (DW_AT_call_return_pc, the GNU form's DW_AT_low_pc),
// whether it is a tail call (DW_AT_call_tail_call, DW_AT_GNU_tail_call) and
// its target: the function DW_AT_call_origin (GNU: DW_AT_abstract_origin)
// refers to, with code (its entry) or without (a declaration, or an abstract
// instance: its linkage name, else its name, for the caller to find), or a
// DW_AT_call_target given as an address. A DW_AT_call_target expression
// (an indirect call) is unknown.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string_view>
#include <vector>

#include "base/function_ref.hpp"
#include "symbol/debug_info.hpp"

namespace framewalk::symbol {

namespace tag {
inline constexpr uint64_t kCallSite = 0x48, kGnuCallSite = 0x4109;
}  // namespace tag
namespace at {
inline constexpr uint64_t kDeclaration = 0x3c, kCallAllCalls = 0x7a, kCallAllTailCalls = 0x7c,
                          kCallReturnPc = 0x7d, kCallOrigin = 0x7f, kCallPc = 0x81, kCallTailCall = 0x82,
                          kCallTarget = 0x83, kGnuCallSiteTarget = 0x2113, kGnuTailCall = 0x2115,
                          kGnuAllTailCallSites = 0x2116, kGnuAllCallSites = 0x2117;
}  // namespace at

enum class CallTargetKind : uint8_t {
  kUnknown,  // no target, an expression (indirect call), or a reference that cannot be read
  kAddress,  // `address`: the entry of the function called (origin with code, or DW_AT_call_target address)
  kName,     // `name`: a function without code here (declaration, abstract instance): found by name
};

struct CallSite {
  // Offset of the call site's DIE in .debug_info; in a split unit, in its
  // .debug_info.dwo with the unit's number above kSplitDieShift (as FunctionLevel::die).
  uint64_t die = 0;
  uint64_t return_pc = 0;  // the address after the call
  uint64_t call_pc = 0;    // the call instruction's address; 0: not recorded
  bool tail_call = false;
  CallTargetKind target = CallTargetKind::kUnknown;
  uint64_t address = 0;   // for kAddress
  std::string_view name;  // for kName (a linkage name when the DIE chain has one)
};

// The call sites of one subprogram, in DIE order.
struct FunctionCallSites {
  uint64_t die = 0;
  // DW_AT_call_all_calls, DW_AT_call_all_tail_calls or their GNU forms: the
  // producer described every (tail) call. gdb follows the tail calls of such
  // functions only, and so does the search.
  bool all_tail_calls = false;
  std::vector<CallSite> sites;
  // The first problem met reading them (the sites before it are kept).
  std::optional<DwarfProblem> problem;
  // The site whose return address is `return_pc`, if any.
  const CallSite* at_return(uint64_t return_pc) const;
};

class FunctionIndex;

// Reads and keeps the call sites of subprograms, by DIE offset. Thread-safe.
// A split unit's subprogram (a DIE number with the unit's number above
// kSplitDieShift, as FunctionLevel::die has it) is read from the split unit
// `split_units` opened (FunctionIndex::split_unit): its call sites, their
// origins (references into the .dwo) and addresses (the skeleton's
// .debug_addr) are the split unit's, their DIE numbers tagged the same way,
// and a problem there names the .dwo or .dwp.
class CallSiteIndex {
 public:
  // `supplementary`: a dwz file's sections, for origins referred to by DW_FORM_GNU_ref_alt.
  // `split_units`: the index whose split units split DIE numbers name (none: such numbers have no call sites).
  explicit CallSiteIndex(const DwarfSections& sections, const DwarfSections* supplementary = nullptr,
                         const FunctionIndex* split_units = nullptr);
  ~CallSiteIndex();
  CallSiteIndex(const CallSiteIndex&) = delete;
  CallSiteIndex& operator=(const CallSiteIndex&) = delete;

  // The call sites of the subprogram whose DIE is at `die` in .debug_info (or tagged, in a split unit);
  // read on the first call, then kept (the pointer stays valid as long as
  // the index). Null when `die` is not a readable DW_TAG_subprogram.
  const FunctionCallSites* sites(uint64_t die) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// One frame a tail call left off the stack: the function that made the
// jump and the address after the jump (the frame's PC, as gdb shows it).
struct TailCallFrame {
  uint64_t function_entry = 0;
  uint64_t function_die = 0;
  uint64_t pc = 0;
};

struct TailCallLimits {
  size_t max_depth = 32;     // tail calls in one chain; a longer one ends the search with no answer
  size_t max_steps = 20000;  // call sites entered in all; past it the search gives no answer
};

// What the search needs of a module: the call sites of the function with
// code whose entry is `entry` (null: no DWARF function starts there), and
// the entry a call site's target names (nullopt: unknown).
struct TailCallGraph {
  FunctionRef<const FunctionCallSites*(uint64_t entry)> sites_of;
  FunctionRef<std::optional<uint64_t>(const CallSite& site)> target_of;
};

// The frames between a caller whose call site called `first_target` and the
// physical callee starting at `callee_entry`, innermost (callee side) first.
// Every chain of tail calls from `first_target` to `callee_entry` is found
// (depth first, never entering a call site twice on one path); a unique
// chain gives all its frames; several give only what all of them agree on
// (the frames next to the caller that every chain shares, and those next to
// the callee), as gdb keeps them. Nothing when `first_target` is the callee,
// when no chain reaches the callee, when the chains share nothing, or when
// the search meets what it cannot follow (a function without call-site
// information at a target's address, an unknown target, a limit).
std::vector<TailCallFrame> find_tail_call_frames(uint64_t first_target, uint64_t callee_entry,
                                                 const TailCallGraph& graph, TailCallLimits limits = {});

// One file's DWARF as the search walks it: the functions (FunctionIndex),
// their call sites (CallSiteIndex) and how a function known by name only is
// found (`function_named`: its entry, nullopt when none or not one).
struct ModuleCallGraph {
  const FunctionIndex& functions;
  const CallSiteIndex& call_sites;
  FunctionRef<std::optional<uint64_t>(std::string_view name)> function_named;

  // The call site of the physical function at `return_address` - 1 that returns to `return_address`.
  const CallSite* call_site_at(uint64_t return_address) const;
  // The entry of the function a call site calls; nullopt when not known.
  std::optional<uint64_t> call_target(const CallSite& site) const;
  // find_tail_call_frames from a call to `first_target`, the functions being
  // those with code starting at a target's address.
  std::vector<TailCallFrame> tail_calls_from(uint64_t first_target, uint64_t callee_entry) const;
  // The same from the caller's call site at `return_address`.
  std::vector<TailCallFrame> tail_call_frames(uint64_t return_address, uint64_t callee_entry) const;
};

}  // namespace framewalk::symbol

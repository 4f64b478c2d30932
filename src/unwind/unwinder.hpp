// The step loop: from a thread's registers to its frames, one row at a time.
// Every frame says how it was recovered; every walk says why it stopped.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <memory>

#include "arch/machine.hpp"
#include "arch/registers.hpp"
#include "base/function_ref.hpp"
#include "base/memory.hpp"
#include "unwind/code_memory.hpp"
#include "unwind/module.hpp"

namespace framewalk {

// How a frame's registers were recovered from its callee.
enum class FrameSource : uint8_t {
  kContext,     // frame 0: the thread's own registers
  kEhFrame,     // the callee's .eh_frame row
  kDebugFrame,  // the callee's .debug_frame row
  kExidx,       // the callee's .ARM.exidx entry (ARM EHABI)
  kSframe,      // the callee's .sframe row
  kSignal,      // the callee was the signal trampoline (no CFI): the kernel's ucontext
  kFramePointer,  // the callee keeps a frame pointer (no CFI; prologue checked)
  kPrologue,    // the callee was stopped in its prologue (or at an epilogue's return) or is a
                // frameless leaf: no CFI, or tables exact only in the body (EHABI) at an activation
  kJit,         // the callee is jit code (Module::jit): its frame pointer, the return address checked
};
const char* to_string(FrameSource source);

// Why SFrame gave no row for a PC, when it was the source asked for
// (SourceOrder::kSframe) and a fallback had to supply the row, or none could.
enum class SframeMiss : uint8_t {
  kNone,
  kNoModule,          // the PC is in no mapped file
  kNoSection,         // the file has no .sframe (or an unreadable one)
  kUnsorted,          // its FDEs are not flagged sorted: no lookup
  kNoFde,             // no SFrame FDE covers the PC
  kNoRow,             // the FDE has no row at the PC (no FREs, or the PC precedes the first)
  kSignalWithoutRows, // a signal FDE without rows: "use a signal-frame unwinder"
  kTopmostOnly,       // the row reads a register known only in the topmost frame
};
const char* to_string(SframeMiss miss);

enum class StopReason : uint8_t {
  kOutermost,         // the return address is undefined or zero: the stack's natural end
  kMaxFrames,         // the frame cap was reached
  kNoUnwindInfo,      // no row for the PC and no safe fallback
  kBadMemory,         // memory needed for the step was unreadable (see address)
  kCfaDidNotAdvance,  // the caller's stack pointer did not move up: a loop or corrupt stack
  kBadUnwindInfo,     // the row could not be evaluated (see error)
  kNoRegisters,       // the initial registers lacked the PC or SP
  kCallback,          // the frame callback asked to stop
  kUnsupportedMachine,  // the Unwinder was made for a machine it cannot unwind (no frames)
  // The unwind tables mark the function as one that cannot be unwound
  // (EXIDX_CANTUNWIND) and no fallback knows its caller: on ARM the start
  // of a thread (glibc's __clone) or of the program. A declared end, as an
  // undefined return address is (see address: the PC).
  kCannotUnwind,
};
const char* to_string(StopReason reason);

struct Frame {
  uint64_t pc = 0;          // exact PC for activations, the return address otherwise
  uint64_t sp = 0;
  bool activation = false;  // the PC is exact (frame 0, or interrupted by a signal)
  FrameSource source = FrameSource::kContext;
  const Module* module = nullptr;  // the module of the lookup PC
  bool signal_trampoline = false;  // this frame is the kernel's signal return path
  // Why the callee's row did not come from SFrame (SourceOrder::kSframe).
  SframeMiss sframe_miss = SframeMiss::kNone;
  // The address to look up unwind rows at: pc for an activation, inside the
  // call instruction for a return address (arch::Machine::lookup_pc).
  uint64_t lookup_pc = 0;
  // Where to look up the function name: lookup_pc, except for a signal
  // trampoline, entered by a return address that points at its first instruction.
  uint64_t symbol_pc = 0;
  // The frame's registers as the walk recovered them; valid only during the
  // frame callback.
  const arch::RegisterFile* registers = nullptr;
};

struct WalkResult {
  StopReason reason = StopReason::kOutermost;
  // For kBadMemory: the address; for kNoUnwindInfo and kBadUnwindInfo: the
  // PC; for kUnsupportedMachine: the ELF e_machine.
  uint64_t address = 0;
  ErrorCode error = ErrorCode::kNotFound;  // for kBadUnwindInfo
  // For kBadUnwindInfo with kTooManyRegisters: the register the register
  // file had no room for.
  std::optional<uint32_t> register_number;
  SframeMiss sframe_miss = SframeMiss::kNone;  // for kNoUnwindInfo with SourceOrder::kSframe
  size_t frames = 0;
};

// Which unwind information the step loop reads, in this order. .ARM.exidx
// (ARM files only) comes after .eh_frame and .debug_frame, where gdb
// (arm-tdep.c appends its EHABI unwinder after the DWARF ones) and libunwind
// (DWARF, then EXIDX, then frame chains) put it: DWARF CFI describes every
// instruction, an EHABI entry only the function's body.
enum class SourceOrder : uint8_t {
  kAuto,    // .eh_frame, .debug_frame, .ARM.exidx, .sframe, then the fallbacks
  kCfi,     // the compilers' tables only (.eh_frame, .debug_frame, .ARM.exidx), then the fallbacks
  kSframe,  // .sframe only, then the fallbacks (signal trampoline, frame pointer)
};

// Rows already found, by module and PC: the threads of one process share
// most of their frames, and finding a row (an index search, then the CIE's
// and the FDE's instructions) costs more than the rest of a step. Keyed by
// the module's id (never reused) and the link-time PC, so that a module
// unloaded and another loaded at its address never share rows. Bounded:
// kSets sets of kWays entries, the least recently used of a set replaced
// (entry_bytes() each, allocated on the first add). One cache per walking
// thread (it is not synchronized); it may outlive modules and targets.
class RowCache {
 public:
  // A row of the shape most frames of compiled code have, ready to apply
  // without interpreting its rules (Unwinder applies it exactly as the row):
  // the CFA is a register plus an offset, every other rule restores a
  // register below 64 from a word at the CFA plus an offset (same-value
  // rules change nothing and are left out), the return address among them;
  // no signal frame. Made when a row is cached.
  struct FlatRow {
    static constexpr unsigned kMaxSaved = 24;  // AArch64's x19-x30 and d8-d15, with room
    bool usable = false;
    uint8_t saved = 0;
    uint16_t cfa_reg = 0;
    uint16_t return_address_register = 0;
    int64_t cfa_offset = 0;
    uint16_t reg[kMaxSaved];
    uint8_t size[kMaxSaved];
    int64_t offset[kMaxSaved];
  };
  static FlatRow flatten(const arch::Machine& machine, const UnwindRow& row);

  struct Entry {
    bool found = false;
    FlatRow flat;  // usable: step by it
    UnwindRow row;
    FrameSource source = FrameSource::kContext;
    SframeMiss sframe_miss = SframeMiss::kNone;
    std::optional<Error> lookup_error;
    bool cannot_unwind = false;
  };
  static constexpr size_t kWays = 4;
  // `sets` is rounded up to a power of two.
  explicit RowCache(size_t sets = 256);
  ~RowCache();
  RowCache(const RowCache&) = delete;
  RowCache& operator=(const RowCache&) = delete;
  const Entry* find(uint64_t module_id, uint64_t link_pc, unsigned variant);
  void add(uint64_t module_id, uint64_t link_pc, unsigned variant, const Entry& entry);
  // Entries held now, and at most.
  size_t size() const { return used_; }
  size_t capacity() const { return sets_ * kWays; }
  // Bytes an entry takes (its key and its row): the keys are allocated at
  // the first add, the rows' pages are touched only as entries are written.
  static constexpr size_t entry_bytes() { return sizeof(Key) + sizeof(Entry); }
  // Forgets the rows of one module (it was unmapped), or all.
  void forget_module(uint64_t module_id);
  void clear();

 private:
  struct Key {
    uint64_t module_id = 0;  // 0: empty
    uint64_t link_pc = 0;
    unsigned variant = 0;
    uint32_t last_use = 0;
  };
  size_t set_of(uint64_t module_id, uint64_t link_pc, unsigned variant) const;
  void allocate();

  size_t sets_;
  size_t used_ = 0;
  uint32_t clock_ = 0;
  std::unique_ptr<Key[]> keys_;
  Entry* entries_ = nullptr;  // raw storage: an entry is made where its key is first written
};

// Where the step loop takes rows from instead of the modules' unwind
// information: the in-process path finds them through the dynamic linker,
// with no module map to build. A walk that must not allocate needs a finder
// that does not.
class RowFinder {
 public:
  // The row for `frame` (at frame.lookup_pc; frame.activation: the PC is
  // exact), or false when there is none.
  virtual bool find(const Frame& frame, UnwindRow* row) const = 0;
  // What the rows are made from (the frames' provenance).
  virtual FrameSource source() const = 0;
  // Whether `address` lies in loaded code: what a frame-pointer or prologue
  // guess must land in (in a module, else the guess is refused).
  virtual bool in_code(uint64_t address) const = 0;

 protected:
  ~RowFinder() = default;
};

struct UnwindOptions {
  SourceOrder sources = SourceOrder::kAuto;
  size_t max_frames = 256;
  // The first PC is a return address (a context captured inside a call), not
  // an exact PC: it is looked up inside the call before it (arch::Machine::lookup_pc).
  bool first_is_return_address = false;
  bool use_debug_frame = true;
  bool allow_frame_pointer = true;
  RowCache* row_cache = nullptr;  // optional: rows found are kept and reused
  const RowFinder* row_finder = nullptr;  // optional: rows come from here, not from the modules
};

class Unwinder {
 public:
  // `memory` is the target's (its stacks); instructions are read from the
  // modules' file images first (CodeMemory). For a machine without a
  // descriptor (arch::machine_for), every walk stops at once with
  // kUnsupportedMachine and apply_row fails.
  Unwinder(const ModuleMap& modules, Memory& memory, const MachineKey& machine);
  // Instructions read from `code` (its own memory, e.g. one that probes
  // pages apart from the stack's) rather than the modules' images.
  Unwinder(const ModuleMap& modules, Memory& memory, Memory& code, const MachineKey& machine);

  // Null for an unsupported machine.
  const arch::Machine* machine() const { return machine_; }

  // Walks from `registers`, calling `on_frame` for each frame (return false to
  // stop). A FunctionRef, not a std::function: passing a lambda never allocates.
  WalkResult walk(const arch::RegisterFile& registers, FunctionRef<bool(const Frame&)> on_frame,
                  const UnwindOptions& options = {}) const;
  // The same walk, stepping `registers` themselves from frame to frame (left
  // as the last frame's): no copy of them is made, for a caller short of
  // stack (the in-process path, in a signal handler).
  WalkResult walk_in_place(arch::RegisterFile& registers, FunctionRef<bool(const Frame&)> on_frame,
                           const UnwindOptions& options = {}) const;

  // The bits of a code address that may hold a pointer authentication code
  // (AArch64): stripped from every return address. The machine's default
  // unless the target knows better (a core's NT_ARM_PAC_MASK).
  void set_pointer_auth_mask(uint64_t mask) { pointer_auth_mask_ = mask; }
  // A saved register (not the return address) whose slot cannot be read
  // becomes unknown in the caller instead of ending the walk: a perf
  // sample's stack copy starts at the stack pointer, and some rows keep a
  // register below it (x86-64's red zone). Where a later row needs that
  // register, the walk stops then. Off by default.
  void set_unreadable_saved_registers_unknown(bool on) { unreadable_saved_registers_unknown_ = on; }
  uint64_t pointer_auth_mask() const { return pointer_auth_mask_; }

  // Applies one row: the caller's registers from the callee's (exposed for tests).
  Result<arch::RegisterFile> apply_row(const UnwindRow& row, const arch::RegisterFile& callee) const;
  // The same in place: `registers`, the callee's, become the caller's (every
  // rule reads the callee's values). After an error they are neither.
  Result<void> apply_row_in_place(const UnwindRow& row, arch::RegisterFile* registers) const;
  // The same for a flat row (RowCache::flatten), with the same result.
  Result<void> apply_flat_in_place(const RowCache::FlatRow& row, arch::RegisterFile* registers) const;

 private:
  // What a window-saved row (DW_CFA_GNU_window_save) gives registers 8-31
  // that have no rule of their own (bit i: register kFirst + i).
  struct WindowValues {
    static constexpr unsigned kFirst = 8, kCount = 24;
    uint32_t ruled = 0, known = 0;
    uint64_t values[kCount];
  };
  Result<WindowValues> window_values(const UnwindRow& row, const arch::RegisterFile& callee, uint64_t cfa) const;

  struct Step {
    UnwindRow row;  // unset when `flat` is given
    const RowCache::FlatRow* flat = nullptr;  // the cached row, flat (valid until the cache's next add)
    FrameSource source;
    SframeMiss sframe_miss = SframeMiss::kNone;
    // Unwind information covers the PC but could not be read: the walk stops
    // with it (bad-unwind-info) unless another source had a row.
    std::optional<Error> lookup_error;
    // The tables say the function cannot be unwound (EXIDX_CANTUNWIND);
    // only a fallback may still give a row.
    bool cannot_unwind = false;
  };
  SframeMiss find_sframe_row(const Frame& frame, Step* step) const;
  bool find_row(const Frame& frame, const UnwindOptions& options, Step* step) const;
  bool find_row_uncached(const Frame& frame, const UnwindOptions& options, Step* step) const;
  bool find_row_through_cache(const Frame& frame, const UnwindOptions& options, Step* step) const;
  bool fallback_row(const Frame& frame, const arch::RegisterFile& regs, const UnwindOptions& options, Step* step) const;
  // The code bytes FallbackInput hands the machine: the function's first
  // ones (an activation's only up to its PC) and an activation's at its PC.
  struct FallbackCode {
    uint8_t function_code[arch::Machine::kFallbackCodeBytes] = {};
    uint8_t code_at_pc[arch::Machine::kFallbackCodeBytes];
  };
  void fill_fallback_input(const Frame& frame, arch::FallbackInput* in, FallbackCode* code) const;
  // A heuristic step is accepted only if it lands on a return address: inside
  // a module, right after a call instruction, or (a signal handler's) at a
  // sigreturn trampoline.
  bool plausible_return_address(uint64_t address, const UnwindOptions& options) const;

  const ModuleMap& modules_;
  Memory& memory_;            // the stack, and whatever else a row reads
  // Where instructions are read: the code memory given, else the modules'
  // file images, then memory_.
  Memory& code() const { return code_ ? *code_ : module_code_; }
  mutable CodeMemory module_code_;
  Memory* code_ = nullptr;
  const arch::Machine* machine_;
  uint16_t elf_machine_;  // for the error when machine_ is null
  uint64_t pointer_auth_mask_;
  bool unreadable_saved_registers_unknown_ = false;
};

}  // namespace framewalk

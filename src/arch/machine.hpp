// What the step loop needs to know about a machine, beyond its unwind
// information: which registers are the stack pointer, the PC and the frame
// pointer, how wide and in what byte order a stack word is, and the
// machine's own ways of finding a frame without unwind information (signal
// trampoline, call instructions, prologues). One instance per machine, in
// arch/<name>/machine.cpp; nothing outside arch/ decodes a machine's code.
//
// Every member is usable from a signal handler: no allocation, no lock.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>

#include "arch/arch.hpp"
#include "arch/registers.hpp"
#include "base/byte_reader.hpp"
#include "base/memory.hpp"
#include "model/unwind_row.hpp"

namespace framewalk::arch {

// What a fallback row was derived from, for the frame's provenance.
enum class FallbackKind : uint8_t {
  kFramePointer,  // the callee keeps a frame pointer
  kPrologue,      // the callee's prologue, read up to the PC (or a frameless leaf)
};

// What the machine-neutral step loop gathers for a frame without unwind
// information; the machine decides what row, if any, it implies.
struct FallbackInput {
  bool activation = false;  // the PC is exact (only the instructions before it have run)
  // Whether the function's start is known (from the symbols); the fields
  // below are filled only then.
  bool function_known = false;
  uint64_t pc_offset = 0;   // the PC's offset from the function's start
  Bytes function_code;      // the function's first bytes (an activation's only up to its PC)
  Bytes code_at_pc;         // for an activation: the bytes at its PC
  const RegisterFile* registers = nullptr;  // the frame's registers (never null when called)
  // The PC is in jit code (executable memory no file backs; function_known
  // false): a frame-pointer guess is allowed at an activation too, where
  // the code at the PC (code_at_pc) does not show the frame still unbuilt
  // or already taken down. JIT compilers that keep frame pointers build
  // them in every function.
  bool jit_code = false;
};

// Whether a frame pointer (or frame record pointer) is worth following
// without unwind information: word-aligned, above the stack pointer and
// less than 64 MiB above it (a frameless caller would be skipped otherwise).
inline bool frame_pointer_in_stack(const RegisterFile& registers, uint16_t frame_pointer, uint16_t stack_pointer) {
  constexpr uint64_t kMaxFrameSize = uint64_t{1} << 26;
  auto fp = registers.get(frame_pointer);
  auto sp = registers.get(stack_pointer);
  return fp && sp && *fp >= *sp && *fp - *sp <= kMaxFrameSize && (*fp & 3) == 0;
}

class Machine {
 public:
  // How many bytes of code the step loop reads for FallbackInput, each way.
  static constexpr size_t kFallbackCodeBytes = 64;
  // No machine's elf_gregset_t is larger (x86-64's 216 bytes, AArch64's 272):
  // a buffer for PTRACE_GETREGSET(NT_PRSTATUS).
  static constexpr size_t kMaxGregsetSize = 512;

  static constexpr uint16_t kNoRegister = arch::kNoRegister;
  explicit constexpr Machine(const ArchInfo& info) : info_(info) {}
  Machine(const Machine&) = delete;
  Machine& operator=(const Machine&) = delete;

  // The machine's descriptor (arch.hpp); what follows reads it.
  const ArchInfo& info() const { return info_; }
  const MachineKey& key() const { return info_.key; }
  uint16_t elf_machine() const { return info_.elf_machine(); }
  // DWARF register numbers.
  uint16_t stack_pointer() const { return info_.stack_pointer; }
  uint16_t frame_pointer() const { return info_.frame_pointer; }
  uint16_t second_frame_pointer() const { return info_.second_frame_pointer; }
  uint16_t program_counter() const { return info_.program_counter; }
  uint16_t return_address_column() const { return info_.return_address; }
  // Whether a call leaves the return address in a register (the link
  // register, the return-address column) rather than on the stack: then an
  // activation whose row has no rule for that column has not moved it yet
  // (a leaf, a prologue before the save), and its caller resumes at the
  // register's value.
  bool link_register() const { return info_.link_register; }
  uint8_t address_size() const { return info_.address_size(); }
  // The caller's stack pointer for a CFA (ArchInfo::cfa_above_stack_pointer).
  uint64_t caller_stack_pointer(uint64_t cfa) const { return address(cfa - info_.cfa_above_stack_pointer); }
  // Where the words a frame saves end above its CFA (ArchInfo::saved_above_cfa).
  uint8_t saved_above_cfa() const { return info_.saved_above_cfa; }
  Endian endian() const { return info_.endian(); }

  // A return address as stored, without what the machine keeps in its
  // unused bits (the Thumb bit; pointer authentication codes, in the bits
  // `pointer_auth_mask` has set).
  virtual uint64_t clean_return_address(uint64_t address, uint64_t pointer_auth_mask) const = 0;
  // The bits a pointer authentication code may occupy in a code address
  // when the target does not say (a core without NT_ARM_PAC_MASK): derived
  // from the usual user address-space size. 0 where there is no PAC.
  virtual uint64_t default_pointer_auth_mask() const { return 0; }
  // The core note and ptrace regset that tell the mask (NT_ARM_PAC_MASK:
  // struct user_pac_mask, data_mask then insn_mask); 0 where there is none.
  virtual uint32_t pointer_auth_regset() const { return 0; }
  // A stack word or register value as an address of this machine (32-bit
  // machines wrap).
  uint64_t address(uint64_t value) const {
    return address_size() >= 8 ? value : value & ((uint64_t{1} << (8 * address_size())) - 1);
  }
  // Where to look up unwind rows and symbols for a frame at `pc`: the PC
  // itself for an activation, else inside the call instruction (a call may
  // be the last instruction of a function).
  virtual uint64_t lookup_pc(uint64_t pc, bool activation) const = 0;
  // Whether the instruction before `return_address` is a call (a guessed
  // caller frame must be one).
  virtual bool follows_call(Memory& memory, uint64_t return_address) const = 0;
  // Whether the code at `pc` is a signal-return trampoline, recognised by
  // its code. If it is and `row` is not null, writes the row that restores
  // the interrupted registers from the kernel's signal frame (which may
  // depend on the trampoline: ARM's sigreturn and rt_sigreturn frames differ).
  virtual bool signal_frame_row(Memory& memory, uint64_t pc, UnwindRow* row) const = 0;
  bool is_signal_trampoline(Memory& memory, uint64_t pc) const { return signal_frame_row(memory, pc, nullptr); }
  // A row for a frame without unwind information, where the machine's
  // conventions determine one (frame pointer, prologue): written to `row`
  // (the step's own, so that no second row sits on a signal handler's
  // stack), with what it was derived from; else nullopt.
  virtual std::optional<FallbackKind> fallback_row(const FallbackInput& input, UnwindRow* row) const = 0;
  // For an activation whose row comes from tables that describe only its
  // function's body (ARM EHABI entries are exact at call sites): where the
  // code shows the PC still in the prologue, or at an epilogue's return,
  // writes the row the instructions before the PC give and returns true.
  // `input` as for fallback_row, for an activation whose function is known;
  // its registers may hold only the PC and the SP. Default: false (the
  // machine's tables hold at every instruction).
  virtual bool activation_row_outside_body(const FallbackInput& input, UnwindRow* row) const {
    (void)input;
    (void)row;
    return false;
  }

  // The kernel's general registers, elf_gregset_t: NT_PRSTATUS's pr_reg in a
  // core, and what ptrace hands back for them.
  virtual size_t gregset_size() const = 0;
  // Registers from an elf_gregset_t of gregset_size() bytes (fewer: the rest unknown).
  virtual RegisterFile registers_from_gregset(Bytes gregset) const = 0;
  // Registers from the bytes of a ucontext_t (a signal handler's context).
  virtual RegisterFile registers_from_ucontext(Bytes ucontext) const = 0;
  // Adds the floating-point registers of a core's NT_PRFPREG note (the
  // thread's elf_fpregset_t) where the machine's CFI may save registers in
  // them (ppc64's f14-f31; s390x: call-saved f8-f15, general registers kept
  // in FPRs). Default: nothing.
  virtual void add_fpregset(Bytes fpregset, RegisterFile* registers) const {
    (void)fpregset;
    (void)registers;
  }

  // The size of a register's value as saved on the stack: the word size,
  // but for registers wider than a word (ARM's VFP d0-d31 on 32-bit ARM).
  virtual uint8_t register_size(uint16_t reg) const {
    (void)reg;
    return address_size();
  }

  // perf_event_open's PERF_SAMPLE_REGS_USER, in the kernel's perf_regs
  // numbering of this machine (asm/perf_regs.h): which DWARF register each
  // perf register index is (-1: none the unwinder uses), ...
  virtual std::span<const int16_t> perf_register_numbers() const = 0;
  // ... the sample_regs_user mask a profiler asks for: every register the
  // table names that the kernel accepts, ...
  virtual uint64_t perf_sample_register_mask() const = 0;
  // ... and a sample's registers: one value per bit set in `mask`, lowest
  // bit first, as the kernel writes them after the ABI word. Values beyond
  // `values` and bits the table does not name are left unknown.
  RegisterFile registers_from_perf_sample(uint64_t mask, std::span<const uint64_t> values) const;

 protected:
  ~Machine() = default;  // instances are static: never destroyed through this type

 private:
  const ArchInfo& info_;
};

// The machine of a key, or nullptr for a machine framewalk cannot unwind.
const Machine* machine_for(const MachineKey& key);

// The 32-bit machine whose programs a 64-bit kernel of `machine` also runs
// (x86-64: i386; AArch64: ARM), whose tasks perf samples with
// PERF_SAMPLE_REGS_ABI_32: the sample's registers, in the 64-bit machine's
// perf numbering, hold the 32-bit machine's (the kernel's perf_reg_value for
// a compat task). Null where there is none.
const Machine* compat_machine(const Machine& machine);

// The machines machine_for knows, by name ("x86-64, AArch64"), for messages.
std::string supported_machine_names();

// The machine framewalk runs on: live processes (ptrace) and the calling
// process are of this machine.
const Machine& host_machine();

}  // namespace framewalk::arch

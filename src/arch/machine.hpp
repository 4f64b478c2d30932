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
};

class Machine {
 public:
  // How many bytes of code the step loop reads for FallbackInput, each way.
  static constexpr size_t kFallbackCodeBytes = 64;

  constexpr Machine(const ArchInfo& info, uint8_t address_size, Endian endian)
      : info_(info), address_size_(address_size), endian_(endian) {}
  Machine(const Machine&) = delete;
  Machine& operator=(const Machine&) = delete;

  const ArchInfo& info() const { return info_; }
  uint16_t elf_machine() const { return info_.elf_machine; }
  // DWARF register numbers.
  uint16_t stack_pointer() const { return info_.stack_pointer; }
  uint16_t frame_pointer() const { return info_.frame_pointer; }
  // The PC, and the return-address column its CFI uses for it.
  uint16_t program_counter() const { return info_.return_address; }
  // A stack word (saved registers, return addresses).
  uint8_t address_size() const { return address_size_; }
  Endian endian() const { return endian_; }

  // A return address as stored, without what the machine keeps in its
  // unused bits (pointer authentication codes, the Thumb bit).
  virtual uint64_t clean_return_address(uint64_t address) const = 0;
  // Where to look up unwind rows and symbols for a frame at `pc`: the PC
  // itself for an activation, else inside the call instruction (a call may
  // be the last instruction of a function).
  virtual uint64_t lookup_pc(uint64_t pc, bool activation) const = 0;
  // Whether the instruction before `return_address` is a call (a guessed
  // caller frame must be one).
  virtual bool follows_call(Memory& memory, uint64_t return_address) const = 0;
  // Whether the code at `pc` is the signal-return trampoline, recognised by
  // its code; its row is signal_frame_row().
  virtual bool is_signal_trampoline(Memory& memory, uint64_t pc) const = 0;
  virtual UnwindRow signal_frame_row() const = 0;
  // A row for a frame without unwind information, where the machine's
  // conventions determine one (frame pointer, prologue): written to `row`
  // (the step's own, so that no second row sits on a signal handler's
  // stack), with what it was derived from; else nullopt.
  virtual std::optional<FallbackKind> fallback_row(const FallbackInput& input, UnwindRow* row) const = 0;

  // The kernel's general registers, elf_gregset_t: NT_PRSTATUS's pr_reg in a
  // core, and what ptrace hands back for them.
  virtual size_t gregset_size() const = 0;
  // Registers from an elf_gregset_t of gregset_size() bytes (fewer: the rest unknown).
  virtual RegisterFile registers_from_gregset(Bytes gregset) const = 0;
  // Registers from the bytes of a ucontext_t (a signal handler's context).
  virtual RegisterFile registers_from_ucontext(Bytes ucontext) const = 0;

 protected:
  ~Machine() = default;  // instances are static: never destroyed through this type

 private:
  const ArchInfo& info_;
  uint8_t address_size_;
  Endian endian_;
};

// The descriptor for an ELF e_machine, or nullptr for a machine framewalk
// cannot unwind.
const Machine* machine_for(uint16_t elf_machine);

// The machine framewalk runs on: live processes (ptrace) and the calling
// process are of this machine.
const Machine& host_machine();

}  // namespace framewalk::arch

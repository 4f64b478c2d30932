#include "arch/x86_64/machine.hpp"

#include <algorithm>

#include "arch/x86_64/frames.hpp"
#include "arch/x86_64/instruction.hpp"

namespace framewalk::arch::x86_64 {

namespace {

// The epilogue tail ends in a `ret` within this many bytes of the PC.
constexpr size_t kEpilogueWindow = 32;

// What differs between the ABIs of x86-64's instruction set: x86-64's own
// (LP64) and x32 (ILP32: pointers and addresses of 4 bytes, the stack's
// slots, calls and pushes still of 8).
struct Abi {
  const ArchInfo& info;
  bool (*is_trampoline)(Bytes code);    // the rt_sigreturn trampoline's
  unsigned ucontext_gregs_offset;       // uc_mcontext.gregs in its ucontext_t
  const X86Abi& frames;                 // its frames without unwind information
};
constexpr Abi kLp64 = {kArchInfo, is_sigreturn_trampoline, kUcontextGregsOffset, kLp64Abi};
constexpr Abi kX32 = {kX32ArchInfo, is_x32_sigreturn_trampoline, kX32UcontextGregsOffset, kX32Abi};

class X86_64Machine final : public Machine {
 public:
  explicit constexpr X86_64Machine(const Abi& abi) : Machine(abi.info), abi_(abi) {}

  uint64_t clean_return_address(uint64_t address, uint64_t) const override { return address; }

  uint64_t lookup_pc(uint64_t pc, bool activation) const override { return activation ? pc : pc - 1; }

  bool follows_call(Memory& memory, uint64_t return_address) const override {
    uint8_t before[8];
    if (return_address < sizeof before) return false;
    if (memory.read(return_address - sizeof before, before, sizeof before) != sizeof before) {
      // Near the start of readable memory at least a `call rel32` must fit.
      return memory.read(return_address - 5, before, 5) == 5 && ends_with_call(Bytes(before, 5));
    }
    return ends_with_call(Bytes(before, sizeof before));
  }

  bool signal_frame_row(Memory& memory, uint64_t pc, UnwindRow* row) const override {
    uint8_t code[sizeof kSigreturnCode];
    if (!abi_.is_trampoline(Bytes(code, memory.read(pc, code, sizeof code)))) return false;
    if (row) *row = x86_64::signal_frame_row(abi_.ucontext_gregs_offset);
    return true;
  }

  // Every register is saved in a slot of 8 bytes, also x32's.
  uint8_t register_size(uint16_t) const override { return 8; }

  std::optional<FallbackKind> fallback_row(const FallbackInput& in, UnwindRow* row) const override {
    if (in.function_known) {
      // An activation about to return has no frame left, whatever its prologue built.
      if (in.activation &&
          at_epilogue_tail(in.code_at_pc.first(std::min(in.code_at_pc.size(), kEpilogueWindow)))) {
        *row = entry_row();
        return FallbackKind::kPrologue;
      }
      if (prologue_row(in.function_code, in.activation ? in.pc_offset : kReturnAddressFrame, row, abi_.frames))
        return row->cfa.reg == kRbp ? FallbackKind::kFramePointer : FallbackKind::kPrologue;
      // A prologue it cannot read (e.g. shrink-wrapped behind a branch) is no
      // better known than a function without a symbol.
    }
    // Jit code that is about to build its frame (at `push %rbp`), has only
    // pushed rbp (at `mov %rsp,%rbp`), or is about to return: the row the
    // code at the PC says. Elsewhere in it, its frame pointer, as for a caller.
    if (in.jit_code && in.activation) {
      const Bytes at = in.code_at_pc;
      if ((!at.empty() && at[0] == kPushRbp) ||
          at_epilogue_tail(at.first(std::min(at.size(), kEpilogueWindow)))) {
        *row = entry_row();
        return FallbackKind::kPrologue;
      }
      if (at.size() >= 3 && at[0] == 0x48 && ((at[1] == 0x89 && at[2] == 0xe5) || (at[1] == 0x8b && at[2] == 0xec))) {
        *row = after_push_rbp_row();
        return FallbackKind::kPrologue;
      }
    }
    // A frame-pointer guess, only for a return-address frame (or jit code)
    // whose rbp points into the stack above sp (a frameless caller would be skipped).
    if (in.activation && !in.jit_code) return std::nullopt;
    // A caller without unwind information whose rbp is 0: the end of the
    // frame chain (the dynamic linker's _start, which has no CFI, still has
    // the 0 the kernel started the process with).
    // (Not in jit code, which may use rbp as any other register.)
    if (auto fp = in.registers->get(kRbp); fp && *fp == 0 && !in.jit_code) {
      *row = chain_end_row();
      return FallbackKind::kFramePointer;
    }
    if (!frame_pointer_in_stack(*in.registers, kRbp, kRsp) || (*in.registers->get(kRbp) & 7)) return std::nullopt;
    *row = frame_pointer_row();
    return FallbackKind::kFramePointer;
  }

  size_t gregset_size() const override { return kUserRegsSize; }
  RegisterFile registers_from_gregset(Bytes gregset) const override { return from_user_regs_bytes(gregset); }
  RegisterFile registers_from_ucontext(Bytes ucontext) const override {
    return from_ucontext_bytes(ucontext, abi_.ucontext_gregs_offset);
  }

  // asm/perf_regs.h: AX BX CX DX SI DI BP SP IP FLAGS CS SS DS ES FS GS R8..R15.
  std::span<const int16_t> perf_register_numbers() const override {
    static constexpr int16_t kNumbers[] = {kRax, kRbx, kRcx, kRdx, kRsi, kRdi, kRbp, kRsp, kRip,
                                           49 /* rFLAGS */, 51 /* cs */, 52 /* ss */, 53 /* ds */,
                                           50 /* es */, 54 /* fs */, 55 /* gs */,
                                           kR8, kR9, kR10, kR11, kR12, kR13, kR14, kR15};
    return kNumbers;
  }
  // The kernel refuses DS, ES, FS and GS (bits 12-15) for a 64-bit task.
  uint64_t perf_sample_register_mask() const override { return ((uint64_t{1} << 24) - 1) & ~uint64_t{0xf000}; }

 private:
  const Abi& abi_;
};

constinit const X86_64Machine kMachine(kLp64);
constinit const X86_64Machine kX32Machine(kX32);

}  // namespace

const Machine& machine() { return kMachine; }
const Machine& x32_machine() { return kX32Machine; }

}  // namespace framewalk::arch::x86_64

#include "arch/i386/machine.hpp"

#include <algorithm>

#include "arch/i386/frames.hpp"
#include "arch/x86_64/instruction.hpp"

namespace framewalk::arch::i386 {

namespace {

// The epilogue tail ends in a `ret` within this many bytes of the PC.
constexpr size_t kEpilogueWindow = 32;

class I386Machine final : public Machine {
 public:
  constexpr I386Machine() : Machine(kArchInfo) {}

  uint64_t clean_return_address(uint64_t address, uint64_t) const override { return address; }

  uint64_t lookup_pc(uint64_t pc, bool activation) const override { return activation ? pc : pc - 1; }

  // call rel32 (e8) and call r/m32 (ff /2) end as in 64-bit code.
  bool follows_call(Memory& memory, uint64_t return_address) const override {
    uint8_t before[7];
    if (return_address < sizeof before) return false;
    if (memory.read(return_address - sizeof before, before, sizeof before) != sizeof before)
      return memory.read(return_address - 5, before, 5) == 5 && x86_64::ends_with_call(Bytes(before, 5));
    return x86_64::ends_with_call(Bytes(before, sizeof before));
  }

  bool signal_frame_row(Memory& memory, uint64_t pc, UnwindRow* row) const override {
    uint8_t code[sizeof kSigreturnCode];
    const auto kind = trampoline_at(Bytes(code, memory.read(pc, code, sizeof code)));
    if (!kind) return false;
    if (row) *row = i386::signal_frame_row(*kind);
    return true;
  }

  std::optional<FallbackKind> fallback_row(const FallbackInput& in, UnwindRow* row) const override {
    if (in.function_known) {
      if (in.activation && at_epilogue_tail(in.code_at_pc.first(std::min(in.code_at_pc.size(), kEpilogueWindow)))) {
        *row = entry_row();
        return FallbackKind::kPrologue;
      }
      if (prologue_row(in.function_code, in.activation ? in.pc_offset : kReturnAddressFrame, row))
        return row->cfa.reg == kEbp ? FallbackKind::kFramePointer : FallbackKind::kPrologue;
    }
    if (in.activation && !in.jit_code) return std::nullopt;
    // A caller without unwind information whose ebp is 0: the end of the chain.
    if (auto fp = in.registers->get(kEbp); fp && *fp == 0 && !in.jit_code) {
      *row = chain_end_row();
      return FallbackKind::kFramePointer;
    }
    if (!frame_pointer_in_stack(*in.registers, kEbp, kEsp)) return std::nullopt;
    *row = frame_pointer_row();
    return FallbackKind::kFramePointer;
  }

  size_t gregset_size() const override { return kUserRegsSize; }
  RegisterFile registers_from_gregset(Bytes gregset) const override { return from_user_regs_bytes(gregset); }
  RegisterFile registers_from_ucontext(Bytes ucontext) const override { return from_ucontext_bytes(ucontext); }

  // asm/perf_regs.h: AX BX CX DX SI DI BP SP IP FLAGS CS SS DS ES FS GS (a
  // 32-bit task has no R8-R15; its samples carry PERF_SAMPLE_REGS_ABI_32).
  std::span<const int16_t> perf_register_numbers() const override {
    static constexpr int16_t kNumbers[] = {kEax, kEbx, kEcx, kEdx, kEsi, kEdi, kEbp, kEsp,
                                           kEip, kEflags, kCs, kSs, kDs, kEs, kFs, kGs};
    return kNumbers;
  }
  // A 64-bit kernel refuses DS, ES, FS and GS (bits 12-15).
  uint64_t perf_sample_register_mask() const override { return 0x0fff; }
};

constinit const I386Machine kMachine;

}  // namespace

const Machine& machine() { return kMachine; }

}  // namespace framewalk::arch::i386

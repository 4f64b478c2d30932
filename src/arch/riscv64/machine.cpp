#include "arch/riscv64/machine.hpp"

#include <array>

#include "arch/riscv64/frames.hpp"

namespace framewalk::arch::riscv64 {

namespace {

class Riscv64Machine final : public Machine {
 public:
  constexpr Riscv64Machine() : Machine(kArchInfo) {}

  uint64_t clean_return_address(uint64_t address, uint64_t) const override { return address; }

  // A return address follows its call, 4 bytes (jal, jalr) or 2 (c.jalr):
  // the halfword before it is inside the call either way.
  uint64_t lookup_pc(uint64_t pc, bool activation) const override { return activation ? pc : pc - 2; }

  bool follows_call(Memory& memory, uint64_t return_address) const override {
    uint8_t before[4];
    if (return_address < 4 || (return_address & 1)) return false;
    if (memory.read(return_address - 4, before, 4) == 4) {
      const uint64_t insn = *ByteReader::unsigned_at(Bytes(before, 4), 0, 4, Endian::kLittle);
      if ((insn & 3) == 3 && is_call(static_cast<uint32_t>(insn))) return true;
    }
    if (memory.read(return_address - 2, before, 2) != 2) return false;
    return is_compressed_call(static_cast<uint16_t>(before[0] | before[1] << 8));
  }

  bool signal_frame_row(Memory& memory, uint64_t pc, UnwindRow* row) const override {
    uint8_t code[8];
    if (pc & 1) return false;
    if (!is_trampoline(Bytes(code, memory.read(pc, code, sizeof code)))) return false;
    if (row) *row = riscv64::signal_frame_row();
    return true;
  }

  // Without CFI: at a return, the frame is down; else the prologue, read
  // from the function's start. A frame at a return address (or jit code)
  // whose function is unknown is taken to keep gcc's frame pointer, where
  // s0 points into the stack above sp, and s0 of 0 ends the chain (_start's,
  // as the kernel starts a program).
  std::optional<FallbackKind> fallback_row(const FallbackInput& in, UnwindRow* row) const override {
    if (in.activation && at_return(in.code_at_pc)) {
      *row = entry_row();
      return FallbackKind::kPrologue;
    }
    if (in.function_known &&
        prologue_row(in.function_code, in.activation ? in.pc_offset : kReturnAddressFrame, row))
      return FallbackKind::kPrologue;
    if (in.activation && !in.jit_code) return std::nullopt;
    if (auto fp = in.registers->get(kFp); fp && *fp == 0 && !in.jit_code) {
      *row = chain_end_row();
      return FallbackKind::kFramePointer;
    }
    if (!frame_pointer_in_stack(*in.registers, kFp, kSp) || (*in.registers->get(kFp) & 7)) return std::nullopt;
    *row = frame_pointer_row();
    return FallbackKind::kFramePointer;
  }

  size_t gregset_size() const override { return kGregsSize; }
  RegisterFile registers_from_gregset(Bytes gregset) const override { return from_gregs_bytes(gregset); }
  void add_fpregset(Bytes fpregset, RegisterFile* registers) const override {
    add_fpregs_bytes(fpregset, *registers);
  }
  RegisterFile registers_from_ucontext(Bytes ucontext) const override { return from_ucontext_bytes(ucontext); }

  // asm/perf_regs.h: PC, then RA, SP, GP, ... T6: x1..x31, as the gregset.
  std::span<const int16_t> perf_register_numbers() const override {
    static constexpr auto kNumbers = [] {
      std::array<int16_t, kGregsCount> n{};
      n[0] = kPc;
      for (int16_t i = 1; i < static_cast<int16_t>(kGregsCount); ++i) n[i] = i;
      return n;
    }();
    return kNumbers;
  }
  uint64_t perf_sample_register_mask() const override { return (uint64_t{1} << kGregsCount) - 1; }
};

constinit const Riscv64Machine kMachine;

}  // namespace

const Machine& machine() { return kMachine; }

}  // namespace framewalk::arch::riscv64

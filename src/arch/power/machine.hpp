// What the PowerPC machines (ppc, ppc64le) share of arch::Machine: return
// addresses after 4-byte calls, the back chain and prologue rows, the
// gregset, the floating-point registers and perf's registers. Each machine
// adds its signal frames and its ucontext.
#pragma once

#include "arch/machine.hpp"
#include "arch/power/frames.hpp"

namespace framewalk::arch::power {

class PowerMachine : public Machine {
 public:
  constexpr PowerMachine(const ArchInfo& info, Abi abi) : Machine(info), abi_(abi) {}

  const Abi& abi() const { return abi_; }

  uint64_t clean_return_address(uint64_t address, uint64_t) const override { return address; }
  // Instructions are 4 bytes: a return address's call is the word before it.
  uint64_t lookup_pc(uint64_t pc, bool activation) const override { return activation ? pc : pc - 4; }
  bool follows_call(Memory& memory, uint64_t return_address) const override {
    return power::follows_call(abi_, memory, return_address);
  }
  std::optional<FallbackKind> fallback_row(const FallbackInput& in, UnwindRow* row) const override;

  size_t gregset_size() const override { return kGregsCount * abi_.word; }
  RegisterFile registers_from_gregset(Bytes gregset) const override { return from_gregs_bytes(abi_, gregset); }
  void add_fpregset(Bytes fpregset, RegisterFile* registers) const override {
    add_fpregs_bytes(abi_, fpregset, *registers);
  }
  // The condition register's fields are saved as the 4-byte CR (stw), the
  // FPRs as 8-byte doubles, the rest as words.
  uint8_t register_size(uint16_t reg) const override {
    if (reg >= kCr0 && reg <= kCr7) return 4;
    return reg >= kF0 && reg < kF0 + 32 ? 8 : abi_.word;
  }

  // asm/perf_regs.h: r0-r31, nip, msr, orig_r3, ctr, link, xer, ccr,
  // softe, trap, dar, dsisr, sier, mmcra: pt_regs' order.
  std::span<const int16_t> perf_register_numbers() const override;
  uint64_t perf_sample_register_mask() const override { return (uint64_t{1} << 37) - 1; }

 protected:
  ~PowerMachine() = default;

 private:
  Abi abi_;
};

}  // namespace framewalk::arch::power

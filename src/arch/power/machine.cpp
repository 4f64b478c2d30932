#include "arch/power/machine.hpp"

#include <array>

namespace framewalk::arch::power {

namespace {
constexpr uint32_t kBlr = 0x4e800020;
}  // namespace

std::optional<FallbackKind> PowerMachine::fallback_row(const FallbackInput& in, UnwindRow* row) const {
  if (in.activation) {
    // At a `blr` the frame is down and the return address back in LR.
    if (in.code_at_pc.size() >= 4 && insn_at(abi_, in.code_at_pc, 0) == kBlr) {
      *row = entry_row();
      return FallbackKind::kPrologue;
    }
    if (in.function_known && prologue_row(abi_, in.function_code, in.pc_offset, row)) return FallbackKind::kPrologue;
    if (!in.jit_code) return std::nullopt;
  }
  // A frame at a return address has built its frame and saved LR in its
  // caller's: the back chain. A null back chain is the outermost frame.
  auto sp = in.registers->get(kR1);
  if (!sp || (*sp & (abi_.word - 1))) return std::nullopt;
  *row = *sp == 0 ? chain_end_row() : back_chain_row(abi_);
  if (*sp && in.function_known && !in.activation) add_prologue_saves(abi_, in.function_code, *row);
  return FallbackKind::kFramePointer;
}

std::span<const int16_t> PowerMachine::perf_register_numbers() const {
  static constexpr auto kNumbers = [] {
    std::array<int16_t, 37> n{};
    for (int16_t i = 0; i < 32; ++i) n[i] = i;
    n[32] = kNip;
    n[33] = n[34] = -1;
    n[35] = kCtr;
    n[36] = kLr;
    return n;
  }();
  return kNumbers;
}

}  // namespace framewalk::arch::power

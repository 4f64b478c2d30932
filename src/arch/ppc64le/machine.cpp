#include "arch/ppc64le/machine.hpp"

#include <array>

#include "arch/ppc64le/frames.hpp"

namespace framewalk::arch::ppc64le {

namespace {

constexpr uint32_t kBlr = 0x4e800020;

uint32_t insn_at(Bytes code) {
  ByteReader r(code.first(4), Endian::kLittle);
  return *r.u32();
}

class Ppc64leMachine final : public Machine {
 public:
  constexpr Ppc64leMachine() : Machine(kArchInfo) {}

  uint64_t clean_return_address(uint64_t address, uint64_t) const override { return address; }

  // Instructions are 4 bytes: a return address's call is the word before it.
  uint64_t lookup_pc(uint64_t pc, bool activation) const override { return activation ? pc : pc - 4; }

  bool follows_call(Memory& memory, uint64_t return_address) const override {
    uint8_t insn[4];
    if (return_address < 4 || (return_address & 3) || memory.read(return_address - 4, insn, 4) != 4) return false;
    return is_call(insn_at(Bytes(insn, 4)));
  }

  bool signal_frame_row(Memory& memory, uint64_t pc, UnwindRow* row) const override {
    uint8_t code[12];
    if (pc & 3) return false;
    if (!is_trampoline(Bytes(code, memory.read(pc, code, sizeof code)))) return false;
    if (row) *row = ppc64le::signal_frame_row();
    return true;
  }

  std::optional<FallbackKind> fallback_row(const FallbackInput& in, UnwindRow* row) const override {
    if (in.activation) {
      // At a `blr` the frame is down and the return address back in LR.
      if (in.code_at_pc.size() >= 4 && insn_at(in.code_at_pc) == kBlr) {
        *row = entry_row();
        return FallbackKind::kPrologue;
      }
      if (in.function_known && prologue_row(in.function_code, in.pc_offset, row)) return FallbackKind::kPrologue;
      if (!in.jit_code) return std::nullopt;
    }
    // A frame at a return address has built its frame and saved LR in its
    // caller's: the back chain. A null back chain is the outermost frame.
    auto sp = in.registers->get(kR1);
    if (!sp || (*sp & 7)) return std::nullopt;
    if (*sp == 0) {
      *row = chain_end_row();
      return FallbackKind::kFramePointer;
    }
    *row = back_chain_row();
    return FallbackKind::kFramePointer;
  }

  size_t gregset_size() const override { return kGregsSize; }
  RegisterFile registers_from_gregset(Bytes gregset) const override { return from_gregs_bytes(gregset); }
  void add_fpregset(Bytes fpregset, RegisterFile* registers) const override {
    add_fpregs_bytes(fpregset, *registers);
  }
  RegisterFile registers_from_ucontext(Bytes ucontext) const override { return from_ucontext_bytes(ucontext); }

  // The condition register's fields are saved as the 4-byte CR (stw).
  uint8_t register_size(uint16_t reg) const override { return reg >= kCr0 && reg <= kCr7 ? 4 : 8; }

  // asm/perf_regs.h: r0-r31, nip, msr, orig_r3, ctr, link, xer, ccr, softe,
  // trap, dar, dsisr, sier, mmcra: pt_regs' order.
  std::span<const int16_t> perf_register_numbers() const override {
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
  uint64_t perf_sample_register_mask() const override { return (uint64_t{1} << 37) - 1; }
};

constinit const Ppc64leMachine kMachine;

}  // namespace

const Machine& machine() { return kMachine; }

}  // namespace framewalk::arch::ppc64le

#include "arch/aarch64/machine.hpp"

#include <array>

#include "arch/aarch64/frames.hpp"

namespace framewalk::arch::aarch64 {

namespace {

// Linux's user address space is 48 bits unless the program asked for 52
// (and a core or ptrace then says so with NT_ARM_PAC_MASK): a pointer
// authentication code lives in the bits above (the kernel's insn_mask,
// GENMASK(63, vabits)), with the top byte.
constexpr uint64_t kDefaultPacMask = ~((uint64_t{1} << 48) - 1);

uint32_t insn_at(Bytes code, size_t offset) {
  return uint32_t{code[offset]} | uint32_t{code[offset + 1]} << 8 | uint32_t{code[offset + 2]} << 16 |
         uint32_t{code[offset + 3]} << 24;
}

class Aarch64Machine final : public Machine {
 public:
  constexpr Aarch64Machine() : Machine(kArchInfo) {}

  uint64_t clean_return_address(uint64_t address, uint64_t pointer_auth_mask) const override {
    return address & ~pointer_auth_mask;
  }
  uint64_t default_pointer_auth_mask() const override { return kDefaultPacMask; }
  uint32_t pointer_auth_regset() const override { return 0x406; }  // NT_ARM_PAC_MASK

  // A return address follows its 4-byte call: the call itself is the lookup address.
  uint64_t lookup_pc(uint64_t pc, bool activation) const override { return activation ? pc : pc - 4; }

  bool follows_call(Memory& memory, uint64_t return_address) const override {
    uint8_t insn[4];
    if (return_address < 4 || (return_address & 3) || memory.read(return_address - 4, insn, 4) != 4) return false;
    return is_call(insn_at(Bytes(insn, 4), 0));
  }

  bool signal_frame_row(Memory& memory, uint64_t pc, UnwindRow* row) const override {
    uint8_t code[8];
    if ((pc & 3) || memory.read(pc, code, sizeof code) != sizeof code) return false;
    if (insn_at(Bytes(code, 8), 0) != kMovX8Sigreturn || insn_at(Bytes(code, 8), 4) != kSvc0) return false;
    if (row) *row = aarch64::signal_frame_row();
    return true;
  }

  std::optional<FallbackKind> fallback_row(const FallbackInput& in, UnwindRow* row) const override {
    if (in.function_known) {
      // An activation at its `ret` (or the hint before it) has taken its frame down.
      if (in.activation && in.code_at_pc.size() >= 4) {
        uint32_t at = insn_at(in.code_at_pc, 0);
        if (at == 0xd50323bf || at == 0xd50323ff) at = in.code_at_pc.size() >= 8 ? insn_at(in.code_at_pc, 4) : 0;
        if (at == 0xd65f03c0) {  // ret (after autiasp/autibsp)
          *row = entry_row();
          return FallbackKind::kPrologue;
        }
      }
      if (prologue_row(in.function_code, in.activation ? in.pc_offset : kReturnAddressFrame, row))
        return row->cfa.reg == kX29 ? FallbackKind::kFramePointer : FallbackKind::kPrologue;
    }
    // A frame-record guess for a return-address frame whose x29 points into
    // the stack above sp: the record {x29, x30} is taken to sit at the top of
    // the frame (CFA = x29 + 16, as where gcc and clang keep it at -O0 or in
    // functions with variable-size locals; elsewhere the caller's sp is
    // lower than that, which its own unwind rows correct only if they are
    // frame-based).
    // Jit code keeps its frame record (V8, HotSpot with
    // -XX:+PreserveFramePointer): guessed at an activation too, but at a `ret`.
    if (in.jit_code && in.activation && in.code_at_pc.size() >= 4 && insn_at(in.code_at_pc, 0) == 0xd65f03c0) {
      *row = entry_row();
      return FallbackKind::kPrologue;
    }
    if (in.activation && !in.jit_code) return std::nullopt;
    // A caller without unwind information whose x29 is 0: the end of the
    // chain of frame records (a static program's _start has no CFI).
    if (auto fp = in.registers->get(kX29); fp && *fp == 0 && !in.jit_code) {
      *row = chain_end_row();
      return FallbackKind::kFramePointer;
    }
    if (!frame_pointer_in_stack(*in.registers, kX29, kSp) || (*in.registers->get(kX29) & 7)) return std::nullopt;
    *row = frame_record_row(16);
    return FallbackKind::kFramePointer;
  }

  size_t gregset_size() const override { return kUserRegsSize; }
  RegisterFile registers_from_gregset(Bytes gregset) const override {
    return from_user_regs_bytes(gregset, Endian::kLittle);
  }
  RegisterFile registers_from_ucontext(Bytes ucontext) const override {
    return from_ucontext_bytes(ucontext, Endian::kLittle);
  }

  // asm/perf_regs.h: X0..X30, SP, PC, the DWARF numbers themselves.
  std::span<const int16_t> perf_register_numbers() const override {
    static constexpr auto kNumbers = [] {
      std::array<int16_t, 33> n{};
      for (int16_t i = 0; i < 33; ++i) n[i] = i;
      return n;
    }();
    return kNumbers;
  }
  uint64_t perf_sample_register_mask() const override { return (uint64_t{1} << 33) - 1; }
};

constinit const Aarch64Machine kMachine;

}  // namespace

const Machine& machine() { return kMachine; }

}  // namespace framewalk::arch::aarch64

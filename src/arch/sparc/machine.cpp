#include "arch/sparc/machine.hpp"

#include "arch/sparc/frames.hpp"

namespace framewalk::arch::sparc {

namespace {

class Sparc64Machine final : public Machine {
 public:
  constexpr Sparc64Machine() : Machine(kSparc64ArchInfo) {}

  // %o7 holds the address of the call itself; the caller resumes after
  // the call and its delay slot.
  uint64_t clean_return_address(uint64_t address, uint64_t) const override { return address + 8; }

  // The call instruction: the frame's own line, and its row whichever
  // function the delay slot ends.
  uint64_t lookup_pc(uint64_t pc, bool activation) const override { return activation ? pc : pc - 8; }

  bool follows_call(Memory& memory, uint64_t return_address) const override {
    uint8_t call[4];
    if (return_address < 8 || (return_address & 3)) return false;
    if (memory.read(return_address - 8, call, 4) != 4) return false;
    return is_call(static_cast<uint32_t>(*ByteReader::unsigned_at(Bytes(call, 4), 0, 4, Endian::kBig)));
  }

  bool signal_frame_row(Memory& memory, uint64_t pc, UnwindRow* row) const override {
    uint8_t code[8];
    if (pc & 3) return false;
    if (!is_trampoline(Bytes(code, memory.read(pc, code, sizeof code)))) return false;
    if (row) *row = sparc::signal_frame_row();
    return true;
  }

  // Without CFI: an activation whose function has not run `save` yet (or
  // never does) keeps its return address in %o7; every other frame is a
  // window (a function that called another has saved), the chain ending
  // at a %fp of 0.
  std::optional<FallbackKind> fallback_row(const FallbackInput& in, UnwindRow* row) const override {
    if (in.activation && (!in.function_known || !saved_before(in.function_code, in.pc_offset))) {
      if (in.function_known || in.jit_code) {
        *row = leaf_row();
        return FallbackKind::kPrologue;
      }
      return std::nullopt;
    }
    if (auto fp = in.registers->get(kI6); fp && *fp == 0) {
      *row = chain_end_row();
      return FallbackKind::kFramePointer;
    }
    auto fp = in.registers->get(kI6);
    auto sp = in.registers->get(kO6);
    if (!fp || !sp || *fp < *sp || ((*fp + kStackBias64) & 7)) return std::nullopt;  // biased: 2047 below a frame
    *row = window_row();
    return FallbackKind::kFramePointer;
  }

  size_t gregset_size() const override { return kGregsSize; }
  RegisterFile registers_from_gregset(Bytes gregset) const override { return from_gregs_bytes(gregset); }
  RegisterFile registers_from_ucontext(Bytes ucontext) const override { return from_ucontext_bytes(ucontext); }

  // Linux has no perf register sampling for SPARC (no PERF_REGS).
  std::span<const int16_t> perf_register_numbers() const override { return {}; }
  uint64_t perf_sample_register_mask() const override { return 0; }
};

constinit const Sparc64Machine kMachine;

}  // namespace

const Machine& sparc64_machine() { return kMachine; }

}  // namespace framewalk::arch::sparc

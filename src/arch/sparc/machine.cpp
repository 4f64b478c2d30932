#include "arch/sparc/machine.hpp"

#include "arch/sparc/frames.hpp"

namespace framewalk::arch::sparc {

namespace {

// What sparc64 and 32-bit SPARC share: calls, the delay slot, and register
// windows (the stack bias aside).
class SparcMachine : public Machine {
 public:
  constexpr SparcMachine(const ArchInfo& info, int64_t stack_bias) : Machine(info), stack_bias_(stack_bias) {}

  // %o7 holds the address of the call itself; the caller resumes after
  // the call and its delay slot. (A 32-bit call of a function returning a
  // struct has an `unimp` word there and resumes 4 bytes later: its PC is
  // 4 short, its line and row those of the call all the same.)
  uint64_t clean_return_address(uint64_t ra, uint64_t) const override { return address(ra + 8); }

  // The call instruction: the frame's own line, and its row whichever
  // function the delay slot ends.
  uint64_t lookup_pc(uint64_t pc, bool activation) const override { return activation ? pc : pc - 8; }

  bool follows_call(Memory& memory, uint64_t return_address) const override {
    uint8_t call[4];
    if (return_address < 8 || (return_address & 3)) return false;
    if (memory.read(return_address - 8, call, 4) != 4) return false;
    return is_call(static_cast<uint32_t>(*ByteReader::unsigned_at(Bytes(call, 4), 0, 4, Endian::kBig)));
  }

  // Without CFI: an activation whose function has not run `save` yet (or
  // never does) keeps its return address in %o7; every other frame is a
  // window (a function that called another has saved), the chain ending
  // at a %fp of 0.
  std::optional<FallbackKind> fallback_row(const FallbackInput& in, UnwindRow* row) const override {
    if (in.activation && (!in.function_known || !saved_before(in.function_code, in.pc_offset))) {
      if (in.function_known || in.jit_code) {
        *row = leaf_row(stack_bias_);
        return FallbackKind::kPrologue;
      }
      return std::nullopt;
    }
    if (auto fp = in.registers->get(kI6); fp && *fp == 0) {
      *row = chain_end_row(stack_bias_);
      return FallbackKind::kFramePointer;
    }
    auto fp = in.registers->get(kI6);
    auto sp = in.registers->get(kO6);
    // The frame %fp points to (less the bias) is doubleword-aligned.
    if (!fp || !sp || *fp < *sp || ((*fp + stack_bias_) & 7)) return std::nullopt;
    *row = window_row(stack_bias_);
    return FallbackKind::kFramePointer;
  }

  // Linux has no perf register sampling for SPARC (no PERF_REGS).
  std::span<const int16_t> perf_register_numbers() const override { return {}; }
  uint64_t perf_sample_register_mask() const override { return 0; }

 private:
  int64_t stack_bias_;
};

class Sparc64Machine final : public SparcMachine {
 public:
  constexpr Sparc64Machine() : SparcMachine(kSparc64ArchInfo, kStackBias64) {}

  bool signal_frame_row(Memory& memory, uint64_t pc, UnwindRow* row) const override {
    uint8_t code[8];
    if (pc & 3) return false;
    if (!is_trampoline(Bytes(code, memory.read(pc, code, sizeof code)))) return false;
    if (row) *row = sparc::signal_frame_row(kRtSignal64);
    return true;
  }

  size_t gregset_size() const override { return kGregsSize; }
  RegisterFile registers_from_gregset(Bytes gregset) const override { return from_gregs_bytes(gregset); }
  RegisterFile registers_from_ucontext(Bytes ucontext) const override { return from_ucontext_bytes(ucontext); }
};

// 32-bit SPARC, EM_SPARC (V8) or EM_SPARC32PLUS (V8+: V9 instructions,
// 32-bit addresses): one ABI, 4-byte words, no stack bias.
class Sparc32Machine final : public SparcMachine {
 public:
  explicit constexpr Sparc32Machine(const ArchInfo& info) : SparcMachine(info, 0) {}

  bool signal_frame_row(Memory& memory, uint64_t pc, UnwindRow* row) const override {
    uint8_t code[8];
    if (pc & 3) return false;
    const SignalLayout* layout = signal32_layout(Bytes(code, memory.read(pc, code, sizeof code)));
    if (!layout) return false;
    if (row) *row = sparc::signal_frame_row(*layout);
    return true;
  }

  size_t gregset_size() const override { return kGregs32Size; }
  RegisterFile registers_from_gregset(Bytes gregset) const override { return from_gregs32_bytes(gregset); }
  RegisterFile registers_from_ucontext(Bytes ucontext) const override { return from_ucontext32_bytes(ucontext); }
};

constinit const Sparc64Machine kMachine;
constinit const Sparc32Machine kSparc32{kSparcArchInfo};
constinit const Sparc32Machine kSparc32plus{kSparc32plusArchInfo};

}  // namespace

const Machine& sparc64_machine() { return kMachine; }
const Machine& sparc32_machine() { return kSparc32; }
const Machine& sparc32plus_machine() { return kSparc32plus; }

}  // namespace framewalk::arch::sparc

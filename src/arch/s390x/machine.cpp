#include "arch/s390x/machine.hpp"

#include "arch/s390x/frames.hpp"

namespace framewalk::arch::s390x {

namespace {

// One class for both ABIs of the instruction set (frames.hpp's Abi).
class S390xMachine final : public Machine {
 public:
  constexpr S390xMachine(const ArchInfo& info, const Abi& abi) : Machine(info), abi_(abi) {}

  // 31-bit: without the addressing-mode bit (a return address in r14 or in
  // the register save area, a PSW address in a signal frame).
  uint64_t clean_return_address(uint64_t address, uint64_t) const override { return address & abi_.address_mask; }

  // A return address follows its call (2, 4 or 6 bytes): its last halfword
  // is inside the call.
  uint64_t lookup_pc(uint64_t pc, bool activation) const override { return activation ? pc : pc - 2; }

  bool follows_call(Memory& memory, uint64_t return_address) const override {
    uint8_t before[6];
    if (return_address < sizeof before || (return_address & 1)) return false;
    if (memory.read(return_address - sizeof before, before, sizeof before) == sizeof before)
      return ends_with_call(Bytes(before, sizeof before));
    return memory.read(return_address - 2, before, 2) == 2 && ends_with_call(Bytes(before, 2));
  }

  bool signal_frame_row(Memory& memory, uint64_t pc, UnwindRow* row) const override {
    uint8_t code[2];
    if (pc & 1) return false;
    const auto kind = trampoline_at(Bytes(code, memory.read(pc, code, sizeof code)));
    if (!kind) return false;
    if (row) *row = s390x::signal_frame_row(*kind, abi_);
    return true;
  }

  // No frame pointer by convention (and no back chain without -mbackchain):
  // the prologue, read from the function's start; at a `br %r14`, or in
  // code without symbols at an activation, the frame not built.
  std::optional<FallbackKind> fallback_row(const FallbackInput& in, UnwindRow* row) const override {
    if (in.activation && at_return(in.code_at_pc)) {
      *row = entry_row(abi_);
      return FallbackKind::kPrologue;
    }
    if (in.function_known) {
      if (!prologue_row(in.function_code, in.activation ? in.pc_offset : kReturnAddressFrame, row, abi_))
        return std::nullopt;
      return row->cfa.reg == kR11 ? FallbackKind::kFramePointer : FallbackKind::kPrologue;
    }
    if (!in.activation) return std::nullopt;
    *row = entry_row(abi_);  // a leaf: the return address still in r14
    return FallbackKind::kPrologue;
  }

  size_t gregset_size() const override { return abi_.user_regs_size; }
  RegisterFile registers_from_gregset(Bytes gregset) const override { return from_user_regs_bytes(gregset, abi_); }
  RegisterFile registers_from_ucontext(Bytes ucontext) const override { return from_ucontext_bytes(ucontext, abi_); }
  // elf_fpregset_t is the same for both ABIs.
  void add_fpregset(Bytes fpregset, RegisterFile* registers) const override {
    add_fpregs_bytes(fpregset, registers);
  }

  // The floating-point registers are of 8 bytes also where a word is 4.
  uint8_t register_size(uint16_t reg) const override {
    return reg >= kF0 && reg < kF0 + 16 ? 8 : static_cast<uint8_t>(abi_.word);
  }

  // asm/perf_regs.h: R0..R15, FP0..FP15, MASK, PC.
  std::span<const int16_t> perf_register_numbers() const override {
    static constexpr int16_t kNumbers[] = {0,  1,  2,  3,  4,  5,  6,  7,  8,  9,  10, 11,       12,         13,
                                           14, 15, 16, 20, 17, 21, 18, 22, 19, 23, 24, 28,       25,         29,
                                           26, 30, 27, 31, kPswMask, kPswAddress};
    return kNumbers;
  }
  uint64_t perf_sample_register_mask() const override { return (uint64_t{1} << 34) - 1; }

 private:
  const Abi& abi_;
};

constinit const S390xMachine kMachine(kArchInfo, kS390xAbi);
constinit const S390xMachine kS390Machine(kS390ArchInfo, kS390Abi);

}  // namespace

const Machine& machine() { return kMachine; }
const Machine& s390_machine() { return kS390Machine; }

}  // namespace framewalk::arch::s390x

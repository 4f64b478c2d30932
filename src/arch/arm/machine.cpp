#include "arch/arm/machine.hpp"

#include "arch/arm/frames.hpp"
#include "arch/arm/instruction.hpp"

namespace framewalk::arch::arm {

namespace {

// The kernel's kuser helpers ([vectors], 0xffff0000): code without unwind
// information or symbols, each helper a leaf.
constexpr uint64_t kVectorsPage = 0xffff0000;
constexpr uint64_t kVectorsPageEnd = 0xffff1000;

class ArmMachine final : public Machine {
 public:
  constexpr ArmMachine() : Machine(kArchInfo) {}

  // Bit 0 says Thumb; the code address is without it.
  uint64_t clean_return_address(uint64_t address, uint64_t) const override { return address & 0xfffffffeu; }

  // Inside the call: 2 bytes back is inside a Thumb BL (4 bytes) or BLX
  // <reg> (2), and inside an ARM BL (4), whatever the caller's state.
  uint64_t lookup_pc(uint64_t pc, bool activation) const override { return activation ? pc : pc - 2; }

  // The return address has lost its Thumb bit (clean_return_address), so
  // both instruction sets are tried; an ARM call needs a word-aligned
  // return address. A match can be a coincidence of bytes, as on x86-64.
  bool follows_call(Memory& memory, uint64_t return_address) const override {
    if (return_address < 4) return false;
    uint8_t before[4];
    if (memory.read(return_address - 4, before, 4) != 4) {
      // Only a 16-bit BLX <reg> fits.
      return memory.read(return_address - 2, before, 2) == 2 && is_thumb_call(0, halfword_at(Bytes(before, 2), 0));
    }
    const Bytes b(before, 4);
    if (is_thumb_call(halfword_at(b, 0), halfword_at(b, 2))) return true;
    return (return_address & 3) == 0 && is_arm_call(word_at(b, 0));
  }

  bool signal_frame_row(Memory& memory, uint64_t pc, UnwindRow* row) const override {
    uint8_t code[8];
    const Trampoline kind = trampoline_at(Bytes(code, memory.read(pc & ~uint64_t{1}, code, sizeof code)));
    if (kind == Trampoline::kNone) return false;
    if (row) *row = arm::signal_frame_row(kind);
    return true;
  }

  std::optional<FallbackKind> fallback_row(const FallbackInput& in, UnwindRow* row) const override {
    const RegisterFile& regs = *in.registers;
    if (in.activation) {
      if (auto pc = regs.get(kPc); pc && *pc >= kVectorsPage && *pc < kVectorsPageEnd) {
        *row = leaf_row();
        return FallbackKind::kPrologue;
      }
    }
    if (in.function_known) {
      // An activation's instruction set is the CPSR's T bit; a return
      // address's was its bit 0, gone by now: a return address off a word
      // is Thumb, else the function's first instructions tell (a push in
      // either set), else nothing of a prologue.
      std::optional<bool> thumb;
      if (in.activation) {
        if (auto cpsr = regs.get(kCpsr)) thumb = (*cpsr & kCpsrThumb) != 0;
      } else if (auto pc = regs.get(kPc); pc && (*pc & 2)) {
        thumb = true;  // ARM code is word-aligned
      }
      if (!thumb) thumb = starts_as_thumb(in.function_code);
      // An activation at its epilogue's return: the pop or the bx lr says the row.
      if (in.activation && thumb && epilogue_row(in.code_at_pc, *thumb, row)) return FallbackKind::kPrologue;
      if (thumb && prologue_row(in.function_code, in.activation ? in.pc_offset : kReturnAddressFrame, *thumb, row))
        return row->cfa.reg == kSp ? FallbackKind::kPrologue : FallbackKind::kFramePointer;
      // Neither set's prologue at an activation's function start: nothing ran
      // that moved the stack before the first instruction.
      if (!thumb && in.activation && in.pc_offset == 0) {
        *row = leaf_row();
        return FallbackKind::kPrologue;
      }
    }
    // The ARM-state frame record, only for a return-address frame whose fp
    // points into the stack above sp (Thumb's r7 does not point at a record:
    // it cannot be walked without the frame's size).
    if ((in.activation && !in.jit_code) || !frame_pointer_in_stack(regs, kR11, kSp)) return std::nullopt;
    *row = arm_frame_pointer_row();
    return FallbackKind::kFramePointer;
  }

  bool activation_row_outside_body(const FallbackInput& in, UnwindRow* row) const override {
    if (!in.activation || !in.function_known) return false;
    // The instruction set: the CPSR's T bit where the registers have it,
    // else the function's first instructions, read on past the PC.
    std::optional<bool> thumb;
    if (auto cpsr = in.registers->get(kCpsr)) thumb = (*cpsr & kCpsrThumb) != 0;
    if (!thumb) {
      uint8_t joined[2 * kFallbackCodeBytes];
      size_t n = 0;
      if (in.function_code.size() == in.pc_offset) {  // contiguous with the code at the PC
        for (uint8_t b : in.function_code) joined[n++] = b;
        for (uint8_t b : in.code_at_pc) if (n < sizeof joined) joined[n++] = b;
      }
      thumb = starts_as_thumb(Bytes(joined, n));
    }
    if (!thumb) return false;
    if (epilogue_row(in.code_at_pc, *thumb, row)) return true;
    bool reached_pc = false;
    UnwindRow prologue;
    if (!prologue_row(in.function_code, in.pc_offset, *thumb, &prologue, &reached_pc) || !reached_pc) return false;
    *row = prologue;
    return true;
  }

  size_t gregset_size() const override { return kGregsetSize; }
  RegisterFile registers_from_gregset(Bytes gregset) const override { return from_gregset_bytes(gregset); }
  RegisterFile registers_from_ucontext(Bytes ucontext) const override { return from_ucontext_bytes(ucontext); }

  // VFP d0-d31 (DWARF 256-287) are 8 bytes on the stack (vpush).
  uint8_t register_size(uint16_t reg) const override { return reg >= 256 && reg < 288 ? 8 : 4; }

  // asm/perf_regs.h: R0..R10, FP (r11), IP, SP, LR, PC: r0-r15 in order.
  std::span<const int16_t> perf_register_numbers() const override {
    static constexpr int16_t kNumbers[] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15};
    return kNumbers;
  }
  uint64_t perf_sample_register_mask() const override { return (uint64_t{1} << 16) - 1; }
};

constinit const ArmMachine kMachine;

}  // namespace

const Machine& machine() { return kMachine; }

}  // namespace framewalk::arch::arm

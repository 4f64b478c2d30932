// A register file indexed by DWARF register number, with a mask of the
// registers whose values are known. Architecture-neutral: each architecture
// says which numbers are its SP, PC and frame pointer.
#pragma once

#include <cstdint>
#include <optional>

namespace framewalk::arch {

class RegisterFile {
 public:
  static constexpr unsigned kMaxRegisters = 64;

  bool known(unsigned reg) const { return reg < kMaxRegisters && (known_ >> reg) & 1; }
  std::optional<uint64_t> get(unsigned reg) const {
    if (!known(reg)) return std::nullopt;
    return values_[reg];
  }
  // Registers beyond kMaxRegisters are ignored (no unwinder needs them).
  void set(unsigned reg, uint64_t value) {
    if (reg >= kMaxRegisters) return;
    values_[reg] = value;
    known_ |= uint64_t{1} << reg;
  }
  void forget(unsigned reg) {
    if (reg < kMaxRegisters) known_ &= ~(uint64_t{1} << reg);
  }
  uint64_t value_or(unsigned reg, uint64_t fallback) const { return known(reg) ? values_[reg] : fallback; }
  uint64_t known_mask() const { return known_; }
  void clear() { known_ = 0; }

 private:
  uint64_t values_[kMaxRegisters] = {};
  uint64_t known_ = 0;
};

}  // namespace framewalk::arch

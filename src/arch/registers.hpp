// A register file indexed by DWARF register number, with a mask of the
// registers whose values are known. Architecture-neutral: each architecture
// says which numbers are its SP, PC and frame pointer.
//
// Numbers below 64 (every machine's general registers) have a slot each;
// up to kMaxHighRegisters others (ARM's VFP d8-d15 are 264-271, ppc64's
// link register 65) are kept in a small list, so that a row that restores
// them is not silently dropped. Fixed size: a register file never allocates.
#pragma once

#include <cstdint>
#include <optional>

namespace framewalk::arch {

class RegisterFile {
 public:
  static constexpr unsigned kMaxRegisters = 64;
  static constexpr unsigned kMaxHighRegisters = 16;

  bool known(unsigned reg) const {
    if (reg < kMaxRegisters) return (known_ >> reg) & 1;
    return high_index(reg) < high_count_;
  }
  std::optional<uint64_t> get(unsigned reg) const {
    if (reg < kMaxRegisters) {
      if (!((known_ >> reg) & 1)) return std::nullopt;
      return values_[reg];
    }
    const unsigned i = high_index(reg);
    if (i >= high_count_) return std::nullopt;
    return high_values_[i];
  }
  // False only when a register of 64 or more finds the list full (it is
  // then not kept).
  bool set(unsigned reg, uint64_t value) {
    if (reg < kMaxRegisters) {
      values_[reg] = value;
      known_ |= uint64_t{1} << reg;
      return true;
    }
    unsigned i = high_index(reg);
    if (i == high_count_) {
      if (high_count_ == kMaxHighRegisters) return false;
      high_numbers_[high_count_++] = static_cast<uint16_t>(reg);
    }
    high_values_[i] = value;
    return true;
  }
  void forget(unsigned reg) {
    if (reg < kMaxRegisters) {
      known_ &= ~(uint64_t{1} << reg);
      return;
    }
    const unsigned i = high_index(reg);
    if (i >= high_count_) return;
    --high_count_;
    high_numbers_[i] = high_numbers_[high_count_];
    high_values_[i] = high_values_[high_count_];
  }
  uint64_t value_or(unsigned reg, uint64_t fallback) const {
    auto v = get(reg);
    return v ? *v : fallback;
  }
  // The registers below 64 that are known, one bit each.
  uint64_t known_mask() const { return known_; }
  // The registers of 64 or more that are known, in no particular order.
  unsigned high_count() const { return high_count_; }
  unsigned high_number(unsigned i) const { return high_numbers_[i]; }
  void clear() {
    known_ = 0;
    high_count_ = 0;
  }

 private:
  unsigned high_index(unsigned reg) const {
    unsigned i = 0;
    while (i < high_count_ && high_numbers_[i] != reg) ++i;
    return i;
  }

  uint64_t values_[kMaxRegisters] = {};
  uint64_t known_ = 0;
  uint64_t high_values_[kMaxHighRegisters] = {};
  uint16_t high_numbers_[kMaxHighRegisters] = {};
  uint8_t high_count_ = 0;
};

}  // namespace framewalk::arch

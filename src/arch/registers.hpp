// A register file indexed by DWARF register number, with a mask of the
// registers whose values are known. Architecture-neutral: each architecture
// says which numbers are its SP, PC and frame pointer.
//
// Numbers below 64 (every machine's general registers; ppc64's and
// s390x's floating-point ones) have a slot each. Up to kMaxHighRegisters
// others are kept in a list, enough for every register above 63 of the
// machines elfutils unwinds at once: ppc64's 64-113 (cr 64, lr 65, ctr 66,
// cr0-cr7 68-75, xer 76, the AltiVec registers 77-108, vrsave 109, up to
// 113: all 114 of its DWARF registers together), s390x's PSW 64-65,
// AArch64's v0-v31 (64-95), ARM's VFP d0-d31 (256-287). A register that
// finds no room is refused (set returns false), never silently dropped:
// the step loop then stops, naming it.
//
// Not 128 slots: a file is on the stack of every walk (the step loop's, and
// the in-process path's in a signal handler, whose stack use
// tests/local/fast_backtrace_test.cpp holds to a budget); 128 slots would
// add 520 bytes to each. This layout adds 568 bytes for 56 registers of
// any number.
//
// Fixed size: a register file never allocates. A copy copies the slots up
// to the highest known one and the list's entries in use.
#pragma once

#include <bit>
#include <cstdint>
#include <cstring>
#include <optional>

namespace framewalk::arch {

class RegisterFile {
 public:
  static constexpr unsigned kMaxRegisters = 64;  // numbers below have a slot each
  static constexpr unsigned kMaxHighRegisters = 56;

  // Nothing known. The slots are left as they are: only known ones are read.
  RegisterFile() {}
  RegisterFile(const RegisterFile& o) { copy_from(o); }
  RegisterFile& operator=(const RegisterFile& o) {
    if (this != &o) copy_from(o);
    return *this;
  }

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
      if (high_count_ == kMaxHighRegisters || reg > 0xffff) return false;
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
  void copy_from(const RegisterFile& o) {
    known_ = o.known_;
    std::memcpy(values_, o.values_, static_cast<size_t>(std::bit_width(o.known_)) * sizeof values_[0]);
    high_count_ = o.high_count_;
    std::memcpy(high_numbers_, o.high_numbers_, high_count_ * sizeof high_numbers_[0]);
    std::memcpy(high_values_, o.high_values_, high_count_ * sizeof high_values_[0]);
  }

  uint64_t known_ = 0;
  uint8_t high_count_ = 0;
  uint16_t high_numbers_[kMaxHighRegisters];
  uint64_t high_values_[kMaxHighRegisters];
  uint64_t values_[kMaxRegisters];
};

}  // namespace framewalk::arch

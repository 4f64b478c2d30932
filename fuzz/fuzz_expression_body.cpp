// fuzz_expression: the DWARF expression VM and its disassembler.
//
// Input: byte 0 = options (bits 0-1 address size 1/2/4/8, bit 2 big-endian,
// bit 3 push an initial value, bit 4 no inputs at all, bit 5 some registers
// unknown, bit 6 some memory unreadable, bit 7 a small step limit), bytes 1..8
// = the initial value (little-endian), the rest = the expression.
#include <string>

#include "arch/arch.hpp"
#include "dwarf/expression.hpp"
#include "fuzz_bodies.hpp"

namespace framewalk::fuzz {

namespace {

// Registers and memory that answer deterministically, or fail on a pattern.
class FakeInputs : public dwarf::ExpressionInputs {
 public:
  FakeInputs(bool unknown_registers, bool unreadable_memory)
      : unknown_registers_(unknown_registers), unreadable_memory_(unreadable_memory) {}

  Result<uint64_t> register_value(uint16_t reg) override {
    if (unknown_registers_ && reg % 5 == 3) return Error{ErrorCode::kExprNeedsRegister, reg};
    return 0x7ffc0000'0000ull + uint64_t{reg} * 8;
  }
  Result<uint64_t> read_memory(uint64_t address, unsigned size) override {
    FUZZ_CHECK(size >= 1 && size <= 8);
    ++reads;
    if (unreadable_memory_ && ((address >> 4) & 0xf) == 0xd) return Error{ErrorCode::kMemoryUnreadable, address};
    uint64_t v = (address ^ 0x9e3779b97f4a7c15ull) * 0xbf58476d1ce4e5b9ull;
    v ^= v >> 31;
    return size == 8 ? v : v & ((uint64_t{1} << (8 * size)) - 1);
  }
  int reads = 0;

 private:
  bool unknown_registers_;
  bool unreadable_memory_;
};

}  // namespace

int fuzz_expression(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  const uint8_t flags = data[0];
  dwarf::ExpressionOptions o;
  static constexpr uint8_t kSizes[4] = {1, 2, 4, 8};
  o.address_size = kSizes[flags & 3];
  o.endian = (flags & 4) ? Endian::kBig : Endian::kLittle;
  o.push_initial = (flags & 8) != 0;
  if (flags & 0x80) o.limits.max_steps = 64;
  size_t pos = 1;
  for (int i = 0; i < 8 && pos < size; ++i, ++pos) o.initial |= uint64_t{data[pos]} << (8 * i);
  const Bytes expr(data + pos, size - pos);
  const uint64_t mask = o.address_size == 8 ? ~uint64_t{0} : (uint64_t{1} << (8 * o.address_size)) - 1;

  FakeInputs inputs((flags & 0x20) != 0, (flags & 0x40) != 0);
  auto value = dwarf::evaluate_expression(expr, 0x100, o, (flags & 0x10) ? nullptr : &inputs);
  if (value) {
    // Every value on the stack is kept to the address size.
    FUZZ_CHECK((*value & ~mask) == 0);
  } else {
    (void)to_string(value.error().code);
    // Errors name an offset inside the expression (or just past it).
    FUZZ_CHECK(value.error().offset >= 0x100 && value.error().offset <= 0x100 + expr.size());
  }
  FUZZ_CHECK(inputs.reads <= o.limits.max_steps);
  // Evaluating again gives the same answer: the VM keeps no state.
  FakeInputs inputs2((flags & 0x20) != 0, (flags & 0x40) != 0);
  auto again = dwarf::evaluate_expression(expr, 0x100, o, (flags & 0x10) ? nullptr : &inputs2);
  FUZZ_CHECK(again.ok() == value.ok());
  if (value) FUZZ_CHECK(*again == *value);

  const std::string text = dwarf::disassemble_expression(expr, o, arch::arch_for(usual_machine_key(62)));
  const std::string text_noarch = dwarf::disassemble_expression(expr, o, nullptr);
  FUZZ_CHECK(expr.empty() || !text.empty());
  FUZZ_CHECK(text.size() <= 128 * expr.size() + 16);
  (void)text_noarch;
  return 0;
}

}  // namespace framewalk::fuzz

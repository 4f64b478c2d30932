// The DWARF expression VM for what call frame information uses. It does no
// I/O of its own: registers and memory come from the caller.
#pragma once

#include <cstdint>
#include <string>

#include "arch/arch.hpp"
#include "base/byte_reader.hpp"
#include "base/result.hpp"

namespace framewalk::dwarf {

// Where an expression gets register values and memory from.
class ExpressionInputs {
 public:
  virtual ~ExpressionInputs() = default;
  // Value of DWARF register `reg`, or kExprNeedsRegister.
  virtual Result<uint64_t> register_value(uint16_t reg) = 0;
  // `size` bytes (1..8) at `address`, zero-extended, or kMemoryUnreadable.
  virtual Result<uint64_t> read_memory(uint64_t address, unsigned size) = 0;
};

struct ExpressionLimits {
  static constexpr int kStackSize = 64;
  int max_steps = 10000;
};

struct ExpressionOptions {
  uint8_t address_size = 8;
  Endian endian = Endian::kLittle;
  bool push_initial = false;   // push `initial` first (the CFA, for DW_CFA_[val_]expression)
  uint64_t initial = 0;
  ExpressionLimits limits;
};

// Evaluates `expr` (whose first byte is at section offset `base_offset`) and
// returns the value on top of the stack.
Result<uint64_t> evaluate_expression(Bytes expr, uint64_t base_offset, const ExpressionOptions& options,
                                     ExpressionInputs* inputs);

// Disassembles an expression as "DW_OP_breg7 (rsp): 8; DW_OP_deref" in the
// style of readelf, naming registers after `arch` (may be null).
std::string disassemble_expression(Bytes expr, const ExpressionOptions& options,
                                   const arch::ArchInfo* arch);

const char* op_name(uint8_t op);

}  // namespace framewalk::dwarf

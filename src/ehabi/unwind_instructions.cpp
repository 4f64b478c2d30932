#include "ehabi/unwind_instructions.hpp"

namespace framewalk::ehabi {

namespace {

// Register-pair operand `sssscccc`: registers base+s .. base+s+c.
void set_range(Instruction& in, uint8_t operand, unsigned base) {
  in.first = static_cast<uint8_t>(base + (operand >> 4));
  in.last = static_cast<uint8_t>(in.first + (operand & 0x0f));
}

}  // namespace

Instruction decode_instruction(std::span<const uint8_t> bytes, size_t offset) {
  Instruction in;
  in.offset = static_cast<uint16_t>(offset);
  size_t pos = offset;
  if (pos >= bytes.size()) {
    in.op = Op::kTruncated;
    in.size = 0;
    return in;
  }
  const uint8_t op = bytes[pos++];
  // The second byte of a two-byte instruction; false (and kTruncated) when missing.
  auto operand = [&](uint8_t* value) {
    if (pos >= bytes.size()) {
      in.op = Op::kTruncated;
      return false;
    }
    *value = bytes[pos++];
    return true;
  };
  uint8_t op2 = 0;
  if ((op & 0xc0) == 0x00) {
    in.op = Op::kVspAdd;
    in.amount = ((op & 0x3fu) << 2) + 4;
  } else if ((op & 0xc0) == 0x40) {
    in.op = Op::kVspSubtract;
    in.amount = ((op & 0x3fu) << 2) + 4;
  } else if ((op & 0xf0) == 0x80) {
    if (operand(&op2)) {
      in.mask = static_cast<uint16_t>((((op & 0x0fu) << 8) | op2) << 4);
      in.op = in.mask == 0 ? Op::kRefuseToUnwind : Op::kPopCore;
    }
  } else if ((op & 0xf0) == 0x90) {
    in.op = (op == 0x9d || op == 0x9f) ? Op::kReservedRegisterMove : Op::kVspFromRegister;
    in.reg = op & 0x0f;
  } else if ((op & 0xf0) == 0xa0) {
    in.op = Op::kPopCore;
    in.mask = static_cast<uint16_t>(((1u << ((op & 0x07) + 1)) - 1) << 4);
    if (op & 0x08) in.mask |= 1u << 14;
  } else if (op == 0xb0) {
    in.op = Op::kFinish;
  } else if (op == 0xb1 || op == 0xc7) {
    if (operand(&op2)) {
      const bool spare = op2 == 0 || (op2 & 0xf0) != 0;
      in.op = spare ? Op::kSpare : (op == 0xb1 ? Op::kPopCore : Op::kPopWmmxControl);
      if (!spare) in.mask = op2 & 0x0f;
    }
  } else if (op == 0xb2) {
    uint64_t value = 0;
    unsigned n = 0;
    in.op = Op::kBadVspChange;
    while (n < kMaxVspUlebBytes) {
      if (!operand(&op2)) break;
      value |= uint64_t{op2 & 0x7fu} << (7 * n);
      ++n;
      if (!(op2 & 0x80)) {
        in.op = Op::kVspAdd;
        in.amount = 0x204 + (value << 2);
        break;
      }
    }
  } else if (op == 0xb3 || op == 0xc8 || op == 0xc9) {
    if (operand(&op2)) {
      in.op = op == 0xb3 ? Op::kPopVfpFstmx : Op::kPopVfpVpush;
      set_range(in, op2, op == 0xc8 ? 16 : 0);
    }
  } else if (op == 0xb4) {
    in.op = Op::kPopPacCode;
  } else if (op == 0xb5) {
    in.op = Op::kPacModifier;
  } else if ((op & 0xf8) == 0xb8 || (op & 0xf8) == 0xd0) {
    in.op = (op & 0xf8) == 0xb8 ? Op::kPopVfpFstmx : Op::kPopVfpVpush;
    in.first = 8;
    in.last = static_cast<uint8_t>(8 + (op & 0x07));
  } else if (op >= 0xc0 && op <= 0xc5) {
    in.op = Op::kPopWmmxData;
    in.first = 10;
    in.last = static_cast<uint8_t>(10 + (op & 0x07));
  } else if (op == 0xc6) {
    if (operand(&op2)) {
      in.op = Op::kPopWmmxData;
      set_range(in, op2, 0);
    }
  } else {
    in.op = Op::kUnsupported;
  }
  in.size = static_cast<uint8_t>(pos - offset);
  return in;
}

std::vector<Instruction> decode_instructions(std::span<const uint8_t> bytes) {
  std::vector<Instruction> out;
  size_t pos = 0;
  while (pos < bytes.size()) {
    const Instruction in = decode_instruction(bytes, pos);
    pos += in.size;
    out.push_back(in);
    if (in.op == Op::kTruncated) break;
  }
  return out;
}

Result<void> check_instruction(const Instruction& in, uint64_t offset) {
  switch (in.op) {
    case Op::kTruncated: return Error{ErrorCode::kTruncatedUnwindOpcode, offset};
    case Op::kReservedRegisterMove:
    case Op::kSpare:
    case Op::kBadVspChange:
    case Op::kUnsupported: return Error{ErrorCode::kSpareUnwindOpcode, offset};
    case Op::kPopVfpFstmx:
      if (in.last > 15) return Error{ErrorCode::kSpareUnwindOpcode, offset};
      return ok();
    case Op::kPopVfpVpush:
      if (in.last > 31) return Error{ErrorCode::kSpareUnwindOpcode, offset};
      return ok();
    case Op::kPopWmmxData:
      if (in.last > 15) return Error{ErrorCode::kSpareUnwindOpcode, offset};
      return ok();
    default: return ok();
  }
}

}  // namespace framewalk::ehabi

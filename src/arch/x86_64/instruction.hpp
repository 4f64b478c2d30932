// A small x86-64 instruction-length decoder for prologue analysis: the
// general-purpose forms compilers schedule into prologues (mov, lea, ALU
// operations, test/cmp, shifts, movzx/movsx, cmov/set, common SSE moves),
// with their legacy and REX prefixes, ModRM/SIB/displacement and
// immediates. It answers only what the analysis needs: how long the
// instruction is, which general registers it may write, whether it may
// transfer control. Anything else is not decoded (the caller must stop).
#pragma once

#include <cstdint>
#include <optional>

#include "base/byte_reader.hpp"

namespace framewalk::arch::x86_64 {

// Hardware register numbers (ModRM/REX encoding), not DWARF numbers.
inline constexpr unsigned kHwRsp = 4;
inline constexpr unsigned kHwRbp = 5;

struct Instruction {
  uint8_t length = 0;
  uint16_t writes = 0;  // bit n: may write general register n (hardware numbering)
  bool branch = false;  // jmp, jcc, call, ret, loop: control may leave the sequence

  bool writes_register(unsigned hw) const { return (writes >> hw) & 1; }
};

// The instruction at the start of `code`; nullopt when its form is not one
// of those described above, or it is cut off by the end of `code`.
std::optional<Instruction> decode_instruction(Bytes code);

// Whether `code`, the bytes just before a return address, ends with a call:
// `call rel32` (e8 + 4 bytes) or `call r/m64` (ff /2 with its ModRM, SIB and
// displacement: 2 to 7 bytes). Not a decode: bytes before the candidate
// opcode are not looked at, so a match can be a coincidence of bytes.
bool ends_with_call(Bytes code);

}  // namespace framewalk::arch::x86_64

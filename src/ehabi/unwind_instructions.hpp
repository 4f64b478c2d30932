// The EHABI unwind instruction bytecode (EHABI §10.3), decoded into one small
// instruction model: the readelf-identical dump prints it, and an executor
// turns it into rows. Decoding never fails: spare and reserved encodings
// become instructions of their own kind (readelf prints them), and an
// instruction whose bytes run out is the last one, of kind kTruncated.
// check_instruction says which of them an unwinder must refuse.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "base/result.hpp"

namespace framewalk::ehabi {

enum class Op : uint8_t {
  kVspAdd,               // 00xxxxxx, 10110010 uleb128: vsp += amount
  kVspSubtract,          // 01xxxxxx: vsp -= amount
  kRefuseToUnwind,       // 10000000 00000000
  kPopCore,              // 1000iiii iiiiiiii, 10100nnn, 10101nnn, 10110001 0000iiii: `mask` bit n = rn
  kVspFromRegister,      // 1001nnnn: vsp = r[reg]
  kReservedRegisterMove, // 10011101, 10011111
  kFinish,               // 10110000
  kSpare,                // 10110001 and 11000111 with a zero or high-nibble second byte
  kBadVspChange,         // 10110010 with a uleb128 longer than 8 bytes
  kPopVfpFstmx,          // 10110011 sssscccc, 10111nnn: D[first]..D[last], FSTMFDX layout (+4 bytes)
  kPopVfpVpush,          // 11001000/11001001 sssscccc, 11010nnn: D[first]..D[last], VPUSH layout
  kPopWmmxData,          // 11000nnn (n < 6), 11000110 sssscccc: wR[first]..wR[last]
  kPopWmmxControl,       // 11000111 0000iiii: `mask` bit n = wCGRn
  kPopPacCode,           // 10110100: pop the return-address authentication code
  kPacModifier,          // 10110101: vsp is the PAC modifier
  kUnsupported,          // 1011011n, 11001yyy (y > 1), 11xxxyyy (x > 2): spare single bytes
  kTruncated,            // the instruction's remaining bytes are missing
};

struct Instruction {
  Op op = Op::kFinish;
  uint16_t offset = 0;  // of the first encoding byte within the entry's bytes
  uint8_t size = 1;     // encoding bytes (for kTruncated: those present)
  uint8_t reg = 0;      // kVspFromRegister
  uint8_t first = 0;    // register ranges (D, wR), inclusive; not validated
  uint8_t last = 0;
  uint16_t mask = 0;    // kPopCore, kPopWmmxControl
  uint64_t amount = 0;  // kVspAdd / kVspSubtract: bytes
};

// The 10110010 operand is read as readelf reads it: at most 9 bytes.
inline constexpr unsigned kMaxVspUlebBytes = 9;

std::vector<Instruction> decode_instructions(std::span<const uint8_t> bytes);
// The one instruction that starts at `offset` (the executor's way: it never
// allocates). At or past the end: kTruncated of size 0.
Instruction decode_instruction(std::span<const uint8_t> bytes, size_t offset);

// Fails (kSpareUnwindOpcode, kTruncatedUnwindOpcode) for what an unwinder
// must refuse (EHABI remarks e, f): spare and reserved codes, and register
// ranges past D15 (FSTMFDX), D31 (VPUSH) or wR15. `offset` is reported.
Result<void> check_instruction(const Instruction& instruction, uint64_t offset);

}  // namespace framewalk::ehabi

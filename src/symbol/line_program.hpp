// The DWARF line-number program (.debug_line, versions 2 to 5): the unit
// header with its directory and file tables (v5 entry formats, DW_LNCT_*,
// strings in .debug_line_str / .debug_str), and the state machine run over
// its opcodes, row by row. Every read goes through ByteReader; errors carry
// the offset in .debug_line (or in the string section a bad offset names).
#pragma once

#include <array>
#include <cstdint>
#include <string_view>
#include <vector>

#include "base/byte_reader.hpp"
#include "base/function_ref.hpp"
#include "base/result.hpp"

namespace framewalk::symbol {

// DW_LNS_*, DW_LNE_*, DW_LNCT_* and the DW_FORM_* values the line reader knows.
namespace lns {
inline constexpr uint8_t kCopy = 1, kAdvancePc = 2, kAdvanceLine = 3, kSetFile = 4, kSetColumn = 5,
                         kNegateStmt = 6, kSetBasicBlock = 7, kConstAddPc = 8, kFixedAdvancePc = 9,
                         kSetPrologueEnd = 10, kSetEpilogueBegin = 11, kSetIsa = 12;
}  // namespace lns
namespace lne {
inline constexpr uint8_t kEndSequence = 1, kSetAddress = 2, kDefineFile = 3, kSetDiscriminator = 4;
}  // namespace lne
namespace lnct {
inline constexpr uint64_t kPath = 1, kDirectoryIndex = 2, kTimestamp = 3, kSize = 4, kMd5 = 5;
}  // namespace lnct
namespace form {
inline constexpr uint64_t kAddr = 0x01, kBlock2 = 0x03, kBlock4 = 0x04, kData2 = 0x05, kData4 = 0x06,
                          kData8 = 0x07, kString = 0x08, kBlock = 0x09, kBlock1 = 0x0a, kData1 = 0x0b,
                          kFlag = 0x0c, kSdata = 0x0d, kStrp = 0x0e, kUdata = 0x0f, kRefAddr = 0x10,
                          kRef1 = 0x11, kRef2 = 0x12, kRef4 = 0x13, kRef8 = 0x14, kRefUdata = 0x15,
                          kIndirect = 0x16, kSecOffset = 0x17, kExprloc = 0x18, kFlagPresent = 0x19,
                          kStrx = 0x1a, kAddrx = 0x1b, kRefSup4 = 0x1c, kStrpSup = 0x1d, kData16 = 0x1e,
                          kLineStrp = 0x1f, kRefSig8 = 0x20, kImplicitConst = 0x21, kLoclistx = 0x22,
                          kRnglistx = 0x23, kRefSup8 = 0x24, kStrx1 = 0x25, kStrx2 = 0x26, kStrx3 = 0x27,
                          kStrx4 = 0x28, kAddrx1 = 0x29, kAddrx2 = 0x2a, kAddrx3 = 0x2b, kAddrx4 = 0x2c,
                          kGnuAddrIndex = 0x1f01, kGnuStrIndex = 0x1f02, kGnuRefAlt = 0x1f20, kGnuStrpAlt = 0x1f21;
}  // namespace form

// The sections a line program reads (empty spans for those a file lacks).
struct LineSections {
  Bytes line;      // .debug_line
  Bytes line_str;  // .debug_line_str (DW_FORM_line_strp)
  Bytes str;       // .debug_str (DW_FORM_strp)
  Endian endian = Endian::kLittle;
  uint8_t address_size = 8;  // the file's; DWARF 2-4 line headers do not name one
};

// A NUL-terminated string at `offset` of `section`.
Result<std::string_view> string_at(Bytes section, uint64_t offset);

struct LineFileEntry {
  std::string_view name;
  uint64_t directory = 0;  // index into LineHeader::directories (v2-4: 1-based, 0 = the unit's directory)
  uint64_t mtime = 0;
  uint64_t size = 0;
  bool has_md5 = false;
  std::array<uint8_t, 16> md5{};
};

struct LineHeader {
  uint64_t offset = 0;          // of the unit in .debug_line
  uint64_t end = 0;             // one past the unit
  uint64_t program_offset = 0;  // of the first opcode
  bool dwarf64 = false;
  uint16_t version = 0;
  uint8_t address_size = 8;
  uint8_t segment_selector_size = 0;
  uint8_t minimum_instruction_length = 1;
  uint8_t maximum_operations_per_instruction = 1;
  bool default_is_stmt = true;
  int8_t line_base = 0;
  uint8_t line_range = 1;
  uint8_t opcode_base = 1;
  std::array<uint8_t, 256> standard_opcode_lengths{};  // by opcode; [0] unused
  std::vector<std::string_view> directories;           // v5: [0] is the unit's directory
  std::vector<LineFileEntry> files;                    // v5: [0] is the unit's primary file
  // v5 numbers files and directories from 0; v2-4 from 1.
  bool zero_based() const { return version >= 5; }
};

// The header of the unit at `offset` of `sections.line`.
Result<LineHeader> parse_line_header(const LineSections& sections, uint64_t offset);

struct LineRow {
  uint64_t address = 0;
  uint64_t file = 1;
  uint32_t line = 1;
  uint32_t column = 0;
  uint32_t discriminator = 0;
  uint8_t op_index = 0;
  bool is_stmt = true;
  bool end_sequence = false;
};

// Runs the unit's program, calling `row` for every row it appends
// (end_sequence rows included). DW_LNE_define_file adds to `header.files`.
// Unknown standard opcodes are skipped by their declared operand counts,
// unknown extended opcodes by their length. Every opcode consumes input, so a
// program ends; a malformed one stops with the offset of the failing opcode.
Result<void> run_line_program(const LineSections& sections, LineHeader& header,
                              FunctionRef<void(const LineRow&)> row);

}  // namespace framewalk::symbol

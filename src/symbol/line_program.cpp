#include "symbol/line_program.hpp"

#include <cstring>

namespace framewalk::symbol {

Result<std::string_view> string_at(Bytes section, uint64_t offset) {
  if (offset >= section.size()) return Error{ErrorCode::kBadStringOffset, offset};
  ByteReader r(section, Endian::kLittle);
  FW_CHECK(r.seek(static_cast<size_t>(offset)));
  return r.cstring();
}

namespace {

// An entry-format attribute's value: a string or a number (or MD5 bytes).
struct FormValue {
  std::string_view string;
  uint64_t number = 0;
  Bytes block;
  bool is_string = false;
};

Result<FormValue> read_form(const LineSections& s, const LineHeader& h, ByteReader& r, uint64_t form_code) {
  FormValue v;
  const uint64_t at = r.absolute_offset();
  switch (form_code) {
    case form::kString: {
      FW_TRY(v.string, r.cstring());
      v.is_string = true;
      return v;
    }
    case form::kLineStrp:
    case form::kStrp: {
      FW_TRY(uint64_t off, h.dwarf64 ? r.u64() : r.unsigned_of_size(4));
      auto str = string_at(form_code == form::kLineStrp ? s.line_str : s.str, off);
      if (!str) return Error{ErrorCode::kBadStringOffset, at};
      v.string = *str;
      v.is_string = true;
      return v;
    }
    case form::kUdata: { FW_TRY(v.number, r.uleb128()); return v; }
    case form::kData1: { FW_TRY(v.number, r.unsigned_of_size(1)); return v; }
    case form::kData2: { FW_TRY(v.number, r.unsigned_of_size(2)); return v; }
    case form::kData4: { FW_TRY(v.number, r.unsigned_of_size(4)); return v; }
    case form::kData8: { FW_TRY(v.number, r.u64()); return v; }
    case form::kData16: { FW_TRY(v.block, r.bytes(16)); return v; }
    case form::kBlock: {
      FW_TRY(uint64_t n, r.uleb128());
      FW_TRY(v.block, r.bytes(n));
      return v;
    }
    default: return Error{ErrorCode::kBadForm, at};
  }
}

struct EntryFormat {
  uint64_t content;
  uint64_t form;
};

// A v5 entry-format list followed by its entries; `entry` gets each one's values.
template <typename OnEntry>
Result<void> read_v5_entries(const LineSections& s, const LineHeader& h, ByteReader& r, OnEntry on_entry) {
  FW_TRY(uint8_t format_count, r.u8());
  std::vector<EntryFormat> formats;
  for (unsigned i = 0; i < format_count; ++i) {
    FW_TRY(uint64_t content, r.uleb128());
    FW_TRY(uint64_t f, r.uleb128());
    formats.push_back({content, f});
  }
  const uint64_t count_at = r.absolute_offset();
  FW_TRY(uint64_t count, r.uleb128());
  // Every accepted form takes at least one byte: a count beyond the bytes left is a lie.
  if (count > 0 && (formats.empty() || count > r.remaining())) return Error{ErrorCode::kBadLineHeader, count_at};
  for (uint64_t i = 0; i < count; ++i) {
    LineFileEntry e;
    for (const EntryFormat& f : formats) {
      FW_TRY(FormValue v, read_form(s, h, r, f.form));
      switch (f.content) {
        case lnct::kPath: e.name = v.string; break;
        case lnct::kDirectoryIndex: e.directory = v.number; break;
        case lnct::kTimestamp: e.mtime = v.number; break;
        case lnct::kSize: e.size = v.number; break;
        case lnct::kMd5:
          if (v.block.size() == 16) {
            e.has_md5 = true;
            std::memcpy(e.md5.data(), v.block.data(), 16);
          }
          break;
        default: break;  // vendor content types are read and ignored
      }
    }
    on_entry(e);
  }
  return ok();
}

}  // namespace

Result<LineHeader> parse_line_header(const LineSections& s, uint64_t offset) {
  if (offset >= s.line.size()) return Error{ErrorCode::kBadLength, offset};
  ByteReader r(s.line, s.endian);
  FW_CHECK(r.seek(static_cast<size_t>(offset)));
  LineHeader h;
  h.offset = offset;
  h.address_size = s.address_size;
  FW_TRY(InitialLength length, r.initial_length());
  if (length.length > r.remaining()) return Error{ErrorCode::kBadLength, offset};
  h.dwarf64 = length.is_dwarf64;
  h.end = r.absolute_offset() + length.length;
  FW_TRY(ByteReader unit, r.split(length.length));
  const uint64_t version_at = unit.absolute_offset();
  FW_TRY(h.version, unit.u16());
  if (h.version < 2 || h.version > 5) return Error{ErrorCode::kBadLineVersion, version_at};
  if (h.version >= 5) {
    const uint64_t at = unit.absolute_offset();
    FW_TRY(h.address_size, unit.u8());
    FW_TRY(h.segment_selector_size, unit.u8());
    if (h.address_size != 1 && h.address_size != 2 && h.address_size != 4 && h.address_size != 8)
      return Error{ErrorCode::kBadAddressSize, at};
  }
  const uint64_t header_length_at = unit.absolute_offset();
  FW_TRY(uint64_t header_length, h.dwarf64 ? unit.u64() : unit.unsigned_of_size(4));
  if (header_length > unit.remaining()) return Error{ErrorCode::kBadLineHeader, header_length_at};
  h.program_offset = unit.absolute_offset() + header_length;
  FW_TRY(ByteReader hr, unit.split(header_length));
  FW_TRY(h.minimum_instruction_length, hr.u8());
  if (h.version >= 4) {
    FW_TRY(h.maximum_operations_per_instruction, hr.u8());
  }
  FW_TRY(uint8_t default_is_stmt, hr.u8());
  h.default_is_stmt = default_is_stmt != 0;
  FW_TRY(uint8_t line_base, hr.u8());
  h.line_base = static_cast<int8_t>(line_base);
  const uint64_t range_at = hr.absolute_offset();
  FW_TRY(h.line_range, hr.u8());
  if (h.line_range == 0) return Error{ErrorCode::kBadLineHeader, range_at};
  FW_TRY(h.opcode_base, hr.u8());
  if (h.opcode_base == 0) return Error{ErrorCode::kBadLineHeader, range_at + 1};
  if (h.maximum_operations_per_instruction == 0) h.maximum_operations_per_instruction = 1;
  for (unsigned op = 1; op < h.opcode_base; ++op) {
    FW_TRY(h.standard_opcode_lengths[op], hr.u8());
  }

  if (h.version >= 5) {
    FW_CHECK(read_v5_entries(s, h, hr, [&](const LineFileEntry& e) { h.directories.push_back(e.name); }));
    FW_CHECK(read_v5_entries(s, h, hr, [&](const LineFileEntry& e) { h.files.push_back(e); }));
  } else {
    while (true) {
      FW_TRY(std::string_view dir, hr.cstring());
      if (dir.empty()) break;
      h.directories.push_back(dir);
    }
    while (true) {
      FW_TRY(std::string_view name, hr.cstring());
      if (name.empty()) break;
      LineFileEntry e;
      e.name = name;
      FW_TRY(e.directory, hr.uleb128());
      FW_TRY(e.mtime, hr.uleb128());
      FW_TRY(e.size, hr.uleb128());
      h.files.push_back(e);
    }
  }
  // Bytes left in the header (padding, vendor fields) are skipped: the program starts where header_length says.
  return h;
}

Result<void> run_line_program(const LineSections& s, LineHeader& h, FunctionRef<void(const LineRow&)> emit) {
  if (h.program_offset > h.end || h.end > s.line.size()) return Error{ErrorCode::kBadLength, h.offset};
  ByteReader r(s.line.subspan(static_cast<size_t>(h.program_offset), static_cast<size_t>(h.end - h.program_offset)),
               s.endian, h.program_offset);
  LineRow row;
  auto reset = [&] {
    row = LineRow{};
    row.file = 1;
    row.is_stmt = h.default_is_stmt;
  };
  reset();
  const unsigned max_ops = h.maximum_operations_per_instruction;
  // DWARF 4 §6.2.5.1: operation advance, with op_index for VLIW machines.
  auto advance = [&](uint64_t operation_advance) {
    if (max_ops == 1) {
      row.address += h.minimum_instruction_length * operation_advance;
    } else {
      const uint64_t total = row.op_index + operation_advance;
      row.address += h.minimum_instruction_length * (total / max_ops);
      row.op_index = static_cast<uint8_t>(total % max_ops);
    }
  };
  auto after_row = [&] {
    row.discriminator = 0;
  };
  while (!r.at_end()) {
    const uint64_t at = r.absolute_offset();
    FW_TRY(uint8_t op, r.u8());
    if (op >= h.opcode_base) {
      const unsigned adjusted = op - h.opcode_base;
      advance(adjusted / h.line_range);
      row.line += static_cast<uint32_t>(static_cast<int32_t>(h.line_base) + static_cast<int32_t>(adjusted % h.line_range));
      emit(row);
      after_row();
      continue;
    }
    if (op == 0) {
      FW_TRY(uint64_t len, r.uleb128());
      if (len == 0) return Error{ErrorCode::kTruncated, at};
      FW_TRY(ByteReader ext, r.split(len));
      FW_TRY(uint8_t sub, ext.u8());
      switch (sub) {
        case lne::kEndSequence:
          row.end_sequence = true;
          emit(row);
          reset();
          break;
        case lne::kSetAddress: {
          FW_TRY(uint64_t address, ext.unsigned_of_size(static_cast<unsigned>(ext.remaining())));
          row.address = address;
          row.op_index = 0;
          break;
        }
        case lne::kDefineFile: {
          LineFileEntry e;
          FW_TRY(e.name, ext.cstring());
          FW_TRY(e.directory, ext.uleb128());
          FW_TRY(e.mtime, ext.uleb128());
          FW_TRY(e.size, ext.uleb128());
          h.files.push_back(e);
          break;
        }
        case lne::kSetDiscriminator: {
          FW_TRY(uint64_t d, ext.uleb128());
          row.discriminator = static_cast<uint32_t>(d);
          break;
        }
        default: break;  // DW_LNE_lo_user..hi_user and unknown ones: skipped by their length
      }
      continue;
    }
    switch (op) {
      case lns::kCopy:
        emit(row);
        after_row();
        break;
      case lns::kAdvancePc: {
        FW_TRY(uint64_t n, r.uleb128());
        advance(n);
        break;
      }
      case lns::kAdvanceLine: {
        FW_TRY(int64_t n, r.sleb128());
        row.line += static_cast<uint32_t>(n);
        break;
      }
      case lns::kSetFile: { FW_TRY(row.file, r.uleb128()); break; }
      case lns::kSetColumn: {
        FW_TRY(uint64_t c, r.uleb128());
        row.column = static_cast<uint32_t>(c);
        break;
      }
      case lns::kNegateStmt: row.is_stmt = !row.is_stmt; break;
      case lns::kSetBasicBlock: break;
      case lns::kConstAddPc: advance((255u - h.opcode_base) / h.line_range); break;
      case lns::kFixedAdvancePc: {
        FW_TRY(uint16_t n, r.u16());
        row.address += n;
        row.op_index = 0;
        break;
      }
      case lns::kSetPrologueEnd: break;
      case lns::kSetEpilogueBegin: break;
      case lns::kSetIsa: { FW_TRY(uint64_t isa, r.uleb128()); (void)isa; break; }
      default:
        // An opcode this reader does not know: its operands are ULEB128s, as many as the header says.
        for (unsigned i = 0; i < h.standard_opcode_lengths[op]; ++i) {
          FW_TRY(uint64_t skipped, r.uleb128());
          (void)skipped;
        }
        break;
    }
  }
  return ok();
}

}  // namespace framewalk::symbol

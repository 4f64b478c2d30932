#include "symbol/unit_roots.hpp"

#include "symbol/debug_info.hpp"
#include "symbol/line_program.hpp"

namespace framewalk::symbol {

namespace {

inline constexpr uint64_t kAtName = 0x03, kAtStmtList = 0x10, kAtCompDir = 0x1b, kAtStrOffsetsBase = 0x72;

bool is_strx(uint64_t f) {
  return f == form::kStrx || f == form::kStrx1 || f == form::kStrx2 || f == form::kStrx3 || f == form::kStrx4;
}

struct UnitShape {
  bool dwarf64;
  uint8_t address_size;
  uint16_t version;
};

// Reads (or skips) one attribute value of `form`. Strings land in `*text`,
// constants and offsets in `*number`.
Result<void> read_value(const UnitRootSections& s, const UnitShape& u, ByteReader& r, uint64_t form_code,
                        int64_t implicit_const, std::string_view* text, uint64_t* number, int depth = 0) {
  const uint64_t at = r.absolute_offset();
  const unsigned offset_size = u.dwarf64 ? 8 : 4;
  auto fixed = [&](unsigned n) -> Result<void> {
    FW_TRY(*number, r.unsigned_of_size(n));
    return ok();
  };
  auto block = [&](uint64_t n) -> Result<void> { return r.skip(n); };
  switch (form_code) {
    case form::kAddr: return fixed(u.address_size);
    case form::kData1: case form::kRef1: case form::kFlag: case form::kStrx1: case form::kAddrx1: return fixed(1);
    case form::kData2: case form::kRef2: case form::kStrx2: case form::kAddrx2: return fixed(2);
    case form::kStrx3: case form::kAddrx3: { FW_TRY(*number, read_u24(r)); return ok(); }
    case form::kData4: case form::kRef4: case form::kStrx4: case form::kAddrx4: case form::kRefSup4: return fixed(4);
    case form::kData8: case form::kRef8: case form::kRefSig8: case form::kRefSup8: return fixed(8);
    case form::kData16: return r.skip(16);
    case form::kSdata: { FW_TRY(int64_t v, r.sleb128()); *number = static_cast<uint64_t>(v); return ok(); }
    case form::kUdata: case form::kRefUdata: case form::kStrx: case form::kAddrx: case form::kLoclistx:
    case form::kRnglistx: case form::kGnuAddrIndex: case form::kGnuStrIndex: { FW_TRY(*number, r.uleb128()); return ok(); }
    case form::kString: { FW_TRY(*text, r.cstring()); return ok(); }
    case form::kStrp: case form::kLineStrp: {
      FW_TRY(uint64_t off, r.unsigned_of_size(offset_size));
      auto str = string_at(form_code == form::kStrp ? s.str : s.line_str, off);
      if (!str) return Error{ErrorCode::kBadStringOffset, at};
      *text = *str;
      return ok();
    }
    case form::kRefAddr:  // DWARF 2: an address-sized reference
      return fixed(u.version <= 2 ? u.address_size : offset_size);
    case form::kSecOffset: case form::kGnuRefAlt: return fixed(offset_size);
    case form::kStrpSup: case form::kGnuStrpAlt: {  // resolved when the supplementary file is given
      FW_TRY(uint64_t off, r.unsigned_of_size(offset_size));
      *number = off;
      if (auto str = string_at(s.alt_str, off); str && !s.alt_str.empty()) *text = *str;
      return ok();
    }
    case form::kBlock1: { FW_TRY(uint8_t n, r.u8()); return block(n); }
    case form::kBlock2: { FW_TRY(uint16_t n, r.u16()); return block(n); }
    case form::kBlock4: { FW_TRY(uint32_t n, r.u32()); return block(n); }
    case form::kBlock: case form::kExprloc: { FW_TRY(uint64_t n, r.uleb128()); return block(n); }
    case form::kFlagPresent: *number = 1; return ok();
    case form::kImplicitConst: *number = static_cast<uint64_t>(implicit_const); return ok();
    case form::kIndirect: {
      if (depth > 0) return Error{ErrorCode::kBadForm, at};
      FW_TRY(uint64_t actual, r.uleb128());
      return read_value(s, u, r, actual, implicit_const, text, number, depth + 1);
    }
    default: return Error{ErrorCode::kBadForm, at};
  }
}

Result<UnitRoot> read_root(const UnitRootSections& s, ByteReader& unit, uint64_t unit_offset, bool dwarf64) {
  UnitRoot root;
  root.offset = unit_offset;
  const uint64_t version_at = unit.absolute_offset();
  FW_TRY(root.version, unit.u16());
  if (root.version < 2 || root.version > 5) return Error{ErrorCode::kBadUnitVersion, version_at};
  uint8_t address_size = 0;
  uint64_t abbrev_offset = 0;
  if (root.version >= 5) {
    FW_TRY(uint8_t unit_type, unit.u8());
    FW_TRY(address_size, unit.u8());
    FW_TRY(abbrev_offset, unit.unsigned_of_size(dwarf64 ? 8 : 4));
    // DW_UT_skeleton / split_compile carry a dwo id, type units a signature and a type offset.
    if (unit_type == 4 || unit_type == 5) FW_CHECK(unit.skip(8));
    if (unit_type == 2 || unit_type == 6) FW_CHECK(unit.skip(8 + (dwarf64 ? 8 : 4)));
  } else {
    FW_TRY(abbrev_offset, unit.unsigned_of_size(dwarf64 ? 8 : 4));
    FW_TRY(address_size, unit.u8());
  }
  const UnitShape shape{dwarf64, address_size, root.version};
  const uint64_t code_at = unit.absolute_offset();
  FW_TRY(uint64_t code, unit.uleb128());
  if (code == 0) return root;
  // The abbreviation: a linear scan of the unit's table (the root's is usually the first).
  if (abbrev_offset >= s.abbrev.size()) return Error{ErrorCode::kBadAbbreviation, code_at};
  ByteReader a(s.abbrev, s.endian);
  FW_CHECK(a.seek(static_cast<size_t>(abbrev_offset)));
  while (true) {
    const uint64_t entry_at = a.absolute_offset();
    auto c = a.uleb128();
    if (!c || *c == 0) return Error{ErrorCode::kBadAbbreviation, c ? entry_at : c.error().offset};
    FW_TRY(uint64_t tag, a.uleb128());
    (void)tag;
    FW_TRY(uint8_t children, a.u8());
    (void)children;
    const bool wanted = *c == code;
    std::optional<uint64_t> comp_dir_index, str_offsets_base;
    while (true) {
      FW_TRY(uint64_t name, a.uleb128());
      FW_TRY(uint64_t f, a.uleb128());
      int64_t implicit_const = 0;
      if (f == form::kImplicitConst) {
        FW_TRY(implicit_const, a.sleb128());
      }
      if (name == 0 && f == 0) break;
      if (!wanted) continue;
      std::string_view text;
      uint64_t number = 0;
      FW_CHECK(read_value(s, shape, unit, f, implicit_const, &text, &number));
      if (name == kAtStmtList && f != form::kString) root.stmt_list = number;
      if (name == kAtCompDir) {
        if (is_strx(f)) comp_dir_index = number;
        else root.comp_dir = text;
      }
      if (name == kAtStrOffsetsBase) str_offsets_base = number;
    }
    if (wanted) {
      // DW_FORM_strx*: the index into .debug_str_offsets after the unit's base
      // (which may follow DW_AT_comp_dir in the DIE; default: after the first table's header).
      if (comp_dir_index) {
        DwarfSections sections;
        sections.str = s.str;
        sections.str_offsets = s.str_offsets;
        sections.endian = s.endian;
        UnitContext context;
        context.sections = &sections;
        context.header.dwarf64 = dwarf64;
        context.has_str_offsets_base = str_offsets_base.has_value();
        context.str_offsets_base = str_offsets_base.value_or(0);
        FormValue index;
        index.kind = FormClass::kStrIndex;
        index.number = *comp_dir_index;
        if (auto dir = value_string(context, index)) root.comp_dir = *dir;
      }
      return root;
    }
  }
}

}  // namespace

std::vector<UnitRoot> read_unit_roots(const UnitRootSections& s, std::vector<Error>* problems) {
  std::vector<UnitRoot> roots;
  ByteReader r(s.info, s.endian);
  while (!r.at_end()) {
    const uint64_t unit_offset = r.absolute_offset();
    auto length = r.initial_length();
    if (!length) {
      if (problems) problems->push_back(length.error());
      break;
    }
    auto unit = r.split(length->length);
    if (!unit) {
      if (problems) problems->push_back(Error{ErrorCode::kBadLength, unit_offset});
      break;
    }
    auto root = read_root(s, *unit, unit_offset, length->is_dwarf64);
    if (root) roots.push_back(*root);
    else if (problems) problems->push_back(root.error());
  }
  return roots;
}

}  // namespace framewalk::symbol

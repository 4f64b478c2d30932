#include "symbol/debug_info.hpp"

#include <algorithm>

#include "symbol/line_program.hpp"

namespace framewalk::symbol {

bool language_mangles(uint64_t language) {
  switch (language) {
    // C89, C, Cobol74, Cobol85, Fortran77, Fortran90, Pascal83, Modula2, C99,
    // Fortran95, UPC, C11, Fortran03, Fortran08, MIPS assembler.
    case 0x1: case 0x2: case 0x5: case 0x6: case 0x7: case 0x8: case 0x9: case 0xa: case 0xc: case 0xe:
    case 0x12: case 0x1d: case 0x22: case 0x23: case 0x8001:
      return false;
    default:
      return true;
  }
}

Result<UnitHeader> parse_unit_header(Bytes info, Endian endian, uint64_t offset) {
  ByteReader r(info, endian);
  FW_CHECK(r.seek(static_cast<size_t>(offset)));
  UnitHeader h;
  h.offset = offset;
  FW_TRY(InitialLength length, r.initial_length());
  if (length.length > r.remaining()) return Error{ErrorCode::kBadLength, offset};
  h.end = r.absolute_offset() + length.length;
  h.dwarf64 = length.is_dwarf64;
  FW_TRY(ByteReader unit, r.split(length.length));
  const uint64_t version_at = unit.absolute_offset();
  FW_TRY(h.version, unit.u16());
  if (h.version < 2 || h.version > 5) return Error{ErrorCode::kBadUnitVersion, version_at};
  if (h.version >= 5) {
    const uint64_t type_at = unit.absolute_offset();
    FW_TRY(h.unit_type, unit.u8());
    if (h.unit_type < ut::kCompile || h.unit_type > ut::kSplitType) return Error{ErrorCode::kBadUnitType, type_at};
    FW_TRY(h.address_size, unit.u8());
    FW_TRY(h.abbrev_offset, unit.unsigned_of_size(h.offset_size()));
    if (h.unit_type == ut::kSkeleton || h.unit_type == ut::kSplitCompile) {
      FW_TRY(h.signature, unit.u64());
    } else if (h.unit_type == ut::kType || h.unit_type == ut::kSplitType) {
      FW_TRY(h.signature, unit.u64());
      FW_TRY(h.type_offset, unit.unsigned_of_size(h.offset_size()));
    }
  } else {
    FW_TRY(h.abbrev_offset, unit.unsigned_of_size(h.offset_size()));
    FW_TRY(h.address_size, unit.u8());
  }
  if (h.address_size != 1 && h.address_size != 2 && h.address_size != 4 && h.address_size != 8)
    return Error{ErrorCode::kBadAddressSize, version_at};
  h.first_die = unit.absolute_offset();
  return h;
}

std::vector<UnitHeader> read_unit_headers(Bytes info, Endian endian, std::vector<DwarfProblem>* problems) {
  std::vector<UnitHeader> units;
  uint64_t offset = 0;
  while (offset < info.size()) {
    auto h = parse_unit_header(info, endian, offset);
    if (h) {
      units.push_back(*h);
      offset = h->end;
      continue;
    }
    if (problems) problems->push_back({h.error(), ".debug_info"});
    // A header broken inside a sound length: the next unit follows it.
    ByteReader r(info, endian);
    if (!r.seek(static_cast<size_t>(offset)).ok()) break;
    auto length = r.initial_length();
    if (!length || length->length > r.remaining()) break;
    offset = r.absolute_offset() + length->length;
  }
  return units;
}

Result<AbbrevTable> AbbrevTable::parse(Bytes abbrev, Endian endian, uint64_t offset) {
  AbbrevTable t;
  if (offset >= abbrev.size()) return Error{ErrorCode::kBadAbbreviation, offset};
  ByteReader r(abbrev, endian);
  FW_CHECK(r.seek(static_cast<size_t>(offset)));
  auto saturated = [](uint64_t v, uint64_t max) { return std::min<uint64_t>(v, max); };
  while (true) {
    const uint64_t at = r.absolute_offset();
    FW_TRY(uint64_t code, r.uleb128());
    if (code == 0) break;
    Abbrev a;
    FW_TRY(uint64_t tag, r.uleb128());
    a.tag = static_cast<uint32_t>(saturated(tag, UINT32_MAX));
    FW_TRY(uint8_t children, r.u8());
    a.has_children = children != 0;
    a.first = static_cast<uint32_t>(t.attributes_.size());
    while (true) {
      AbbrevAttribute attr;
      FW_TRY(uint64_t name, r.uleb128());
      FW_TRY(uint64_t form, r.uleb128());
      attr.name = static_cast<uint16_t>(saturated(name, UINT16_MAX));
      attr.form = static_cast<uint16_t>(saturated(form, UINT16_MAX));
      if (form == form::kImplicitConst) {
        FW_TRY(int64_t value, r.sleb128());
        attr.implicit_const = static_cast<uint32_t>(t.implicit_consts_.size());
        t.implicit_consts_.push_back(value);
      }
      if (name == 0 && form == 0) break;
      t.attributes_.push_back(attr);
    }
    if (t.attributes_.size() - a.first > UINT16_MAX) return Error{ErrorCode::kBadAbbreviation, at};
    a.count = static_cast<uint16_t>(t.attributes_.size() - a.first);
    if (!t.codes_.empty() && t.codes_.back() >= code) {
      // Codes out of order: kept sorted; a code declared twice is a broken table.
      auto pos = std::lower_bound(t.codes_.begin(), t.codes_.end(), code);
      if (pos != t.codes_.end() && *pos == code) return Error{ErrorCode::kBadAbbreviation, at};
      t.abbrevs_.insert(t.abbrevs_.begin() + (pos - t.codes_.begin()), a);
      t.codes_.insert(pos, code);
    } else {
      t.abbrevs_.push_back(a);
      t.codes_.push_back(code);
    }
  }
  bool dense = true;
  for (size_t i = 0; i < t.codes_.size(); ++i)
    if (t.codes_[i] != i + 1) dense = false;
  if (dense) t.codes_.clear();
  // Tables stay for the file's life.
  t.abbrevs_.shrink_to_fit();
  t.codes_.shrink_to_fit();
  t.attributes_.shrink_to_fit();
  t.implicit_consts_.shrink_to_fit();
  return t;
}

const Abbrev* AbbrevTable::find(uint64_t code) const {
  if (codes_.empty()) return code >= 1 && code <= abbrevs_.size() ? &abbrevs_[static_cast<size_t>(code - 1)] : nullptr;
  auto pos = std::lower_bound(codes_.begin(), codes_.end(), code);
  return pos != codes_.end() && *pos == code ? &abbrevs_[static_cast<size_t>(pos - codes_.begin())] : nullptr;
}

Result<uint64_t> read_u24(ByteReader& r) {
  FW_TRY(Bytes b, r.bytes(3));
  return r.endian() == Endian::kLittle ? (uint64_t{b[0]} | uint64_t{b[1]} << 8 | uint64_t{b[2]} << 16)
                                       : (uint64_t{b[2]} | uint64_t{b[1]} << 8 | uint64_t{b[0]} << 16);
}

namespace {

Result<FormValue> read_form_once(ByteReader& r, const UnitHeader& u, uint64_t f, int64_t implicit_const, int depth) {
  const uint64_t at = r.absolute_offset();
  FormValue v;
  auto number = [&](FormClass kind, unsigned size) -> Result<FormValue> {
    v.kind = kind;
    FW_TRY(v.number, r.unsigned_of_size(size));
    return v;
  };
  auto leb = [&](FormClass kind) -> Result<FormValue> {
    v.kind = kind;
    FW_TRY(v.number, r.uleb128());
    return v;
  };
  auto block = [&](uint64_t n) -> Result<FormValue> {
    v.kind = FormClass::kBlock;
    FW_TRY(v.block, r.bytes(n));
    return v;
  };
  auto uint24 = [&](FormClass kind) -> Result<FormValue> {
    v.kind = kind;
    FW_TRY(v.number, read_u24(r));
    return v;
  };
  const unsigned offset_size = u.offset_size();
  // DWARF 2-3 data4/data8 may be section offsets (stmt_list, ranges); the
  // caller sees a constant and treats it as one where an offset is meant.
  switch (f) {
    case form::kAddr: return number(FormClass::kAddress, u.address_size);
    case form::kData1: return number(FormClass::kConstant, 1);
    case form::kData2: return number(FormClass::kConstant, 2);
    case form::kData4: return number(FormClass::kConstant, 4);
    case form::kData8: return number(FormClass::kConstant, 8);
    case form::kData16: return block(16);
    case form::kSdata: {
      v.kind = FormClass::kSigned;
      FW_TRY(int64_t s, r.sleb128());
      v.number = static_cast<uint64_t>(s);
      return v;
    }
    case form::kUdata: return leb(FormClass::kConstant);
    case form::kImplicitConst:
      v.kind = FormClass::kConstant;
      v.number = static_cast<uint64_t>(implicit_const);
      return v;
    case form::kFlag: return number(FormClass::kFlag, 1);
    case form::kFlagPresent: v.kind = FormClass::kFlag; v.number = 1; return v;
    case form::kString: {
      v.kind = FormClass::kString;
      FW_TRY(v.text, r.cstring());
      return v;
    }
    case form::kStrp: return number(FormClass::kStrOffset, offset_size);
    case form::kLineStrp: return number(FormClass::kLineStrOffset, offset_size);
    case form::kStrpSup: case form::kGnuStrpAlt: return number(FormClass::kAltStrOffset, offset_size);
    case form::kStrx: case form::kGnuStrIndex: return leb(FormClass::kStrIndex);
    case form::kStrx1: return number(FormClass::kStrIndex, 1);
    case form::kStrx2: return number(FormClass::kStrIndex, 2);
    case form::kStrx3: return uint24(FormClass::kStrIndex);
    case form::kStrx4: return number(FormClass::kStrIndex, 4);
    case form::kAddrx: case form::kGnuAddrIndex: return leb(FormClass::kAddrIndex);
    case form::kAddrx1: return number(FormClass::kAddrIndex, 1);
    case form::kAddrx2: return number(FormClass::kAddrIndex, 2);
    case form::kAddrx3: return uint24(FormClass::kAddrIndex);
    case form::kAddrx4: return number(FormClass::kAddrIndex, 4);
    case form::kRef1: return number(FormClass::kUnitRef, 1);
    case form::kRef2: return number(FormClass::kUnitRef, 2);
    case form::kRef4: return number(FormClass::kUnitRef, 4);
    case form::kRef8: return number(FormClass::kUnitRef, 8);
    case form::kRefUdata: return leb(FormClass::kUnitRef);
    case form::kRefAddr:  // DWARF 2: address-sized
      return number(FormClass::kSectionRef, u.version <= 2 ? u.address_size : offset_size);
    case form::kRefSig8: return number(FormClass::kSignatureRef, 8);
    case form::kRefSup4: return number(FormClass::kAltRef, 4);
    case form::kRefSup8: return number(FormClass::kAltRef, 8);
    case form::kGnuRefAlt: return number(FormClass::kAltRef, offset_size);
    case form::kSecOffset: return number(FormClass::kSectionOffset, offset_size);
    case form::kRnglistx: return leb(FormClass::kRnglistIndex);
    case form::kLoclistx: return leb(FormClass::kLoclistIndex);
    case form::kBlock1: { FW_TRY(uint8_t n, r.u8()); return block(n); }
    case form::kBlock2: { FW_TRY(uint16_t n, r.u16()); return block(n); }
    case form::kBlock4: { FW_TRY(uint32_t n, r.u32()); return block(n); }
    case form::kBlock: case form::kExprloc: { FW_TRY(uint64_t n, r.uleb128()); return block(n); }
    case form::kIndirect: {
      if (depth > 0) return Error{ErrorCode::kBadForm, at};
      FW_TRY(uint64_t actual, r.uleb128());
      if (actual == form::kImplicitConst) return Error{ErrorCode::kBadForm, at};  // its constant lives in the abbrev
      return read_form_once(r, u, actual, implicit_const, depth + 1);
    }
    default: return Error{ErrorCode::kBadForm, at};
  }
}

// An entry of an offset table (.debug_str_offsets, .debug_rnglists' offsets):
// `index` entries of the unit's offset size after `base`.
Result<uint64_t> table_entry(Bytes section, Endian endian, uint64_t base, uint64_t index, unsigned size,
                             uint64_t error_at) {
  if (index > section.size() / size || base > section.size() || index * size > section.size() - base ||
      section.size() - base - index * size < size)
    return Error{ErrorCode::kBadIndex, error_at};
  ByteReader r(section, endian);
  FW_CHECK(r.seek(static_cast<size_t>(base + index * size)));
  return r.unsigned_of_size(size);
}

}  // namespace

Result<FormValue> read_form(ByteReader& r, const UnitHeader& unit, uint64_t f, int64_t implicit_const) {
  return read_form_once(r, unit, f, implicit_const, 0);
}

Result<std::string_view> value_string(const UnitContext& u, const FormValue& v, Bytes alt_str) {
  const DwarfSections& s = *u.sections;
  switch (v.kind) {
    case FormClass::kString: return v.text;
    case FormClass::kStrOffset: {
      auto text = string_at(s.str, v.number);
      if (!text) return Error{ErrorCode::kBadStringOffset, v.number};
      return *text;
    }
    case FormClass::kLineStrOffset: {
      auto text = string_at(s.line_str, v.number);
      if (!text) return Error{ErrorCode::kBadStringOffset, v.number};
      return *text;
    }
    case FormClass::kAltStrOffset: {
      if (alt_str.empty()) return Error{ErrorCode::kNeedsSupplementary, v.number};
      auto text = string_at(alt_str, v.number);
      if (!text) return Error{ErrorCode::kBadStringOffset, v.number};
      return *text;
    }
    case FormClass::kStrIndex: {
      // Without DW_AT_str_offsets_base: the first contribution's entries (after its 8- or 16-byte header).
      const unsigned size = u.header.offset_size();
      const uint64_t base = u.has_str_offsets_base ? u.str_offsets_base : (u.header.dwarf64 ? 16 : 8);
      FW_TRY(uint64_t offset, table_entry(s.str_offsets, s.endian, base, v.number, size, base));
      auto text = string_at(s.str, offset);
      if (!text) return Error{ErrorCode::kBadStringOffset, offset};
      return *text;
    }
    default: return Error{ErrorCode::kBadForm, u.header.offset};
  }
}

Result<uint64_t> value_address(const UnitContext& u, const FormValue& v) {
  if (v.kind == FormClass::kAddress) return v.number;
  if (v.kind != FormClass::kAddrIndex) return Error{ErrorCode::kBadForm, u.header.offset};
  const uint64_t base = u.has_addr_base ? u.addr_base : 8;
  return table_entry(u.sections->addr, u.sections->endian, base, v.number, u.header.address_size, base);
}

namespace {

Result<void> read_debug_ranges(const UnitContext& u, uint64_t offset, std::vector<AddressRange>* out) {
  const DwarfSections& s = *u.sections;
  if (offset >= s.ranges.size()) return Error{ErrorCode::kBadRangeList, offset};
  ByteReader r(s.ranges, s.endian);
  FW_CHECK(r.seek(static_cast<size_t>(offset)));
  const unsigned size = u.header.address_size;
  const uint64_t max = size >= 8 ? ~uint64_t{0} : (uint64_t{1} << (8 * size)) - 1;
  uint64_t base = u.base_address;
  while (true) {
    FW_TRY(uint64_t start, r.unsigned_of_size(size));
    FW_TRY(uint64_t end, r.unsigned_of_size(size));
    if (start == 0 && end == 0) return ok();
    if (start == max) {
      base = end;
      continue;
    }
    // Ranges that wrap past the top of the address space cover nothing.
    const uint64_t low = (base + start) & max, high = (base + end) & max;
    if (start < end && low < high) out->push_back({low, high});
  }
}

Result<void> read_rnglist(const UnitContext& u, uint64_t offset, std::vector<AddressRange>* out) {
  const DwarfSections& s = *u.sections;
  if (offset >= s.rnglists.size()) return Error{ErrorCode::kBadRangeList, offset};
  ByteReader r(s.rnglists, s.endian);
  FW_CHECK(r.seek(static_cast<size_t>(offset)));
  const unsigned size = u.header.address_size;
  uint64_t base = u.base_address;
  auto indexed = [&](uint64_t index) -> Result<uint64_t> {
    FormValue v;
    v.kind = FormClass::kAddrIndex;
    v.number = index;
    return value_address(u, v);
  };
  auto add = [&](uint64_t low, uint64_t high) {
    if (low < high) out->push_back({low, high});
  };
  while (true) {
    const uint64_t at = r.absolute_offset();
    FW_TRY(uint8_t kind, r.u8());
    switch (kind) {
      case 0: return ok();  // DW_RLE_end_of_list
      case 1: {             // DW_RLE_base_addressx
        FW_TRY(uint64_t i, r.uleb128());
        FW_TRY(base, indexed(i));
        break;
      }
      case 2: {  // DW_RLE_startx_endx
        FW_TRY(uint64_t i, r.uleb128());
        FW_TRY(uint64_t j, r.uleb128());
        FW_TRY(uint64_t low, indexed(i));
        FW_TRY(uint64_t high, indexed(j));
        add(low, high);
        break;
      }
      case 3: {  // DW_RLE_startx_length
        FW_TRY(uint64_t i, r.uleb128());
        FW_TRY(uint64_t n, r.uleb128());
        FW_TRY(uint64_t low, indexed(i));
        add(low, low + n);
        break;
      }
      case 4: {  // DW_RLE_offset_pair
        FW_TRY(uint64_t a, r.uleb128());
        FW_TRY(uint64_t b, r.uleb128());
        add(base + a, base + b);
        break;
      }
      case 5: {  // DW_RLE_base_address
        FW_TRY(base, r.unsigned_of_size(size));
        break;
      }
      case 6: {  // DW_RLE_start_end
        FW_TRY(uint64_t low, r.unsigned_of_size(size));
        FW_TRY(uint64_t high, r.unsigned_of_size(size));
        add(low, high);
        break;
      }
      case 7: {  // DW_RLE_start_length
        FW_TRY(uint64_t low, r.unsigned_of_size(size));
        FW_TRY(uint64_t n, r.uleb128());
        add(low, low + n);
        break;
      }
      default: return Error{ErrorCode::kBadRangeList, at};
    }
  }
}

}  // namespace

Result<void> read_ranges(const UnitContext& u, const FormValue& v, std::vector<AddressRange>* out) {
  if (v.kind == FormClass::kRnglistIndex) {
    // DWARF 5: an index into the offsets after DW_AT_rnglists_base (default: the first table's, after its 12/20-byte header).
    const unsigned size = u.header.offset_size();
    const uint64_t base = u.has_rnglists_base ? u.rnglists_base : (u.header.dwarf64 ? 20 : 12);
    // The table's offset_entry_count, the 4 bytes before its offsets.
    if (base < 4 || base > u.sections->rnglists.size()) return Error{ErrorCode::kBadIndex, base};
    ByteReader count_reader(u.sections->rnglists, u.sections->endian);
    FW_CHECK(count_reader.seek(static_cast<size_t>(base - 4)));
    FW_TRY(uint32_t count, count_reader.u32());
    if (v.number >= count) return Error{ErrorCode::kBadIndex, base - 4};
    FW_TRY(uint64_t relative, table_entry(u.sections->rnglists, u.sections->endian, base, v.number, size, base));
    return read_rnglist(u, base + relative, out);
  }
  if (v.kind != FormClass::kSectionOffset && v.kind != FormClass::kConstant) return Error{ErrorCode::kBadForm, u.header.offset};
  if (u.header.version >= 5) return read_rnglist(u, v.number, out);
  // A DWARF 4 split unit's offsets are relative to its skeleton's DW_AT_GNU_ranges_base.
  if (v.number > ~uint64_t{0} - u.ranges_base) return Error{ErrorCode::kBadRangeList, v.number};
  return read_debug_ranges(u, u.ranges_base + v.number, out);
}

std::vector<ArangeSet> read_aranges(Bytes aranges, Endian endian, std::vector<DwarfProblem>* problems) {
  std::vector<ArangeSet> sets;
  ByteReader r(aranges, endian);
  while (!r.at_end()) {
    const uint64_t set_at = r.absolute_offset();
    auto length = r.initial_length();
    if (!length || length->length > r.remaining()) {
      if (problems) problems->push_back({Error{ErrorCode::kBadLength, set_at}, ".debug_aranges"});
      break;
    }
    auto set = r.split(length->length);
    auto parse = [&](ByteReader& s) -> Result<ArangeSet> {
      ArangeSet out;
      FW_TRY(uint16_t version, s.u16());
      if (version != 2 && version != 3) return Error{ErrorCode::kBadUnitVersion, set_at};
      FW_TRY(out.unit_offset, s.unsigned_of_size(length->is_dwarf64 ? 8 : 4));
      FW_TRY(uint8_t address_size, s.u8());
      FW_TRY(uint8_t segment_size, s.u8());
      if (address_size != 4 && address_size != 8 && address_size != 2) return Error{ErrorCode::kBadAddressSize, set_at};
      if (segment_size != 0) return Error{ErrorCode::kBadSegmentSize, set_at};
      // Tuples start at a multiple of twice the address size from the set's start.
      const uint64_t header = s.absolute_offset() - set_at;
      const uint64_t align = 2u * address_size;
      FW_CHECK(s.skip((align - header % align) % align));
      while (!s.at_end()) {
        FW_TRY(uint64_t start, s.unsigned_of_size(address_size));
        FW_TRY(uint64_t size, s.unsigned_of_size(address_size));
        if (start == 0 && size == 0) break;
        if (size != 0) out.ranges.push_back({start, start + size});
      }
      return out;
    };
    auto parsed = parse(*set);
    if (parsed) sets.push_back(std::move(*parsed));
    else if (problems) problems->push_back({parsed.error(), ".debug_aranges"});
  }
  return sets;
}

DwarfFile::DwarfFile(const DwarfSections& sections, const SplitBases* split) : sections_(sections) {
  if (split) split_ = *split;
  units_ = read_unit_headers(sections_.info, sections_.endian, &problems_);
}

const UnitHeader* DwarfFile::unit_containing(uint64_t offset) const {
  auto it = std::upper_bound(units_.begin(), units_.end(), offset,
                             [](uint64_t o, const UnitHeader& u) { return o < u.offset; });
  if (it == units_.begin()) return nullptr;
  --it;
  return offset >= it->first_die && offset < it->end ? &*it : nullptr;
}

Result<const AbbrevTable*> DwarfFile::abbrevs(uint64_t offset) {
  auto found = abbrevs_.find(offset);
  if (found != abbrevs_.end()) return static_cast<const AbbrevTable*>(found->second.get());
  FW_TRY(AbbrevTable table, AbbrevTable::parse(sections_.abbrev, sections_.endian, offset));
  auto& slot = abbrevs_[offset];
  slot = std::make_unique<AbbrevTable>(std::move(table));
  return static_cast<const AbbrevTable*>(slot.get());
}

Result<ByteReader> DwarfFile::reader_at(const UnitHeader& unit, uint64_t offset) const {
  if (offset < unit.first_die || offset >= unit.end) return Error{ErrorCode::kBadReference, offset};
  ByteReader r(sections_.info.subspan(0, static_cast<size_t>(unit.end)), sections_.endian);
  FW_CHECK(r.seek(static_cast<size_t>(offset)));
  return r;
}

Result<const Abbrev*> DwarfFile::read_die(const UnitHeader& unit, const AbbrevTable& table, ByteReader& r,
                                          FunctionRef<void(uint64_t, const FormValue&)> attribute) {
  const uint64_t at = r.absolute_offset();
  FW_TRY(uint64_t code, r.uleb128());
  if (code == 0) return static_cast<const Abbrev*>(nullptr);
  const Abbrev* a = table.find(code);
  if (!a) return Error{ErrorCode::kBadAbbreviation, at};
  const AbbrevAttribute* attrs = table.attributes(*a);
  for (uint32_t i = 0; i < a->count; ++i) {
    FW_TRY(FormValue v, read_form_once(r, unit, attrs[i].form, table.implicit_const(attrs[i]), 0));
    attribute(attrs[i].name, v);
  }
  return a;
}

namespace {

// Past one value of `form` (read_form_once's sizes); false where read_form_once
// would fail or the form needs it (indirect), so that the caller reads the
// value for its error.
bool skip_form(ByteReader& r, const UnitHeader& u, uint64_t form) {
  auto size = [&](uint64_t n) { return r.skip(n).ok(); };
  auto leb = [&] { return r.uleb128().ok(); };
  auto block = [&](Result<uint64_t> n) { return n.ok() && r.skip(*n).ok(); };
  switch (form) {
    case form::kImplicitConst: case form::kFlagPresent: return true;
    case form::kData1: case form::kFlag: case form::kStrx1: case form::kAddrx1: case form::kRef1: return size(1);
    case form::kData2: case form::kStrx2: case form::kAddrx2: case form::kRef2: return size(2);
    case form::kStrx3: case form::kAddrx3: return size(3);
    case form::kData4: case form::kStrx4: case form::kAddrx4: case form::kRef4: case form::kRefSup4: return size(4);
    case form::kData8: case form::kRef8: case form::kRefSig8: case form::kRefSup8: return size(8);
    case form::kData16: return size(16);
    case form::kAddr:
      return (u.address_size == 1 || u.address_size == 2 || u.address_size == 4 || u.address_size == 8) &&
             size(u.address_size);
    case form::kStrp: case form::kLineStrp: case form::kStrpSup: case form::kGnuStrpAlt: case form::kGnuRefAlt:
    case form::kSecOffset:
      return size(u.offset_size());
    case form::kRefAddr: {
      const unsigned n = u.version <= 2 ? u.address_size : u.offset_size();
      return (n == 1 || n == 2 || n == 4 || n == 8) && size(n);
    }
    case form::kSdata: return r.sleb128().ok();
    case form::kUdata: case form::kStrx: case form::kAddrx: case form::kRefUdata: case form::kRnglistx:
    case form::kLoclistx: case form::kGnuAddrIndex: case form::kGnuStrIndex:
      return leb();
    case form::kString: return r.cstring().ok();
    case form::kBlock1: { auto n = r.u8(); return n.ok() && r.skip(*n).ok(); }
    case form::kBlock2: { auto n = r.u16(); return n.ok() && r.skip(*n).ok(); }
    case form::kBlock4: { auto n = r.u32(); return n.ok() && r.skip(*n).ok(); }
    case form::kBlock: case form::kExprloc: return block(r.uleb128());
    default: return false;  // indirect, or a form read_form_once refuses
  }
}

}  // namespace

Result<const Abbrev*> DwarfFile::skip_die(const UnitHeader& unit, const AbbrevTable& table, ByteReader& r) {
  const ByteReader start = r;
  auto code = r.uleb128();
  if (code && *code == 0) return static_cast<const Abbrev*>(nullptr);
  const Abbrev* a = code ? table.find(*code) : nullptr;
  bool skipped = a != nullptr;
  if (a) {
    const AbbrevAttribute* attrs = table.attributes(*a);
    for (uint32_t i = 0; i < a->count && skipped; ++i) skipped = skip_form(r, unit, attrs[i].form);
  }
  if (skipped) return a;
  r = start;  // read it for the error
  return read_die(unit, table, r, [](uint64_t, const FormValue&) {});
}

Result<UnitContext> DwarfFile::context(const UnitHeader& unit) {
  auto found = contexts_.find(unit.offset);
  if (found != contexts_.end()) return found->second;
  UnitContext c;
  c.sections = &sections_;
  c.header = unit;
  FW_TRY(const AbbrevTable* table, abbrevs(unit.abbrev_offset));
  FW_TRY(ByteReader r, reader_at(unit, unit.first_die));
  std::optional<FormValue> low;
  FW_TRY(const Abbrev* root, read_die(unit, *table, r, [&](uint64_t name, const FormValue& v) {
    switch (name) {
      case at::kStrOffsetsBase: c.str_offsets_base = v.number; c.has_str_offsets_base = true; break;
      case at::kAddrBase: case at::kGnuAddrBase: c.addr_base = v.number; c.has_addr_base = true; break;
      case at::kRnglistsBase: c.rnglists_base = v.number; c.has_rnglists_base = true; break;
      case at::kLowPc: low = v; break;
      case at::kLanguage: c.language = v.number; break;
      default: break;
    }
  }));
  (void)root;
  if (split_) {
    // A split unit: addresses in the main file's .debug_addr at the skeleton's
    // base; a DWARF 4 (GNU) unit's string offsets start at its contribution.
    c.addr_base = split_->addr_base;
    c.has_addr_base = true;
    c.ranges_base = split_->ranges_base;
    if (unit.version < 5) {
      c.str_offsets_base = 0;
      c.has_str_offsets_base = true;
    }
    if (!low) c.base_address = split_->base_address;
  }
  // The base address needs addr_base, which may follow low_pc in the DIE.
  if (low) {
    auto address = value_address(c, *low);
    if (address) c.base_address = *address;
  }
  contexts_.emplace(unit.offset, c);
  return c;
}

}  // namespace framewalk::symbol

#include "base/byte_reader.hpp"

namespace framewalk {

int ByteReader::encoded_size(uint8_t encoding, unsigned address_size) {
  switch (encoding & 0x0f) {
    case pe::kAbsptr: return static_cast<int>(address_size);
    case pe::kUdata2: case pe::kSdata2: return 2;
    case pe::kUdata4: case pe::kSdata4: return 4;
    case pe::kUdata8: case pe::kSdata8: return 8;
    case pe::kUleb128: case pe::kSleb128: return 0;
    default: return -1;
  }
}

Result<uint64_t> ByteReader::encoded_pointer(uint8_t encoding, unsigned address_size,
                                              const PointerBases& bases, bool* indirect) {
  if (encoding == pe::kOmit) return error(ErrorCode::kBadPointerEncoding);
  const size_t start = pos_;
  const uint8_t application = encoding & 0x70;
  if (application == pe::kAligned) {
    // Aligned: skip to the next address-size boundary, then read an absptr.
    if (address_size == 0) return error(ErrorCode::kBadAddressSize);
    const uint64_t abs = bases.section_address + base_offset_ + pos_;
    const uint64_t aligned = (abs + address_size - 1) / address_size * address_size;
    FW_CHECK(skip(aligned - abs));
  }
  uint64_t value = 0;
  switch (encoding & 0x0f) {
    case pe::kAbsptr: { FW_TRY(value, address(address_size)); break; }
    case pe::kUleb128: { FW_TRY(value, uleb128()); break; }
    case pe::kUdata2: { FW_TRY(uint16_t v, u16()); value = v; break; }
    case pe::kUdata4: { FW_TRY(uint32_t v, u32()); value = v; break; }
    case pe::kUdata8: { FW_TRY(value, u64()); break; }
    case pe::kSleb128: { FW_TRY(int64_t v, sleb128()); value = static_cast<uint64_t>(v); break; }
    case pe::kSdata2: { FW_TRY(uint16_t v, u16()); value = static_cast<uint64_t>(int64_t{static_cast<int16_t>(v)}); break; }
    case pe::kSdata4: { FW_TRY(uint32_t v, u32()); value = static_cast<uint64_t>(int64_t{static_cast<int32_t>(v)}); break; }
    case pe::kSdata8: { FW_TRY(value, u64()); break; }
    default: return Error{ErrorCode::kBadPointerEncoding, base_offset_ + start};
  }
  switch (application) {
    case 0x00: case pe::kAligned: break;
    case pe::kPcrel:
      if (!bases.has_section_address) return Error{ErrorCode::kPointerEncodingNoBase, base_offset_ + start};
      value += bases.section_address + base_offset_ + start;
      break;
    case pe::kTextrel:
      if (!bases.has_text) return Error{ErrorCode::kPointerEncodingNoBase, base_offset_ + start};
      value += bases.text;
      break;
    case pe::kDatarel:
      if (!bases.has_data) return Error{ErrorCode::kPointerEncodingNoBase, base_offset_ + start};
      value += bases.data;
      break;
    case pe::kFuncrel:
      if (!bases.has_func) return Error{ErrorCode::kPointerEncodingNoBase, base_offset_ + start};
      value += bases.func;
      break;
    default: return Error{ErrorCode::kBadPointerEncoding, base_offset_ + start};
  }
  if (address_size == 4) value &= 0xffffffffu;
  if (encoding & pe::kIndirect) {
    if (!indirect) return Error{ErrorCode::kIndirectPointer, base_offset_ + start};
    *indirect = true;
  } else if (indirect) {
    *indirect = false;
  }
  return value;
}

}  // namespace framewalk

#include "dwarf/cfi_section.hpp"

namespace framewalk::dwarf {

bool CfiSection::is_cie_id(uint64_t id, bool dwarf64) const {
  if (info_.kind == CfiKind::kEhFrame) return id == 0;
  return dwarf64 ? id == ~uint64_t{0} : id == 0xffffffffu;
}

Result<const Cie*> CfiSection::cie_at(uint64_t offset) const {
  if (frozen_.load(std::memory_order_acquire)) {
    auto it = cies_.find(offset);
    if (it == cies_.end()) return Error{ErrorCode::kBadCiePointer, offset};
    return &it->second;
  }
  {
    std::lock_guard<std::mutex> lock(cies_mutex_);
    if (auto it = cies_.find(offset); it != cies_.end()) return &it->second;
    if (auto it = bad_cies_.find(offset); it != bad_cies_.end()) return it->second;
  }
  auto cie = read_cie(offset);
  std::lock_guard<std::mutex> lock(cies_mutex_);
  if (!cie) {
    bad_cies_.emplace(offset, cie.error());
    return cie.error();
  }
  auto [it, inserted] = cies_.emplace(offset, std::move(*cie));
  return &it->second;
}

Result<Cie> CfiSection::read_cie(uint64_t offset) const {
  if (offset >= data_.size()) return Error{ErrorCode::kBadCiePointer, offset};
  ByteReader r(data_, info_.endian);
  FW_CHECK(r.seek(offset));
  FW_TRY(InitialLength len, r.initial_length());
  if (len.length == 0 || len.length > r.remaining()) return Error{ErrorCode::kBadCiePointer, offset};
  const uint64_t end = r.offset() + len.length;
  FW_TRY(ByteReader body, r.split(len.length));
  auto id = body.unsigned_of_size(len.is_dwarf64 ? 8 : 4);
  if (!id) return id.error();
  if (!is_cie_id(*id, len.is_dwarf64)) return Error{ErrorCode::kBadCiePointer, offset};
  return parse_cie(body, offset, len.length, end, len.is_dwarf64, *id);
}

Result<Fde> CfiSection::fde_at_uncached(uint64_t offset, Cie* cie_out) const {
  ByteReader r(data_, info_.endian);
  FW_CHECK(r.seek(offset));
  FW_TRY(InitialLength len, r.initial_length());
  if (len.length == 0 || len.length > r.remaining()) return Error{ErrorCode::kBadLength, offset};
  const uint64_t end = r.offset() + len.length;
  FW_TRY(ByteReader body, r.split(len.length));
  const uint64_t id_field_offset = body.absolute_offset();
  FW_TRY(uint64_t id, body.unsigned_of_size(len.is_dwarf64 ? 8 : 4));
  if (is_cie_id(id, len.is_dwarf64)) return Error{ErrorCode::kNotFound, offset};
  uint64_t cie_offset;
  if (info_.kind == CfiKind::kEhFrame) {
    if (id > id_field_offset) return Error{ErrorCode::kBadCiePointer, id_field_offset};
    cie_offset = id_field_offset - id;
  } else {
    cie_offset = id;
  }
  FW_TRY(*cie_out, read_cie(cie_offset));
  return parse_fde(body, *cie_out, offset, len.length, end, len.is_dwarf64, id, cie_offset);
}

Result<Cie> CfiSection::parse_cie(ByteReader& r, uint64_t offset, uint64_t length, uint64_t end,
                                  bool dwarf64, uint64_t id) const {
  Cie cie;
  cie.offset = offset;
  cie.length = length;
  cie.end = end;
  cie.dwarf64 = dwarf64;
  cie.id = id;
  cie.address_size = info_.address_size;
  FW_TRY(cie.version, r.u8());
  if (cie.version != 1 && cie.version != 3 && cie.version != 4)
    return Error{ErrorCode::kBadCieVersion, r.absolute_offset() - 1};
  FW_TRY(cie.augmentation, r.cstring());
  std::string_view aug = cie.augmentation;
  if (aug == "eh") {
    // Old GCC: a pointer to the exception table follows.
    FW_CHECK(r.skip(info_.address_size));
  }
  if (cie.version >= 4) {
    FW_TRY(cie.address_size, r.u8());
    if (cie.address_size != 1 && cie.address_size != 2 && cie.address_size != 4 && cie.address_size != 8)
      return Error{ErrorCode::kBadAddressSize, r.absolute_offset() - 1};
    FW_TRY(cie.segment_size, r.u8());
    if (cie.segment_size > 8) return Error{ErrorCode::kBadSegmentSize, r.absolute_offset() - 1};
  }
  FW_TRY(cie.code_alignment, r.uleb128());
  FW_TRY(cie.data_alignment, r.sleb128());
  if (cie.version == 1) {
    FW_TRY(uint8_t ra, r.u8());
    cie.return_address_register = ra;
  } else {
    FW_TRY(cie.return_address_register, r.uleb128());
  }
  if (!aug.empty() && aug[0] == 'z') {
    cie.has_augmentation_data = true;
    FW_TRY(uint64_t aug_len, r.uleb128());
    FW_TRY(ByteReader ar, r.split(aug_len));
    cie.augmentation_data = ar.data();
    for (size_t i = 1; i < aug.size(); ++i) {
      switch (aug[i]) {
        case 'L': { FW_TRY(cie.lsda_encoding, ar.u8()); break; }
        case 'R': { FW_TRY(cie.fde_encoding, ar.u8()); break; }
        case 'P': {
          FW_TRY(cie.personality_encoding, ar.u8());
          // The personality is often pcrel|indirect: we keep the address of the pointer.
          bool indirect = false;
          FW_TRY(cie.personality, ar.encoded_pointer(cie.personality_encoding, cie.address_size,
                                                     info_.bases, &indirect));
          break;
        }
        case 'S': cie.signal_frame = true; break;
        case 'B': cie.b_key = true; break;
        case 'G': cie.mte_tagged = true; break;
        default:
          // Unknown letters stop interpretation; the data length lets us skip the rest.
          i = aug.size();
          break;
      }
    }
  } else if (!aug.empty() && aug != "eh") {
    // Without 'z' we cannot know how much augmentation data follows.
    return Error{ErrorCode::kBadAugmentation, offset};
  }
  cie.instructions_offset = r.absolute_offset();
  FW_TRY(cie.instructions, r.bytes(r.remaining()));
  return cie;
}

Result<Fde> CfiSection::parse_fde(ByteReader& r, const Cie& cie, uint64_t offset, uint64_t length,
                                  uint64_t end, bool dwarf64, uint64_t cie_pointer,
                                  uint64_t cie_offset) const {
  Fde fde;
  fde.offset = offset;
  fde.length = length;
  fde.end = end;
  fde.dwarf64 = dwarf64;
  fde.cie_pointer = cie_pointer;
  fde.cie_offset = cie_offset;
  if (cie.segment_size) {
    FW_TRY(fde.segment_selector, r.unsigned_of_size(cie.segment_size));
  }
  FW_TRY(fde.pc_begin, r.encoded_pointer(cie.fde_encoding, cie.address_size, info_.bases));
  // The range is an unsigned size of the same width, never relative.
  const uint8_t range_encoding = cie.fde_encoding & 0x07;
  FW_TRY(fde.pc_range, r.encoded_pointer(range_encoding, cie.address_size, info_.bases));
  if (cie.has_augmentation_data) {
    FW_TRY(uint64_t aug_len, r.uleb128());
    FW_TRY(ByteReader ar, r.split(aug_len));
    fde.augmentation_data = ar.data();
    if (cie.lsda_encoding != pe::kOmit && aug_len > 0) {
      bool indirect = false;
      FW_TRY(fde.lsda, ar.encoded_pointer(cie.lsda_encoding, cie.address_size, info_.bases, &indirect));
      fde.has_lsda = true;
    }
  }
  fde.instructions_offset = r.absolute_offset();
  FW_TRY(fde.instructions, r.bytes(r.remaining()));
  return fde;
}

Result<CfiSection::Entry> CfiSection::entry_at(uint64_t offset, uint64_t* next) const {
  *next = data_.size();
  ByteReader r(data_, info_.endian);
  FW_CHECK(r.seek(offset));
  FW_TRY(InitialLength len, r.initial_length());
  if (len.length == 0) {
    *next = r.offset();
    return Entry{Entry::Type::kTerminator, offset, r.offset(), nullptr, {}};
  }
  if (len.length > r.remaining()) return Error{ErrorCode::kBadLength, offset};
  const uint64_t end = r.offset() + len.length;
  *next = end;
  FW_TRY(ByteReader body, r.split(len.length));
  const uint64_t id_field_offset = body.absolute_offset();
  FW_TRY(uint64_t id, body.unsigned_of_size(len.is_dwarf64 ? 8 : 4));
  if (is_cie_id(id, len.is_dwarf64)) {
    if (frozen_.load(std::memory_order_acquire)) {
      auto it = cies_.find(offset);
      if (it == cies_.end()) return Error{ErrorCode::kBadCiePointer, offset};
      return Entry{Entry::Type::kCie, offset, end, &it->second, {}};
    }
    {
      std::lock_guard<std::mutex> lock(cies_mutex_);
      if (auto it = cies_.find(offset); it != cies_.end())
        return Entry{Entry::Type::kCie, offset, end, &it->second, {}};
    }
    FW_TRY(Cie cie, parse_cie(body, offset, len.length, end, len.is_dwarf64, id));
    std::lock_guard<std::mutex> lock(cies_mutex_);
    auto [it, inserted] = cies_.emplace(offset, cie);
    return Entry{Entry::Type::kCie, offset, end, &it->second, {}};
  }
  uint64_t cie_offset;
  if (info_.kind == CfiKind::kEhFrame) {
    // Relative to the CIE pointer field itself, pointing backwards.
    if (id > id_field_offset) return Error{ErrorCode::kBadCiePointer, id_field_offset};
    cie_offset = id_field_offset - id;
  } else {
    cie_offset = id;
  }
  auto cie = cie_at(cie_offset);
  if (!cie) return Error{ErrorCode::kBadCiePointer, id_field_offset};
  FW_TRY(Fde fde, parse_fde(body, **cie, offset, len.length, end, len.is_dwarf64, id, cie_offset));
  return Entry{Entry::Type::kFde, offset, end, *cie, fde};
}

Result<Fde> CfiSection::fde_at(uint64_t offset, const Cie** cie_out) const {
  uint64_t next;
  FW_TRY(Entry e, entry_at(offset, &next));
  if (e.type != Entry::Type::kFde) return Error{ErrorCode::kNotFound, offset};
  if (cie_out) *cie_out = e.cie;
  return e.fde;
}

void CfiSection::for_each(const std::function<bool(const Entry&)>& on_entry,
                          const std::function<void(const CfiDiagnostic&)>& on_error) const {
  uint64_t offset = 0;
  while (offset < data_.size()) {
    uint64_t next = data_.size();
    auto entry = entry_at(offset, &next);
    if (!entry) {
      if (on_error) on_error(CfiDiagnostic{entry.error(), offset});
    } else {
      if (!on_entry(*entry)) return;
      // .eh_frame ends at its terminator when the section is padded after it.
    }
    if (next <= offset) return;
    offset = next;
  }
}

}  // namespace framewalk::dwarf

#include "dwarf/eh_frame_hdr.hpp"

namespace framewalk::dwarf {

Result<EhFrameHdr> EhFrameHdr::parse(Bytes data, Endian endian, uint8_t address_size,
                                     uint64_t section_address) {
  EhFrameHdr h;
  h.data_ = data;
  h.endian_ = endian;
  h.address_size_ = address_size;
  h.section_address_ = section_address;
  ByteReader r(data, endian);
  FW_TRY(h.version_, r.u8());
  if (h.version_ != 1) return Error{ErrorCode::kBadEhFrameHdr, 0};
  FW_TRY(uint8_t eh_frame_ptr_enc, r.u8());
  FW_TRY(uint8_t fde_count_enc, r.u8());
  FW_TRY(h.table_enc_, r.u8());
  PointerBases bases;
  bases.section_address = section_address;
  bases.data = section_address;
  bases.has_data = true;
  if (eh_frame_ptr_enc == pe::kOmit) return Error{ErrorCode::kBadEhFrameHdr, 1};
  FW_TRY(h.eh_frame_ptr_, r.encoded_pointer(eh_frame_ptr_enc, address_size, bases));
  if (fde_count_enc == pe::kOmit || h.table_enc_ == pe::kOmit) return h;
  FW_TRY(h.fde_count_, r.encoded_pointer(fde_count_enc, address_size, bases));
  h.table_offset_ = r.offset();
  const int size = ByteReader::encoded_size(h.table_enc_, address_size);
  // Only fixed-size, datarel (or absolute) encodings can be binary-searched.
  const uint8_t app = h.table_enc_ & 0x70;
  if (size <= 0 || (app != pe::kDatarel && app != 0 && app != pe::kPcrel) || (h.table_enc_ & pe::kIndirect))
    return h;
  const uint64_t room = r.remaining() / (2 * static_cast<uint64_t>(size));
  if (h.fde_count_ > room) return Error{ErrorCode::kBadEhFrameHdr, h.table_offset_};
  h.table_entry_size_ = static_cast<unsigned>(2 * size);
  return h;
}

Result<EhFrameHdr::TableEntry> EhFrameHdr::entry(uint64_t index) const {
  if (!has_table() || index >= fde_count_) return Error{ErrorCode::kNotFound, table_offset_};
  ByteReader r(data_, endian_);
  FW_CHECK(r.seek(table_offset_ + index * table_entry_size_));
  PointerBases bases;
  bases.section_address = section_address_;
  bases.data = section_address_;
  bases.has_data = true;
  TableEntry e;
  FW_TRY(e.initial_pc, r.encoded_pointer(table_enc_, address_size_, bases));
  FW_TRY(e.fde_address, r.encoded_pointer(table_enc_, address_size_, bases));
  return e;
}

Result<EhFrameHdr::TableEntry> EhFrameHdr::lookup(uint64_t pc) const {
  if (!has_table()) return Error{ErrorCode::kNotFound, 0};
  uint64_t lo = 0, hi = fde_count_;
  // Invariant: entries [0, lo) have initial_pc <= pc; [hi, n) have initial_pc > pc.
  while (lo < hi) {
    const uint64_t mid = lo + (hi - lo) / 2;
    FW_TRY(TableEntry e, entry(mid));
    if (e.initial_pc <= pc) lo = mid + 1; else hi = mid;
  }
  if (lo == 0) return Error{ErrorCode::kNotFound, table_offset_};
  return entry(lo - 1);
}

std::optional<uint64_t> EhFrameHdr::first_unsorted() const {
  if (!has_table()) return std::nullopt;
  uint64_t prev = 0;
  for (uint64_t i = 0; i < fde_count_; ++i) {
    auto e = entry(i);
    if (!e) return i;
    if (i > 0 && e->initial_pc < prev) return i;
    prev = e->initial_pc;
  }
  return std::nullopt;
}

}  // namespace framewalk::dwarf

// .eh_frame_hdr: the binary-search table from initial PC to FDE address.
#pragma once

#include <cstdint>
#include <optional>

#include "base/byte_reader.hpp"
#include "base/result.hpp"

namespace framewalk::dwarf {

class EhFrameHdr {
 public:
  // `section_address` is the run-time address of the header's first byte;
  // `data_address` the base for DW_EH_PE_datarel (the header's own address on
  // every ABI that uses it).
  static Result<EhFrameHdr> parse(Bytes data, Endian endian, uint8_t address_size,
                                  uint64_t section_address);

  uint8_t version() const { return version_; }
  uint64_t eh_frame_address() const { return eh_frame_ptr_; }
  uint64_t fde_count() const { return fde_count_; }
  bool has_table() const { return fde_count_ > 0 && table_entry_size_ > 0; }
  uint8_t table_encoding() const { return table_enc_; }

  struct TableEntry {
    uint64_t initial_pc;
    uint64_t fde_address;
  };
  Result<TableEntry> entry(uint64_t index) const;

  // The FDE address of the last entry whose initial PC is <= pc.
  Result<TableEntry> lookup(uint64_t pc) const;

  // Checks that the table is sorted; returns the first offending index.
  std::optional<uint64_t> first_unsorted() const;

 private:
  Bytes data_;
  Endian endian_ = Endian::kLittle;
  uint8_t address_size_ = 8;
  uint64_t section_address_ = 0;
  uint8_t version_ = 0;
  uint8_t table_enc_ = 0xff;
  uint64_t eh_frame_ptr_ = 0;
  uint64_t fde_count_ = 0;
  uint64_t table_offset_ = 0;
  unsigned table_entry_size_ = 0;  // 0 when the table encoding is not fixed-size
};

}  // namespace framewalk::dwarf

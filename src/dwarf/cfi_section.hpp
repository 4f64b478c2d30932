// .eh_frame and .debug_frame: CIEs and FDEs. One parser serves both; they
// differ in the CIE id value, the CIE pointer convention and terminators.
#pragma once

#include <cstdint>
#include <atomic>
#include <functional>
#include <mutex>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "arch/arch.hpp"
#include "base/byte_reader.hpp"
#include "base/result.hpp"

namespace framewalk::dwarf {

enum class CfiKind : uint8_t { kEhFrame, kDebugFrame };

struct Cie {
  uint64_t offset = 0;        // section offset of the length field
  uint64_t length = 0;        // value of the length field
  uint64_t end = 0;           // section offset just past the CIE
  bool dwarf64 = false;
  uint64_t id = 0;            // raw CIE id field (0 or 0xffffffff...)
  uint8_t version = 0;
  std::string_view augmentation;
  uint8_t address_size = 8;
  uint8_t segment_size = 0;
  uint64_t code_alignment = 0;
  int64_t data_alignment = 0;
  uint64_t return_address_register = 0;
  bool has_augmentation_data = false;  // 'z'
  Bytes augmentation_data;
  uint8_t fde_encoding = 0;            // DW_EH_PE_absptr unless 'R'
  uint8_t lsda_encoding = 0xff;        // 'L'
  uint8_t personality_encoding = 0xff; // 'P'
  uint64_t personality = 0;
  bool signal_frame = false;           // 'S'
  bool mte_tagged = false;             // 'G'
  bool b_key = false;                  // 'B' (AArch64 PAC B key)
  Bytes instructions;
  uint64_t instructions_offset = 0;
};

struct Fde {
  uint64_t offset = 0;
  uint64_t length = 0;
  uint64_t end = 0;
  bool dwarf64 = false;
  uint64_t cie_pointer = 0;   // raw CIE pointer field
  uint64_t cie_offset = 0;    // section offset of the CIE it names
  uint64_t segment_selector = 0;
  uint64_t pc_begin = 0;
  uint64_t pc_range = 0;
  bool has_lsda = false;
  uint64_t lsda = 0;
  Bytes augmentation_data;
  Bytes instructions;
  uint64_t instructions_offset = 0;

  uint64_t pc_end() const { return pc_begin + pc_range; }
  bool contains(uint64_t pc) const { return pc >= pc_begin && pc - pc_begin < pc_range; }
};

// Where the section lives and how to decode pointers inside it.
struct CfiSectionInfo {
  CfiKind kind = CfiKind::kEhFrame;
  Endian endian = Endian::kLittle;
  uint8_t address_size = 8;   // the ELF class's default; version-4 CIEs may override
  PointerBases bases;         // section_address = the section's sh_addr
  const arch::ArchInfo* arch = nullptr;  // the file's machine: machine-dependent opcodes (0x2d)
};

// A diagnostic: a malformed record that was skipped.
struct CfiDiagnostic {
  Error error;
  uint64_t entry_offset;  // start of the record it belongs to
};

class CfiSection {
 public:
  CfiSection(Bytes data, const CfiSectionInfo& info) : data_(data), info_(info) {}

  Bytes data() const { return data_; }
  const CfiSectionInfo& info() const { return info_; }
  CfiKind kind() const { return info_.kind; }

  // The CIE at a section offset (parsed once, then cached).
  Result<const Cie*> cie_at(uint64_t offset) const;

  // One record in section order.
  struct Entry {
    enum class Type : uint8_t { kCie, kFde, kTerminator } type;
    uint64_t offset;
    uint64_t next;        // offset of the following record
    const Cie* cie;       // the CIE itself, or the FDE's CIE
    Fde fde;              // for kFde
  };

  // Parses the record at `offset`. An error whose record length is sound
  // still reports `*next` so that the caller can skip the record.
  Result<Entry> entry_at(uint64_t offset, uint64_t* next) const;

  // Walks every record; malformed records go to `on_error` and are skipped.
  // Stops when a length cannot be trusted. The callback may return false to stop.
  void for_each(const std::function<bool(const Entry&)>& on_entry,
                const std::function<void(const CfiDiagnostic&)>& on_error) const;

  // After every CIE was parsed once (for_each), makes the CIE cache read-only:
  // lookups then take no lock (for unwinding from signal handlers), and a CIE
  // that was not cached is an error instead of a new entry.
  void freeze() const { frozen_.store(true, std::memory_order_release); }

  // The CIE at `offset`, parsed now and not cached.
  Result<Cie> read_cie(uint64_t offset) const;
  // The FDE at `offset` and its CIE (into `*cie_out`), without the CIE cache:
  // no allocation and no lock, for unwinding from signal handlers.
  Result<Fde> fde_at_uncached(uint64_t offset, Cie* cie_out) const;

  // Parses the FDE at `offset` (used by index lookups).
  Result<Fde> fde_at(uint64_t offset, const Cie** cie_out) const;

 private:
  Result<Cie> parse_cie(ByteReader& r, uint64_t offset, uint64_t length, uint64_t end,
                        bool dwarf64, uint64_t id) const;
  Result<Fde> parse_fde(ByteReader& r, const Cie& cie, uint64_t offset, uint64_t length,
                        uint64_t end, bool dwarf64, uint64_t cie_pointer, uint64_t cie_offset) const;
  bool is_cie_id(uint64_t id, bool dwarf64) const;

  Bytes data_;
  CfiSectionInfo info_;
  // Parsed CIEs by offset. Guarded so that several threads may read one
  // section; entries are never erased, so the pointers handed out stay valid.
  mutable std::mutex cies_mutex_;
  mutable std::atomic<bool> frozen_{false};
  mutable std::unordered_map<uint64_t, Cie> cies_;
  // CIEs that failed to parse, with the error: many FDEs may name one broken
  // CIE, and parsing it again for each of them is quadratic.
  mutable std::unordered_map<uint64_t, Error> bad_cies_;
};

}  // namespace framewalk::dwarf

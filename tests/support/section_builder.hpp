// A small, label-aware byte builder for hand-written test inputs.
//
//   SectionBuilder b(Endian::kBig);
//   Label start = b.new_label(), end = b.new_label();
//   b.diff32(end, start).mark(start).u8(1).uleb(300).mark(end);
//   std::vector<uint8_t> bytes = b.finish();  // patches every forward reference
//
// CfiBuilder adds CIEs and FDEs for .eh_frame and .debug_frame (32- and
// 64-bit DWARF) on top of it, with every field overridable so that tests can
// build broken records too.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/byte_reader.hpp"
#include "dwarf/cfi_section.hpp"

namespace framewalk::test {

// A position in a builder, defined (once) with mark() and usable before that.
struct Label {
  int id = -1;
  bool valid() const { return id >= 0; }
};

// ULEB128/SLEB128 encodings as byte vectors (handy for expected values).
std::vector<uint8_t> uleb_bytes(uint64_t value);
std::vector<uint8_t> sleb_bytes(int64_t value);

class SectionBuilder {
 public:
  explicit SectionBuilder(Endian endian = Endian::kLittle) : endian_(endian) {}

  Endian endian() const { return endian_; }
  size_t size() const { return bytes_.size(); }
  const std::vector<uint8_t>& bytes() const { return bytes_; }

  // Fixed-width integers in the builder's byte order, or in an explicit one.
  SectionBuilder& u8(uint8_t v);
  SectionBuilder& u16(uint16_t v) { return fixed(v, 2, endian_); }
  SectionBuilder& u32(uint32_t v) { return fixed(v, 4, endian_); }
  SectionBuilder& u64(uint64_t v) { return fixed(v, 8, endian_); }
  SectionBuilder& u16(uint16_t v, Endian e) { return fixed(v, 2, e); }
  SectionBuilder& u32(uint32_t v, Endian e) { return fixed(v, 4, e); }
  SectionBuilder& u64(uint64_t v, Endian e) { return fixed(v, 8, e); }
  // An unsigned value of 1, 2, 4 or 8 bytes.
  SectionBuilder& fixed(uint64_t v, unsigned size) { return fixed(v, size, endian_); }
  SectionBuilder& fixed(uint64_t v, unsigned size, Endian e);

  SectionBuilder& uleb(uint64_t v);
  SectionBuilder& sleb(int64_t v);
  // A ULEB128 padded to exactly `width` bytes (an over-long but valid encoding).
  SectionBuilder& uleb_padded(uint64_t v, unsigned width);

  SectionBuilder& bytes(std::initializer_list<uint8_t> b);
  SectionBuilder& bytes(const std::vector<uint8_t>& b);
  SectionBuilder& append(const SectionBuilder& other) { return bytes(other.bytes_); }
  SectionBuilder& str(std::string_view s);   // with its NUL terminator
  SectionBuilder& raw(std::string_view s);   // without a terminator
  SectionBuilder& zeros(size_t n);
  SectionBuilder& align(size_t alignment, uint8_t fill = 0);

  // Labels.
  Label new_label();
  SectionBuilder& mark(Label label);     // defines `label` at the current size
  Label here();                          // a new label defined at the current size
  bool defined(Label label) const;
  uint64_t offset_of(Label label) const;  // must be defined

  // Forward references, patched by finish(). The stored value is
  //   offset(plus) - offset(minus) + addend   (an unset label counts as 0)
  // and, with `minus_self` / `plus_self`, minus / plus the field's own offset.
  struct Ref {
    Label plus;
    Label minus;
    bool minus_self = false;
    int64_t addend = 0;
    bool plus_self = false;
  };
  SectionBuilder& ref(const Ref& r, unsigned size);           // fixed width
  SectionBuilder& ref_uleb(const Ref& r, unsigned width = 1);  // padded ULEB128
  // Shorthands: `end - start` in 4 or 8 bytes; a label's absolute offset.
  SectionBuilder& diff32(Label end, Label start, int64_t addend = 0) { return ref({end, start, false, addend}, 4); }
  SectionBuilder& diff64(Label end, Label start, int64_t addend = 0) { return ref({end, start, false, addend}, 8); }
  SectionBuilder& offset32(Label target, int64_t addend = 0) { return ref({target, {}, false, addend}, 4); }
  SectionBuilder& offset64(Label target, int64_t addend = 0) { return ref({target, {}, false, addend}, 8); }

  // A DW_EH_PE-encoded pointer whose decoded value will be `value`: the base of
  // the encoding's application (pcrel: `bases.section_address` + the field's
  // offset) is subtracted, DW_EH_PE_aligned pads first. Indirect is ignored
  // (the stored value is the address of the pointer).
  SectionBuilder& encoded(uint8_t encoding, uint64_t value, unsigned address_size,
                          const PointerBases& bases = {});

  // Patches every reference and returns the bytes. Aborts the test program on
  // an undefined label or a value that does not fit (a bug in the test).
  std::vector<uint8_t> finish() const;

 private:
  struct Fixup {
    size_t pos;
    unsigned size;
    bool is_uleb;
    Ref ref;
  };
  Endian endian_;
  std::vector<uint8_t> bytes_;
  std::vector<int64_t> labels_;  // -1: not yet defined
  std::vector<Fixup> fixups_;
};

// ---- CFI records ----------------------------------------------------------

struct CieSpec {
  bool dwarf64 = false;
  uint8_t version = 1;
  std::string augmentation = "zR";
  std::optional<uint64_t> eh_data;  // the pointer after "eh" (address-size bytes)
  uint8_t address_size = 8;         // written for version 4
  uint8_t segment_size = 0;         // written for version 4
  uint64_t code_alignment = 1;
  int64_t data_alignment = -8;
  uint64_t return_address_register = 16;
  // Augmentation data, written in the order of the augmentation letters.
  uint8_t fde_encoding = pe::kPcrel | pe::kSdata4;       // 'R'
  uint8_t lsda_encoding = pe::kPcrel | pe::kSdata4;      // 'L'
  uint8_t personality_encoding = pe::kPcrel | pe::kSdata4 | pe::kIndirect;  // 'P'
  uint64_t personality = 0;                              // 'P': the decoded value
  std::vector<uint8_t> extra_augmentation_data;          // appended after the letters
  std::optional<std::vector<uint8_t>> raw_augmentation_data;  // replaces all of the above
  std::vector<uint8_t> instructions;
  size_t pad_to = 0;                      // pad with DW_CFA_nop to a multiple of this
  std::optional<uint64_t> id;             // overrides the CIE id
  std::optional<uint64_t> length;         // overrides the length field
};

struct FdeSpec {
  bool dwarf64 = false;
  uint64_t pc_begin = 0;
  uint64_t pc_range = 0;
  uint8_t encoding = pe::kPcrel | pe::kSdata4;  // must match the CIE's 'R' (absptr without)
  uint8_t address_size = 8;
  uint8_t segment_size = 0;
  uint64_t segment_selector = 0;
  bool augmentation = true;               // the CIE has 'z': write the augmentation length
  std::optional<uint64_t> lsda;           // written with `lsda_encoding`
  uint8_t lsda_encoding = pe::kPcrel | pe::kSdata4;
  std::vector<uint8_t> augmentation_data; // appended after the LSDA
  std::vector<uint8_t> instructions;
  size_t pad_to = 0;
  std::optional<uint64_t> cie_pointer;    // overrides the CIE pointer field
  std::optional<uint64_t> length;         // overrides the length field
};

// Offsets of one record's fields, for asserting error offsets.
struct RecordLabels {
  Label start;         // the length field
  Label id;            // the CIE id / CIE pointer field
  Label body;          // after the id field (version or initial location)
  Label instructions;  // first instruction byte
  Label end;
};

class CfiBuilder {
 public:
  explicit CfiBuilder(dwarf::CfiKind kind, Endian endian = Endian::kLittle,
                      uint64_t section_address = 0);

  SectionBuilder& b() { return b_; }
  dwarf::CfiKind kind() const { return kind_; }
  const PointerBases& bases() const { return bases_; }
  PointerBases& bases() { return bases_; }

  RecordLabels cie(const CieSpec& spec);
  RecordLabels fde(Label cie, const FdeSpec& spec);
  CfiBuilder& terminator();  // a zero length

  std::vector<uint8_t> finish() const { return b_.finish(); }
  dwarf::CfiSectionInfo info(uint8_t address_size = 8) const;

 private:
  RecordLabels header(bool dwarf64, std::optional<uint64_t> length);
  void pad(size_t pad_to, Label start);

  dwarf::CfiKind kind_;
  PointerBases bases_;
  SectionBuilder b_;
};

}  // namespace framewalk::test

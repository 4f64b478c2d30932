#include "support/section_builder.hpp"

#include <cstdio>
#include <cstdlib>

namespace framewalk::test {

namespace {

[[noreturn]] void fail(const char* what) {
  std::fprintf(stderr, "SectionBuilder: %s\n", what);
  std::abort();
}

void put_fixed(std::vector<uint8_t>& out, size_t pos, uint64_t v, unsigned size, Endian e) {
  for (unsigned i = 0; i < size; ++i) {
    const unsigned shift = e == Endian::kLittle ? 8 * i : 8 * (size - 1 - i);
    out[pos + i] = static_cast<uint8_t>(v >> shift);
  }
}

}  // namespace

std::vector<uint8_t> uleb_bytes(uint64_t value) {
  std::vector<uint8_t> out;
  do {
    uint8_t byte = value & 0x7f;
    value >>= 7;
    if (value != 0) byte |= 0x80;
    out.push_back(byte);
  } while (value != 0);
  return out;
}

std::vector<uint8_t> sleb_bytes(int64_t value) {
  std::vector<uint8_t> out;
  for (;;) {
    const uint8_t byte = static_cast<uint8_t>(value & 0x7f);
    value >>= 7;  // arithmetic shift
    const bool done = (value == 0 && !(byte & 0x40)) || (value == -1 && (byte & 0x40));
    out.push_back(done ? byte : static_cast<uint8_t>(byte | 0x80));
    if (done) return out;
  }
}

SectionBuilder& SectionBuilder::u8(uint8_t v) {
  bytes_.push_back(v);
  return *this;
}

SectionBuilder& SectionBuilder::fixed(uint64_t v, unsigned size, Endian e) {
  if (size != 1 && size != 2 && size != 4 && size != 8) fail("bad fixed size");
  const size_t pos = bytes_.size();
  bytes_.resize(pos + size);
  put_fixed(bytes_, pos, v, size, e);
  return *this;
}

SectionBuilder& SectionBuilder::uleb(uint64_t v) { return bytes(uleb_bytes(v)); }
SectionBuilder& SectionBuilder::sleb(int64_t v) { return bytes(sleb_bytes(v)); }

SectionBuilder& SectionBuilder::uleb_padded(uint64_t v, unsigned width) {
  for (unsigned i = 0; i < width; ++i) {
    uint8_t byte = v & 0x7f;
    v >>= 7;
    if (i + 1 < width) byte |= 0x80;
    bytes_.push_back(byte);
  }
  if (v != 0) fail("ULEB128 value does not fit its width");
  return *this;
}

SectionBuilder& SectionBuilder::bytes(std::initializer_list<uint8_t> b) {
  bytes_.insert(bytes_.end(), b.begin(), b.end());
  return *this;
}

SectionBuilder& SectionBuilder::bytes(const std::vector<uint8_t>& b) {
  bytes_.insert(bytes_.end(), b.begin(), b.end());
  return *this;
}

SectionBuilder& SectionBuilder::str(std::string_view s) {
  raw(s);
  return u8(0);
}

SectionBuilder& SectionBuilder::raw(std::string_view s) {
  bytes_.insert(bytes_.end(), s.begin(), s.end());
  return *this;
}

SectionBuilder& SectionBuilder::zeros(size_t n) {
  bytes_.resize(bytes_.size() + n, 0);
  return *this;
}

SectionBuilder& SectionBuilder::align(size_t alignment, uint8_t fill) {
  while (alignment > 1 && bytes_.size() % alignment != 0) bytes_.push_back(fill);
  return *this;
}

Label SectionBuilder::new_label() {
  labels_.push_back(-1);
  return Label{static_cast<int>(labels_.size() - 1)};
}

SectionBuilder& SectionBuilder::mark(Label label) {
  if (!label.valid() || static_cast<size_t>(label.id) >= labels_.size()) fail("unknown label");
  if (labels_[label.id] >= 0) fail("label defined twice");
  labels_[label.id] = static_cast<int64_t>(bytes_.size());
  return *this;
}

Label SectionBuilder::here() {
  Label l = new_label();
  mark(l);
  return l;
}

bool SectionBuilder::defined(Label label) const {
  return label.valid() && static_cast<size_t>(label.id) < labels_.size() && labels_[label.id] >= 0;
}

uint64_t SectionBuilder::offset_of(Label label) const {
  if (!defined(label)) fail("undefined label");
  return static_cast<uint64_t>(labels_[label.id]);
}

SectionBuilder& SectionBuilder::ref(const Ref& r, unsigned size) {
  fixups_.push_back(Fixup{bytes_.size(), size, false, r});
  return zeros(size);
}

SectionBuilder& SectionBuilder::ref_uleb(const Ref& r, unsigned width) {
  fixups_.push_back(Fixup{bytes_.size(), width, true, r});
  return zeros(width);
}

SectionBuilder& SectionBuilder::encoded(uint8_t encoding, uint64_t value, unsigned address_size,
                                        const PointerBases& bases) {
  const uint8_t application = encoding & 0x70;
  if (application == pe::kAligned) {
    while ((bases.section_address + bytes_.size()) % address_size != 0) bytes_.push_back(0);
  }
  uint64_t stored = value;
  switch (application) {
    case pe::kPcrel: stored = value - (bases.section_address + bytes_.size()); break;
    case pe::kTextrel: stored = value - bases.text; break;
    case pe::kDatarel: stored = value - bases.data; break;
    case pe::kFuncrel: stored = value - bases.func; break;
    default: break;
  }
  switch (encoding & 0x0f) {
    case pe::kAbsptr: return fixed(stored, address_size);
    case pe::kUleb128: return uleb(stored);
    case pe::kSleb128: return sleb(static_cast<int64_t>(stored));
    case pe::kUdata2: case pe::kSdata2: return u16(static_cast<uint16_t>(stored));
    case pe::kUdata4: case pe::kSdata4: return u32(static_cast<uint32_t>(stored));
    case pe::kUdata8: case pe::kSdata8: return u64(stored);
    default: fail("encoded(): bad encoding");
  }
}

std::vector<uint8_t> SectionBuilder::finish() const {
  std::vector<uint8_t> out = bytes_;
  for (const Fixup& f : fixups_) {
    int64_t v = f.ref.addend;
    if (f.ref.plus.valid()) v += static_cast<int64_t>(offset_of(f.ref.plus));
    if (f.ref.minus.valid()) v -= static_cast<int64_t>(offset_of(f.ref.minus));
    if (f.ref.minus_self) v -= static_cast<int64_t>(f.pos);
    if (f.ref.plus_self) v += static_cast<int64_t>(f.pos);
    const uint64_t u = static_cast<uint64_t>(v);
    if (f.is_uleb) {
      uint64_t rest = u;
      for (unsigned i = 0; i < f.size; ++i) {
        uint8_t byte = rest & 0x7f;
        rest >>= 7;
        if (i + 1 < f.size) byte |= 0x80;
        out[f.pos + i] = byte;
      }
      if (rest != 0) fail("ULEB128 reference does not fit its width");
    } else {
      if (f.size < 8) {
        const int64_t lo = -(int64_t{1} << (8 * f.size - 1));
        const int64_t hi = (int64_t{1} << (8 * f.size)) - 1;
        if (v < lo || v > hi) fail("reference does not fit its field");
      }
      put_fixed(out, f.pos, u, f.size, endian_);
    }
  }
  return out;
}

// ---- CfiBuilder -----------------------------------------------------------

CfiBuilder::CfiBuilder(dwarf::CfiKind kind, Endian endian, uint64_t section_address)
    : kind_(kind), b_(endian) {
  bases_.section_address = section_address;
}

dwarf::CfiSectionInfo CfiBuilder::info(uint8_t address_size) const {
  dwarf::CfiSectionInfo i;
  i.kind = kind_;
  i.endian = b_.endian();
  i.address_size = address_size;
  i.bases = bases_;
  return i;
}

RecordLabels CfiBuilder::header(bool dwarf64, std::optional<uint64_t> length) {
  RecordLabels l;
  l.start = b_.here();
  l.id = b_.new_label();
  l.body = b_.new_label();
  l.instructions = b_.new_label();
  l.end = b_.new_label();
  if (dwarf64) {
    b_.u32(0xffffffffu);
    if (length) b_.u64(*length); else b_.ref({l.end, l.id}, 8);
  } else {
    if (length) b_.u32(static_cast<uint32_t>(*length)); else b_.ref({l.end, l.id}, 4);
  }
  b_.mark(l.id);
  return l;
}

void CfiBuilder::pad(size_t pad_to, Label start) {
  if (pad_to <= 1) return;
  while ((b_.size() - b_.offset_of(start)) % pad_to != 0) b_.u8(0);  // DW_CFA_nop
}

RecordLabels CfiBuilder::cie(const CieSpec& spec) {
  RecordLabels l = header(spec.dwarf64, spec.length);
  const unsigned id_size = spec.dwarf64 ? 8 : 4;
  uint64_t id = kind_ == dwarf::CfiKind::kEhFrame ? 0 : (spec.dwarf64 ? ~uint64_t{0} : 0xffffffffu);
  if (spec.id) id = *spec.id;
  b_.fixed(id, id_size);
  b_.mark(l.body);
  b_.u8(spec.version);
  b_.str(spec.augmentation);
  if (spec.eh_data) b_.fixed(*spec.eh_data, spec.address_size);
  if (spec.version >= 4) b_.u8(spec.address_size).u8(spec.segment_size);
  b_.uleb(spec.code_alignment).sleb(spec.data_alignment);
  if (spec.version == 1) b_.u8(static_cast<uint8_t>(spec.return_address_register));
  else b_.uleb(spec.return_address_register);
  if (!spec.augmentation.empty() && spec.augmentation[0] == 'z') {
    const Label aug_start = b_.new_label(), aug_end = b_.new_label();
    b_.ref_uleb({aug_end, aug_start}, 1);
    b_.mark(aug_start);
    if (spec.raw_augmentation_data) {
      b_.bytes(*spec.raw_augmentation_data);
    } else {
      for (size_t i = 1; i < spec.augmentation.size(); ++i) {
        switch (spec.augmentation[i]) {
          case 'R': b_.u8(spec.fde_encoding); break;
          case 'L': b_.u8(spec.lsda_encoding); break;
          case 'P':
            b_.u8(spec.personality_encoding);
            b_.encoded(spec.personality_encoding, spec.personality, spec.address_size, bases_);
            break;
          default: break;
        }
      }
      b_.bytes(spec.extra_augmentation_data);
    }
    b_.mark(aug_end);
  }
  b_.mark(l.instructions);
  b_.bytes(spec.instructions);
  pad(spec.pad_to, l.start);
  b_.mark(l.end);
  return l;
}

RecordLabels CfiBuilder::fde(Label cie, const FdeSpec& spec) {
  RecordLabels l = header(spec.dwarf64, spec.length);
  const unsigned id_size = spec.dwarf64 ? 8 : 4;
  if (spec.cie_pointer) {
    b_.fixed(*spec.cie_pointer, id_size);
  } else if (kind_ == dwarf::CfiKind::kEhFrame) {
    SectionBuilder::Ref r;
    r.minus = cie;
    r.plus_self = true;
    b_.ref(r, id_size);  // backwards from this field to the CIE
  } else {
    b_.ref({cie, {}}, id_size);  // section offset of the CIE
  }
  b_.mark(l.body);
  if (spec.segment_size) b_.fixed(spec.segment_selector, spec.segment_size);
  b_.encoded(spec.encoding, spec.pc_begin, spec.address_size, bases_);
  // The range has the same format, never relative.
  b_.encoded(spec.encoding & 0x0f, spec.pc_range, spec.address_size, bases_);
  if (spec.augmentation) {
    const Label aug_start = b_.new_label(), aug_end = b_.new_label();
    b_.ref_uleb({aug_end, aug_start}, 1);
    b_.mark(aug_start);
    if (spec.lsda) b_.encoded(spec.lsda_encoding, *spec.lsda, spec.address_size, bases_);
    b_.bytes(spec.augmentation_data);
    b_.mark(aug_end);
  }
  b_.mark(l.instructions);
  b_.bytes(spec.instructions);
  pad(spec.pad_to, l.start);
  b_.mark(l.end);
  return l;
}

CfiBuilder& CfiBuilder::terminator() {
  b_.u32(0);
  return *this;
}

}  // namespace framewalk::test

// Hand-written SFrame sections for tests: a spec of the header, FDEs and FREs,
// encoded in either byte order for version 1, 2 or 3, with every field
// overridable so that tests can build broken sections too. build() also
// reports where each record landed, for error-offset expectations.
#pragma once

#include <cstdint>
#include <deque>
#include <optional>
#include <vector>

#include "base/byte_reader.hpp"

namespace framewalk::sframe::test {

struct FreSpec {
  uint32_t start = 0;
  bool base_sp = true;             // DEFAULT FDEs: CFA base SP (else FP)
  unsigned word_size = 1;          // 1, 2 or 4
  std::vector<int64_t> words;      // stored truncated to word_size
  bool mangled_ra = false;
  std::optional<uint8_t> info;     // overrides the computed info byte
};

struct FdeSpec {
  uint64_t start = 0x1000;         // resolved function address
  std::optional<int64_t> raw_start;  // overrides the stored start field
  uint32_t size = 0x40;
  unsigned fre_type = 0;           // 0 ADDR1, 1 ADDR2, 2 ADDR4 (start-address width)
  bool pc_mask = false;
  bool pauth_key_b = false;
  bool signal = false;             // V3
  unsigned fde_type = 0;           // V3 info2: 0 DEFAULT, 1 FLEX
  uint8_t rep_size = 0;
  std::vector<FreSpec> fres;
  std::optional<uint32_t> num_fres;  // overrides the stored FRE count
  std::optional<uint32_t> fre_off;   // overrides the stored FRE offset
  std::optional<uint8_t> info;       // overrides the info byte
  std::optional<uint8_t> info2;      // overrides the V3 info2 byte
};

struct SectionSpec {
  uint8_t version = 3;
  Endian endian = Endian::kLittle;
  std::optional<uint8_t> flags;    // default: SORTED, plus PCREL for V2/V3
  uint8_t abi = 3;                 // AMD64
  int8_t fixed_fp = 0;
  int8_t fixed_ra = -8;
  uint8_t auxhdr_len = 0;
  uint64_t address = 0x2000;
  std::vector<FdeSpec> fdes;
  std::optional<uint16_t> magic;
  std::optional<uint32_t> num_fdes, num_fres, fre_len, fdeoff, freoff;
  std::vector<uint8_t> trailing;   // bytes after the FRE sub-section
};

struct Layout {
  std::vector<uint64_t> fde_offsets;   // V3: index entries
  std::vector<uint64_t> attr_offsets;  // V3 only
  std::vector<std::vector<uint64_t>> fre_offsets;
  uint64_t fres_start = 0;
};

inline uint8_t flags_for(const SectionSpec& s) {
  if (s.flags) return *s.flags;
  return s.version == 1 ? 0x1 : 0x5;
}

class Writer {
 public:
  explicit Writer(Endian e) : e_(e) {}
  void u8(uint64_t v) { out.push_back(static_cast<uint8_t>(v)); }
  void fixed(uint64_t v, unsigned n) {
    for (unsigned i = 0; i < n; ++i) {
      const unsigned shift = e_ == Endian::kLittle ? 8 * i : 8 * (n - 1 - i);
      out.push_back(static_cast<uint8_t>(v >> shift));
    }
  }
  void put_at(size_t pos, uint64_t v, unsigned n) {
    for (unsigned i = 0; i < n; ++i) {
      const unsigned shift = e_ == Endian::kLittle ? 8 * i : 8 * (n - 1 - i);
      out[pos + i] = static_cast<uint8_t>(v >> shift);
    }
  }
  std::vector<uint8_t> out;

 private:
  Endian e_;
};

inline uint8_t fre_info(const FreSpec& f) {
  if (f.info) return *f.info;
  const unsigned size_code = f.word_size == 1 ? 0 : f.word_size == 2 ? 1 : 2;
  return static_cast<uint8_t>((f.base_sp ? 1 : 0) | (f.words.size() << 1) | (size_code << 5) |
                              (f.mangled_ra ? 0x80 : 0));
}

inline uint8_t fde_info(const SectionSpec& s, const FdeSpec& f) {
  if (f.info) return *f.info;
  return static_cast<uint8_t>(f.fre_type | (f.pc_mask ? 0x10 : 0) | (f.pauth_key_b ? 0x20 : 0) |
                              (s.version == 3 && f.signal ? 0x80 : 0));
}

// Encodes `spec`; fills `layout` when given.
inline std::vector<uint8_t> build(const SectionSpec& spec, Layout* layout = nullptr) {
  Layout l;
  const unsigned fde_size = spec.version == 1 ? 17 : spec.version == 2 ? 20 : 16;
  const uint8_t flags = flags_for(spec);
  const bool pcrel = flags & 0x4;
  const uint32_t fdeoff = spec.fdeoff.value_or(0);

  // The FRE sub-section first: it decides every FDE's FRE offset.
  Writer fres(spec.endian);
  std::vector<uint32_t> fre_offs;
  std::vector<std::vector<uint64_t>> fre_rel;
  uint32_t total_fres = 0;
  for (const FdeSpec& f : spec.fdes) {
    fre_offs.push_back(static_cast<uint32_t>(fres.out.size()));
    if (spec.version == 3) {
      fres.fixed(f.num_fres.value_or(static_cast<uint32_t>(f.fres.size())), 2);
      fres.u8(fde_info(spec, f));
      fres.u8(f.info2.value_or(static_cast<uint8_t>(f.fde_type)));
      fres.u8(f.rep_size);
    }
    std::vector<uint64_t> rel;
    for (const FreSpec& r : f.fres) {
      rel.push_back(fres.out.size());
      fres.fixed(r.start, 1u << f.fre_type);
      fres.u8(fre_info(r));
      for (int64_t w : r.words) fres.fixed(static_cast<uint64_t>(w), r.word_size);
    }
    fre_rel.push_back(rel);
    total_fres += static_cast<uint32_t>(f.fres.size());
  }

  const uint32_t fdes_bytes = static_cast<uint32_t>(spec.fdes.size() * fde_size);
  const uint32_t freoff = spec.freoff.value_or(fdeoff + fdes_bytes);
  const uint64_t header_size = 28u + spec.auxhdr_len;
  Writer w(spec.endian);
  w.fixed(spec.magic.value_or(0xdee2), 2);
  w.u8(spec.version);
  w.u8(flags);
  w.u8(spec.abi);
  w.u8(static_cast<uint8_t>(spec.fixed_fp));
  w.u8(static_cast<uint8_t>(spec.fixed_ra));
  w.u8(spec.auxhdr_len);
  w.fixed(spec.num_fdes.value_or(static_cast<uint32_t>(spec.fdes.size())), 4);
  w.fixed(spec.num_fres.value_or(total_fres), 4);
  w.fixed(spec.fre_len.value_or(static_cast<uint32_t>(fres.out.size())), 4);
  w.fixed(fdeoff, 4);
  w.fixed(freoff, 4);
  w.out.resize(header_size + fdeoff, 0);
  for (size_t i = 0; i < spec.fdes.size(); ++i) {
    const FdeSpec& f = spec.fdes[i];
    const uint64_t at = w.out.size();
    l.fde_offsets.push_back(at);
    const uint64_t base = pcrel ? spec.address + at : spec.address;
    const int64_t raw = f.raw_start.value_or(static_cast<int64_t>(f.start - base));
    w.fixed(static_cast<uint64_t>(raw), spec.version == 3 ? 8 : 4);
    w.fixed(f.size, 4);
    w.fixed(f.fre_off.value_or(fre_offs[i]), 4);
    if (spec.version != 3) {
      w.fixed(f.num_fres.value_or(static_cast<uint32_t>(f.fres.size())), 4);
      w.u8(fde_info(spec, f));
      if (spec.version == 2) {
        w.u8(f.rep_size);
        w.fixed(0, 2);
      }
    }
  }
  w.out.resize(header_size + freoff, 0);
  l.fres_start = w.out.size();
  for (size_t i = 0; i < spec.fdes.size(); ++i) {
    if (spec.version == 3) l.attr_offsets.push_back(l.fres_start + fre_offs[i]);
    std::vector<uint64_t> offs;
    for (uint64_t r : fre_rel[i]) offs.push_back(l.fres_start + r);
    l.fre_offsets.push_back(offs);
  }
  w.out.insert(w.out.end(), fres.out.begin(), fres.out.end());
  w.out.insert(w.out.end(), spec.trailing.begin(), spec.trailing.end());
  if (layout) *layout = l;
  return w.out;
}

// Common shapes.
inline FreSpec fre(uint32_t start, std::vector<int64_t> words, bool base_sp = true, unsigned word_size = 1) {
  FreSpec f;
  f.start = start;
  f.words = std::move(words);
  f.base_sp = base_sp;
  f.word_size = word_size;
  return f;
}

// A FLEX control word: (reg << 3) | (deref << 1) | reg_p.
inline int64_t ctrl(unsigned reg, bool deref, bool reg_p = true) {
  return static_cast<int64_t>((uint64_t{reg} << 3) | (deref ? 2u : 0u) | (reg_p ? 1u : 0u));
}

// A Section refers to the bytes it was parsed from: tests keep every
// section's bytes here for the whole run.
inline const std::vector<uint8_t>& keep(std::vector<uint8_t> bytes) {
  static std::deque<std::vector<uint8_t>> kept;
  return kept.emplace_back(std::move(bytes));
}

}  // namespace framewalk::sframe::test

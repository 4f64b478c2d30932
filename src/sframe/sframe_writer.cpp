#include "sframe/sframe_writer.hpp"

#include <algorithm>
#include <limits>
#include <numeric>

namespace framewalk::sframe {

namespace {

constexpr uint64_t kHeaderBytes = kHeaderSize;
constexpr unsigned kV3AttrBytes = 5;

bool big_endian(Abi abi) { return abi == Abi::kAarch64Big || abi == Abi::kS390xBig; }

class Out {
 public:
  explicit Out(bool big) : big_(big) {}
  void u8(uint64_t v) { bytes.push_back(static_cast<uint8_t>(v)); }
  void fixed(uint64_t v, unsigned n) {
    for (unsigned i = 0; i < n; ++i) {
      const unsigned shift = big_ ? 8 * (n - 1 - i) : 8 * i;
      bytes.push_back(static_cast<uint8_t>(v >> shift));
    }
  }
  std::vector<uint8_t> bytes;

 private:
  bool big_;
};

bool same_rule(const Rule& a, const Rule& b) {
  if (a.kind != b.kind) return false;
  if (a.kind == Rule::Kind::kUnchanged) return true;
  return a.deref == b.deref && a.offset == b.offset && (a.kind == Rule::Kind::kCfa || a.reg == b.reg);
}

Rule fixed_rule(int8_t fixed) {
  Rule r;
  if (fixed != 0) {
    r.kind = Rule::Kind::kCfa;
    r.deref = true;
    r.offset = fixed;
  }
  return r;
}

// One data word and how it is read back: offsets signed, control words unsigned.
struct Word {
  int64_t value;
  bool control;
};

// At most 6 words are ever written (FLEX: CFA, RA and FP pairs): a fixed
// array, as FREs are encoded three times per section and there are millions.
struct Words {
  static constexpr size_t kCapacity = 8;
  Word items[kCapacity];
  size_t count = 0;
  void push_back(Word w) { items[count++] = w; }
  bool empty() const { return count == 0; }
  size_t size() const { return count; }
  const Word* begin() const { return items; }
  const Word* end() const { return items + count; }
};

struct EncodedFre {
  bool base_sp = false;
  Words words;
};

bool fits_i32(int64_t v) { return v >= std::numeric_limits<int32_t>::min() && v <= std::numeric_limits<int32_t>::max(); }

// The smallest of 1, 2, 4 bytes holding every word; 0 if none does.
unsigned word_size(const Words& words) {
  unsigned size = 1;
  for (const Word& w : words) {
    unsigned need;
    if (w.control) {
      if (w.value < 0 || w.value > 0xffffffffLL) return 0;
      need = w.value <= 0xff ? 1 : w.value <= 0xffff ? 2 : 4;
    } else {
      if (!fits_i32(w.value)) return 0;
      need = (w.value >= -128 && w.value <= 127) ? 1 : (w.value >= -32768 && w.value <= 32767) ? 2 : 4;
    }
    size = std::max(size, need);
  }
  return size;
}

// The stored CFA offset: s390x keeps (offset - 160) / 8.
bool encode_cfa_offset(const WriterOptions& o, int64_t offset, int64_t* stored) {
  if (o.abi != Abi::kS390xBig) {
    *stored = offset;
    return true;
  }
  const int64_t biased = offset - kS390xCfaAdjustment;
  if (biased % kS390xCfaFactor != 0) return false;
  *stored = biased / kS390xCfaFactor;
  return true;
}

Unencodable encode_default(const WriterOptions& o, const FrameRules& rules, EncodedFre* out) {
  const AbiRegisters regs = abi_registers(o.abi);
  const Rule& cfa = rules.cfa;
  if (cfa.kind != Rule::Kind::kRegister || cfa.deref || (cfa.reg != regs.sp && cfa.reg != regs.fp))
    return Unencodable::kCfaNotDefault;
  int64_t stored;
  if (!encode_cfa_offset(o, cfa.offset, &stored)) return Unencodable::kOffsetRange;
  out->base_sp = cfa.reg == regs.sp;
  out->words.push_back({stored, false});
  // s390x V2 says "held in register N" with the odd word (N << 1) | 1, so
  // an odd offset cannot be written there.
  const bool registers_in_words = o.abi == Abi::kS390xBig && o.version == kVersion2;
  // A tracked slot: "saved at CFA + offset" with a non-zero offset (0 is padding).
  auto slot = [&](const Rule& r, bool* present, int64_t* value) {
    *present = false;
    if (r.kind == Rule::Kind::kUnchanged) return true;
    if (registers_in_words && r.kind == Rule::Kind::kRegister && !r.deref && r.offset == 0) {
      *present = true;
      *value = (int64_t{r.reg} << 1) | 1;
      return true;
    }
    if (r.kind != Rule::Kind::kCfa || !r.deref || r.offset == 0) return false;
    if (registers_in_words && (r.offset & 1)) return false;
    *present = true;
    *value = r.offset;
    return true;
  };
  bool ra_word = false, fp_word = false;
  int64_t ra_value = 0, fp_value = 0;
  if (o.fixed_ra_offset != 0) {
    if (!same_rule(rules.ra, fixed_rule(o.fixed_ra_offset))) return Unencodable::kRaNotDefault;
  } else if (!slot(rules.ra, &ra_word, &ra_value)) {
    return Unencodable::kRaNotDefault;
  }
  if (o.fixed_fp_offset != 0) {
    if (!same_rule(rules.fp, fixed_rule(o.fixed_fp_offset))) return Unencodable::kFpNotDefault;
  } else if (!slot(rules.fp, &fp_word, &fp_value)) {
    return Unencodable::kFpNotDefault;
  }
  if (o.fixed_ra_offset == 0 && (ra_word || fp_word)) out->words.push_back({ra_word ? ra_value : 0, false});
  if (o.fixed_fp_offset == 0 && fp_word) out->words.push_back({fp_value, false});
  return Unencodable::kNone;
}

// A FLEX (control, offset) pair for an RA or FP rule; false when the control
// word would read as padding or the rule is "unchanged" (only the default
// rule, written as padding or nothing, can mean that).
bool flex_pair(const Rule& r, Words* words) {
  uint64_t ctrl;
  switch (r.kind) {
    case Rule::Kind::kUnchanged: return false;
    case Rule::Kind::kCfa: ctrl = r.deref ? 2u : 0u; break;
    case Rule::Kind::kRegister: ctrl = (uint64_t{r.reg} << 3) | (r.deref ? 2u : 0u) | 1u; break;
    default: return false;
  }
  if (ctrl == 0) return false;
  words->push_back({static_cast<int64_t>(ctrl), true});
  words->push_back({r.offset, false});
  return true;
}

Unencodable encode_flex(const WriterOptions& o, const FrameRules& rules, EncodedFre* out) {
  const Rule& cfa = rules.cfa;
  if (cfa.kind != Rule::Kind::kRegister) return Unencodable::kCfaFlexBase;
  int64_t stored;
  if (!encode_cfa_offset(o, cfa.offset, &stored)) return Unencodable::kOffsetRange;
  out->base_sp = false;  // unused in FLEX FDEs (gas writes 0)
  out->words.push_back({static_cast<int64_t>((uint64_t{cfa.reg} << 3) | (cfa.deref ? 2u : 0u) | 1u), true});
  out->words.push_back({stored, false});
  const bool ra_default = same_rule(rules.ra, fixed_rule(o.fixed_ra_offset));
  const bool fp_default = same_rule(rules.fp, fixed_rule(o.fixed_fp_offset));
  Words ra, fp;
  if (!ra_default && !flex_pair(rules.ra, &ra)) return Unencodable::kRaFlexRule;
  if (!fp_default && !flex_pair(rules.fp, &fp)) return Unencodable::kFpFlexRule;
  for (const Word& w : ra) out->words.push_back(w);
  if (ra.empty() && !fp.empty()) out->words.push_back({0, true});  // RA padding before an FP pair
  for (const Word& w : fp) out->words.push_back(w);
  return Unencodable::kNone;
}

Unencodable encode_fre(const WriterOptions& o, const FdeDesc& fde, const FreDesc& fre, EncodedFre* out) {
  *out = EncodedFre{};
  if (fre.rules.ra_undefined) return o.version == kVersion1 ? Unencodable::kRaUndefinedInV1 : Unencodable::kNone;
  const Unencodable u = fde.fde_type == FdeType::kFlex ? encode_flex(o, fre.rules, out) : encode_default(o, fre.rules, out);
  if (u != Unencodable::kNone) return u;
  if (out->words.size() > static_cast<size_t>(Fre::kMaxWords) || word_size(out->words) == 0) return Unencodable::kOffsetRange;
  return Unencodable::kNone;
}

uint8_t fre_type_for(const FdeDesc& fde) {
  uint32_t max_start = 0;
  for (const FreDesc& f : fde.fres) max_start = std::max(max_start, f.start);
  return max_start <= 0xff ? 0 : max_start <= 0xffff ? 1 : 2;
}

}  // namespace

WriterOptions writer_options_for(Abi abi, uint8_t version, uint64_t section_address) {
  WriterOptions o;
  o.version = version;
  o.abi = abi;
  o.fixed_fp_offset = 0;
  o.fixed_ra_offset = abi == Abi::kAmd64Little ? -8 : 0;
  o.section_address = section_address;
  return o;
}

const char* to_string(Unencodable u) {
  switch (u) {
    case Unencodable::kNone: return "encodable";
    case Unencodable::kFlexNeedsV3: return "FLEX FDE needs SFrame v3";
    case Unencodable::kSignalNeedsV3: return "signal frame bit needs SFrame v3";
    case Unencodable::kRaUndefinedInV1: return "RA-undefined FRE needs SFrame v2 or later";
    case Unencodable::kCfaNotDefault: return "CFA rule not SP/FP + offset (needs FLEX)";
    case Unencodable::kRaNotDefault: return "RA rule not the fixed or a CFA-relative slot (needs FLEX)";
    case Unencodable::kFpNotDefault: return "FP rule not a CFA-relative slot (needs FLEX)";
    case Unencodable::kCfaFlexBase: return "CFA not based on a register";
    case Unencodable::kRaFlexRule: return "RA rule not expressible by a FLEX control word";
    case Unencodable::kFpFlexRule: return "FP rule not expressible by a FLEX control word";
    case Unencodable::kOffsetRange: return "offset out of range of the data words";
    case Unencodable::kTooManyFres: return "more than 65535 FREs in one function";
    case Unencodable::kFreOrder: return "FRE starts not strictly increasing";
    case Unencodable::kFreBeyondFunction: return "FRE starts beyond its function or repetition block";
    case Unencodable::kRepSize: return "PCMASK repetition block size not encodable";
    case Unencodable::kStartRange: return "function start out of reach of a 32-bit start field";
    case Unencodable::kDuplicateStart: return "two functions start at the same address";
    case Unencodable::kFunctionWraps: return "function runs past the end of the address space";
  }
  return "unknown";
}

bool fits_default(const WriterOptions& options, const FrameRules& rules) {
  if (rules.ra_undefined) return true;
  EncodedFre e;
  return encode_default(options, rules, &e) == Unencodable::kNone && word_size(e.words) != 0;
}

WriteProblem check_fde(const WriterOptions& o, const FdeDesc& fde) {
  WriteProblem p;
  auto fail = [&](Unencodable u, uint32_t fre = 0) {
    p.what = u;
    p.fre = fre;
    return p;
  };
  if (fde.fde_type == FdeType::kFlex && o.version < kVersion3) return fail(Unencodable::kFlexNeedsV3);
  if (fde.signal && o.version < kVersion3) return fail(Unencodable::kSignalNeedsV3);
  if (fde.size > ~fde.start) return fail(Unencodable::kFunctionWraps);
  if (o.version == kVersion3 && fde.fres.size() > 0xffff) return fail(Unencodable::kTooManyFres);
  if (fde.fres.size() > 0xffffffffu) return fail(Unencodable::kTooManyFres);
  if (fde.pc_type == PcType::kMask) {
    if (o.version == kVersion1 ? fde.rep_size != 16 : fde.rep_size == 0) return fail(Unencodable::kRepSize);
  }
  EncodedFre e;
  for (size_t i = 0; i < fde.fres.size(); ++i) {
    const FreDesc& f = fde.fres[i];
    const uint32_t idx = static_cast<uint32_t>(i);
    if (i > 0 && f.start <= fde.fres[i - 1].start) return fail(Unencodable::kFreOrder, idx);
    if (f.start > fde.size || (fde.pc_type == PcType::kMask && f.start >= fde.rep_size))
      return fail(Unencodable::kFreBeyondFunction, idx);
    if (Unencodable u = encode_fre(o, fde, f, &e); u != Unencodable::kNone) return fail(u, idx);
  }
  return p;
}

WrittenSection write_section(const WriterOptions& o, std::span<const FdeDesc> fdes) {
  WrittenSection result;
  for (size_t i = 0; i < fdes.size(); ++i) {
    WriteProblem p = check_fde(o, fdes[i]);
    if (!p.ok()) {
      p.fde = static_cast<uint32_t>(i);
      result.problem = p;
      return result;
    }
  }
  std::vector<uint32_t> order(fdes.size());
  std::iota(order.begin(), order.end(), 0u);
  std::stable_sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) { return fdes[a].start < fdes[b].start; });
  for (size_t i = 1; i < order.size(); ++i)
    if (fdes[order[i]].start == fdes[order[i - 1]].start) {
      result.problem = WriteProblem{Unencodable::kDuplicateStart, order[i], 0};
      return result;
    }

  const bool big = big_endian(o.abi);
  const unsigned entry_size = Section::fde_size(o.version);
  const bool pcrel = o.version >= kVersion2;

  // The FRE sub-section first: it gives every FDE its FRE offset.
  Out fres(big);
  std::vector<uint32_t> fre_offsets(fdes.size());
  std::vector<uint8_t> infos(fdes.size());
  uint64_t total_fres = 0;
  EncodedFre e;
  for (uint32_t idx : order) {
    const FdeDesc& fde = fdes[idx];
    if (fres.bytes.size() > 0xffffffffu) {
      result.problem = WriteProblem{Unencodable::kOffsetRange, idx, 0};
      return result;
    }
    fre_offsets[idx] = static_cast<uint32_t>(fres.bytes.size());
    const uint8_t fre_type = fre_type_for(fde);
    const uint8_t info = static_cast<uint8_t>(fre_type | (fde.pc_type == PcType::kMask ? 0x10 : 0) |
                                              (fde.pauth_key_b ? 0x20 : 0) |
                                              (o.version >= kVersion3 && fde.signal ? 0x80 : 0));
    infos[idx] = info;
    if (o.version >= kVersion3) {
      fres.fixed(fde.fres.size(), 2);
      fres.u8(info);
      fres.u8(static_cast<uint8_t>(fde.fde_type));
      fres.u8(fde.rep_size);
    }
    const unsigned addr_size = 1u << fre_type;
    for (const FreDesc& f : fde.fres) {
      (void)encode_fre(o, fde, f, &e);  // checked by check_fde
      const unsigned size = e.words.empty() ? 1 : word_size(e.words);
      const unsigned size_code = size == 1 ? 0 : size == 2 ? 1 : 2;
      fres.fixed(f.start, addr_size);
      if (f.rules.ra_undefined) {
        // As gas writes it (base 0, no words, size 0), with the PAC bit if the rules have it.
        fres.u8(f.rules.ra_mangled ? 0x80u : 0u);
      } else {
        fres.u8((e.base_sp ? 1u : 0u) | (static_cast<unsigned>(e.words.size()) << 1) | (size_code << 5) |
                (f.rules.ra_mangled ? 0x80u : 0u));
      }
      for (const Word& w : e.words) fres.fixed(static_cast<uint64_t>(w.value), size);
    }
    total_fres += fde.fres.size();
  }
  if (fres.bytes.size() > 0xffffffffu || total_fres > 0xffffffffu || fdes.size() > 0xffffffffu / entry_size) {
    result.problem = WriteProblem{Unencodable::kOffsetRange, 0, 0};
    return result;
  }

  Out out(big);
  out.fixed(kMagic, 2);
  out.u8(o.version);
  out.u8(kFlagFdeSorted | (pcrel ? kFlagFuncStartPcrel : 0));
  out.u8(static_cast<uint8_t>(o.abi));
  out.u8(static_cast<uint8_t>(o.fixed_fp_offset));
  out.u8(static_cast<uint8_t>(o.fixed_ra_offset));
  out.u8(0);  // auxhdr_len
  out.fixed(fdes.size(), 4);
  out.fixed(total_fres, 4);
  out.fixed(fres.bytes.size(), 4);
  out.fixed(0, 4);                          // fdeoff
  out.fixed(fdes.size() * entry_size, 4);   // freoff
  for (size_t i = 0; i < order.size(); ++i) {
    const uint32_t idx = order[i];
    const FdeDesc& fde = fdes[idx];
    const uint64_t field = kHeaderBytes + i * entry_size;
    const uint64_t base = pcrel ? o.section_address + field : o.section_address;
    const int64_t raw = static_cast<int64_t>(fde.start - base);
    if (o.version >= kVersion3) {
      out.fixed(static_cast<uint64_t>(raw), 8);
      out.fixed(fde.size, 4);
      out.fixed(fre_offsets[idx], 4);
      continue;
    }
    if (!fits_i32(raw)) {
      result.problem = WriteProblem{Unencodable::kStartRange, idx, 0};
      return result;
    }
    out.fixed(static_cast<uint64_t>(raw), 4);
    out.fixed(fde.size, 4);
    out.fixed(fre_offsets[idx], 4);
    out.fixed(fde.fres.size(), 4);
    out.u8(infos[idx]);
    if (o.version == kVersion2) {
      out.u8(fde.rep_size);
      out.fixed(0, 2);
    }
  }
  out.bytes.insert(out.bytes.end(), fres.bytes.begin(), fres.bytes.end());
  result.bytes = std::move(out.bytes);
  result.num_fres = static_cast<uint32_t>(total_fres);
  return result;
}

WriterOptions writer_options_of(const Section& section) {
  WriterOptions o;
  o.version = section.version();
  o.abi = section.abi();
  o.fixed_fp_offset = section.header().cfa_fixed_fp_offset;
  o.fixed_ra_offset = section.header().cfa_fixed_ra_offset;
  o.section_address = section.address();
  return o;
}

Result<std::vector<FdeDesc>> describe_section(const Section& section) {
  std::vector<FdeDesc> out;
  out.reserve(section.fdes().size());
  for (const Fde& fde : section.fdes()) {
    FdeDesc& d = out.emplace_back();
    d.start = fde.start;
    d.size = fde.size;
    d.pc_type = fde.pc_type;
    d.fde_type = fde.fde_type;
    d.rep_size = static_cast<uint8_t>(section.effective_rep_size(fde));  // V1: 16, as the writer wants it
    d.signal = fde.signal;
    d.pauth_key_b = fde.pauth_key_b;
    d.fres.reserve(fde.num_fres);
    Result<void> failed = ok();
    FW_CHECK(section.for_each_fre(fde, [&](const Fre& f) {
      auto rules = section.rules(fde, f);
      if (!rules) {
        failed = rules.error();
        return false;
      }
      FreDesc& r = d.fres.emplace_back();
      r.start = f.start;
      r.rules = *rules;
      for (Rule* rule : {&r.rules.cfa, &r.rules.ra, &r.rules.fp}) rule->source_offset = 0;
      return true;
    }));
    FW_CHECK(failed);
  }
  return out;
}

}  // namespace framewalk::sframe

#include "sframe/sframe_section.hpp"

#include <algorithm>
#include <cstring>

#include "arch/arch.hpp"
#include "base/packed_leb128.hpp"

namespace framewalk::sframe {

namespace {

// Header field offsets.
constexpr uint64_t kOffVersion = 2, kOffFlags = 3, kOffAbi = 4, kOffAuxLen = 7, kOffNumFdes = 8,
                   kOffNumFres = 12, kOffFreLen = 16, kOffFdeOff = 20, kOffFreOff = 24;
constexpr unsigned kV3AttrSize = 5;

constexpr uint32_t kMaxRegister = 0xffff;

bool valid_abi_for(uint8_t abi, uint8_t version, Endian endian) {
  switch (abi) {
    case 1: return endian == Endian::kBig;
    case 2: return endian == Endian::kLittle;
    case 3: return endian == Endian::kLittle;
    case 4: return version >= kVersion2 && endian == Endian::kBig;
    default: return false;
  }
}

uint8_t valid_flags(uint8_t version) {
  switch (version) {
    case kVersion1: return kFlagFdeSorted | kFlagFramePointer;
    case kVersion2: return kFlagFdeSorted | kFlagFramePointer | kFlagFuncStartPcrel;
    default: return kFlagFdeSorted | kFlagFuncStartPcrel;
  }
}

constexpr uint8_t kDwOpBreg0 = 0x70, kDwOpBregx = 0x92, kDwOpDeref = 0x06;

}  // namespace

MachineKey abi_machine_key(Abi abi) {
  switch (abi) {
    case Abi::kAarch64Big: return {kEmAarch64, true, Endian::kBig, 0};
    case Abi::kAarch64Little: return {kEmAarch64, true, Endian::kLittle, 0};
    case Abi::kS390xBig: return {kEmS390, true, Endian::kBig, 0};
    case Abi::kAmd64Little: break;
  }
  return {kEmX86_64, true, Endian::kLittle, 0};
}

std::optional<Abi> abi_for_elf(const MachineKey& machine) {
  for (Abi abi : {Abi::kAmd64Little, Abi::kAarch64Little, Abi::kAarch64Big, Abi::kS390xBig}) {
    const MachineKey k = abi_machine_key(abi);
    if (k.elf_machine == machine.elf_machine && k.is_64 == machine.is_64 && k.endian == machine.endian) return abi;
  }
  return std::nullopt;
}

AbiRegisters abi_registers(Abi abi) {
  // Every ABI's machine has a descriptor (arch/<machine>/registers).
  const arch::ArchInfo& m = *arch::dwarf_arch_for(abi_machine_key(abi));
  return {m.stack_pointer, m.frame_pointer, m.return_address, m.program_counter, m.link_register};
}

Result<Section> Section::parse(Bytes data, uint64_t section_address) {
  Section s;
  s.data_ = data;
  s.address_ = section_address;
  if (data.size() < 2) return Error{Errc::kTruncated, data.size()};
  // The magic read little-endian tells the byte order.
  const uint16_t magic_le = static_cast<uint16_t>(data[0] | (data[1] << 8));
  if (magic_le == kMagic) s.endian_ = Endian::kLittle;
  else if (magic_le == 0xe2de) s.endian_ = Endian::kBig;
  else return Error{Errc::kBadMagic, 0};
  if (data.size() < kHeaderSize) return Error{Errc::kTruncated, data.size()};

  ByteReader r(data, s.endian_);
  Header& h = s.header_;
  FW_TRY(h.magic, r.u16());
  FW_TRY(h.version, r.u8());
  FW_TRY(h.flags, r.u8());
  FW_TRY(h.abi_arch, r.u8());
  FW_TRY(uint8_t fixed_fp, r.u8());
  FW_TRY(uint8_t fixed_ra, r.u8());
  h.cfa_fixed_fp_offset = static_cast<int8_t>(fixed_fp);
  h.cfa_fixed_ra_offset = static_cast<int8_t>(fixed_ra);
  FW_TRY(h.auxhdr_len, r.u8());
  FW_TRY(h.num_fdes, r.u32());
  FW_TRY(h.num_fres, r.u32());
  FW_TRY(h.fre_len, r.u32());
  FW_TRY(h.fdeoff, r.u32());
  FW_TRY(h.freoff, r.u32());

  if (h.version < kVersion1 || h.version > kVersion3) return Error{Errc::kBadVersion, kOffVersion};
  if (h.flags & ~valid_flags(h.version)) return Error{Errc::kBadFlags, kOffFlags};
  if (!valid_abi_for(h.abi_arch, h.version, s.endian_)) return Error{Errc::kBadAbi, kOffAbi};
  s.regs_ = abi_registers(s.abi());
  if (h.auxhdr_len != 0) return Error{Errc::kAuxHeader, kOffAuxLen};

  // Sub-section bounds, in 64 bits: nothing below can overflow.
  const uint64_t size = data.size();
  const uint64_t fdes_start = s.fdes_offset();
  const uint64_t fres_start = s.fres_offset();
  const uint64_t fdes_bytes = uint64_t{h.num_fdes} * fde_size(h.version);
  if (h.fdeoff > h.freoff || fdes_start > size) return Error{Errc::kFdeTableOutOfBounds, kOffFdeOff};
  if (fres_start > size) return Error{Errc::kFreTableOutOfBounds, kOffFreOff};
  if (fdes_start + fdes_bytes > fres_start) return Error{Errc::kFdeTableOutOfBounds, kOffNumFdes};
  if (fres_start + h.fre_len > size) return Error{Errc::kFreTableOutOfBounds, kOffFreLen};

  FW_CHECK(s.parse_fdes());
  return s;
}

Result<void> Section::parse_fdes() {
  const Header& h = header_;
  const uint64_t fres_start = fres_offset();
  const uint64_t fres_limit = fres_start + h.fre_len;
  const unsigned entry_size = fde_size(h.version);
  // The table fits in the section (checked by parse), so num_fdes is bounded by its size.
  auto fdes = std::make_shared<std::vector<Fde>>();
  fdes->reserve(h.num_fdes);
  std::vector<std::pair<uint16_t, int64_t>> expr_keys;
  uint64_t total_fres = 0;
  ByteReader r(data_, endian_);
  for (uint32_t i = 0; i < h.num_fdes; ++i) {
    Fde f;
    f.index = i;
    f.version = h.version;
    f.offset = fdes_offset() + uint64_t{i} * entry_size;
    FW_CHECK(r.seek(static_cast<size_t>(f.offset)));
    uint64_t info_offset, num_fres_offset, rep_offset = 0, info2_offset = 0;
    if (h.version == kVersion3) {
      FW_TRY(uint64_t start, r.u64());
      f.raw_start = static_cast<int64_t>(start);
      FW_TRY(f.size, r.u32());
      FW_TRY(f.fre_off, r.u32());
      if (uint64_t{f.fre_off} + kV3AttrSize > h.fre_len)
        return Error{Errc::kFreOffsetOutOfBounds, f.offset + 12};
      const uint64_t attr_offset = fres_start + f.fre_off;
      FW_CHECK(r.seek(static_cast<size_t>(attr_offset)));
      FW_TRY(uint16_t n, r.u16());
      f.num_fres = n;
      FW_TRY(f.info, r.u8());
      FW_TRY(f.info2, r.u8());
      FW_TRY(f.rep_size, r.u8());
      num_fres_offset = attr_offset;
      info_offset = attr_offset + 2;
      info2_offset = attr_offset + 3;
      rep_offset = attr_offset + 4;
      f.fres_offset = attr_offset + kV3AttrSize;
    } else {
      FW_TRY(uint32_t start, r.u32());
      f.raw_start = static_cast<int32_t>(start);
      FW_TRY(f.size, r.u32());
      FW_TRY(f.fre_off, r.u32());
      FW_TRY(f.num_fres, r.u32());
      FW_TRY(f.info, r.u8());
      if (h.version == kVersion2) {
        FW_TRY(f.rep_size, r.u8());
      }
      if (f.fre_off > h.fre_len) return Error{Errc::kFreOffsetOutOfBounds, f.offset + 8};
      num_fres_offset = f.offset + 12;
      info_offset = f.offset + 16;
      rep_offset = f.offset + 17;
      f.fres_offset = fres_start + f.fre_off;
    }
    if ((f.info & 0xf) > 2) return Error{Errc::kBadFreType, info_offset};
    f.fre_type = static_cast<FreType>(f.info & 0xf);
    f.pc_type = static_cast<PcType>((f.info >> 4) & 1);
    f.pauth_key_b = (f.info >> 5) & 1;
    if (h.version == kVersion3) {
      f.signal = (f.info >> 7) & 1;
      const uint8_t type = f.info2 & 0x1f;
      if (type > 1) return Error{Errc::kBadFdeType, info2_offset};
      f.fde_type = static_cast<FdeType>(type);
    }
    if (f.pc_type == PcType::kMask && h.version >= kVersion2 && f.rep_size == 0)
      return Error{Errc::kZeroRepSize, rep_offset};
    // The start field is the first of the entry in every version.
    const uint64_t base = pcrel() ? address_ + f.offset : address_;
    f.start = base + static_cast<uint64_t>(f.raw_start);
    // Rows are [begin, end) ranges: the function's end must be an address.
    if (f.size > ~f.start) return Error{Errc::kFunctionWraps, f.offset};
    // Each FRE takes at least its start address and info byte: a count that
    // the remaining bytes cannot hold is rejected before anything loops on it.
    const uint64_t min_fre = f.start_address_size() + 1u;
    if (uint64_t{f.num_fres} * min_fre > fres_limit - f.fres_offset)
      return Error{Errc::kFreCountTooLarge, num_fres_offset};
    if (sorted() && !fdes->empty() && f.start <= fdes->back().start)
      return Error{Errc::kNotSorted, f.offset};
    total_fres += f.num_fres;
    FW_TRY(f.fres_end, validate_fres(f, expr_keys));
    fdes->push_back(f);
  }
  if (total_fres != h.num_fres) return Error{Errc::kFreCountMismatch, kOffNumFres};
  fdes_ = std::move(fdes);
  if (sorted()) build_lookup();
  build_expressions(expr_keys);
  return ok();
}

void Section::build_lookup() {
  auto lookup = std::make_shared<Lookup>();
  const std::vector<Fde>& fdes = *fdes_;
  if (!fdes.empty()) {
    // Blocks of 2^shift bytes, the smallest power of two that keeps their
    // number at most the FDE count + 1 (shift stays below 64: span >> 63 <= 1).
    const uint64_t n = fdes.size();
    lookup->base = fdes.front().start;
    const uint64_t span = fdes.back().start - lookup->base;
    while ((span >> lookup->shift) > n) ++lookup->shift;
    const uint64_t blocks = (span >> lookup->shift) + 1;
    lookup->first.resize(blocks + 1);
    uint32_t i = 0;
    for (uint64_t b = 0; b < blocks; ++b) {
      const uint64_t block_start = lookup->base + (b << lookup->shift);
      while (i < n && fdes[i].start <= block_start) ++i;
      lookup->first[b] = i;
    }
    lookup->first[blocks] = static_cast<uint32_t>(n);  // past the last start
  }
  lookup_ = std::move(lookup);
}

namespace {

// A validated field of 1, 2 or 4 bytes.
uint32_t load_unchecked(const uint8_t* p, unsigned size, Endian endian) {
  switch (size) {
    case 1: return *p;
    case 2: {
      uint16_t v;
      std::memcpy(&v, p, 2);
      return endian != kHostEndian ? __builtin_bswap16(v) : v;
    }
    default: {
      uint32_t v;
      std::memcpy(&v, p, 4);
      return endian != kHostEndian ? __builtin_bswap32(v) : v;
    }
  }
}

int32_t sign_extend(uint32_t v, unsigned size) {
  switch (size) {
    case 1: return static_cast<int8_t>(v);
    case 2: return static_cast<int16_t>(v);
    default: return static_cast<int32_t>(v);
  }
}

}  // namespace

Result<Fre> Section::decode_fre(const Fde& fde, uint64_t at, uint32_t index) const {
  const uint64_t end = fres_offset() + header_.fre_len;
  const unsigned addr_size = fde.start_address_size();
  if (at > end || end - at < addr_size + 1u) return Error{Errc::kFreOutOfBounds, at};
  const uint8_t info = data_[static_cast<size_t>(at + addr_size)];
  const unsigned size_code = (info >> 5) & 3;
  if (size_code == 3) return Error{Errc::kBadDataWordSize, at + addr_size};
  const uint64_t words_bytes = uint64_t{(info >> 1) & 0xfu} << size_code;
  if (end - at - addr_size - 1 < words_bytes) return Error{Errc::kFreOutOfBounds, at};
  return decode_fre_unchecked(fde, at, index);
}

Fre Section::decode_fre_unchecked(const Fde& fde, uint64_t at, uint32_t index) const noexcept {
  const uint8_t* p = data_.data() + at;
  const unsigned addr_size = fde.start_address_size();
  Fre f;
  f.index = index;
  f.offset = at;
  f.start = load_unchecked(p, addr_size, endian_);
  f.info = p[addr_size];
  f.word_size = static_cast<uint8_t>(1u << ((f.info >> 5) & 3));
  f.word_count = (f.info >> 1) & 0xf;
  const uint8_t* w = p + addr_size + 1;
  for (unsigned i = 0; i < f.word_count; ++i, w += f.word_size) {
    f.uwords[i] = load_unchecked(w, f.word_size, endian_);
    f.words[i] = sign_extend(f.uwords[i], f.word_size);
  }
  f.size = static_cast<uint8_t>(addr_size + 1 + f.word_count * f.word_size);
  return f;
}

// Walks the FREs of `fde`: bounds, start addresses, data-word counts and
// control words (the kernel's rules), collecting the (register, offset) pairs
// that FLEX rules need expressions for. Returns the offset past the last FRE.
Result<uint64_t> Section::validate_fres(const Fde& fde,
                                        std::vector<std::pair<uint16_t, int64_t>>& expr_keys) const {
  uint64_t at = fde.fres_offset;
  uint32_t prev_start = 0;
  for (uint32_t i = 0; i < fde.num_fres; ++i) {
    FW_TRY(Fre f, decode_fre(fde, at, i));
    // Within the function (at its end is allowed: libsframe PR 33131), and
    // for PCMASK also within the repetition block.
    if (f.start > fde.size || (fde.pc_type == PcType::kMask && version() >= kVersion2 && f.start >= fde.rep_size))
      return Error{Errc::kFreStartOutOfRange, f.offset};
    if (i > 0 && f.start <= prev_start) return Error{Errc::kFreNotIncreasing, f.offset};
    prev_start = f.start;
    const uint64_t info_offset = f.offset + fde.start_address_size();
    if (f.word_count == 0) {
      // RA undefined: V2 errata 2 and V3. V1 knows no such FRE.
      if (version() == kVersion1) return Error{Errc::kBadDataWordCount, info_offset};
    } else {
      if (fde.fde_type == FdeType::kDefault) {
        const unsigned max = 1u + (header_.cfa_fixed_ra_offset == 0) + (header_.cfa_fixed_fp_offset == 0);
        if (f.word_count > max) return Error{Errc::kBadDataWordCount, info_offset};
      }
      // rules() checks the rest: FLEX layout and control words, registers.
      FW_TRY(FrameRules rules, this->rules(fde, f));
      if (rules.cfa.deref) expr_keys.emplace_back(rules.cfa.reg, rules.cfa.offset);
      for (const Rule* rule : {&rules.ra, &rules.fp})
        if (rule->kind == Rule::Kind::kRegister && (rule->deref || rule->offset != 0))
          expr_keys.emplace_back(rule->reg, rule->offset);
    }
    at += f.size;
  }
  return at;
}

void Section::build_expressions(std::vector<std::pair<uint16_t, int64_t>>& keys) {
  std::sort(keys.begin(), keys.end());
  keys.erase(std::unique(keys.begin(), keys.end()), keys.end());
  auto pool = std::make_shared<std::vector<uint8_t>>();
  auto index = std::make_shared<std::vector<ExprEntry>>();
  index->reserve(keys.size());
  for (const auto& [reg, offset] : keys) {
    const size_t begin = pool->size();
    if (reg < 32) {
      pool->push_back(static_cast<uint8_t>(kDwOpBreg0 + reg));
    } else {
      pool->push_back(kDwOpBregx);
      put_uleb(*pool, reg);
    }
    put_sleb(*pool, offset);
    pool->push_back(kDwOpDeref);
    index->push_back(ExprEntry{reg, offset, static_cast<uint32_t>(begin),
                               static_cast<uint8_t>(pool->size() - begin)});
  }
  expr_pool_ = std::move(pool);
  expr_index_ = std::move(index);
}

Bytes Section::breg_deref_expression(uint16_t reg, int64_t offset) const {
  if (!expr_index_) return {};
  const auto& idx = *expr_index_;
  auto it = std::lower_bound(idx.begin(), idx.end(), std::make_pair(reg, offset),
                             [](const ExprEntry& e, const std::pair<uint16_t, int64_t>& k) {
                               return std::make_pair(e.reg, e.offset) < k;
                             });
  if (it == idx.end() || it->reg != reg || it->offset != offset) return {};
  return Bytes(expr_pool_->data() + it->pool_offset, it->size);
}

Result<Fre> Section::fre(const Fde& fde, uint32_t i) const {
  if (i >= fde.num_fres) return Error{Errc::kNoFre, fde.offset};
  uint64_t at = fde.fres_offset;
  for (uint32_t j = 0;; ++j) {
    FW_TRY(Fre f, decode_fre(fde, at, j));
    if (j == i) return f;
    at += f.size;
  }
}

uint64_t Section::match_offset(const Fde& fde, uint64_t pc) const {
  uint64_t off = pc - fde.start;
  if (const uint32_t rep = effective_rep_size(fde)) off %= rep;
  return off;
}

const Fde* Section::lookup_fde(uint64_t pc) const noexcept {
  if (!lookup_ || lookup_->first.empty() || pc < lookup_->base) return nullptr;
  const Lookup& l = *lookup_;
  const Fde* const fdes = fdes_->data();
  // The last FDE whose start is <= pc, searched within pc's block.
  const uint64_t block = (pc - l.base) >> l.shift;
  const Fde* f;
  if (block >= l.first.size() - 1) {  // (block + 1 would wrap for pc - base = 2^64 - 1)
    f = fdes + fdes_->size() - 1;  // past the last block: every FDE starts below pc
  } else {
    const Fde* begin = fdes + l.first[block];
    const Fde* end = fdes + l.first[block + 1];
    // base <= pc, so the result is past the first FDE.
    f = std::upper_bound(begin, end, pc, [](uint64_t v, const Fde& e) { return v < e.start; }) - 1;
  }
  return f->contains(pc) ? f : nullptr;
}

Result<const Fde*> Section::find_fde(uint64_t pc) const {
  if (!sorted()) return Error{Errc::kUnsortedLookup, kOffFlags};
  if (const Fde* f = lookup_fde(pc)) return f;
  // The error names the FDE that stops short of pc, if any.
  const std::vector<Fde>& fdes = *fdes_;
  auto it = std::upper_bound(fdes.begin(), fdes.end(), pc, [](uint64_t v, const Fde& e) { return v < e.start; });
  if (it == fdes.begin()) return Error{Errc::kNoFde, fdes_offset()};
  return Error{Errc::kNoFde, std::prev(it)->offset};
}

bool Section::owns(const Fde& fde) const noexcept {
  if (!fdes_ || fde.index >= fdes_->size()) return false;
  const Fde& mine = (*fdes_)[fde.index];
  return &mine == &fde || (mine.fres_offset == fde.fres_offset && mine.num_fres == fde.num_fres &&
                           mine.fre_type == fde.fre_type && mine.fres_end == fde.fres_end);
}

bool Section::find_fre_slot(const Fde& fde, uint64_t off, FreSlot* slot) const noexcept {
  // The bytes are read unchecked: only an FDE of this section points at bytes parse validated.
  if (!owns(fde)) return false;
  // Only start addresses and info bytes are read: each FRE's size follows
  // from its info byte, and the scan stops at the first start past `off`.
  const unsigned addr_size = fde.start_address_size();
  const uint8_t* const base = data_.data();
  const uint8_t* p = base + fde.fres_offset;
  bool found = false;
  for (uint32_t i = 0; i < fde.num_fres; ++i) {
    const uint32_t start = load_unchecked(p, addr_size, endian_);
    if (start > off) {
      slot->next_start = start;
      slot->has_next = true;
      return found;
    }
    found = true;
    slot->offset = static_cast<uint64_t>(p - base);
    slot->index = i;
    slot->start = start;
    const uint8_t info = p[addr_size];
    p += addr_size + 1 + (((info >> 1) & 0xfu) << ((info >> 5) & 3));
  }
  slot->has_next = false;
  return found;
}

Fre Section::fre_at(const Fde& fde, const FreSlot& slot) const noexcept {
  return decode_fre_unchecked(fde, slot.offset, slot.index);
}

Result<Fre> Section::find_fre(const Fde& fde, uint64_t pc) const {
  if (!fde.contains(pc) || !owns(fde)) return Error{Errc::kNoFde, fde.offset};
  FreSlot slot;
  if (!find_fre_slot(fde, match_offset(fde, pc), &slot)) return Error{Errc::kNoFre, fde.offset};
  return fre_at(fde, slot);
}

Result<FrameRules> Section::rules(const Fde& fde, const Fre& f) const {
  FrameRules out;
  Error error;
  if (!decode_rules(fde, f, out, &error)) return error;
  return out;
}

bool Section::decode_rules(const Fde& fde, const Fre& f, FrameRules& out, Error* error) const noexcept {
  out = FrameRules{};
  out.ra_mangled = f.mangled_ra();
  if (f.ra_undefined()) {
    out.ra_undefined = true;
    return true;
  }
  auto fail = [&](Errc code, uint64_t offset) {
    *error = Error{code, offset};
    return false;
  };
  const bool s390x = abi() == Abi::kS390xBig;
  const uint64_t words_at = f.words_offset();
  auto word_at = [&](unsigned i) { return words_at + uint64_t{i} * f.word_size; };
  auto decode_cfa_offset = [&](int32_t stored) -> int64_t {
    return s390x ? int64_t{stored} * kS390xCfaFactor + kS390xCfaAdjustment : int64_t{stored};
  };
  // Defaults from the header: a fixed offset means "saved at CFA + offset".
  auto fixed_rule = [&](int8_t fixed, uint64_t field, Rule& rule) {
    if (fixed != 0) {
      rule.kind = Rule::Kind::kCfa;
      rule.deref = true;
      rule.offset = fixed;
      rule.source_offset = field;
    }
  };
  fixed_rule(header_.cfa_fixed_ra_offset, 6, out.ra);
  fixed_rule(header_.cfa_fixed_fp_offset, 5, out.fp);

  if (fde.fde_type == FdeType::kDefault) {
    out.cfa.kind = Rule::Kind::kRegister;
    out.cfa.reg = f.cfa_base_sp() ? regs_.sp : regs_.fp;
    out.cfa.offset = decode_cfa_offset(f.words[0]);
    out.cfa.source_offset = word_at(0);
    unsigned index = 1;
    auto tracked = [&](Rule& rule) {
      if (index >= f.word_count) return true;
      const int32_t v = f.words[index];
      rule = Rule{};
      rule.source_offset = word_at(index);
      ++index;
      if (v == 0) return true;  // padding: not saved (s390x FP without RA)
      if (s390x && version() == kVersion2 && (v & 1)) {
        if (v < 0) return fail(Errc::kBadRegister, rule.source_offset);
        rule.kind = Rule::Kind::kRegister;
        rule.reg = static_cast<uint16_t>(v >> 1);
        return true;
      }
      rule.kind = Rule::Kind::kCfa;
      rule.deref = true;
      rule.offset = v;
      return true;
    };
    if (header_.cfa_fixed_ra_offset == 0 && !tracked(out.ra)) return false;
    if (header_.cfa_fixed_fp_offset == 0 && !tracked(out.fp)) return false;
    if (index != f.word_count) return fail(Errc::kBadDataWordCount, f.offset + fde.start_address_size());
    return true;
  }

  // FLEX.
  if (f.word_count < 2) return fail(Errc::kBadDataWordCount, f.offset + fde.start_address_size());
  auto from_control = [&](unsigned index, Rule& rule) {
    const uint32_t ctrl = f.uwords[index];
    rule = Rule{};
    rule.source_offset = word_at(index);
    rule.deref = (ctrl >> 1) & 1;
    rule.offset = f.words[index + 1];
    if (ctrl & 1) {
      if ((ctrl >> 3) > kMaxRegister) return fail(Errc::kBadRegister, word_at(index));
      rule.kind = Rule::Kind::kRegister;
      rule.reg = static_cast<uint16_t>(ctrl >> 3);
    } else {
      rule.kind = Rule::Kind::kCfa;
    }
    return true;
  };
  if (!(f.uwords[0] & 1)) return fail(Errc::kBadFlexControl, word_at(0));
  if (!from_control(0, out.cfa)) return false;
  out.cfa.offset = decode_cfa_offset(f.words[1]);
  unsigned count = f.word_count - 2u;
  unsigned index = 2;
  for (Rule* rule : {&out.ra, &out.fp}) {
    if (count < 2) break;
    const uint32_t ctrl = f.uwords[index];
    if (ctrl) {
      if (!from_control(index, *rule)) return false;
      index += 2;
      count -= 2;
    } else {
      ++index;  // padding: the default rule stays
      --count;
    }
  }
  if (count != 0) return fail(Errc::kBadDataWordCount, f.offset + fde.start_address_size());
  for (const Rule* rule : {&out.cfa, &out.ra, &out.fp})
    if (rule->kind == Rule::Kind::kRegister && rule->reg != regs_.sp && rule->reg != regs_.fp)
      out.topmost_only = true;
  return true;
}

const char* to_string(Errc code) noexcept {
  switch (code) {
    case Errc::kTruncated: return "SFrame data truncated";
    case Errc::kBadMagic: return "not an SFrame section (bad magic)";
    case Errc::kBadVersion: return "unsupported SFrame version";
    case Errc::kBadFlags: return "SFrame flags not defined for this version";
    case Errc::kBadAbi: return "unknown SFrame ABI/arch, or one whose byte order differs from the data's";
    case Errc::kAuxHeader: return "SFrame auxiliary header not supported";
    case Errc::kFdeTableOutOfBounds: return "SFrame FDE sub-section does not fit before the FRE sub-section";
    case Errc::kFreTableOutOfBounds: return "SFrame FRE sub-section runs past the end of the section";
    case Errc::kFreCountMismatch: return "SFrame header FRE count differs from the FDEs' total";
    case Errc::kNotSorted: return "SFrame FDEs flagged sorted are not in increasing address order";
    case Errc::kFreOffsetOutOfBounds: return "SFrame FDE's FRE offset lies outside the FRE sub-section";
    case Errc::kFreCountTooLarge: return "SFrame FDE claims more FREs than its bytes can hold";
    case Errc::kBadFreType: return "unknown SFrame FRE type";
    case Errc::kBadFdeType: return "unknown SFrame FDE type";
    case Errc::kZeroRepSize: return "SFrame PCMASK FDE with a repetition block of 0 bytes";
    case Errc::kFunctionWraps: return "SFrame function runs past the end of the address space";
    case Errc::kFreOutOfBounds: return "SFrame FRE runs past the end of the FRE sub-section";
    case Errc::kBadDataWordSize: return "SFrame FRE data-word size code 3";
    case Errc::kBadDataWordCount: return "SFrame FRE data-word count not valid for its FDE";
    case Errc::kFreStartOutOfRange: return "SFrame FRE starts beyond its function (or repetition block)";
    case Errc::kFreNotIncreasing: return "SFrame FRE start addresses not increasing";
    case Errc::kBadFlexControl: return "SFrame FLEX CFA control word names no register";
    case Errc::kBadRegister: return "SFrame register number out of range";
    case Errc::kUnsortedLookup: return "SFrame FDEs are not flagged sorted: no binary search";
    case Errc::kNoFde: return "no SFrame FDE covers the address";
    case Errc::kNoFre: return "no SFrame FRE is in force at the address";
    case Errc::kUnsupportedByDumper: return "this binutils dump cannot show this SFrame version";
  }
  return "unknown SFrame error";
}

framewalk::Error to_framewalk_error(const Error& e) noexcept {
  ErrorCode code = ErrorCode::kBadLength;
  switch (e.code) {
    case Errc::kTruncated:
    case Errc::kFreOutOfBounds: code = ErrorCode::kTruncated; break;
    case Errc::kNotSorted:
    case Errc::kFreNotIncreasing:
    case Errc::kUnsortedLookup: code = ErrorCode::kUnsortedTable; break;
    case Errc::kBadRegister: code = ErrorCode::kBadRegister; break;
    case Errc::kNoFde:
    case Errc::kNoFre: code = ErrorCode::kNotFound; break;
    default: code = ErrorCode::kBadLength; break;
  }
  return framewalk::Error{code, e.offset};
}

}  // namespace framewalk::sframe

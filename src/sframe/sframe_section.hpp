// The SFrame stack-trace format (.sframe), versions 1, 2 and 3, in either byte
// order: a strict reader, FDE/FRE iteration and PC lookup.
//
// parse() validates the whole section once, so that every later query runs on
// bytes known to be sound: every length, offset and count is checked against
// the section before it is used or looped on; every FRE of every FDE is decoded
// and checked (start addresses within the function and strictly increasing,
// data-word size and count valid for the FDE type and ABI, FLEX control words
// well formed); with the SORTED flag, the function starts must be strictly
// increasing. That is at least what the Linux kernel's reader checks
// (kernel/unwind/sframe.c), minus its policy-only checks (V3 only, PCREL
// required, at least one FDE and FRE), which do not make a section unsound.
//
// The layout (binutils' include/sframe.h and its SFrame format spec), in short:
//   header (28 bytes) | FDE sub-section | FRE sub-section
//   V1 FDE: i32 start, u32 size, u32 fre_off, u32 num_fres, u8 info       (17 bytes)
//   V2 FDE: ... as V1, u8 rep_size, u16 padding                            (20 bytes)
//   V3 FDE index: i64 start, u32 size, u32 fre_off -> attribute record     (16 bytes)
//   V3 attribute: u16 num_fres, u8 info, u8 info2, u8 rep_size, then FREs  (5 bytes)
//   FRE: start (1/2/4 bytes), u8 info, N data words of 1/2/4 bytes
//
// A Section refers to the bytes it was parsed from: the caller keeps them alive.
// Sections are cheap to copy (copies share the FDE table and expression pool).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <vector>

#include "base/byte_reader.hpp"
#include "base/machine_key.hpp"
#include "sframe/sframe_error.hpp"

namespace framewalk::sframe {

inline constexpr uint16_t kMagic = 0xdee2;
inline constexpr size_t kHeaderSize = 28;
inline constexpr uint8_t kVersion1 = 1, kVersion2 = 2, kVersion3 = 3;

// Header flags.
inline constexpr uint8_t kFlagFdeSorted = 0x1;
inline constexpr uint8_t kFlagFramePointer = 0x2;      // V1 and V2 only
inline constexpr uint8_t kFlagFuncStartPcrel = 0x4;    // V2 (errata 1) and V3

// sfh_abi_arch.
enum class Abi : uint8_t {
  kAarch64Big = 1,
  kAarch64Little = 2,
  kAmd64Little = 3,
  kS390xBig = 4,
};

enum class FreType : uint8_t { kAddr1 = 0, kAddr2 = 1, kAddr4 = 2 };
// How FRE start addresses match a PC: offsets from the function start (INC),
// or offsets within a block that repeats every rep_size bytes (MASK, PLTs).
enum class PcType : uint8_t { kInc = 0, kMask = 1 };
// How FRE data words read (V3 info2; always DEFAULT before V3).
enum class FdeType : uint8_t { kDefault = 0, kFlex = 1 };

// The per-ABI DWARF register numbers SFrame refers to, from the machine's
// arch::FrameRegisters (sframe/ names no register itself).
struct AbiRegisters {
  uint16_t sp;
  uint16_t fp;
  uint16_t ra;  // the return-address column of the rows
  uint16_t pc;  // the PC as a DWARF expression reads it (x86-64: ra)
  // A call leaves the RA in a register (AArch64 x30, s390x r14): the RA is
  // tracked per FRE, and "no RA rule" means it is still there.
  bool link_register;
};
AbiRegisters abi_registers(Abi abi);

// The machine of an ABI (x86-64, AArch64 of either byte order, s390x).
MachineKey abi_machine_key(Abi abi);
// The ABI of an ELF file's machine, or nullopt for a machine SFrame has no
// ABI for (x32, i386, 31-bit s390, little-endian s390x...).
std::optional<Abi> abi_for_elf(const MachineKey& machine);
// AArch64: FREs may carry a signed RA and FDEs the PAC key.
inline bool abi_has_pauth(Abi abi) { return abi == Abi::kAarch64Big || abi == Abi::kAarch64Little; }

// s390x stores CFA offsets as (offset - 160) / 8; this is the decoded value.
inline constexpr int64_t kS390xCfaAdjustment = 160;
inline constexpr int64_t kS390xCfaFactor = 8;

struct Header {
  uint16_t magic = 0;
  uint8_t version = 0;
  uint8_t flags = 0;
  uint8_t abi_arch = 0;
  int8_t cfa_fixed_fp_offset = 0;  // 0: not fixed
  int8_t cfa_fixed_ra_offset = 0;  // 0: not fixed (AMD64 has -8)
  uint8_t auxhdr_len = 0;
  uint32_t num_fdes = 0;
  uint32_t num_fres = 0;
  uint32_t fre_len = 0;
  uint32_t fdeoff = 0;
  uint32_t freoff = 0;
};

// A function descriptor, in every version's terms. One cache line: what a PC
// lookup reads (start, size, where the FREs are and how they read) comes first.
struct alignas(64) Fde {
  uint64_t start = 0;            // the resolved function start address
  uint64_t fres_offset = 0;      // section offset of the first FRE
  uint32_t size = 0;             // function size in bytes
  uint32_t num_fres = 0;
  uint32_t index = 0;
  uint32_t fre_off = 0;          // the stored FRE offset (V3: of the attribute record)
  uint64_t offset = 0;           // section offset of the FDE (V3: of its index entry)
  int64_t raw_start = 0;         // the start field as stored (i32 in V1/V2, i64 in V3)
  uint64_t fres_end = 0;         // section offset just past the last FRE
  uint8_t info = 0;
  uint8_t info2 = 0;             // V3 only
  uint8_t rep_size = 0;          // V2/V3; V1 has none (see effective_rep_size)
  FreType fre_type = FreType::kAddr1;
  PcType pc_type = PcType::kInc;
  FdeType fde_type = FdeType::kDefault;
  uint8_t version = 0;           // the section's
  bool pauth_key_b : 1 = false;  // AArch64: the RA is signed with key B (info bit 5)
  bool signal : 1 = false;       // V3: a signal frame (info bit 7)

  uint64_t end() const { return start + size; }
  bool contains(uint64_t pc) const { return pc >= start && pc - start < size; }
  unsigned start_address_size() const { return 1u << static_cast<unsigned>(fre_type); }
  // V3: section offset of the attribute record (just before the FREs); 0 before V3.
  uint64_t attr_offset() const { return version == kVersion3 ? fres_offset - 5 : 0; }
};
static_assert(sizeof(Fde) == 64);

// A frame row entry. Data words are kept raw: `words` signed, `uwords` the same
// bits unsigned (FLEX control words and the dumper read them unsigned).
struct Fre {
  static constexpr int kMaxWords = 15;

  uint32_t index = 0;             // within its FDE
  uint64_t offset = 0;            // section offset
  uint32_t start = 0;             // offset from the function start (or within the block)
  uint8_t info = 0;
  uint8_t word_count = 0;         // N (0: RA undefined, the outermost frame)
  uint8_t word_size = 0;          // bytes per word: 1, 2 or 4
  uint8_t size = 0;               // bytes of the whole FRE
  int32_t words[kMaxWords] = {};
  uint32_t uwords[kMaxWords] = {};

  bool cfa_base_sp() const { return info & 1; }    // DEFAULT FDEs: CFA base SP (else FP)
  bool mangled_ra() const { return info & 0x80; }  // AArch64 PAC
  bool ra_undefined() const { return word_count == 0; }
  uint64_t words_offset() const { return offset + size - uint64_t{word_count} * word_size; }
};

// The decoded recovery rules of one FRE, uniform over DEFAULT and FLEX FDEs
// (the kernel's representation): each entity is "unchanged", or
//   value = [deref] (base + offset), base = CFA or a register.
struct Rule {
  enum class Kind : uint8_t {
    kUnchanged,  // no rule: FP keeps its value; RA stays where it is (topmost frame)
    kCfa,        // base is the CFA
    kRegister,   // base is DWARF register `reg`
  };
  Kind kind = Kind::kUnchanged;
  bool deref = false;
  uint16_t reg = 0;
  int64_t offset = 0;
  uint64_t source_offset = 0;  // section offset of the data word(s) it came from

  bool operator==(const Rule&) const = default;
};

struct FrameRules {
  bool ra_undefined = false;   // outermost frame: stop unwinding
  Rule cfa;                    // kind kRegister always (unless ra_undefined)
  Rule ra;
  Rule fp;
  bool ra_mangled = false;     // AArch64 PAC-signed RA
  // A rule reads a register other than SP and FP, whose value is only known in
  // the topmost frame (FLEX FDEs only).
  bool topmost_only = false;

  bool operator==(const FrameRules&) const = default;
};

class Section {
 public:
  // Parses and validates `data`, the contents of a .sframe section loaded at
  // `section_address`. Errors name the section offset of the offending field.
  static Result<Section> parse(Bytes data, uint64_t section_address);
  // A Section keeps a view of its bytes: parsing a temporary buffer would leave it dangling.
  static Result<Section> parse(std::vector<uint8_t>&& temporary, uint64_t section_address) = delete;

  Bytes data() const { return data_; }
  uint64_t address() const { return address_; }
  const Header& header() const { return header_; }
  uint8_t version() const { return header_.version; }
  uint8_t flags() const { return header_.flags; }
  Endian endian() const { return endian_; }
  Abi abi() const { return static_cast<Abi>(header_.abi_arch); }
  AbiRegisters registers() const { return regs_; }
  bool sorted() const { return header_.flags & kFlagFdeSorted; }
  bool pcrel() const { return header_.flags & kFlagFuncStartPcrel; }
  size_t header_size() const { return kHeaderSize + header_.auxhdr_len; }
  uint64_t fdes_offset() const { return header_size() + header_.fdeoff; }
  uint64_t fres_offset() const { return header_size() + header_.freoff; }
  static unsigned fde_size(uint8_t version) { return version == 1 ? 17 : version == 2 ? 20 : 16; }

  // FDEs in section order.
  std::span<const Fde> fdes() const { return {fdes_->data(), fdes_->size()}; }

  // The i-th FRE of `fde` (O(i): FREs vary in size).
  Result<Fre> fre(const Fde& fde, uint32_t i) const;

  // Calls on_fre(const Fre&) for each FRE of `fde` in order; on_fre returns
  // false to stop.
  template <typename OnFre>
  Result<void> for_each_fre(const Fde& fde, OnFre&& on_fre) const {
    uint64_t at = fde.fres_offset;
    for (uint32_t i = 0; i < fde.num_fres; ++i) {
      FW_TRY(Fre f, decode_fre(fde, at, i));
      at += f.size;
      if (!on_fre(static_cast<const Fre&>(f))) break;
    }
    return ok();
  }

  // The FDE whose range holds `pc`: the last FDE starting at or below pc,
  // which must also reach past it (sorted sections only).
  Result<const Fde*> find_fde(uint64_t pc) const;
  // The same for the hot path: nullptr when no FDE holds pc (or unsorted).
  const Fde* lookup_fde(uint64_t pc) const noexcept;

  // The FRE in force at `pc` inside `fde`: the last one whose start is at or
  // below the PC's offset (for PCMASK FDEs, the offset within its repetition
  // block). Errc::kNoFre when the FDE has no FREs or the PC precedes the first;
  // kNoFde when pc is outside the FDE or the FDE is not one of this section's.
  Result<Fre> find_fre(const Fde& fde, uint64_t pc) const;

  // Where the FRE in force at match offset `off` of `fde` lies: the FRE scan
  // of the hot path, decoding start addresses only. False when no FRE is in
  // force, or `fde` is not one of this section's (see owns): the scan trusts
  // the bytes parse validated.
  struct FreSlot {
    uint64_t offset = 0;       // section offset of the FRE
    uint32_t index = 0;
    uint32_t start = 0;
    uint32_t next_start = 0;   // the next FRE's start, if has_next
    bool has_next = false;
  };
  bool find_fre_slot(const Fde& fde, uint64_t off, FreSlot* slot) const noexcept;
  // Decodes the FRE a slot of find_fre_slot names (unchecked: parse validated it).
  Fre fre_at(const Fde& fde, const FreSlot& slot) const noexcept;
  // True when `fde` describes the same FREs as this section's FDE of its
  // index: the FDEs of fdes(), of find_fde and of the section's copies, and
  // copies of them.
  bool owns(const Fde& fde) const noexcept;

  // PCMASK block size: rep_size (V2, V3); V1 has no field, and its PLT FDEs
  // (AMD64) repeat every 16 bytes, which is what libsframe 2.40 assumed.
  uint32_t effective_rep_size(const Fde& fde) const {
    if (fde.pc_type != PcType::kMask) return 0;
    return version() == kVersion1 ? 16u : fde.rep_size;
  }
  // The offset used to match FRE starts: pc - start, reduced modulo the block for PCMASK.
  uint64_t match_offset(const Fde& fde, uint64_t pc) const;

  // The recovery rules of an FRE of `fde` (validated at parse, so this only
  // fails on an FRE that did not come from this section).
  Result<FrameRules> rules(const Fde& fde, const Fre& fre) const;
  // The same without a Result on the way (the row lookup's): fills `out`, or
  // sets *error and returns false.
  bool decode_rules(const Fde& fde, const Fre& fre, FrameRules& out, Error* error) const noexcept;

  // DWARF expression bytes for "DW_OP_breg<reg> <offset>; DW_OP_deref" built at
  // parse time for every FLEX rule that needs one; the span without its last
  // byte is the address form "DW_OP_breg<reg> <offset>". Owned by the section
  // (shared by its copies): valid as long as any copy of the section lives.
  // Empty if (reg, offset) never occurs in a FLEX rule of the section.
  Bytes breg_deref_expression(uint16_t reg, int64_t offset) const;

 private:
  struct ExprEntry {
    uint16_t reg;
    int64_t offset;
    uint32_t pool_offset;
    uint8_t size;
  };
  Result<Fre> decode_fre(const Fde& fde, uint64_t at, uint32_t index) const;
  // decode_fre once the FRE's bytes are known to be sound.
  Fre decode_fre_unchecked(const Fde& fde, uint64_t at, uint32_t index) const noexcept;
  void build_lookup();
  Result<void> parse_fdes();
  Result<uint64_t> validate_fres(const Fde& fde, std::vector<std::pair<uint16_t, int64_t>>& expr_keys) const;
  void build_expressions(std::vector<std::pair<uint16_t, int64_t>>& keys);

  Bytes data_;
  uint64_t address_ = 0;
  Endian endian_ = Endian::kLittle;
  Header header_;
  AbiRegisters regs_{};
  std::shared_ptr<const std::vector<Fde>> fdes_;
  // The FDE lookup of sorted sections: the addresses from `base` are cut into
  // blocks of 2^shift bytes (about one FDE per block), and the FDE in force at
  // a PC of block b is found by a binary search of fdes_[first[b] - 1 ..
  // first[b + 1]) only: a cache line or two instead of a search over the
  // whole table.
  struct Lookup {
    std::vector<uint32_t> first;  // first[b]: how many FDEs start at or below block b's first address
    uint64_t base = 0;
    unsigned shift = 0;
  };
  std::shared_ptr<const Lookup> lookup_;
  std::shared_ptr<const std::vector<uint8_t>> expr_pool_;
  std::shared_ptr<const std::vector<ExprEntry>> expr_index_;
};

}  // namespace framewalk::sframe

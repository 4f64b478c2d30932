#include "sframe/sframe_dump.hpp"

#include <cinttypes>
#include <cstdio>

namespace framewalk::sframe {

namespace {

constexpr int32_t kLibsframeErr = -1;  // what libsframe's offset getters return on error

void append_padded(std::string& out, const std::string& s, size_t width) {
  out += s;
  if (s.size() < width) out.append(width - s.size(), ' ');
}

std::string fmt_signed(const char* prefix, int32_t v) {  // printf("%s%+d")
  char buf[48];
  std::snprintf(buf, sizeof buf, "%s%+d", prefix, v);
  return buf;
}

std::string fmt_plus(const char* base, int32_t v) {  // printf("%s+%d"): "sp+-8" for negatives
  char buf[48];
  std::snprintf(buf, sizeof buf, "%s+%d", base, v);
  return buf;
}

std::string fmt_reg(int v) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "r%d", v);
  return buf;
}

// libsframe's view of an FRE's data words.
struct Words {
  const Fre& f;
  bool has(unsigned i) const { return i < f.word_count; }
  int32_t get(unsigned i) const { return has(i) ? f.words[i] : kLibsframeErr; }
  uint32_t uget(unsigned i) const { return has(i) ? f.uwords[i] : static_cast<uint32_t>(kLibsframeErr); }
};

int32_t s390x_cfa_decode(int32_t stored) {  // int arithmetic, wrapping like the C code does in practice
  return static_cast<int32_t>(static_cast<uint32_t>(stored) * 8u + 160u);
}

const char* version_name(Binutils b, uint8_t version) {
  static const char* const kNames[] = {"NULL", "SFRAME_VERSION_1", "SFRAME_VERSION_2", "SFRAME_VERSION_3"};
  const uint8_t max = b == Binutils::k2_40 ? 1 : b == Binutils::k2_45 ? 2 : 3;
  return version <= max ? kNames[version] : "(null)";  // glibc prints a null %s as "(null)"
}

void write_header(std::string& o, const Section& s, Binutils b) {
  const Header& h = s.header();
  char buf[96];
  o += "\n  Header :\n\n    Version: ";
  o += version_name(b, h.version);
  o += '\n';
  uint8_t flags = h.flags;
  if (b == Binutils::k2_40) {
    // 2.40 builds the string with strcpy only: the last known flag wins.
    std::string text;
    if (!flags) text = "NONE";
    if (flags & kFlagFdeSorted) text = "SFRAME_F_FDE_SORTED";
    if (flags & kFlagFramePointer) text = "SFRAME_F_FRAME_POINTER";
    o += "    Flags: " + text + "\n";
  } else if (!flags) {
    o += "    Flags: NONE\n";
  } else {
    const char* prefix = "Flags: ";
    auto flag = [&](uint8_t bit, const char* name) {
      if (!(flags & bit)) return;
      flags = static_cast<uint8_t>(flags & ~bit);
      std::snprintf(buf, sizeof buf, "%11s%s%s\n", prefix, name, flags ? "," : "");
      o += buf;
      prefix = " ";
    };
    flag(kFlagFdeSorted, "SFRAME_F_FDE_SORTED");
    if (b == Binutils::k2_45 || h.version == kVersion2) flag(kFlagFramePointer, "SFRAME_F_FRAME_POINTER");
    flag(kFlagFuncStartPcrel, "SFRAME_F_FDE_FUNC_START_PCREL");
    if (flags) {
      std::snprintf(buf, sizeof buf, "%11s%d\n", prefix, flags);
      o += buf;
    }
  }
  if (b != Binutils::k2_40) {
    if (h.cfa_fixed_fp_offset != 0) {
      std::snprintf(buf, sizeof buf, "    CFA fixed FP offset: %d\n", h.cfa_fixed_fp_offset);
      o += buf;
    }
    if (h.cfa_fixed_ra_offset != 0) {
      std::snprintf(buf, sizeof buf, "    CFA fixed RA offset: %d\n", h.cfa_fixed_ra_offset);
      o += buf;
    }
  }
  std::snprintf(buf, sizeof buf, "    Num FDEs: %d\n    Num FREs: %d\n", static_cast<int32_t>(h.num_fdes),
                static_cast<int32_t>(h.num_fres));
  o += buf;
}

// ---- rows of DEFAULT FDEs (every release) ---------------------------------

void write_default_row(std::string& o, const Section& s, Binutils b, const Fre& f) {
  const Header& h = s.header();
  const bool s390x = s.abi() == Abi::kS390xBig;
  const Words w{f};
  if (b == Binutils::k2_46 && f.ra_undefined()) {
    o += "  RA undefined";
    return;
  }
  int32_t cfa = w.get(0);
  if (w.has(0) && s390x) cfa = s390x_cfa_decode(cfa);
  append_padded(o, "  " + fmt_plus(f.cfa_base_sp() ? "sp" : "fp", cfa), 12);

  const bool fixed_ra = h.cfa_fixed_ra_offset != 0;
  const bool fixed_fp = h.cfa_fixed_fp_offset != 0;
  const unsigned fp_index = fixed_ra ? 1 : 2;
  // s390x register encoding of V2 (2.46 knows it is gone in V3).
  const bool regnum_encoding = s390x && (b == Binutils::k2_45 || s.version() == kVersion2);
  auto saved = [&](int32_t v) { return regnum_encoding && (v & 1) ? fmt_reg(v >> 1) : fmt_signed("c", v); };

  std::string fp;
  if (b == Binutils::k2_40) {
    fp = !fixed_fp && w.has(fp_index) ? fmt_signed("c", w.get(fp_index)) : "u";
  } else if (fixed_fp) {
    fp = saved(h.cfa_fixed_fp_offset);
  } else {
    fp = w.has(fp_index) ? saved(w.get(fp_index)) : "u";
  }
  append_padded(o, fp, 10);

  std::string ra;
  if (b == Binutils::k2_40) ra = !fixed_ra && w.has(1) ? fmt_signed("c", w.get(1)) : "u";
  else if (fixed_ra) ra = "f";
  else if (!w.has(1)) ra = "u";
  else if (w.get(1) == 0) ra = "U";
  else ra = saved(w.get(1));
  ra += f.mangled_ra() ? "[s]" : "   ";
  append_padded(o, ra, 13);
}

// ---- rows of FLEX FDEs (2.46) ---------------------------------------------

std::string reg_name(const Section& s, uint32_t reg) {
  const AbiRegisters regs = s.registers();
  if (reg == regs.sp) return "sp";
  if (reg == regs.fp) return "fp";
  char buf[24];
  std::snprintf(buf, sizeof buf, "r%u", reg);
  return buf;
}

// "reg+off", "(reg+off)" for a dereferenced register, "c+off" for the CFA
// (whose dereference the dumper does not show).
std::string flex_disp(const Section& s, uint32_t ctrl, int32_t offset) {
  const bool reg_p = ctrl & 1;
  const std::string base = reg_p ? reg_name(s, ctrl >> 3) : "c";
  const std::string text = fmt_signed(base.c_str(), offset);
  return reg_p && (ctrl & 2) ? "(" + text + ")" : text;
}

void write_flex_row(std::string& o, const Section& s, const Fre& f) {
  const Header& h = s.header();
  const Words w{f};
  if (f.ra_undefined()) {
    o += "  RA undefined";
    return;
  }
  const bool fixed_ra = h.cfa_fixed_ra_offset != 0;
  const bool fixed_fp = h.cfa_fixed_fp_offset != 0;
  int32_t cfa_offset = w.get(1);
  if (w.has(1) && s.abi() == Abi::kS390xBig) cfa_offset = s390x_cfa_decode(cfa_offset);
  append_padded(o, "  " + flex_disp(s, w.uget(0), cfa_offset), 12);

  // RA: control word 2, offset 3 (the fixed offset when absent).
  const bool ra_ctrl_present = w.has(2);
  const uint32_t ra_ctrl = w.uget(2);
  const int32_t ra_offset = !w.has(3) && fixed_ra ? h.cfa_fixed_ra_offset : w.get(3);
  // FP: control word 4 (3 after an RA padding word), offset just after it.
  const bool ra_padding = ra_ctrl_present && ra_ctrl == 0;
  const unsigned fp_ctrl_index = ra_padding ? 3 : 4;
  const unsigned fp_off_index = ra_padding ? 4 : 5;
  bool fp_ok = w.has(fp_ctrl_index);
  int32_t fp_offset = w.get(fp_off_index);
  bool fp_offset_ok = w.has(fp_off_index);
  if (!fp_offset_ok && fixed_fp) {
    fp_offset = h.cfa_fixed_fp_offset;
    fp_offset_ok = true;
  }
  append_padded(o, fp_ok && fp_offset_ok ? flex_disp(s, w.uget(fp_ctrl_index), fp_offset) : "u", 10);

  std::string ra;
  if (!ra_ctrl_present) ra = fixed_ra ? "f" : "u";
  else if (ra_ctrl == 0) ra = "U";
  else ra = flex_disp(s, ra_ctrl, ra_offset);
  ra += f.mangled_ra() ? "[s]" : "   ";
  append_padded(o, ra, 13);
}

// ---- functions ------------------------------------------------------------

Result<void> write_function(std::string& o, const Section& s, Binutils b, const Fde& fde) {
  char buf[160];
  // libsframe's function start: section address + stored value, plus (PCREL)
  // the field's offset computed as header size + index * FDE size (it ignores
  // sfh_fdeoff).
  uint64_t vma = s.address() + static_cast<uint64_t>(fde.raw_start);
  if (b != Binutils::k2_40 && (s.flags() & kFlagFuncStartPcrel))
    vma += static_cast<uint32_t>(s.header_size() + uint64_t{fde.index} * Section::fde_size(s.version()));
  std::snprintf(buf, sizeof buf, "\n    func idx [%d]: pc = 0x%" PRIx64 ", size = %d bytes",
                static_cast<int32_t>(fde.index), vma, static_cast<int32_t>(fde.size));
  o += buf;
  if (b == Binutils::k2_46) {
    const bool signal = (fde.info >> 7) & 1;  // read for V2 too
    const bool flex = fde.fde_type == FdeType::kFlex;
    if (signal || flex) {
      o += ", attr = \"";
      if (signal) o += 'S';
      if (flex) o += 'F';
      o += '"';
    }
  }
  if ((s.abi() == Abi::kAarch64Big || s.abi() == Abi::kAarch64Little) && fde.pauth_key_b) o += ", pauth = B key";
  const bool mask = fde.pc_type == PcType::kMask;
  std::snprintf(buf, sizeof buf, "\n    %-7s%-8s %-10s%-10s%-13s", "STARTPC", mask ? "[m]" : "   ", "CFA", "FP", "RA");
  o += buf;
  return s.for_each_fre(fde, [&](const Fre& f) {
    const uint64_t pc = mask ? uint64_t{f.start} : vma + f.start;
    std::snprintf(buf, sizeof buf, "\n    %016" PRIx64, pc);
    o += buf;
    if (fde.fde_type == FdeType::kFlex) write_flex_row(o, s, f);
    else write_default_row(o, s, b, f);
    return true;
  });
}

}  // namespace

Binutils binutils_for_version(uint8_t version) {
  return version <= kVersion1 ? Binutils::k2_40 : version == kVersion2 ? Binutils::k2_45 : Binutils::k2_46;
}

std::optional<Binutils> parse_binutils(std::string_view release) {
  if (release.size() < 4 || release.substr(0, 2) != "2.") return std::nullopt;
  unsigned minor = 0;
  for (char c : release.substr(2)) {
    if (c < '0' || c > '9' || minor > 1000) return std::nullopt;
    minor = minor * 10 + static_cast<unsigned>(c - '0');
  }
  if (minor < 40) return std::nullopt;
  if (minor == 40) return Binutils::k2_40;
  if (minor <= 45) return Binutils::k2_45;
  return Binutils::k2_46;
}

const char* to_string(Binutils b) {
  switch (b) {
    case Binutils::k2_40: return "2.40";
    case Binutils::k2_45: return "2.45";
    case Binutils::k2_46: return "2.46";
  }
  return "?";
}

Result<std::string> objdump_text(const Section& section, Binutils release, std::string_view section_name) {
  const uint8_t version = section.version();
  const bool functions = (release == Binutils::k2_40 && version == kVersion1) ||
                         (release == Binutils::k2_45 && version == kVersion2) ||
                         (release == Binutils::k2_46 && version >= kVersion2);
  const bool header_only = release == Binutils::k2_45 && version == kVersion1;
  if (!functions && !header_only) return Error{Errc::kUnsupportedByDumper, 2};
  std::string o = "Contents of the SFrame section ";
  o += section_name;
  o += ':';
  write_header(o, section, release);
  if (header_only) {
    o += "\n No further information can be displayed.  SFrame version not supported\n";
    return o;
  }
  o += "\n  Function Index :\n";
  for (const Fde& fde : section.fdes()) {
    FW_CHECK(write_function(o, section, release, fde));
    o += '\n';
  }
  return o;
}

}  // namespace framewalk::sframe

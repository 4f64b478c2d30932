#include "tools/check_command.hpp"

#include <sys/stat.h>

#include <cerrno>
#include <cinttypes>
#include <cstdio>
#include <cstring>

#include "base/mapped_file.hpp"
#include "dump/cfi_text.hpp"
#include "elf/elf_writer.hpp"
#include "elf/symbols.hpp"
#include "sframe/sframe_check.hpp"
#include "sframe/sframe_generate.hpp"
#include "sframe/sframe_section.hpp"
#include "tools/messages.hpp"

namespace framewalk::tools {

namespace {

std::string percent(uint64_t part, uint64_t whole) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f%%", whole ? 100.0 * static_cast<double>(part) / static_cast<double>(whole) : 100.0);
  return buf;
}

std::string open_error(const Error& e) {
  if (e.code == ErrorCode::kIoError) return std::strerror(static_cast<int>(e.offset));
  return std::string(to_string(e.code)) + " at offset " + hex(e.offset);
}

const elf::Section* sframe_section_of(const elf::ElfFile& f) {
  if (const elf::Section* s = f.section_by_name(".sframe")) return s;
  for (const elf::Section& s : f.sections())
    if (s.type == elf::kShtGnuSframe) return &s;
  return nullptr;
}

// ---- framewalk check -------------------------------------------------------

std::string function_at(const elf::SymbolTable& symbols, uint64_t pc) {
  auto m = symbols.lookup(pc);
  if (!m) return "?";
  std::string s = dump::demangle(m->symbol->name);
  if (m->offset) s += "+" + hex(m->offset);
  return s;
}

// "CFA=rsp+16 rip=[CFA-8] rbp=[CFA-16]": the rules the checker compares
// (RA, FP and SP of the SFrame section's ABI).
std::string rules_text(const UnwindRow& row, const arch::ArchInfo* arch, const sframe::AbiRegisters& regs) {
  std::string s = "CFA=" + dump::cfa_text(row.cfa, arch, 8, Endian::kLittle);
  for (uint16_t reg : {row.return_address_register, regs.fp, regs.sp}) {
    const RegisterRule* r = row.find(reg);
    if (!r) continue;
    std::string t = dump::rule_text(*r, arch, 8, Endian::kLittle);
    if (!t.empty() && t[0] == '=') t.erase(0, 1);
    s += " " + dump::register_name(arch, reg) + "=" + t;
  }
  if (row.negate_ra_state) s += " ra_signed";
  if (row.signal_frame) s += " signal";
  return s;
}

struct LoadedSframe {
  std::shared_ptr<const FileImage> image;        // a bare section file
  std::shared_ptr<const elf::ElfFile> elf;       // or the ELF file holding it
  Bytes bytes;
  uint64_t address = 0;
  std::string where;
};

Result<LoadedSframe> load_sframe(const std::string& path, std::shared_ptr<const elf::ElfFile> own,
                                 std::optional<uint64_t> address, std::string* why) {
  LoadedSframe out;
  std::shared_ptr<const elf::ElfFile> f = own;
  if (!path.empty()) {
    auto image = FileImage::map(path);
    if (!image) {
      *why = std::strerror(static_cast<int>(image.error().offset));
      return image.error();
    }
    const Bytes b = (*image)->bytes();
    if (b.size() < 4 || std::memcmp(b.data(), "\x7f" "ELF", 4) != 0) {
      out.image = *image;
      out.bytes = b;
      out.address = address.value_or(0);
      out.where = path + " (bare section at " + hex(out.address) + ")";
      return out;
    }
    auto parsed = elf::ElfFile::parse(*image, path);
    if (!parsed) {
      *why = open_error(parsed.error());
      return parsed.error();
    }
    f = *parsed;
  }
  const elf::Section* sec = sframe_section_of(*f);
  if (!sec || sec->type == elf::kShtNobits || sec->size == 0) {
    *why = "no .sframe section";
    return Error{ErrorCode::kNotFound, 0};
  }
  auto data = f->section_data(*sec);
  if (!data) {
    *why = std::string(sec->name) + ": " + to_string(data.error().code);
    return data.error();
  }
  out.elf = f;
  out.bytes = *data;
  out.address = sec->address;
  out.where = f->name() + " " + std::string(sec->name);
  return out;
}

}  // namespace

int run_check_command(const CheckCommandOptions& options) {
  auto file = elf::ElfFile::open(options.file);
  if (!file) {
    report(options.file, open_error(file.error()));
    return 1;
  }
  auto cfi = ElfCfi::load(*file, sframe::sframe_cfi_options());
  if (!cfi) {
    report(options.file, to_string(cfi.error().code));
    return 1;
  }
  const std::vector<const dwarf::CfiSection*> sections = sframe::sframe_cfi_sections(*cfi);
  std::string why;
  auto loaded = load_sframe(options.sframe_file, *file, options.sframe_address, &why);
  if (!loaded) {
    report(options.sframe_file.empty() ? options.file : options.sframe_file, why);
    return 1;
  }
  auto section = sframe::Section::parse(loaded->bytes, loaded->address);
  if (!section) {
    report(loaded->where, std::string(sframe::to_string(section.error().code)) + " at offset " + hex(section.error().offset));
    return 1;
  }

  sframe::CheckOptions copts;
  copts.list_limit = options.summary_only ? 1 : options.limit;
  const sframe::CheckReport r = sframe::check_rows(sections, *section, copts);
  if (r.cfi_fdes == 0 && r.cfi_errors == 0) {
    report(options.file, "no .eh_frame or .debug_frame with FDEs");
    return 1;
  }

  const arch::ArchInfo* arch = arch::dwarf_arch_for((*file)->machine_key());
  const elf::SymbolTable symbols = elf::SymbolTable::load(*file);
  if (!options.summary_only) {
    for (const sframe::RowDifference& d : r.differences) {
      std::printf("differ %s..%s %s: %s\n  cfi:    %s\n  sframe: %s%s\n", hex(d.begin).c_str(), hex(d.end).c_str(),
                  function_at(symbols, d.begin).c_str(), sframe::check_items_text(d.items).c_str(),
                  rules_text(d.cfi, arch, section->registers()).c_str(),
                  rules_text(d.sframe, arch, section->registers()).c_str(),
                  d.sframe_topmost_only ? " (topmost frame only)" : "");
    }
    if (r.disagreements > r.differences.size())
      std::printf("... and %" PRIu64 " more disagreements\n", r.disagreements - r.differences.size());
    for (const auto& [list, count, name] :
         {std::tuple{&r.cfi_only, r.cfi_only_ranges, "cfi-only"}, std::tuple{&r.sframe_only, r.sframe_only_ranges, "sframe-only"}}) {
      for (const sframe::CoverageHole& h : *list)
        std::printf("%s %s..%s %s (%" PRIu64 " bytes)\n", name, hex(h.begin).c_str(), hex(h.end).c_str(),
                    function_at(symbols, h.begin).c_str(), h.end - h.begin);
      if (count > list->size()) std::printf("... and %" PRIu64 " more %s ranges\n", count - list->size(), name);
    }
    for (const std::string& e : r.errors) std::printf("error %s\n", e.c_str());
  }
  std::printf("%s: %s v%u (%s) against %s: %" PRIu64 " CFI FDEs, %" PRIu64 " SFrame FDEs, %" PRIu64 " FREs; %" PRIu64
              " rows compared over %" PRIu64 " bytes; %" PRIu64 " disagreements (%" PRIu64 " bytes); cfi-only %" PRIu64
              " ranges (%" PRIu64 " bytes); sframe-only %" PRIu64 " ranges (%" PRIu64 " bytes); sframe without rows %" PRIu64
              " ranges (%" PRIu64 " bytes); unreadable %" PRIu64 " CFI, %" PRIu64 " SFrame\n",
              options.file.c_str(), "SFrame", static_cast<unsigned>(section->version()), loaded->where.c_str(),
              r.cfi_sections.c_str(), r.cfi_fdes, r.sframe_fdes, r.sframe_fres, r.rows_compared, r.bytes_compared,
              r.disagreements, r.disagreement_bytes, r.cfi_only_ranges, r.cfi_only_bytes, r.sframe_only_ranges,
              r.sframe_only_bytes, r.no_row_ranges, r.no_row_bytes, r.cfi_errors, r.sframe_errors);
  return r.disagreements == 0 ? 0 : 1;
}

// ---- framewalk sframe --generate ---------------------------------------------

int run_sframe_generate(const GenerateCommandOptions& options) {
  if (options.version < 1 || options.version > 3) {
    std::fprintf(stderr, "framewalk sframe: --sframe-version: 1, 2 or 3\n");
    return 2;
  }
  auto file = elf::ElfFile::open(options.input);
  if (!file) {
    report(options.input, open_error(file.error()));
    return 1;
  }
  if (sframe_section_of(**file)) {
    report(options.input, "already has an .sframe section");
    return 1;
  }
  auto placement = elf::plan_added_section(**file, options.no_segment ? elf::SegmentPolicy::kNever : elf::SegmentPolicy::kAuto);
  if (!placement) {
    report(options.input, std::string("cannot lay out a new section: ") + to_string(placement.error().code));
    return 1;
  }
  sframe::GenerateOptions gopts;
  gopts.version = static_cast<uint8_t>(options.version);
  gopts.section_address = placement->address;
  auto generated = sframe::generate_sframe(*file, gopts);
  if (!generated) {
    const Error e = generated.error();
    if (e.code == ErrorCode::kNotFound) report(options.input, "no .eh_frame or .debug_frame with FDEs");
    else if (e.code == ErrorCode::kUnsupportedElf && e.offset == 1) report(options.input, "SFrame v1 has no s390x ABI: use --sframe-version=2 or 3");
    else if (e.code == ErrorCode::kUnsupportedElf) report(options.input, "SFrame generation needs an x86-64, AArch64 or s390x executable or shared object");
    else report(options.input, to_string(e.code));
    return 1;
  }
  // What was written must read back.
  auto check = sframe::Section::parse(Bytes(generated->bytes), placement->address);
  if (!check) {
    report(options.input, std::string("internal error: the generated section does not parse: ") +
                              sframe::to_string(check.error().code) + " at offset " + hex(check.error().offset));
    return 1;
  }
  elf::NewSection section;
  section.name = ".sframe";
  section.type = options.version >= 2 ? elf::kShtGnuSframe : elf::kShtProgbits;  // 2.40 wrote PROGBITS
  section.data = generated->bytes;
  auto bytes = add_section(**file, *placement, section);
  if (!bytes) {
    report(options.input, std::string("cannot write the copy: ") + to_string(bytes.error().code));
    return 1;
  }
  const std::string tmp = options.output + ".tmp";
  FILE* out = std::fopen(tmp.c_str(), "wb");
  if (!out) {
    report(options.output, std::strerror(errno));
    return 1;
  }
  const bool written = std::fwrite(bytes->data(), 1, bytes->size(), out) == bytes->size();
  const bool closed = std::fclose(out) == 0;
  struct stat st;
  if (stat(options.input.c_str(), &st) == 0) chmod(tmp.c_str(), st.st_mode & 07777);
  if (!written || !closed || std::rename(tmp.c_str(), options.output.c_str()) != 0) {
    report(options.output, std::strerror(errno));
    std::remove(tmp.c_str());
    return 1;
  }

  const sframe::GenerateStats& s = generated->stats;
  std::printf("%s -> %s: SFrame v%d, %" PRIu64 " FDEs (%" PRIu64 " DEFAULT, %" PRIu64 " FLEX; %" PRIu64 " PCMASK, %" PRIu64
              " signal), %" PRIu64 " FREs (%" PRIu64 " RA undefined), %" PRIu64 " bytes\n",
              options.input.c_str(), options.output.c_str(), options.version, s.sframe_fdes, s.default_fdes, s.flex_fdes,
              s.pcmask_fdes, s.signal_fdes, s.fres, s.ra_undefined_fres, s.section_bytes);
  std::printf("  represented %" PRIu64 " of %" PRIu64 " %s FDEs (%s), %" PRIu64 " of %" PRIu64 " code bytes (%s)",
              s.represented_fdes, s.cfi_fdes, s.cfi_section.c_str(), percent(s.represented_fdes, s.cfi_fdes).c_str(),
              s.represented_bytes, s.cfi_bytes, percent(s.represented_bytes, s.cfi_bytes).c_str());
  if (s.signal_markers) std::printf("; %" PRIu64 " signal frames as markers without rows", s.signal_markers);
  std::printf("\n");
  for (const auto& [reason, skip] : s.skipped)
    std::printf("  not represented: %" PRIu64 " FDEs, %" PRIu64 " bytes: %s (first at %s)\n", skip.fdes, skip.bytes,
                reason.c_str(), hex(skip.first_pc).c_str());
  std::printf("  .sframe %s\n", placement->note.c_str());
  return 0;
}

}  // namespace framewalk::tools

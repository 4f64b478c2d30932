#include "tools/sframe_command.hpp"

#include <cstdio>
#include <cstring>

#include "arch/arch.hpp"
#include "base/mapped_file.hpp"
#include "dump/cfi_text.hpp"
#include "elf/elf_file.hpp"
#include "sframe/sframe_dump.hpp"
#include "sframe/sframe_rows.hpp"
#include "sframe/sframe_section.hpp"
#include "tools/messages.hpp"

namespace framewalk::tools {

namespace {

constexpr uint32_t kShtGnuSframe = 0x6ffffff4;
constexpr uint16_t kEmS390 = 22;

// BFD's target name, as objdump's "file format" banner spells it.
std::string bfd_target(const elf::ElfFile& f) {
  const bool little = f.endian() == Endian::kLittle;
  const std::string cls = f.is_64() ? "elf64-" : "elf32-";
  switch (f.machine()) {
    case elf::kEmX86_64: return cls + "x86-64";
    case elf::kEm386: return "elf32-i386";
    case elf::kEmAarch64: return cls + (little ? "littleaarch64" : "bigaarch64");
    case kEmS390: return cls + "s390";
    default: return cls + (little ? "little" : "big");
  }
}

// Where a dump of one section goes wrong, for messages.
struct Where {
  std::string file;
  std::string section = ".sframe";
  std::optional<uint64_t> file_offset;  // of the section, when it is stored as is
};

std::string describe(const Where& w, const sframe::Error& e) {
  std::string msg = w.section + ": " + sframe::to_string(e.code) + " at offset " + hex(e.offset);
  if (w.file_offset) msg += " (file offset " + hex(*w.file_offset + e.offset) + ")";
  return msg;
}

// Register names for the rows: the ABI's machine's (s390x, whose names
// framewalk does not know, prints rN).
const arch::ArchInfo* arch_for(sframe::Abi abi) { return arch::dwarf_arch_for(sframe::abi_machine_key(abi)); }

void print_row(const sframe::SframeRow& r, const arch::ArchInfo* arch, Endian endian) {
  const UnwindRow& row = r.row;
  std::string line = hex(row.pc_begin) + ".." + hex(row.pc_end) + "  fde " + std::to_string(r.fde_index) + " fre " +
                     std::to_string(r.fre_index) + "  CFA=" + dump::cfa_text(row.cfa, arch, 8, endian);
  for (int i = 0; i < row.rule_count; ++i)
    line += "  " + dump::register_name(arch, row.rules[i].reg) + "=" + dump::rule_text(row.rules[i], arch, 8, endian);
  if (r.rep_size) line += "  repeats every " + std::to_string(r.rep_size) + " bytes";
  if (r.outermost) line += "  outermost";
  if (r.topmost_only) line += "  topmost-only";
  if (r.ra_mangled) line += r.pauth_key_b ? "  ra-signed(B key)" : "  ra-signed(A key)";
  if (row.signal_frame) line += "  signal";
  std::printf("%s\n", line.c_str());
}

int dump_section(const Where& where, Bytes bytes, uint64_t address, const SframeCommandOptions& options,
                 const std::string& banner) {
  auto section = sframe::Section::parse(bytes, address);
  if (!section) {
    report(where.file, describe(where, section.error()));
    return 1;
  }
  const arch::ArchInfo* arch = arch_for(section->abi());
  int status = 0;
  if (options.pc) {
    auto row = sframe::row_for_pc(*section, *options.pc);
    if (!row) {
      report(where.file, "no SFrame row for " + hex(*options.pc) + ": " + sframe::to_string(row.error().code));
      return 1;
    }
    print_row(*row, arch, section->endian());
    return 0;
  }
  if (options.rows) {
    for (const sframe::Fde& fde : section->fdes()) {
      std::printf("FDE %u: pc %s..%s%s%s%s\n", fde.index, hex(fde.start).c_str(), hex(fde.end()).c_str(),
                  fde.pc_type == sframe::PcType::kMask ? " pcmask" : "",
                  fde.fde_type == sframe::FdeType::kFlex ? " flex" : "", fde.signal ? " signal" : "");
      auto rows = sframe::fde_rows(*section, fde);
      if (!rows) {
        report(where.file, describe(where, rows.error()));
        status = 1;
        continue;
      }
      for (const sframe::SframeRow& r : *rows) print_row(r, arch, section->endian());
    }
    return status;
  }
  sframe::Binutils release = sframe::binutils_for_version(section->version());
  if (!options.binutils.empty()) release = *sframe::parse_binutils(options.binutils);
  auto text = sframe::objdump_text(*section, release, where.section);
  if (!text) {
    report(where.file, where.section + ": binutils " + sframe::to_string(release) + " cannot dump SFrame version " +
                           std::to_string(section->version()));
    return 1;
  }
  std::fputs(banner.c_str(), stdout);
  std::fputs(text->c_str(), stdout);
  return status;
}

int run_raw(const std::string& path, const SframeCommandOptions& options) {
  auto image = FileImage::map(path);
  if (!image) {
    report(path, std::strerror(static_cast<int>(image.error().offset)));
    return 1;
  }
  Where where{path, ".sframe", uint64_t{0}};
  return dump_section(where, (*image)->bytes(), options.address.value_or(0), options, "");
}

int run_elf(const std::string& path, const SframeCommandOptions& options) {
  auto file = elf::ElfFile::open(path);
  if (!file) {
    report(path, open_error_text(file.error()));
    return 1;
  }
  const elf::ElfFile& f = **file;
  const elf::Section* sec = f.section_by_name(".sframe");
  if (!sec)
    for (const elf::Section& s : f.sections())
      if (s.type == kShtGnuSframe) {
        sec = &s;
        break;
      }
  if (!sec || sec->type == elf::kShtNobits || sec->size == 0) {
    report(path, "no .sframe data");
    return 1;
  }
  auto data = f.section_data(*sec);
  if (!data) {
    report(path, std::string(sec->name) + ": " + to_string(data.error().code) + " at offset " + hex(data.error().offset));
    return 1;
  }
  Where where{path, std::string(sec->name), std::nullopt};
  if (!(sec->flags & elf::kShfCompressed)) where.file_offset = sec->offset;
  const std::string banner = "\n" + path + ":     file format " + bfd_target(f) + "\n\n";
  return dump_section(where, *data, sec->address, options, banner);
}

}  // namespace

int run_sframe_command(const SframeCommandOptions& options) {
  if (!options.binutils.empty() && !sframe::parse_binutils(options.binutils)) {
    std::fprintf(stderr, "framewalk sframe: --binutils: not a release from 2.40 on: %s\n", options.binutils.c_str());
    return 2;
  }
  int status = 0;
  for (const std::string& path : options.files)
    status |= options.raw ? run_raw(path, options) : run_elf(path, options);
  std::fflush(stdout);
  return status;
}

}  // namespace framewalk::tools

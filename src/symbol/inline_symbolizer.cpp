#include "symbol/inline_symbolizer.hpp"

#include "elf/debug_file.hpp"
#include "symbol/split_dwarf.hpp"

namespace framewalk::symbol {

DwarfSections dwarf_sections(const elf::ElfFile& file, std::vector<DwarfProblem>* problems) {
  auto data = [&](std::string_view name) { return elf_section_bytes(file, name, problems); };
  DwarfSections s;
  s.endian = file.endian();
  s.address_size = static_cast<uint8_t>(file.address_size());
  s.info = data(".debug_info");
  s.abbrev = data(".debug_abbrev");
  s.str = data(".debug_str");
  s.line_str = data(".debug_line_str");
  s.str_offsets = data(".debug_str_offsets");
  s.addr = data(".debug_addr");
  s.ranges = data(".debug_ranges");
  s.rnglists = data(".debug_rnglists");
  s.aranges = data(".debug_aranges");
  s.line = data(".debug_line");
  return s;
}

namespace {

// The dwz file named by .gnu_debugaltlink, its build-id checked (elf/debug_file).
std::shared_ptr<const elf::ElfFile> open_supplementary(const elf::ElfFile& file, const std::string& path) {
  auto found = elf::find_supplementary_file(file, path);
  if (!found) return nullptr;
  auto alt = elf::ElfFile::open(*found);
  if (!alt) return nullptr;
  return *alt;
}

}  // namespace

std::unique_ptr<InlineSymbolizer> InlineSymbolizer::load(std::shared_ptr<const elf::ElfFile> file,
                                                         const std::string& path, PathStyle style) {
  std::shared_ptr<const elf::ElfFile> dwarf = file;
  std::string dwarf_path = path;
  if (!file->section_by_name(".debug_info") && !file->section_by_name(".zdebug_info")) {
    if (auto debug = elf::find_debug_file(*file, path)) {
      if (auto opened = elf::ElfFile::open(*debug)) {
        dwarf = *opened;
        dwarf_path = *debug;
      }
    }
  }
  return std::make_unique<InlineSymbolizer>(dwarf, open_supplementary(*dwarf, dwarf_path), style, path);
}

InlineSymbolizer::InlineSymbolizer(std::shared_ptr<const elf::ElfFile> dwarf,
                                   std::shared_ptr<const elf::ElfFile> supplementary, PathStyle style,
                                   const std::string& program_path)
    : dwarf_(std::move(dwarf)), supplementary_(std::move(supplementary)) {
  sections_ = dwarf_sections(*dwarf_, &section_problems_);
  if (supplementary_) alt_sections_ = dwarf_sections(*supplementary_, &section_problems_);
  lines_ = LineTable::load(dwarf_, style, alt_sections_.str);
  functions_ = std::make_unique<FunctionIndex>(sections_, supplementary_ ? &alt_sections_ : nullptr, style,
                                               std::make_unique<SplitDwarfFiles>(program_path));
}

std::vector<SourceFrame> InlineSymbolizer::frames(uint64_t address) const {
  std::vector<SourceFrame> out;
  const std::vector<FunctionLevel> chain = functions_->chain(address);
  const std::optional<LineLocation> line = lines_.lookup(address);
  SourceFrame first;
  if (line) {
    first.file = line->file;
    first.line = line->line;
    first.column = line->column;
    first.discriminator = line->discriminator;
  }
  if (chain.empty()) {
    if (line) out.push_back(first);
    return out;
  }
  out.reserve(chain.size());
  for (size_t i = 0; i < chain.size(); ++i) {
    SourceFrame f = i == 0 ? first : SourceFrame{};
    if (i > 0) {  // the call site of the level inlined into this one
      f.file = chain[i - 1].call_file;
      f.line = chain[i - 1].call_line;
      f.column = chain[i - 1].call_column;
    }
    f.function = chain[i].name;
    f.linkage_name = chain[i].linkage_name;
    f.final_name = chain[i].final_name;
    f.function_entry = chain[i].entry;
    f.function_die = chain[i].die;
    f.inlined = chain[i].inlined;
    out.push_back(f);
  }
  return out;
}

std::vector<DwarfProblem> InlineSymbolizer::problems() const {
  std::vector<DwarfProblem> out = section_problems_;
  for (const LineProblem& p : lines_.problems()) out.push_back({p.error, p.section});
  for (const DwarfProblem& p : functions_->problems()) out.push_back(p);
  return out;
}

}  // namespace framewalk::symbol

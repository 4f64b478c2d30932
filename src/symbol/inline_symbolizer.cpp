#include "symbol/inline_symbolizer.hpp"

#include <algorithm>
#include <string>
#include <system_error>
#include <thread>

#include "elf/debug_file.hpp"
#include "elf/symbols.hpp"
#include "symbol/line_program.hpp"
#include "symbol/split_dwarf.hpp"

namespace framewalk::symbol {

namespace {

// Below this, a compressed section is not worth a thread.
constexpr uint64_t kInflateBesideAtLeast = uint64_t{256} << 10;

// Inflates a compressed section on a thread of its own while the caller goes
// on; ElfFile keeps the result (or the error) and makes a caller that asks
// for the section meanwhile wait for it. Joined when it dies.
class InflateBeside {
 public:
  InflateBeside(const elf::ElfFile& file, std::string_view name) {
    const elf::Section* section = file.debug_section(name);
    if (!section || section->size < kInflateBesideAtLeast) return;
    if (!(section->flags & elf::kShfCompressed) && section->name.substr(0, 8) != ".zdebug_") return;
    try {
      thread_ = std::thread([&file, section] { (void)file.section_data(*section); });
    } catch (const std::system_error&) {  // no thread to be had: the first to ask inflates it
    }
  }
  ~InflateBeside() {
    if (thread_.joinable()) thread_.join();
  }
  InflateBeside(const InflateBeside&) = delete;
  InflateBeside& operator=(const InflateBeside&) = delete;

 private:
  std::thread thread_;
};

}  // namespace

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
std::shared_ptr<const elf::ElfFile> open_supplementary(const elf::ElfFile& file, const std::string& path,
                                                      const elf::DebugFileSearch& search) {
  auto found = elf::find_supplementary_file(file, path, search);
  if (!found) return nullptr;
  auto alt = elf::ElfFile::open(*found);
  if (!alt) return nullptr;
  return *alt;
}

}  // namespace

std::unique_ptr<InlineSymbolizer> InlineSymbolizer::load(std::shared_ptr<const elf::ElfFile> file,
                                                         const std::string& path, PathStyle style,
                                                         const elf::DebugFileSearch& search) {
  std::shared_ptr<const elf::ElfFile> dwarf = file;
  std::string dwarf_path = path;
  if (!file->section_by_name(".debug_info") && !file->section_by_name(".zdebug_info")) {
    if (auto debug = elf::find_debug_file(*file, path, search)) {
      if (auto opened = elf::ElfFile::open(*debug)) {
        dwarf = *opened;
        dwarf_path = *debug;
      }
    }
  }
  return std::make_unique<InlineSymbolizer>(dwarf, open_supplementary(*dwarf, dwarf_path, search), style, path);
}

InlineSymbolizer::InlineSymbolizer(std::shared_ptr<const elf::ElfFile> dwarf,
                                   std::shared_ptr<const elf::ElfFile> supplementary, PathStyle style,
                                   const std::string& program_path)
    : dwarf_(std::move(dwarf)), supplementary_(std::move(supplementary)) {
  // On a cold file the first answer waits mostly on inflating compressed
  // sections (distributions' debug files): the largest, .debug_info, is
  // inflated beside the line programs' sections and their scan, which do
  // not need it.
  const InflateBeside info(*dwarf_, ".debug_info");
  // The other compressed sections inflate here meanwhile: LineTable::load
  // waits for .debug_info once it has scanned the line programs, and the
  // sections asked for after it would inflate only then.
  for (std::string_view name : {".debug_line", ".debug_line_str", ".debug_str", ".debug_abbrev", ".debug_str_offsets",
                                ".debug_addr", ".debug_ranges", ".debug_rnglists", ".debug_aranges"})
    if (const elf::Section* section = dwarf_->debug_section(name)) (void)dwarf_->section_data(*section);
  std::vector<DwarfProblem> alt_problems;
  if (supplementary_) alt_sections_ = dwarf_sections(*supplementary_, &alt_problems);
  lines_ = LineTable::load(dwarf_, style, alt_sections_.str);
  sections_ = dwarf_sections(*dwarf_, &section_problems_);
  section_problems_.insert(section_problems_.end(), alt_problems.begin(), alt_problems.end());
  functions_ = std::make_unique<FunctionIndex>(sections_, supplementary_ ? &alt_sections_ : nullptr, style,
                                               std::make_unique<SplitDwarfFiles>(program_path));
  functions_->share_paths(lines_);
  call_sites_ = std::make_unique<CallSiteIndex>(sections_, supplementary_ ? &alt_sections_ : nullptr, functions_.get());
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

std::optional<uint64_t> InlineSymbolizer::function_named(std::string_view name) const {
  std::call_once(names_once_, [&] {
    constexpr uint8_t kSttFunc = 2, kSttGnuIfunc = 10;
    for (const elf::Section& table : dwarf_->sections()) {
      if ((table.type != elf::kShtSymtab && table.type != elf::kShtDynsym) ||
          table.link >= dwarf_->sections().size())
        continue;
      auto data = dwarf_->section_data(table);
      auto strings = dwarf_->section_data(dwarf_->sections()[table.link]);
      if (!data || !strings) continue;
      const size_t count = data->size() / (dwarf_->is_64() ? 24 : 16);
      for (size_t i = 1; i < count; ++i) {
        const elf::RawSymbol raw = elf::raw_symbol(*dwarf_, *data, i);
        const uint8_t type = raw.info & 0xf;
        if ((type != kSttFunc && type != kSttGnuIfunc) || raw.shndx == 0) continue;
        auto text = string_at(*strings, raw.name);
        if (!text || text->empty()) continue;
        std::string_view base = *text;
        if (const size_t at = base.find('@'); at != std::string_view::npos) {
          if (base.substr(at, 2) != "@@") continue;  // a version other than the default one
          base = base.substr(0, at);
        }
        // ARM: bit 0 of a function symbol says Thumb; the function starts at the even address.
        names_.emplace_back(base, dwarf_->machine() == elf::kEmArm ? raw.value & ~uint64_t{1} : raw.value);
      }
    }
    std::sort(names_.begin(), names_.end());
  });
  auto it = std::lower_bound(names_.begin(), names_.end(), std::make_pair(name, uint64_t{0}));
  if (it == names_.end() || it->first != name) return std::nullopt;
  const uint64_t address = it->second;
  for (; it != names_.end() && it->first == name; ++it)
    if (it->second != address) return std::nullopt;  // two functions of that name: not knowable which
  return address;
}

ModuleCallGraph InlineSymbolizer::call_graph() const { return ModuleCallGraph{*functions_, *call_sites_, named_}; }

std::vector<DwarfProblem> InlineSymbolizer::problems() const {
  std::vector<DwarfProblem> out = section_problems_;
  for (const LineProblem& p : lines_.problems()) out.push_back({p.error, p.section});
  for (const DwarfProblem& p : functions_->problems()) out.push_back(p);
  return out;
}

}  // namespace framewalk::symbol

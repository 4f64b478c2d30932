#include "render/address_text.hpp"

#include <algorithm>
#include <optional>
#include <string_view>
#include <vector>

#include "base/keyed_cache.hpp"
#include "base/text.hpp"
#include "base/text_arena.hpp"
#include "symbol/nearest_symbol.hpp"
#include "unwind/symbolize.hpp"

namespace framewalk {

namespace {

void json_value(std::string& out, std::string_view s) {
  out += '"';
  out += json_escape(s);
  out += '"';
}

}  // namespace

// The answer for one address, as binutils addr2line (text) or as framewalk's JSON.
class AddressAnswers {
 public:
  AddressAnswers(const AddressAnswerOptions& o, std::shared_ptr<const elf::ElfFile> file, const std::string& path)
      : o_(o),
        file_(file),
        dwarf_(symbol::InlineSymbolizer::load(
            file, path, o.json ? symbol::PathStyle::kLlvm : symbol::PathStyle::kBinutils)),
        symbols_(symbols_for(o, file, *dwarf_)),
        demangled_budget_(std::clamp<size_t>(dwarf_->dwarf_file().image().size() / 64, 256 * 1024, 4 << 20)) {}

  const symbol::InlineSymbolizer& dwarf() const { return *dwarf_; }

  void answer(uint64_t address, std::string& out) {
    // Demangled names are kept within a budget; the last answer's views of them are gone.
    if (demangled_text_.bytes() >= demangled_budget_) {
      demangled_.clear();
      demangled_text_.clear();
    }
    // As binutils: an address outside every allocated section is known nowhere.
    const elf::Section* section = file_->section_by_address(address);
    const bool in_section = section && address >= section->address && address - section->address < section->size;
    // Only code has functions and lines. In a linked program the DWARF of
    // what the linker discarded (COMDAT duplicates, --gc-sections) is left
    // at address 0, where binutils and llvm-symbolizer name functions and
    // lines for addresses in the ELF headers and symbol tables
    // (docs/OUTPUT.md): framewalk asks the DWARF only about executable
    // sections (any section of an object file, where each starts at 0).
    const bool in_code = in_section && ((section->flags & elf::kShfExecinstr) || file_->type() == elf::kEtRel);
    std::vector<symbol::SourceFrame> frames;
    std::optional<symbol::NearestSymbol> symbol;
    if (in_section) {
      if (in_code) frames = dwarf_->frames(address);
      // The symbol tables are asked only where the answer uses them: JSON,
      // no DWARF name, or a name binutils does not take as final (name_of).
      if (o_.json || frames.empty() || frames[0].function.empty() || !frames[0].final_name)
        symbol = symbols_.lookup(section->index, address);
    }
    std::vector<Printed>& printed = printed_;
    printed.clear();
    std::optional<symbol::NearestSymbol> covering;
    // As llvm-symbolizer: a symbol of size 0 reaches the next symbol.
    if (symbol && (symbol->size == 0 || address - symbol->address < symbol->size)) covering = symbol;
    physical_symbol_ = &covering;
    for (size_t i = 0; i < frames.size(); ++i) {
      const symbol::SourceFrame& f = frames[i];
      Printed p;
      p.function = name_of(f, i == 0 ? &symbol : nullptr);
      if (!f.file.empty()) p.path = f.file;
      // llvm-symbolizer: a physical frame without a file takes the covering symbol's STT_FILE name.
      else if (o_.json && !f.inlined && covering && covering->llvm_file)
        p.path = *covering->llvm_file;
      p.line = f.line;
      p.column = f.column;
      // binutils prints the innermost row's discriminator after every line of the chain.
      p.discriminator = frames[0].discriminator;
      p.inlined = f.inlined;
      printed.push_back(p);
    }
    // Without a DWARF function: binutils takes the nearest symbol below the
    // address, llvm-symbolizer (and the JSON) only one that covers it.
    const std::optional<symbol::NearestSymbol>& fallback = o_.json ? covering : symbol;
    if (printed.empty() && fallback) {
      Printed p;
      p.function = o_.json ? fallback->llvm_name : fallback->name;
      // The STT_FILE name before the symbol, as binutils or llvm-symbolizer takes it.
      const std::optional<std::string_view>& file = o_.json ? fallback->llvm_file : fallback->file;
      if (file) p.path = *file;
      printed.push_back(p);
    } else if (!printed.empty() && !printed[0].function && fallback) {
      printed[0].function = o_.json ? fallback->llvm_name : fallback->name;
    }
    for (Printed& p : printed) {
      if (p.function && o_.demangle) p.function = demangled(*p.function);
      if (o_.basenames && p.path) {
        const size_t slash = p.path->rfind('/');
        if (slash != std::string_view::npos) *p.path = p.path->substr(slash + 1);
      }
    }
    if (o_.json) {
      auto place = [&](const Printed& p) {
        out += ",\"function\":";
        if (p.function) json_value(out, *p.function); else out += "null";
        out += ",\"file\":";
        if (p.path) json_value(out, *p.path); else out += "null";
        out += ",\"line\":" + std::to_string(p.line);
        out += ",\"column\":" + std::to_string(p.column);
      };
      out += "{\"address\":";
      json_value(out, hex(address));
      const Printed none;
      place(printed.empty() ? none : printed[0]);
      out += ",\"discriminator\":" + std::to_string(frames.empty() ? 0 : frames[0].discriminator);
      out += ",\"frames\":[";
      for (size_t i = 0; i < printed.size(); ++i) {
        if (i) out += ',';
        out += "{\"inlined\":";
        out += printed[i].inlined ? "true" : "false";
        place(printed[i]);
        out += '}';
      }
      out += "]}\n";
      return;
    }
    if (o_.addresses) {
      out += hex(address, file_->is_64() ? 16 : 8);
      out += o_.pretty ? ": " : "\n";
    }
    if (printed.empty()) {
      if (o_.functions) out += o_.pretty ? "?? " : "??\n";
      out += "??:0\n";
      return;
    }
    const size_t count = o_.inlines ? printed.size() : 1;
    for (size_t i = 0; i < count; ++i) {
      const Printed& p = printed[i];
      if (i > 0 && o_.pretty) out += " (inlined by) ";
      if (o_.functions) {
        out += p.function && !p.function->empty() ? *p.function : std::string_view("??");
        out += o_.pretty ? " at " : "\n";
      }
      out += p.path ? *p.path : std::string_view("??");
      out += ':';
      if (p.line != 0) {
        out += std::to_string(p.line);
        if (p.discriminator != 0) out += " (discriminator " + std::to_string(p.discriminator) + ")";
      } else {
        out += '?';
      }
      out += '\n';
    }
  }

 private:
  // Each frame's name and place as printed (views of the DWARF, the symbol
  // tables and this object's caches, which outlive the answer).
  struct Printed {
    std::optional<std::string_view> function;
    std::optional<std::string_view> path;
    uint32_t line = 0, column = 0, discriminator = 0;
    bool inlined = false;
  };

  // binutils looks symbols up in the file its DWARF came from (dwarf2.c
  // _bfd_dwarf2_stash_syms: a separate debug file's full .symtab), LLVM in
  // the file asked about.
  static symbol::NearestSymbols symbols_for(const AddressAnswerOptions& o, std::shared_ptr<const elf::ElfFile> file,
                                            const symbol::InlineSymbolizer& dwarf) {
    const elf::ElfFile& debug = dwarf.dwarf_file();
    if (!o.json && &debug != file.get() && debug.section_by_name(".symtab"))
      return symbol::NearestSymbols::load(dwarf.dwarf_file_shared());
    return symbol::NearestSymbols::load(file);
  }

  // The name binutils prints for a frame (not demangled yet): the DWARF
  // name. For the innermost frame whose name binutils does not take as final
  // (neither a linkage name nor a C function's name: dwarf2.c is_linkage),
  // the first answer in the function prints the ELF symbol's name instead,
  // and where the symbol starts where the function does binutils keeps it as
  // the function's name (later answers and chains that pass through it print
  // it too); else later answers print the DWARF name. In JSON, as
  // llvm-symbolizer names frames: the DWARF name, and for the physical frame
  // the symbol covering the address (clones and cold parts: foo.constprop.0,
  // main.cold) when there is one.
  std::optional<std::string_view> name_of(const symbol::SourceFrame& f,
                                          const std::optional<symbol::NearestSymbol>* symbol) {
    if (f.function.empty()) return std::nullopt;
    if (o_.json) {
      if (!f.inlined && physical_symbol_ && *physical_symbol_) return (*physical_symbol_)->llvm_name;
      return f.function;
    }
    if (f.final_name) return f.function;
    const uint64_t key = f.function_die;
    const Asked* asked = asked_.find(key);
    if (asked && asked->renamed) return asked->symbol_name;
    if (!symbol || asked) return f.function;
    Asked& first = asked_.insert(key, Asked{});
    if (!*symbol) return f.function;
    const std::string_view name = (*symbol)->name;
    if ((*symbol)->address == f.function_entry) first = Asked{true, name};
    return name;
  }

  // demangle_name, each name demangled once: most answers repeat the
  // functions of earlier ones. Names are views of the file's sections, so
  // one name is one address.
  std::string_view demangled(std::string_view name) {
    const auto key = reinterpret_cast<uintptr_t>(name.data());
    const Demangled* found = demangled_.find(key);
    if (found && found->mangled_size == name.size()) return found->text;
    const std::string text = demangle_name(std::string(name));
    const Demangled made{name.size(), text == name ? name : demangled_text_.keep(text)};
    if (!found) demangled_.insert(key, made);
    return made.text;
  }
  struct Asked {  // a DWARF function binutils named from an ELF symbol once
    bool renamed = false;  // it keeps the symbol's name
    std::string_view symbol_name;
  };
  struct Demangled {
    size_t mangled_size;
    std::string_view text;
  };

  const AddressAnswerOptions o_;
  std::shared_ptr<const elf::ElfFile> file_;
  std::unique_ptr<symbol::InlineSymbolizer> dwarf_;
  symbol::NearestSymbols symbols_;
  KeyedCache<Asked> asked_;  // by DIE offset
  // Bytes of demangled names kept: a 64th of the file with the DWARF,
  // within 256 KiB and 4 MiB. A name let go is demangled again when asked
  // for: 100k addresses of a 28 MB C++ program (17,000 names) made 126,000
  // demangle calls with 256 KiB, 101,000 with 1 MiB, 17,000 without a bound;
  // demangling is a sixth of the time.
  const size_t demangled_budget_;
  KeyedCache<Demangled> demangled_;  // by where the mangled name is
  TextArena demangled_text_;
  std::vector<Printed> printed_;  // answer()'s, kept for its capacity
  const std::optional<symbol::NearestSymbol>* physical_symbol_ = nullptr;  // during answer()
};


AddressAnswerer::AddressAnswerer(const AddressAnswerOptions& options, std::shared_ptr<const elf::ElfFile> file,
                                 const std::string& path)
    : impl_(std::make_unique<AddressAnswers>(options, std::move(file), path)) {}
AddressAnswerer::~AddressAnswerer() = default;
void AddressAnswerer::answer(uint64_t address, std::string& out) { impl_->answer(address, out); }
const symbol::InlineSymbolizer& AddressAnswerer::dwarf() const { return impl_->dwarf(); }

}  // namespace framewalk

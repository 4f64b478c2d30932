// framewalk's own renderings of CFI: readable text (the default) and JSON,
// plus the single-PC query.
#pragma once

#include <optional>
#include "base/text.hpp"

#include "arch/arch.hpp"
#include "dump/readelf_frames.hpp"
#include "dump/text_writer.hpp"
#include "elf/symbols.hpp"
#include "dwarf/elf_cfi.hpp"

namespace framewalk::dump {

// One rule as text: "[CFA-8]", "CFA+16", "=rbp", "same", "undef", "[expr(...)]".
std::string rule_text(const RegisterRule& rule, const arch::ArchInfo* arch, uint8_t address_size, Endian endian);
std::string cfa_text(const CfaRule& cfa, const arch::ArchInfo* arch, uint8_t address_size, Endian endian);
std::string register_name(const arch::ArchInfo* arch, unsigned reg);

void write_cfi_text(TextWriter& out, const CfiSource& source, const arch::ArchInfo* arch,
                    const elf::SymbolTable* symbols, const ProblemSink& on_problem);

// JSON for one section, as a JSON object (no trailing newline).
void write_cfi_json(TextWriter& out, const CfiSource& source, const arch::ArchInfo* arch,
                    const elf::SymbolTable* symbols, const ProblemSink& on_problem);

// The FDE, symbol and row at one address; text or JSON.
void write_row_at(TextWriter& out, const RowLookup& hit, uint64_t pc, const arch::ArchInfo* arch,
                  const elf::SymbolTable* symbols, bool json);

std::string demangle(std::string_view name);
using framewalk::json_escape;

}  // namespace framewalk::dump

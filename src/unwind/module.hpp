// Modules: the ELF files mapped into an address space, with their load bias,
// unwind information and symbols. ModuleData is per file and shared; Module is
// one mapping of it in one address space.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ehabi/exidx_rows.hpp"
#include "elf/elf_synth.hpp"
#include "elf/symbols.hpp"
#include "sframe/sframe_section.hpp"
#include "dwarf/elf_cfi.hpp"

namespace framewalk {

namespace symbol {
class InlineSymbolizer;
}  // namespace symbol

class ModuleData {
 public:
  // `display_name` is what frames show (the mapped path); `elf` the parsed
  // file; `search` where its separate debug file is looked for.
  ModuleData(std::string display_name, std::shared_ptr<const elf::ElfFile> elf,
             elf::DebugFileSearch search = {});

  const std::string& name() const { return name_; }
  const elf::ElfFile& elf() const { return *elf_; }
  std::shared_ptr<const elf::ElfFile> elf_ptr() const { return elf_; }

  // Loaded on first use; thread-safe.
  const ElfCfi* cfi() const;
  const elf::SymbolTable& symbols() const;
  // The .sframe section (or PT_GNU_SFRAME segment), if any.
  const sframe::Section* sframe() const;
  // An ARM file's EHABI tables, if any: the SHT_ARM_EXIDX section and
  // .ARM.extab, or in a file without section headers the PT_ARM_EXIDX
  // segment and the PT_LOAD segment that holds it (where GNU ld puts
  // .ARM.extab). Their bytes stay in the file's image.
  const ehabi::ExidxTables* exidx() const;

  // Source lines and inline chains: the file's own DWARF, else its separate
  // debug file's (and a dwz supplementary file's). Null when neither has a
  // line table or functions. Loaded on first use; thread-safe. Defined with
  // the symbolizer (unwind/symbolize.cpp), so that a program that only
  // unwinds links none of the DWARF reader.
  const symbol::InlineSymbolizer* source() const;

  // The link-time address of the file's `__jit_debug_descriptor` (the GDB
  // JIT interface's list head; target/gdb_jit.hpp), if it defines one.
  // Looked up on first use; thread-safe.
  std::optional<uint64_t> gdb_jit_descriptor() const;
  // The link-time addresses of libgcc's file-local `unseen_objects` and
  // `seen_objects` (the heads of what `__register_frame` registered;
  // target/libgcc_frames.hpp), where the file's symbol table names them (a
  // program linked with libgcc statically). Looked up with the descriptor.
  struct LibgccHeads {
    std::optional<uint64_t> unseen, seen;
  };
  LibgccHeads libgcc_object_heads() const;

  // The link-time address that file offset `offset` is loaded at (via PT_LOAD).
  std::optional<uint64_t> vaddr_of_offset(uint64_t offset) const;

 private:
  std::string name_;
  std::shared_ptr<const elf::ElfFile> elf_;
  elf::DebugFileSearch search_;
  mutable std::once_flag cfi_once_, symbols_once_, sframe_once_, exidx_once_, source_once_, jit_once_;
  mutable std::optional<uint64_t> gdb_jit_descriptor_;
  mutable LibgccHeads libgcc_heads_;
  mutable std::unique_ptr<ehabi::ExidxTables> exidx_;
  mutable std::unique_ptr<sframe::Section> sframe_;
  mutable std::unique_ptr<ElfCfi> cfi_;
  mutable std::unique_ptr<elf::SymbolTable> symbols_;
  // The InlineSymbolizer, held without naming its destructor here.
  mutable std::shared_ptr<const void> source_;
};

// One mapping of a file (or of code without a file) in one address space.
struct Module {
  // Unique in this process and never reused: a module mapped where another
  // was is a new id, so what is cached by (id, link-time address) can never
  // be taken for the old module's. Given by ModuleMap::add.
  uint64_t id = 0;
  uint64_t start = 0;  // lowest mapped address of the module
  uint64_t end = 0;    // one past the highest
  uint64_t bias = 0;   // run-time address = link-time address + bias
  std::string name;    // path as mapped, or "[vdso]"
  std::shared_ptr<const ModuleData> data;  // null when the file could not be read, or for jit code
  std::string problem;                     // why `data` is null (empty for jit code)
  // Executable memory no file backs (an anonymous or memfd mapping: a
  // JIT's code space). No tables: frames in it are walked by frame pointer
  // where the caller is plausible, and named from the process's perf map.
  // `name` is the mapping's ("[anon]", "[anon:NAME]", "//anon", "/memfd:…"),
  // `bias` 0.
  bool jit = false;

  bool contains(uint64_t address) const { return address >= start && address < end; }
};

// Whether a mapping's name, as /proc/PID/maps or a perf MMAP record gives
// it, is memory that no file on disk backs: "" (anonymous; "[anon]" as
// framewalk names it), "[anon:NAME]"
// and "[anon_shmem:NAME]" (named with PR_SET_VMA), "/memfd:NAME" (with
// " (deleted)"), and what perf calls anonymous ("//anon", "/dev/zero",
// "/anon_hugepage"). Executable, such memory holds jit code.
bool is_anonymous_mapping(std::string_view name);

// Whether a mapped file is a jitdump's marker (jit-PID.dump, which a
// runtime maps executable for perf to see): no code, never a module.
bool is_jitdump_marker(std::string_view path);

// A module for executable anonymous memory [start, end) named `name` as
// mapped ("[anon]" for an unnamed mapping): Module::jit.
Module jit_module(uint64_t start, uint64_t end, std::string_view name);

// A fresh module id (ModuleMap::add takes one for a module without).
uint64_t next_module_id();

// The modules of one address space, over time: added and removed as code is
// mapped and unmapped (mmap/munmap, dlopen/dlclose, a JIT registering code).
// A Module found here keeps its address while it is in the map, whatever is
// added or removed around it (each lives in its own allocation); after
// remove(), frames that point at it must no longer be used; its id never
// names another module. Not synchronized: one writer, or readers only.
class ModuleMap {
 public:
  using Entries = std::vector<std::shared_ptr<const Module>>;

  // Adds `module` (a fresh id when it has none); returns its id.
  uint64_t add(Module module);
  // Removes the module with this id; false when there is none.
  bool remove(uint64_t id);
  // Removes every module that overlaps [start, end) (an munmap, a dlclose);
  // returns how many.
  size_t remove_range(uint64_t start, uint64_t end);
  const Module* find(uint64_t address) const;
  // find() through the module an earlier call found (a stack's frames come
  // in runs of one module): `hint` is the caller's, updated by each call;
  // any hint is safe, a stale one (of another map or generation) unused.
  struct FindHint {
    const ModuleMap* map = nullptr;
    uint64_t generation = 0;
    const Module* module = nullptr;
    // find() gives `module` for addresses in [start, end) below next_start
    // (where the next module begins): kept here, so that a hit reads no module.
    uint64_t start = 0, end = 0, next_start = 0;
  };
  const Module* find(uint64_t address, FindHint* hint) const {
    if (hint->map == this && hint->generation == generation_ && address - hint->start < hint->end - hint->start &&
        address < hint->next_start)
      return hint->module;
    return find_and_hint(address, hint);
  }
  const Module* by_id(uint64_t id) const;
  // Jit modules (Module::jit) give way to code now described otherwise (a
  // GDB JIT object, a jitdump's code with its tables): each that overlaps a
  // range of `taken` is replaced by what the ranges leave of it, so that no
  // module overlaps another (find() looks back only a few modules).
  void carve_jit(std::vector<std::pair<uint64_t, uint64_t>> taken);
  // Sorted by start.
  const Entries& modules() const { return modules_; }
  size_t size() const { return modules_.size(); }
  // Changed by every add and remove, to a value no map had before (0: an
  // empty map never changed): what was derived from the map (a profiler's
  // symbol cache, a FindHint) is current while the map and its generation
  // are the same.
  uint64_t generation() const { return generation_; }

 private:
  // The index of the module find() gives, or modules_.size().
  size_t index_of(uint64_t address) const;
  const Module* find_and_hint(uint64_t address, FindHint* hint) const;

  Entries modules_;  // sorted by start
  uint64_t generation_ = 0;
};

// Opens ELF files once per (path, identity) and shares them across processes,
// threads and cores. Files no module uses any more are closed once more than
// `max_unused` of them are kept, the least recently asked for first, so that
// a long-lived cache over a process that maps and unmaps many libraries stays
// bounded. Thread-safe.
class ModuleCache {
 public:
  explicit ModuleCache(size_t max_unused = 64) : max_unused_(max_unused) {}
  // `open_path` is where to read the file (may be /proc/PID/map_files/...);
  // `display_name` what frames show; `identity` distinguishes files of the same
  // name (device/inode/size).
  Result<std::shared_ptr<const ModuleData>> get(const std::string& open_path, const std::string& display_name,
                                                const std::string& identity);
  // Where the files' separate debug files are looked for (before
  // /usr/lib/debug, by build-id and debug link): for files opened from now on.
  void add_debug_root(const std::string& directory);
  // Whether files opened from now on fetch missing debug files from
  // debuginfod servers (default: elf::debuginfod_enabled() when the cache was made).
  void set_debuginfod(bool on);
  bool debuginfod() const;
  // An in-memory image (the vDSO, a file read from a core).
  Result<std::shared_ptr<const ModuleData>> from_bytes(std::vector<uint8_t> bytes, const std::string& display_name,
                                                       const std::string& identity);
  // Files held now (in use or not).
  size_t size() const;

 private:
  struct Entry {
    std::shared_ptr<const ModuleData> data;
    uint64_t last_use = 0;
  };
  std::shared_ptr<const ModuleData> lookup_locked(const std::string& identity);
  std::shared_ptr<const ModuleData> insert_locked(const std::string& identity, std::shared_ptr<const ModuleData> data);

  size_t max_unused_;
  elf::DebugFileSearch search_;
  mutable std::mutex mutex_;
  uint64_t clock_ = 0;
  std::map<std::string, Entry> by_identity_;
};

// A module's data for code without a file (a JIT's functions, a bare
// .eh_frame, a symbol list): an ELF image made from them (elf/elf_synth.hpp),
// whose link-time addresses are the run-time ones (bias 0). `name` is what
// frames show.
Result<std::shared_ptr<const ModuleData>> module_data_from_image(const elf::SyntheticImage& image,
                                                                 const std::string& name);

// The load bias of a file whose bytes at file offset `offset` are mapped at `start`.
std::optional<uint64_t> load_bias(const ModuleData& data, uint64_t start, uint64_t offset);

}  // namespace framewalk

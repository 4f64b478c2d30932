#include "unwind/module.hpp"

#include <algorithm>
#include <sys/stat.h>

#include <atomic>

namespace framewalk {

ModuleData::ModuleData(std::string display_name, std::shared_ptr<const elf::ElfFile> elf, elf::DebugFileSearch search)
    : name_(std::move(display_name)), elf_(std::move(elf)), search_(std::move(search)) {}

const ElfCfi* ModuleData::cfi() const {
  std::call_once(cfi_once_, [&] {
    ElfCfiOptions options;
    options.search = search_;
    auto loaded = ElfCfi::load(elf_, options);
    if (loaded) cfi_ = std::make_unique<ElfCfi>(std::move(*loaded));
  });
  return cfi_.get();
}

const elf::SymbolTable& ModuleData::symbols() const {
  std::call_once(symbols_once_, [&] {
    std::vector<std::shared_ptr<const elf::ElfFile>> files{elf_};
    if (auto mini = elf_->gnu_debugdata()) files.push_back(*mini);
    if (const ElfCfi* c = cfi(); c && !c->separate_debug_file().empty())
      if (auto debug = elf::ElfFile::open(c->separate_debug_file())) files.push_back(*debug);
    symbols_ = std::make_unique<elf::SymbolTable>(elf::SymbolTable::load(std::move(files)));
  });
  return *symbols_;
}

const sframe::Section* ModuleData::sframe() const {
  std::call_once(sframe_once_, [&] {
    uint64_t address = 0;
    Bytes bytes;
    if (const elf::Section* s = elf_->section_by_name(".sframe"); s && s->type != elf::kShtNobits) {
      auto data = elf_->section_data(*s);
      if (!data) return;
      bytes = *data;
      address = s->address;
    } else {
      // A stripped file may keep only the segment.
      const Bytes image = elf_->image();
      for (const elf::Segment& p : elf_->segments()) {
        if (p.type != elf::kPtGnuSframe || p.offset > image.size() || p.filesz > image.size() - p.offset) continue;
        bytes = image.subspan(p.offset, p.filesz);
        address = p.vaddr;
      }
    }
    if (bytes.empty()) return;
    auto parsed = sframe::Section::parse(bytes, address);
    if (parsed) sframe_ = std::make_unique<sframe::Section>(std::move(*parsed));
  });
  return sframe_.get();
}

const ehabi::ExidxTables* ModuleData::exidx() const {
  std::call_once(exidx_once_, [&] {
    if (elf_->machine() != elf::kEmArm) return;
    auto tables = std::make_unique<ehabi::ExidxTables>();
    tables->index.endian = tables->extab.endian = elf_->endian();
    const elf::Section* index = nullptr;
    for (const elf::Section& s : elf_->sections())
      if (s.type == ehabi::kShtArmExidx) index = &s;
    if (index) {
      auto data = elf_->section_data(*index);
      if (!data || data->empty()) return;
      tables->index.data = *data;
      tables->index.address = index->address;
      if (const elf::Section* extab = elf_->section_by_name(".ARM.extab")) {
        if (auto bytes = elf_->section_data(*extab)) {
          tables->extab.data = *bytes;
          tables->extab.address = extab->address;
        }
      }
    } else {
      // A file without section headers: the segments say the same.
      constexpr uint32_t kPtArmExidx = 0x70000001;
      const Bytes image = elf_->image();
      auto in_image = [&](const elf::Segment& p) {
        return p.offset <= image.size() && p.filesz <= image.size() - p.offset;
      };
      const elf::Segment* exidx = nullptr;
      for (const elf::Segment& p : elf_->segments())
        if (p.type == kPtArmExidx && p.filesz && in_image(p)) exidx = &p;
      if (!exidx) return;
      tables->index.data = image.subspan(exidx->offset, exidx->filesz);
      tables->index.address = exidx->vaddr;
      for (const elf::Segment& p : elf_->segments()) {
        if (p.type == elf::kPtLoad && in_image(p) && exidx->vaddr >= p.vaddr && exidx->vaddr - p.vaddr < p.filesz) {
          tables->extab.data = image.subspan(p.offset, p.filesz);
          tables->extab.address = p.vaddr;
        }
      }
    }
    exidx_ = std::move(tables);
  });
  return exidx_.get();
}


std::optional<uint64_t> ModuleData::vaddr_of_offset(uint64_t offset) const {
  for (const elf::Segment& p : elf_->segments()) {
    if (p.type != elf::kPtLoad) continue;
    const uint64_t page_off = p.offset & ~uint64_t{0xfff};
    const uint64_t page_vaddr = p.vaddr & ~uint64_t{0xfff};
    const uint64_t span = p.offset - page_off + p.filesz;
    if (offset >= page_off && offset - page_off < std::max<uint64_t>(span, 1)) return page_vaddr + (offset - page_off);
  }
  return std::nullopt;
}

Result<std::shared_ptr<const ModuleData>> module_data_from_image(const elf::SyntheticImage& image,
                                                                 const std::string& name) {
  FW_TRY(auto bytes, elf::synthesize_elf(image));
  FW_TRY(auto file, elf::ElfFile::parse(FileImage::from_buffer(std::move(bytes)), name));
  return std::make_shared<const ModuleData>(name, std::move(file));
}

std::optional<uint64_t> load_bias(const ModuleData& data, uint64_t start, uint64_t offset) {
  auto vaddr = data.vaddr_of_offset(offset);
  if (!vaddr) return std::nullopt;
  return start - *vaddr;
}

bool is_anonymous_mapping(std::string_view name) {
  return name.empty() || name == "[anon]" || name.starts_with("[anon:") || name.starts_with("[anon_shmem:") ||
         name.starts_with("/memfd:") || name.starts_with("//anon") || name.starts_with("/dev/zero") ||
         name.starts_with("/anon_hugepage");
}

bool is_jitdump_marker(std::string_view path) {
  const size_t slash = path.rfind('/');
  const std::string_view base = slash == std::string_view::npos ? path : path.substr(slash + 1);
  return base.starts_with("jit-") && (base.ends_with(".dump") || base.ends_with(".dump (deleted)"));
}

Module jit_module(uint64_t start, uint64_t end, std::string_view name) {
  Module m;
  m.start = start;
  m.end = end;
  m.name = name.empty() ? std::string("[anon]") : std::string(name);
  m.jit = true;
  return m;
}

namespace {
// One pass over a file's symbols for the objects that lead to jit code.
void find_jit_heads(const elf::ElfFile& elf, std::optional<uint64_t>* descriptor, ModuleData::LibgccHeads* heads) {
  const uint64_t pointer = elf.address_size();
  // struct jit_descriptor: two 32-bit fields and two pointers; libgcc's heads: a pointer each.
  elf::ObjectQuery queries[] = {{"__jit_debug_descriptor", 8 + 2 * pointer, std::nullopt},
                                {"unseen_objects", pointer, std::nullopt},
                                {"seen_objects", pointer, std::nullopt}};
  elf::find_defined_objects(elf, queries);
  *descriptor = queries[0].value;
  heads->unseen = queries[1].value;
  heads->seen = queries[2].value;
}
}  // namespace

std::optional<uint64_t> ModuleData::gdb_jit_descriptor() const {
  std::call_once(jit_once_, [&] { find_jit_heads(*elf_, &gdb_jit_descriptor_, &libgcc_heads_); });
  return gdb_jit_descriptor_;
}

ModuleData::LibgccHeads ModuleData::libgcc_object_heads() const {
  std::call_once(jit_once_, [&] { find_jit_heads(*elf_, &gdb_jit_descriptor_, &libgcc_heads_); });
  return libgcc_heads_;
}

uint64_t next_module_id() {
  static std::atomic<uint64_t> next{1};
  return next.fetch_add(1, std::memory_order_relaxed);
}

namespace {
// Generations are drawn from one counter for every map, so that a map and
// generation name one content: a map assigned another's content takes its
// generation, never one an earlier content of its own had.
uint64_t next_generation() {
  static std::atomic<uint64_t> next{1};
  return next.fetch_add(1, std::memory_order_relaxed);
}
}  // namespace

uint64_t ModuleMap::add(Module module) {
  if (module.id == 0) module.id = next_module_id();
  const uint64_t id = module.id;
  auto it = std::upper_bound(modules_.begin(), modules_.end(), module.start,
                             [](uint64_t a, const std::shared_ptr<const Module>& m) { return a < m->start; });
  modules_.insert(it, std::make_shared<const Module>(std::move(module)));
  generation_ = next_generation();
  return id;
}

bool ModuleMap::remove(uint64_t id) {
  auto it = std::find_if(modules_.begin(), modules_.end(), [&](const auto& m) { return m->id == id; });
  if (it == modules_.end()) return false;
  modules_.erase(it);
  generation_ = next_generation();
  return true;
}

size_t ModuleMap::remove_range(uint64_t start, uint64_t end) {
  const size_t before = modules_.size();
  std::erase_if(modules_, [&](const auto& m) { return m->start < end && start < m->end; });
  const size_t removed = before - modules_.size();
  if (removed) generation_ = next_generation();
  return removed;
}

size_t ModuleMap::index_of(uint64_t address) const {
  auto it = std::upper_bound(modules_.begin(), modules_.end(), address,
                             [](uint64_t a, const std::shared_ptr<const Module>& m) { return a < m->start; });
  // Modules may nest (a file mapped inside another's gap is rare); look back a little.
  for (int back = 0; back < 4 && it != modules_.begin(); ++back) {
    --it;
    if ((*it)->contains(address)) return static_cast<size_t>(it - modules_.begin());
  }
  return modules_.size();
}

const Module* ModuleMap::find(uint64_t address) const {
  const size_t i = index_of(address);
  return i < modules_.size() ? modules_[i].get() : nullptr;
}

const Module* ModuleMap::find_and_hint(uint64_t address, FindHint* hint) const {
  const size_t i = index_of(address);
  if (i == modules_.size()) return nullptr;
  // The module find() gives for every address it holds below the next
  // module's start (none nested there).
  const Module* m = modules_[i].get();
  *hint = FindHint{this, generation_, m, m->start, m->end, i + 1 < modules_.size() ? modules_[i + 1]->start : ~uint64_t{0}};
  return m;
}

void ModuleMap::carve_jit(std::vector<std::pair<uint64_t, uint64_t>> taken) {
  if (taken.empty()) return;
  std::sort(taken.begin(), taken.end());
  std::vector<std::shared_ptr<const Module>> anonymous;
  for (const auto& m : modules_)
    if (m->jit) anonymous.push_back(m);
  for (const auto& m : anonymous) {
    uint64_t cursor = m->start;
    bool overlapped = false;
    std::vector<Module> pieces;
    for (const auto& [start, end] : taken) {
      if (end <= m->start || start >= m->end) continue;
      overlapped = true;
      if (start > cursor) pieces.push_back(jit_module(cursor, start, m->name));
      cursor = std::max(cursor, end);
    }
    if (!overlapped) continue;
    if (cursor < m->end) pieces.push_back(jit_module(cursor, m->end, m->name));
    remove(m->id);
    for (Module& piece : pieces) add(std::move(piece));
  }
}

const Module* ModuleMap::by_id(uint64_t id) const {
  for (const auto& m : modules_)
    if (m->id == id) return m.get();
  return nullptr;
}

std::shared_ptr<const ModuleData> ModuleCache::lookup_locked(const std::string& identity) {
  auto it = by_identity_.find(identity);
  if (it == by_identity_.end()) return nullptr;
  it->second.last_use = ++clock_;
  return it->second.data;
}

std::shared_ptr<const ModuleData> ModuleCache::insert_locked(const std::string& identity,
                                                             std::shared_ptr<const ModuleData> data) {
  auto [it, inserted] = by_identity_.try_emplace(identity, Entry{std::move(data), 0});
  it->second.last_use = ++clock_;
  std::shared_ptr<const ModuleData> result = it->second.data;
  if (!inserted) return result;
  // Files only this cache holds, beyond max_unused_: the least recently used go.
  std::vector<std::map<std::string, Entry>::iterator> unused;
  for (auto i = by_identity_.begin(); i != by_identity_.end(); ++i)
    if (i->second.data.use_count() == 1) unused.push_back(i);
  if (unused.size() <= max_unused_) return result;
  std::sort(unused.begin(), unused.end(), [](auto a, auto b) { return a->second.last_use < b->second.last_use; });
  for (size_t k = 0; k < unused.size() - max_unused_; ++k) by_identity_.erase(unused[k]);
  return result;
}

void ModuleCache::add_debug_root(const std::string& directory) {
  std::lock_guard<std::mutex> lock(mutex_);
  search_.debug_roots.insert(search_.debug_roots.end() - 1, directory);
}

void ModuleCache::set_debuginfod(bool on) {
  std::lock_guard<std::mutex> hold(mutex_);
  search_.debuginfod = on;
}

bool ModuleCache::debuginfod() const {
  std::lock_guard<std::mutex> hold(mutex_);
  return search_.debuginfod;
}

size_t ModuleCache::size() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return by_identity_.size();
}

Result<std::shared_ptr<const ModuleData>> ModuleCache::get(const std::string& open_path,
                                                           const std::string& display_name,
                                                           const std::string& identity) {
  // The file's size and modification time are part of its identity: a file
  // rebuilt in place is not taken for the one cached.
  std::string key = identity;
  if (struct stat st {}; ::stat(open_path.c_str(), &st) == 0)
    key += ":" + std::to_string(st.st_dev) + ":" + std::to_string(st.st_ino) + ":" + std::to_string(st.st_size) + ":" +
           std::to_string(st.st_mtim.tv_sec) + "." + std::to_string(st.st_mtim.tv_nsec);
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (auto data = lookup_locked(key)) return data;
  }
  FW_TRY(auto file, elf::ElfFile::open(open_path));
  elf::DebugFileSearch search;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    search = search_;
  }
  auto data = std::make_shared<const ModuleData>(display_name, std::move(file), std::move(search));
  std::lock_guard<std::mutex> lock(mutex_);
  return insert_locked(key, std::move(data));
}

Result<std::shared_ptr<const ModuleData>> ModuleCache::from_bytes(std::vector<uint8_t> bytes,
                                                                  const std::string& display_name,
                                                                  const std::string& identity_prefix) {
  // The bytes are part of the identity: a cache shared across targets never
  // takes one process's vDSO for another's that differs.
  uint64_t h = 0xcbf29ce484222325ull;
  for (uint8_t b : bytes) h = (h ^ b) * 0x100000001b3ull;
  const std::string identity = identity_prefix + ":" + std::to_string(bytes.size()) + ":" + std::to_string(h);
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (auto data = lookup_locked(identity)) return data;
  }
  FW_TRY(auto file, elf::ElfFile::parse(FileImage::from_buffer(std::move(bytes)), display_name));
  auto data = std::make_shared<const ModuleData>(display_name, std::move(file));
  std::lock_guard<std::mutex> lock(mutex_);
  return insert_locked(identity, std::move(data));
}

}  // namespace framewalk

#include "unwind/module.hpp"

#include <algorithm>

namespace framewalk {

ModuleData::ModuleData(std::string display_name, std::shared_ptr<const elf::ElfFile> elf)
    : name_(std::move(display_name)), elf_(std::move(elf)) {}

const ElfCfi* ModuleData::cfi() const {
  std::call_once(cfi_once_, [&] {
    auto loaded = ElfCfi::load(elf_);
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

const symbol::InlineSymbolizer* ModuleData::source() const {
  std::call_once(source_once_, [&] {
    auto loaded = symbol::InlineSymbolizer::load(elf_, elf_->name());
    if (loaded && (loaded->lines().has_rows() || loaded->has_debug_info())) source_ = std::move(loaded);
  });
  return source_.get();
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

std::optional<uint64_t> load_bias(const ModuleData& data, uint64_t start, uint64_t offset) {
  auto vaddr = data.vaddr_of_offset(offset);
  if (!vaddr) return std::nullopt;
  return start - *vaddr;
}

void ModuleMap::add(Module module) {
  auto it = std::upper_bound(modules_.begin(), modules_.end(), module.start,
                             [](uint64_t a, const Module& m) { return a < m.start; });
  modules_.insert(it, std::move(module));
}

const Module* ModuleMap::find(uint64_t address) const {
  auto it = std::upper_bound(modules_.begin(), modules_.end(), address,
                             [](uint64_t a, const Module& m) { return a < m.start; });
  // Modules may nest (a file mapped inside another's gap is rare); look back a little.
  for (int back = 0; back < 4 && it != modules_.begin(); ++back) {
    --it;
    if (it->contains(address)) return &*it;
  }
  return nullptr;
}

Result<std::shared_ptr<const ModuleData>> ModuleCache::get(const std::string& open_path,
                                                           const std::string& display_name,
                                                           const std::string& identity) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (auto it = by_identity_.find(identity); it != by_identity_.end()) return it->second;
  }
  FW_TRY(auto file, elf::ElfFile::open(open_path));
  auto data = std::make_shared<const ModuleData>(display_name, std::move(file));
  std::lock_guard<std::mutex> lock(mutex_);
  return by_identity_.emplace(identity, std::move(data)).first->second;
}

Result<std::shared_ptr<const ModuleData>> ModuleCache::from_bytes(std::vector<uint8_t> bytes,
                                                                  const std::string& display_name,
                                                                  const std::string& identity) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (auto it = by_identity_.find(identity); it != by_identity_.end()) return it->second;
  }
  FW_TRY(auto file, elf::ElfFile::parse(FileImage::from_buffer(std::move(bytes)), display_name));
  auto data = std::make_shared<const ModuleData>(display_name, std::move(file));
  std::lock_guard<std::mutex> lock(mutex_);
  return by_identity_.emplace(identity, std::move(data)).first->second;
}

}  // namespace framewalk

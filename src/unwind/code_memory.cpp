#include "unwind/code_memory.hpp"

#include <cstring>

namespace framewalk {

const uint8_t* code_in_image(const Module& module, uint64_t address, size_t size) {
  if (!module.data || address < module.bias) return nullptr;
  const uint64_t link = address - module.bias;
  const elf::ElfFile& elf = module.data->elf();
  const Bytes image = elf.image();
  for (const elf::Segment& p : elf.segments()) {
    if (p.type != elf::kPtLoad || !(p.flags & elf::kPfX)) continue;
    if (link < p.vaddr || link - p.vaddr > p.filesz || size > p.filesz - (link - p.vaddr)) continue;
    const uint64_t offset = p.offset + (link - p.vaddr);
    if (offset > image.size() || size > image.size() - offset) return nullptr;
    return image.data() + offset;
  }
  return nullptr;
}

size_t CodeMemory::read(uint64_t address, void* out, size_t size) {
  if (const Module* m = modules_.find(address)) {
    if (const uint8_t* bytes = code_in_image(*m, address, size)) {
      std::memcpy(out, bytes, size);
      return size;
    }
  }
  return fallback_.read(address, out, size);
}

}  // namespace framewalk

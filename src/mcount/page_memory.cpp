#include "mcount/page_memory.hpp"

#include <sys/mman.h>

namespace framewalk::mcount {

void* map_zeroed(std::size_t bytes) {
  void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  return p == MAP_FAILED ? nullptr : p;
}

void unmap(void* address, std::size_t bytes) {
  if (address != nullptr) munmap(address, bytes);
}

}  // namespace framewalk::mcount

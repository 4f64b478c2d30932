// Memory of the mcount runtime: anonymous mappings only. mmap is
// async-signal-safe and takes no lock of the C library's allocator, so a
// thread's first instrumented call, a table that grows, and a dump may all
// happen inside a signal handler or in a program that profiles malloc.
#pragma once

#include <cstddef>

namespace framewalk::mcount {

// Zero-filled, readable and writable; nullptr when the kernel refuses.
void* map_zeroed(std::size_t bytes);
void unmap(void* address, std::size_t bytes);

}  // namespace framewalk::mcount

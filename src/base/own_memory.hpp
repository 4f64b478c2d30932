// Reading this process's own memory without faulting, async-signal-safe:
// which pages can be read, and a copy of what can. Used by the in-process
// fast path (local/) and the full local back-end (target/local_target).
#pragma once

#include <cstddef>
#include <cstdint>

namespace framewalk {

// The end of the readable pages from the page-aligned `first` on, probing
// up to the page-aligned `end` (`end` when all are). Never changes errno.
uint64_t readable_until(uint64_t first, uint64_t end);

// Copies the readable prefix of [address, address + size) into `out`;
// returns its length. Never changes errno.
size_t read_own_memory(uint64_t address, void* out, size_t size);

}  // namespace framewalk

// Code memory apart from stack memory: the unwinder reads instructions (a
// signal trampoline's, a prologue, the call before a return address) from
// the modules' file images, where they are the bytes the loader mapped, and
// only elsewhere from the target. A perf sample's stack copy and the module
// images are enough to unwind it; a live process is not asked for code
// (one system call a read); a core need not hold its text.
#pragma once

#include <cstdint>

#include "base/memory.hpp"
#include "unwind/module.hpp"

namespace framewalk {

class CodeMemory final : public Memory {
 public:
  // `fallback`: where code outside every module's file image is read (JIT
  // code, a module whose file could not be read); the target's memory.
  CodeMemory(const ModuleMap& modules, Memory& fallback) : modules_(modules), fallback_(fallback) {}
  size_t read(uint64_t address, void* out, size_t size) override;

 private:
  const ModuleMap& modules_;
  Memory& fallback_;
};

// The bytes of `module`'s file image that an executable PT_LOAD segment maps
// at run-time [address, address + size), or nullptr when the image does not
// hold them all.
const uint8_t* code_in_image(const Module& module, uint64_t address, size_t size);

}  // namespace framewalk

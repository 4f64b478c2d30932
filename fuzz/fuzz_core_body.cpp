// fuzz_core: the core-file reader and a walk of every thread it finds.
// The bytes are the core; mapped files are looked up under a sysroot that
// does not exist, so only the core's own bytes are read.
#include <vector>

#include "fuzz_bodies.hpp"
#include "target/cached_memory.hpp"
#include "target/core_file.hpp"
#include "unwind/symbolize.hpp"
#include "unwind/unwinder.hpp"

namespace framewalk::fuzz {

int fuzz_core(const uint8_t* data, size_t size) {
  CoreOptions options;
  options.sysroot = "/nonexistent-framewalk-fuzz-sysroot";
  auto core = CoreFile::parse(FileImage::from_buffer(std::vector<uint8_t>(data, data + size)), "fuzz.core", options);
  if (!core) {
    (void)to_string(core.error().code);
    return 0;
  }
  FUZZ_CHECK(!(*core)->threads().empty());
  ModuleCache cache;
  std::vector<std::string> warnings;
  const ModuleMap modules = (*core)->modules(cache, &warnings);
  CachedMemory memory((*core)->memory(), 16);
  const Unwinder unwinder(modules, memory, (*core)->machine());
  UnwindOptions o;
  o.max_frames = 64;
  for (const CoreThread& t : (*core)->threads()) {
    size_t frames = 0;
    const WalkResult r = unwinder.walk(t.registers, [&](const Frame& f) {
      ++frames;
      (void)symbolize(f);
      return true;
    }, o);
    FUZZ_CHECK(frames <= o.max_frames);
    FUZZ_CHECK(r.frames == frames);
    (void)to_string(r.reason);
  }
  uint8_t probe[64];
  for (uint64_t a : {uint64_t{0}, uint64_t{0x400000}, uint64_t{0x7ffff7dd0000}, ~uint64_t{0} - 32})
    FUZZ_CHECK(memory.read(a, probe, sizeof probe) <= sizeof probe);
  return 0;
}

}  // namespace framewalk::fuzz

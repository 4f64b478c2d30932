// The ELF file the CFI and SFrame benchmarks measure: the largest library of
// the machine, or FRAMEWALK_BENCH_FILE.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>

#include "elf/elf_file.hpp"

namespace framewalk::bench {

inline std::string bench_file() {
  if (const char* f = std::getenv("FRAMEWALK_BENCH_FILE")) return f;
  return "/usr/lib/x86_64-linux-gnu/libLLVM-16.so.1";
}

// The file, opened; exits with a message if it cannot be.
inline std::shared_ptr<elf::ElfFile> open_bench_file() {
  auto f = elf::ElfFile::open(bench_file());
  if (!f) {
    std::fprintf(stderr, "cannot open %s\n", bench_file().c_str());
    std::exit(1);
  }
  return *f;
}

}  // namespace framewalk::bench

// CFI engine benchmarks on the largest library of the machine (override with
// FRAMEWALK_BENCH_FILE): parse and execute every row, build the FDE index,
// look up rows for random PCs, and the heap the engine needs beyond the
// mapped file.
#include <benchmark/benchmark.h>
#include <malloc.h>

#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "dwarf/cfa_program.hpp"
#include "bench_file.hpp"
#include "dwarf/cfi_index.hpp"
#include "dwarf/elf_cfi.hpp"

namespace {

using namespace framewalk;

struct Loaded {
  std::shared_ptr<elf::ElfFile> file;
  std::unique_ptr<ElfCfi> cfi;
  const CfiSource* eh = nullptr;
};

Loaded& loaded() {
  static Loaded l = [] {
    Loaded r;
    r.file = bench::open_bench_file();
    ElfCfiOptions o;
    o.use_debug_frame = false;
    o.use_gnu_debugdata = false;
    auto cfi = ElfCfi::load(r.file, o);
    r.cfi = std::make_unique<ElfCfi>(std::move(*cfi));
    for (auto& s : r.cfi->sources())
      if (s->kind == dwarf::CfiKind::kEhFrame && s->section) r.eh = s.get();
    return r;
  }();
  return l;
}

// Every CIE and FDE parsed, every row of every FDE produced (no output).
void BM_ExecuteAllRows(benchmark::State& state) {
  const CfiSource* src = loaded().eh;
  size_t rows = 0, fdes = 0;
  for (auto _ : state) {
    rows = fdes = 0;
    dwarf::CfiSection section(src->section->data(), src->section->info());
    std::unordered_map<uint64_t, UnwindRow> initial;
    section.for_each(
        [&](const dwarf::CfiSection::Entry& e) {
          if (e.type != dwarf::CfiSection::Entry::Type::kFde) return true;
          ++fdes;
          auto it = initial.find(e.cie->offset);
          if (it == initial.end()) it = initial.emplace(e.cie->offset, *dwarf::run_cie(section, *e.cie)).first;
          (void)dwarf::run_fde(section, *e.cie, e.fde, it->second, [&](const UnwindRow& row, bool) {
            rows += row.pc_end > row.pc_begin;
            benchmark::DoNotOptimize(row.cfa.offset);
            return true;
          });
          return true;
        },
        nullptr);
  }
  state.counters["fdes"] = static_cast<double>(fdes);
  state.counters["rows"] = static_cast<double>(rows);
  state.counters["eh_frame_MB"] = static_cast<double>(src->section->data().size()) / 1e6;
  state.counters["ns_per_row"] = benchmark::Counter(static_cast<double>(rows), benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
}
BENCHMARK(BM_ExecuteAllRows)->Unit(benchmark::kMillisecond);

// Heap bytes held by a parsed section plus a built (header-less) FDE index,
// against the size of .eh_frame.
void BM_IndexMemory(benchmark::State& state) {
  const CfiSource* src = loaded().eh;
  size_t held = 0;
  for (auto _ : state) {
    const size_t before = mallinfo2().uordblks;
    auto section = std::make_unique<dwarf::CfiSection>(src->section->data(), src->section->info());
    auto index = std::make_unique<dwarf::CfiIndex>(dwarf::CfiIndex::build(*section, nullptr));
    held = mallinfo2().uordblks - before;
    benchmark::DoNotOptimize(index->indexed_fdes());
  }
  state.counters["heap_MB"] = static_cast<double>(held) / 1e6;
  state.counters["heap_per_eh_frame_byte"] = static_cast<double>(held) / static_cast<double>(src->section->data().size());
}
BENCHMARK(BM_IndexMemory)->Unit(benchmark::kMillisecond)->Iterations(3);

std::vector<uint64_t> random_pcs(size_t n) {
  std::vector<uint64_t> pcs;
  const CfiSource* src = loaded().eh;
  std::vector<std::pair<uint64_t, uint64_t>> ranges;
  src->section->for_each([&](const dwarf::CfiSection::Entry& e) {
    if (e.type == dwarf::CfiSection::Entry::Type::kFde && e.fde.pc_range) ranges.emplace_back(e.fde.pc_begin, e.fde.pc_range);
    return true;
  }, nullptr);
  std::mt19937_64 rng(42);
  for (size_t i = 0; i < n; ++i) {
    auto& r = ranges[rng() % ranges.size()];
    pcs.push_back(r.first + rng() % r.second);
  }
  return pcs;
}

// The row in force at a random PC: FDE search (through .eh_frame_hdr, or the
// built index) plus CIE and FDE execution up to the PC.
void BM_LookupRow(benchmark::State& state) {
  const bool use_hdr = state.range(0) != 0;
  const CfiSource* src = loaded().eh;
  dwarf::CfiIndex index = dwarf::CfiIndex::build(*src->section, use_hdr ? src->hdr.get() : nullptr);
  const std::vector<uint64_t> pcs = random_pcs(4096);
  size_t i = 0, found = 0;
  for (auto _ : state) {
    const uint64_t pc = pcs[i++ & 4095];
    auto m = index.find(pc);
    if (m) {
      auto row = dwarf::row_for_pc(*src->section, *m->cie, m->fde, pc);
      found += row.ok();
      benchmark::DoNotOptimize(row);
    }
  }
  state.counters["found_share"] = static_cast<double>(found) / static_cast<double>(state.iterations());
  state.SetLabel(use_hdr ? ".eh_frame_hdr" : "built index");
}
BENCHMARK(BM_LookupRow)->Arg(1)->Arg(0);

}  // namespace

BENCHMARK_MAIN();

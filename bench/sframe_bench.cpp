// SFrame against CFI on the largest library of the machine (override with
// FRAMEWALK_BENCH_FILE):
//   BM_GenerateSframe  CFI -> SFrame section bytes (conversion and writing), in
//                      MB of .eh_frame per second;
//   BM_ParseSframe     Section::parse of the generated section (it validates every FRE);
//   BM_SframeRow       the row at a random PC from SFrame: row_for_pc, the unwinder's call
//                      (FDE by block index, FRE scan, the row);
//   BM_CfiRow          the row at the same PCs from CFI: CfiIndex::find + dwarf::row_for_pc
//                      (through .eh_frame_hdr, or a built index);
//   BM_Sizes           the generated section against .eh_frame + .eh_frame_hdr.
// The PCs are drawn from functions both sources cover.
#include <benchmark/benchmark.h>

#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "dwarf/cfa_program.hpp"
#include "bench_file.hpp"
#include "dwarf/cfi_index.hpp"
#include "elf/elf_writer.hpp"
#include "sframe/sframe_generate.hpp"
#include "sframe/sframe_rows.hpp"
#include "dwarf/elf_cfi.hpp"

namespace {

using namespace framewalk;

using bench::bench_file;

struct Loaded {
  std::shared_ptr<elf::ElfFile> file;
  std::unique_ptr<ElfCfi> cfi;
  const CfiSource* eh = nullptr;
  uint64_t address = 0;
  std::vector<uint8_t> sframe_bytes;
  std::optional<sframe::Section> sframe;
  sframe::GenerateStats stats;
  std::vector<uint64_t> pcs;
};

Loaded& loaded() {
  static Loaded l = [] {
    Loaded r;
    r.file = bench::open_bench_file();
    auto cfi = ElfCfi::load(r.file, sframe::sframe_cfi_options());
    r.cfi = std::make_unique<ElfCfi>(std::move(*cfi));
    for (const auto& src : r.cfi->sources())
      if (src->section && src->kind == dwarf::CfiKind::kEhFrame) r.eh = src.get();
    if (!r.eh || r.eh->kind != dwarf::CfiKind::kEhFrame) {
      std::fprintf(stderr, "%s: no .eh_frame\n", bench_file().c_str());
      std::exit(1);
    }
    r.address = elf::plan_added_section(*r.file, elf::SegmentPolicy::kAuto)->address;
    sframe::GenerateOptions o;
    o.section_address = r.address;
    auto g = sframe::generate_sframe(r.file, o);
    if (!g) {
      std::fprintf(stderr, "generation failed\n");
      std::exit(1);
    }
    r.sframe_bytes = std::move(g->bytes);
    r.stats = g->stats;
    r.sframe = *sframe::Section::parse(Bytes(r.sframe_bytes), r.address);
    // Random PCs inside FDEs with rows; every one is also covered by CFI
    // (the generator only writes what CFI covers).
    std::vector<const sframe::Fde*> with_rows;
    for (const sframe::Fde& fde : r.sframe->fdes())
      if (fde.num_fres) with_rows.push_back(&fde);
    std::mt19937_64 rng(42);
    for (int i = 0; i < 4096; ++i) {
      const sframe::Fde* fde = with_rows[rng() % with_rows.size()];
      r.pcs.push_back(fde->start + rng() % fde->size);
    }
    return r;
  }();
  return l;
}

void BM_GenerateSframe(benchmark::State& state) {
  Loaded& l = loaded();
  sframe::GenerateOptions o;
  o.section_address = l.address;
  size_t bytes = 0;
  for (auto _ : state) {
    auto g = sframe::generate_sframe(l.file, o);
    bytes = g->bytes.size();
    benchmark::DoNotOptimize(g->bytes.data());
  }
  const double eh = static_cast<double>(l.eh->section->data().size());
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * l.eh->section->data().size()));
  state.counters["eh_frame_MB"] = eh / 1e6;
  state.counters["sframe_MB"] = static_cast<double>(bytes) / 1e6;
  state.counters["cfi_fdes"] = static_cast<double>(l.stats.cfi_fdes);
  state.counters["fres"] = static_cast<double>(l.stats.fres);
}
BENCHMARK(BM_GenerateSframe)->Unit(benchmark::kMillisecond);

void BM_ParseSframe(benchmark::State& state) {
  Loaded& l = loaded();
  for (auto _ : state) {
    auto s = sframe::Section::parse(Bytes(l.sframe_bytes), l.address);
    benchmark::DoNotOptimize(s.ok());
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * l.sframe_bytes.size()));
}
BENCHMARK(BM_ParseSframe)->Unit(benchmark::kMillisecond);

void BM_SframeRow(benchmark::State& state) {
  Loaded& l = loaded();
  const sframe::Section& s = *l.sframe;
  size_t i = 0, found = 0;
  for (auto _ : state) {
    const uint64_t pc = l.pcs[i++ & 4095];
    sframe::SframeRow row;
    found += sframe::row_for_pc(s, pc, row).ok();  // the unwinder's call: FDE, FRE scan, the row
    benchmark::DoNotOptimize(row);
  }
  state.counters["found_share"] = static_cast<double>(found) / static_cast<double>(state.iterations());
}
BENCHMARK(BM_SframeRow);

// The FRE alone, without building an UnwindRow.
void BM_SframeFre(benchmark::State& state) {
  Loaded& l = loaded();
  const sframe::Section& s = *l.sframe;
  size_t i = 0;
  for (auto _ : state) {
    const uint64_t pc = l.pcs[i++ & 4095];
    const sframe::Fde* fde = s.lookup_fde(pc);
    if (!fde) continue;
    auto fre = s.find_fre(*fde, pc);
    if (fre) {
      auto rules = s.rules(*fde, *fre);
      benchmark::DoNotOptimize(rules);
    }
  }
}
BENCHMARK(BM_SframeFre);

void BM_CfiRow(benchmark::State& state) {
  Loaded& l = loaded();
  const bool use_hdr = state.range(0) != 0;
  dwarf::CfiIndex index = dwarf::CfiIndex::build(*l.eh->section, use_hdr ? l.eh->hdr.get() : nullptr);
  size_t i = 0, found = 0;
  for (auto _ : state) {
    const uint64_t pc = l.pcs[i++ & 4095];
    auto m = index.find(pc);
    if (!m) continue;
    auto row = dwarf::row_for_pc(*l.eh->section, *m->cie, m->fde, pc);
    found += row.ok();
    benchmark::DoNotOptimize(row);
  }
  state.counters["found_share"] = static_cast<double>(found) / static_cast<double>(state.iterations());
  state.SetLabel(use_hdr ? ".eh_frame_hdr" : "built index");
}
BENCHMARK(BM_CfiRow)->Arg(1)->Arg(0);

void BM_Sizes(benchmark::State& state) {
  Loaded& l = loaded();
  for (auto _ : state) benchmark::DoNotOptimize(l.sframe_bytes.size());
  const elf::Section* hdr = l.file->section_by_name(".eh_frame_hdr");
  const double eh = static_cast<double>(l.eh->section->data().size());
  const double eh_hdr = hdr ? static_cast<double>(hdr->size) : 0;
  const double sf = static_cast<double>(l.sframe_bytes.size());
  state.counters["eh_frame_KB"] = eh / 1e3;
  state.counters["eh_frame_hdr_KB"] = eh_hdr / 1e3;
  state.counters["sframe_KB"] = sf / 1e3;
  state.counters["sframe_per_cfi"] = sf / (eh + eh_hdr);
  state.counters["represented_bytes_share"] =
      static_cast<double>(l.stats.represented_bytes) / static_cast<double>(l.stats.cfi_bytes);
}
BENCHMARK(BM_Sizes)->Iterations(1);

}  // namespace

BENCHMARK_MAIN();

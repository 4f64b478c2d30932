// Makes .fwprof recordings without the recorder, for tests, demos and
// measurements:
//
//   make_sample_profile fixture OUT.fwprof [--cut BYTES]   the fixture of sample_fixture.hpp, its
//                                                          samples in chunks of 101 (10 ms of it)
//   make_sample_profile synthetic OUT.fwprof [--zstd]      10k distinct stacks of depth 20-40,
//                                                          100k samples, 4 threads: prints bytes a sample
//   make_sample_profile seeds DIR                          the seeds of fuzz/corpus/fuzz_profile_file
//   make_sample_profile bench                              the builder API: 1M samples of depth 30
#include <chrono>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "profile/profile_file.hpp"
#include "profile/sample_fixture.hpp"

using namespace framewalk::profile;

namespace {

bool write_file(const char* path, const std::string& bytes) {
  std::FILE* f = std::fopen(path, "wb");
  if (!f) return false;
  const bool ok = std::fwrite(bytes.data(), 1, bytes.size(), f) == bytes.size();
  return std::fclose(f) == 0 && ok;
}

// Stacks shaped like a real program's: 10k distinct ones, sharing prefixes,
// depth 20-40, over 2000 functions of 5 modules, each frame a call site
// (a function has a few); innermost first.
struct Shape {
  std::vector<std::vector<std::pair<uint32_t, uint64_t>>> stacks;  // (module, address)
};

Shape make_shape(size_t count, int min_depth, int max_depth, std::mt19937_64& rng) {
  Shape s;
  std::vector<std::vector<std::pair<uint32_t, uint64_t>>> outer_first;
  const auto site = [&]() {
    const uint32_t fn = static_cast<uint32_t>(rng() % 2000);
    return std::make_pair(fn % 5, 0x1000 + uint64_t{fn} * 0x100 + (rng() % 4) * 0x10);
  };
  for (size_t i = 0; i < count; ++i) {
    std::vector<std::pair<uint32_t, uint64_t>> st;
    const int depth = min_depth + static_cast<int>(rng() % (max_depth - min_depth + 1));
    if (!outer_first.empty()) {  // a prefix of an earlier stack
      const auto& base = outer_first[rng() % outer_first.size()];
      const size_t keep = std::min<size_t>(base.size(), 3 + rng() % (depth - 3));
      st.assign(base.begin(), base.begin() + static_cast<long>(keep));
    }
    while (st.size() < static_cast<size_t>(depth)) st.push_back(site());
    outer_first.push_back(st);
    s.stacks.emplace_back(st.rbegin(), st.rend());
  }
  return s;
}

void add_modules(SampleProfile& p) {
  for (int m = 0; m < 5; ++m)
    p.add_module("/usr/lib/libsynthetic" + std::to_string(m) + ".so", "00112233445566778899aabbccddeeff0011223" +
                     std::to_string(m), 0x7f0000000000 + 0x1000000 * m, 0x7f0000800000 + 0x1000000 * m, 0,
                 0x7f0000000000 + 0x1000000 * m);
}

// Samples: a skewed choice of stack (some are hot), 4 threads, 1 ms apart
// with jitter, the CPU changing now and then.
void add_samples(SampleProfile& p, const Shape& shape, size_t samples, size_t depth_check, std::mt19937_64& rng,
                 bool symbolize) {
  std::vector<uint32_t> frames;
  uint64_t t = 0;
  uint16_t cpu = 0;
  for (uint32_t tid = 1000; tid < 1004; ++tid) p.add_thread(1000, tid, "thread-" + std::to_string(tid));
  std::vector<bool> named;
  for (size_t i = 0; i < samples; ++i) {
    const double u = std::uniform_real_distribution<double>(0, 1)(rng);
    const size_t k = static_cast<size_t>(u * u * u * static_cast<double>(shape.stacks.size()));
    frames.clear();
    for (const auto& [module, address] : shape.stacks[k]) frames.push_back(p.intern_frame(module, address));
    (void)depth_check;
    const uint32_t leaf = p.push_stack(frames);
    t += 250'000 + rng() % 1000;
    if (rng() % 64 == 0) cpu = static_cast<uint16_t>(rng() % 2);
    p.add_sample(leaf, t, 1000 + static_cast<uint32_t>(i % 4), cpu, 1'000'000);
  }
  if (symbolize) {  // every frame named, as the recorder does at the end
    for (uint32_t f = 0; f < p.frames().size(); ++f) {
      const uint64_t fn = (p.frames()[f].address - 0x1000) / 0x100;
      const SourceLine line{p.intern("function_" + std::to_string(fn)), p.intern("src/file" + std::to_string(fn % 50) + ".c"),
                            static_cast<uint32_t>(10 + (p.frames()[f].address & 0xff) / 16), 0};
      p.set_frame_lines(f, std::span<const SourceLine>(&line, 1));
    }
  }
  p.info().event = p.intern("cpu-clock");
  p.info().frequency = 4000;
  p.info().weight_unit = p.intern("nanoseconds");
  p.info().duration_ns = t;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc >= 3 && std::strcmp(argv[1], "fixture") == 0) {
    ProfileWriterOptions options;
    options.samples_per_chunk = 101;  // 100 on-CPU samples and one off-CPU sample a chunk
    std::string bytes = write_profile_file(fixture::make_profile(), options);
    if (argc == 5 && std::strcmp(argv[3], "--cut") == 0) bytes.resize(std::min(bytes.size(), std::stoul(argv[4])));
    if (!write_file(argv[2], bytes)) {
      std::perror(argv[2]);
      return 1;
    }
    return 0;
  }
  if (argc == 3 && std::strcmp(argv[1], "seeds") == 0) {  // fuzz/corpus/fuzz_profile_file
    const SampleProfile p = fixture::make_profile();
    ProfileWriterOptions chunked;
    chunked.samples_per_chunk = 101;
    ProfileWriterOptions packed;
    packed.compress = true;
    SampleProfile small;
    const uint32_t m = small.add_module("/bin/x", "ab", 0x1000, 0x2000, 0, 0x1000);
    const uint32_t f = small.intern_frame(m, 0x10), g = small.intern_frame(kNoModule, 0x20);
    const SourceLine lines[2] = {{small.intern("inl"), small.intern("x.c"), 3, 1}, {small.intern("main"), 0, 9, 0}};
    small.set_frame_lines(f, lines);
    small.add_thread(1, 2, "t");
    small.add_sample(small.push_stack(std::vector<uint32_t>{g, f}), 5, 2, 1, 10);
    small.add_sample(kNoNode, 9, 3, 0, 20, SampleKind::kOffCpu);
    small.add_stop_reason("outermost");
    const std::string dir = argv[2];
    for (const auto& [name, bytes] :
         {std::make_pair("fixture", write_profile_file(p)), std::make_pair("fixture-chunked", write_profile_file(p, chunked)),
          std::make_pair("fixture-zstd", write_profile_file(p, packed)), std::make_pair("small", write_profile_file(small))})
      if (!write_file((dir + "/" + name + ".fwprof").c_str(), bytes)) return 1;
    return 0;
  }
  if (argc >= 3 && std::strcmp(argv[1], "synthetic") == 0) {
    const bool zstd = argc == 4 && std::strcmp(argv[3], "--zstd") == 0;
    std::mt19937_64 rng(42);
    const Shape shape = make_shape(10000, 20, 40, rng);
    SampleProfile p;
    add_modules(p);
    add_samples(p, shape, 100000, 0, rng, true);
    ProfileWriterOptions options;
    options.compress = zstd;
    // Written as the recorder does: a flush every 10,000 samples would do;
    // here every 1000 samples' worth is not needed: one flush per 64k chunk.
    const std::string bytes = write_profile_file(p, options);
    if (!write_file(argv[2], bytes)) {
      std::perror(argv[2]);
      return 1;
    }
    std::printf("%zu samples, %zu distinct stacks, %zu stack nodes, %zu frames: %zu bytes, %.1f bytes a sample%s\n",
                p.samples().size(), shape.stacks.size(), p.nodes().size(), p.frames().size(), bytes.size(),
                static_cast<double>(bytes.size()) / static_cast<double>(p.samples().size()), zstd ? " (zstd)" : "");
    return 0;
  }
  if (argc == 2 && std::strcmp(argv[1], "bench") == 0) {
    std::mt19937_64 rng(7);
    const Shape shape = make_shape(10000, 30, 30, rng);
    SampleProfile p;
    add_modules(p);
    const auto t0 = std::chrono::steady_clock::now();
    add_samples(p, shape, 1'000'000, 30, rng, false);
    const auto t1 = std::chrono::steady_clock::now();
    const double s = std::chrono::duration<double>(t1 - t0).count();
    std::printf("1000000 samples of depth 30 (%zu distinct stacks, %zu nodes, %zu frames): %.3f s, %.0f ns a sample, "
                "%.1f MB of tables\n",
                shape.stacks.size(), p.nodes().size(), p.frames().size(), s, s * 1e9 / 1e6,
                static_cast<double>(p.memory_bytes()) / 1e6);
    return 0;
  }
  std::fprintf(stderr, "usage: make_sample_profile fixture|synthetic OUT.fwprof | bench\n");
  return 2;
}

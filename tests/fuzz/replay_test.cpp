// Replays every committed fuzz input (fuzz/regressions/<target>/ and the seed
// corpus fuzz/corpus/<target>/) through the same body the libFuzzer target
// runs, so that fixed crashes stay fixed in the ordinary test suite. Set
// FRAMEWALK_REPLAY_VERBOSE=1 to print each file before it runs (to find the
// one that crashes).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "fuzz_bodies.hpp"
#include "json_check.hpp"

namespace {

namespace fs = std::filesystem;
using Body = int (*)(const uint8_t*, size_t);

std::vector<uint8_t> read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::vector<uint8_t>(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// Runs `body` on every file of the target's directories; returns how many.
size_t replay(const std::string& target, Body body) {
  const bool verbose = std::getenv("FRAMEWALK_REPLAY_VERBOSE") != nullptr;
  size_t count = 0;
  for (const char* kind : {"regressions", "corpus"}) {
    const fs::path dir = fs::path(FRAMEWALK_SOURCE_DIR) / "fuzz" / kind / target;
    if (!fs::is_directory(dir)) continue;
    std::vector<fs::path> files;
    for (const auto& entry : fs::directory_iterator(dir))
      if (entry.is_regular_file()) files.push_back(entry.path());
    std::sort(files.begin(), files.end());
    for (const fs::path& file : files) {
      SCOPED_TRACE(file.string());
      if (verbose) std::fprintf(stderr, "replay %s\n", file.c_str());
      const std::vector<uint8_t> bytes = read_file(file);
      EXPECT_EQ(body(bytes.data(), bytes.size()), 0);
      ++count;
    }
  }
  return count;
}

TEST(FuzzReplay, Elf) { EXPECT_GT(replay("fuzz_elf", framewalk::fuzz::fuzz_elf), 0u); }
TEST(FuzzReplay, Cfi) { EXPECT_GT(replay("fuzz_cfi", framewalk::fuzz::fuzz_cfi), 0u); }
TEST(FuzzReplay, Expression) { EXPECT_GT(replay("fuzz_expression", framewalk::fuzz::fuzz_expression), 0u); }
TEST(FuzzReplay, EhFrameHdr) { EXPECT_GT(replay("fuzz_eh_frame_hdr", framewalk::fuzz::fuzz_eh_frame_hdr), 0u); }
TEST(FuzzReplay, Sframe) { EXPECT_GT(replay("fuzz_sframe", framewalk::fuzz::fuzz_sframe), 0u); }
TEST(FuzzReplay, SframeRoundtrip) {
  EXPECT_GT(replay("fuzz_sframe_roundtrip", framewalk::fuzz::fuzz_sframe_roundtrip), 0u);
}
TEST(FuzzReplay, SframeGenerate) { EXPECT_GT(replay("fuzz_sframe_generate", framewalk::fuzz::fuzz_sframe_generate), 0u); }
TEST(FuzzReplay, Core) { EXPECT_GT(replay("fuzz_core", framewalk::fuzz::fuzz_core), 0u); }
TEST(FuzzReplay, Unwind) { EXPECT_GT(replay("fuzz_unwind", framewalk::fuzz::fuzz_unwind), 0u); }
TEST(FuzzReplay, Backend) { EXPECT_GT(replay("fuzz_backend", framewalk::fuzz::fuzz_backend), 0u); }
TEST(FuzzReplay, Archive) { EXPECT_GT(replay("fuzz_archive", framewalk::fuzz::fuzz_archive), 0u); }
TEST(FuzzReplay, Exidx) { EXPECT_GT(replay("fuzz_exidx", framewalk::fuzz::fuzz_exidx), 0u); }
TEST(FuzzReplay, Gmon) { EXPECT_GT(replay("fuzz_gmon", framewalk::fuzz::fuzz_gmon), 0u); }
TEST(FuzzReplay, ProfileFile) { EXPECT_GT(replay("fuzz_profile_file", framewalk::fuzz::fuzz_profile_file), 0u); }
TEST(FuzzReplay, Line) { EXPECT_GT(replay("fuzz_line", framewalk::fuzz::fuzz_line), 0u); }
TEST(FuzzReplay, DwarfInfo) { EXPECT_GT(replay("fuzz_dwarf_info", framewalk::fuzz::fuzz_dwarf_info), 0u); }
TEST(FuzzReplay, CuIndex) { EXPECT_GT(replay("fuzz_cu_index", framewalk::fuzz::fuzz_cu_index), 0u); }
TEST(FuzzReplay, PerfData) { EXPECT_GT(replay("fuzz_perf_data", framewalk::fuzz::fuzz_perf_data), 0u); }
TEST(FuzzReplay, PerfMap) { EXPECT_GT(replay("fuzz_perf_map", framewalk::fuzz::fuzz_perf_map), 0u); }
TEST(FuzzReplay, Jitdump) { EXPECT_GT(replay("fuzz_jitdump", framewalk::fuzz::fuzz_jitdump), 0u); }
TEST(FuzzReplay, GdbJit) { EXPECT_GT(replay("fuzz_gdb_jit", framewalk::fuzz::fuzz_gdb_jit), 0u); }

// Empty and one-byte inputs are the first thing a fuzzer tries.
TEST(FuzzReplay, TinyInputs) {
  const uint8_t zero[1] = {0};
  for (Body body : {framewalk::fuzz::fuzz_elf, framewalk::fuzz::fuzz_cfi, framewalk::fuzz::fuzz_expression,
                    framewalk::fuzz::fuzz_eh_frame_hdr, framewalk::fuzz::fuzz_sframe,
                    framewalk::fuzz::fuzz_sframe_roundtrip, framewalk::fuzz::fuzz_sframe_generate,
                    framewalk::fuzz::fuzz_core, framewalk::fuzz::fuzz_unwind, framewalk::fuzz::fuzz_archive,
                    framewalk::fuzz::fuzz_exidx, framewalk::fuzz::fuzz_gmon, framewalk::fuzz::fuzz_line,
                    framewalk::fuzz::fuzz_dwarf_info, framewalk::fuzz::fuzz_cu_index, framewalk::fuzz::fuzz_backend,
                    framewalk::fuzz::fuzz_profile_file, framewalk::fuzz::fuzz_perf_map,
                    framewalk::fuzz::fuzz_jitdump, framewalk::fuzz::fuzz_gdb_jit}) {
    EXPECT_EQ(body(nullptr, 0), 0);
    EXPECT_EQ(body(zero, 1), 0);
  }
}

// The checker the fuzz bodies use on framewalk's JSON must itself be right.
TEST(FuzzJsonCheck, AcceptsJson) {
  using framewalk::fuzz::valid_json;
  for (const char* ok : {"{}", "[]", " [1, -2.5e+3, 0, true, false, null] ", "{\"a\":{\"b\":[\"\\u00e9\\n\"]}}",
                         "\"caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80\"", "[{\"x\":\"0x1f\"},\n{}]\n"})
    EXPECT_TRUE(valid_json(ok)) << ok;
}

TEST(FuzzJsonCheck, RejectsNonJson) {
  using framewalk::fuzz::valid_json;
  for (const char* bad : {"", "{", "[1,]", "{\"a\" 1}", "[01]", "[1.]", "[-]", "\"\x01\"", "\"\\x\"",
                          "\"\\u12\"", "\"\xff\"", "\"\xc0\x80\"", "\"\xed\xa0\x80\"", "\"\xf4\x90\x80\x80\"",
                          "\"\xc3\"", "[1] [2]", "nul", "{\"a\":1,}"})
    EXPECT_FALSE(valid_json(bad)) << bad;
}

}  // namespace

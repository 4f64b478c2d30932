// A recorded AArch64 core, replayed without qemu, gdb or a sysroot: the core
// qemu-aarch64 wrote for tests/cross/fixtures/offline.c (static; zero pages
// left out) and the program itself, both xz-compressed in
// tests/data/cores/aarch64-offline/, with gdb-multiarch's frames of that core
// (tests/cross/record_offline_core.py). The walk must give gdb's frames PC for
// PC, in every thread: two kernel signal frames, a faulting frameless leaf
// (its return address still in x30), recursion, and threads blocked in libc.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "base/mapped_file.hpp"
#include "elf/elf_file.hpp"
#include "target/core_file.hpp"
#include "unwind/symbolize.hpp"
#include "unwind/unwinder.hpp"

namespace framewalk {
namespace {

namespace fs = std::filesystem;

const fs::path kDir = fs::path(FRAMEWALK_SOURCE_DIR) / "tests/data/cores/aarch64-offline";

std::vector<uint8_t> unxz(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  auto out = elf::decompress_xz(Bytes(bytes.data(), bytes.size()), uint64_t{64} << 20);
  EXPECT_TRUE(out.ok()) << path;
  return out ? *out : std::vector<uint8_t>{};
}

// A build without liblzma (FRAMEWALK_COMPRESSION=OFF) cannot read the files.
bool can_unxz() {
  const uint8_t empty[1] = {0};
  auto r = elf::decompress_xz(Bytes(empty, 0), 1);
  return r.ok() || r.error().code != ErrorCode::kNoDecompressor;
}

struct ExpectedFrame {
  uint64_t pc;
  std::string function;
};

std::map<pid_t, std::vector<ExpectedFrame>> expected_frames() {
  std::map<pid_t, std::vector<ExpectedFrame>> out;
  std::ifstream in(kDir / "expected.txt");
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream fields(line);
    pid_t tid;
    std::string pc, function;
    fields >> tid >> pc >> function;
    out[tid].push_back({std::stoull(pc, nullptr, 16), function});
  }
  return out;
}

const std::set<std::string> kProgramFunctions = {"blocked",       "thread_main",   "in_usr1_handler",
                                                  "on_usr1",       "on_segv",       "faulting_leaf",
                                                  "caller_of_leaf", "main"};

class OfflineAarch64Core : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!can_unxz()) GTEST_SKIP() << "built without liblzma";
    exe_ = fs::temp_directory_path() / ("fw_offline_" + std::to_string(getpid()));
    const std::vector<uint8_t> program = unxz(kDir / "offline.xz");
    std::ofstream(exe_, std::ios::binary).write(reinterpret_cast<const char*>(program.data()), program.size());
    CoreOptions options;
    options.exe = exe_.string();
    auto core = CoreFile::parse(FileImage::from_buffer(unxz(kDir / "core.xz")), "core", options);
    ASSERT_TRUE(core.ok()) << to_string(core.error().code);
    core_ = std::move(*core);
  }
  void TearDown() override {
    if (!exe_.empty()) fs::remove(exe_);
  }

  fs::path exe_;
  std::unique_ptr<CoreFile> core_;
};

TEST_F(OfflineAarch64Core, EveryThreadEqualsGdb) {
  EXPECT_EQ(core_->machine(), 183);
  EXPECT_EQ(core_->pointer_auth_mask(), std::nullopt) << "qemu writes no NT_ARM_PAC_MASK";
  ModuleCache cache;
  std::vector<std::string> warnings;
  const ModuleMap modules = core_->modules(cache, &warnings);
  // The program, found from AT_PHDR with --exe; its first page is not in the core.
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find("not checked against the core"), std::string::npos) << warnings[0];
  const auto expected = expected_frames();
  ASSERT_EQ(core_->threads().size(), expected.size());
  const Unwinder unwinder(modules, core_->memory(), core_->machine());
  size_t signal_frames = 0, named = 0;
  for (const CoreThread& t : core_->threads()) {
    SCOPED_TRACE(t.tid);
    auto want = expected.find(t.tid);
    ASSERT_NE(want, expected.end());
    std::vector<Frame> frames;
    const WalkResult r = unwinder.walk(t.registers, [&](const Frame& f) {
      frames.push_back(f);
      return true;
    });
    EXPECT_EQ(r.reason, StopReason::kOutermost);
    ASSERT_EQ(frames.size(), want->second.size());
    for (size_t i = 0; i < frames.size(); ++i) {
      EXPECT_EQ(frames[i].pc, want->second[i].pc) << "frame " << i;
      signal_frames += frames[i].source == FrameSource::kSignal;
      // The program's own functions by name (libc's have aliases at one
      // address, of which gdb and framewalk may pick different ones).
      const std::string& name = want->second[i].function;
      if (kProgramFunctions.count(name)) {
        EXPECT_EQ(symbolize(frames[i]).function, name) << "frame " << i;
        ++named;
      }
    }
  }
  EXPECT_EQ(signal_frames, 2u) << "the SIGSEGV and the SIGUSR1 frames";
  EXPECT_EQ(named, 11u + 3 + 12) << "main thread 11, thread_main 3, blocked 1 + 4 + 7";
}

// Without --exe, the program is looked for where the core says it was
// started (AT_EXECFN "./offline", beside the core): not found here, the core
// says so and names the way out; walks stop at the first frame.
TEST_F(OfflineAarch64Core, WithoutTheProgramItSaysWhatIsMissing) {
  auto core = CoreFile::parse(FileImage::from_buffer(unxz(kDir / "core.xz")), "/nonexistent/core", CoreOptions{});
  ASSERT_TRUE(core.ok());
  ModuleCache cache;
  std::vector<std::string> warnings;
  const ModuleMap modules = (*core)->modules(cache, &warnings);
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_EQ(warnings[0], "the core names no files (no NT_FILE note) and its executable './offline' was not found: "
                         "pass --exe (and --sysroot for its libraries)");
  const Unwinder unwinder(modules, (*core)->memory(), (*core)->machine());
  for (const CoreThread& t : (*core)->threads()) {
    size_t frames = 0;
    const WalkResult r = unwinder.walk(t.registers, [&](const Frame&) {
      ++frames;
      return true;
    });
    EXPECT_EQ(frames, 1u);
    EXPECT_EQ(r.reason, StopReason::kNoUnwindInfo);
  }
}

}  // namespace
}  // namespace framewalk

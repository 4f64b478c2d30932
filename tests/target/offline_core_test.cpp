// Recorded cores of other machines, replayed without qemu, gdb or a sysroot:
// the cores qemu-user wrote for tests/cross/fixtures/offline.c (static; zero
// pages left out) and the program itself, both xz-compressed in
// tests/data/cores/<recording>/, with gdb-multiarch's frames of that core
// (tests/cross/record_offline_core.py). The walk must give gdb's frames PC for
// PC, in every thread: two kernel signal frames, a faulting frameless leaf
// (its return address still in the link register), recursion, and threads
// blocked in libc. AArch64; 32-bit ARM as Thumb-2 without unwind tables for
// the program's own code (prologue analysis) and in ARM state with them
// (.ARM.exidx), each ARM program trimmed to the functions its stacks run
// through.
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

const fs::path kCores = fs::path(FRAMEWALK_SOURCE_DIR) / "tests/data/cores";

struct Recording {
  const char* dir;     // under tests/data/cores
  uint16_t machine;    // e_machine
  // How the walks of threads other than the crashing one end: at the
  // outermost frame (AArch64's thread_start ends the CFI), or cannot-unwind
  // (ARM: glibc's __clone, whose child code is .cantunwind).
  StopReason thread_stop;
  // Of all threads' frames, how many came from a callee's .ARM.exidx entry
  // and how many from its prologue (or epilogue) read from its code.
  size_t exidx_frames;
  size_t prologue_frames;
};

const Recording kRecordings[] = {
    {"aarch64-offline", 183, StopReason::kOutermost, 0, 0},
    {"arm-offline", 40, StopReason::kCannotUnwind, 9, 32},
    {"arm-offline-arm", 40, StopReason::kCannotUnwind, 35, 6},
};

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

std::map<pid_t, std::vector<ExpectedFrame>> expected_frames(const fs::path& dir) {
  std::map<pid_t, std::vector<ExpectedFrame>> out;
  std::ifstream in(dir / "expected.txt");
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

class OfflineCore : public ::testing::TestWithParam<Recording> {
 protected:
  void SetUp() override {
    if (!can_unxz()) GTEST_SKIP() << "built without liblzma";
    dir_ = kCores / GetParam().dir;
    exe_ = fs::temp_directory_path() / ("fw_offline_" + std::to_string(getpid()));
    const std::vector<uint8_t> program = unxz(dir_ / "offline.xz");
    std::ofstream(exe_, std::ios::binary).write(reinterpret_cast<const char*>(program.data()), program.size());
    CoreOptions options;
    options.exe = exe_.string();
    auto core = CoreFile::parse(FileImage::from_buffer(unxz(dir_ / "core.xz")), "core", options);
    ASSERT_TRUE(core.ok()) << to_string(core.error().code);
    core_ = std::move(*core);
  }
  void TearDown() override {
    if (!exe_.empty()) fs::remove(exe_);
  }

  fs::path dir_;
  fs::path exe_;
  std::unique_ptr<CoreFile> core_;
};

TEST_P(OfflineCore, EveryThreadEqualsGdb) {
  EXPECT_EQ(core_->machine().elf_machine, GetParam().machine);
  EXPECT_EQ(core_->pointer_auth_mask(), std::nullopt) << "qemu writes no NT_ARM_PAC_MASK";
  ModuleCache cache;
  std::vector<std::string> warnings;
  const ModuleMap modules = core_->modules(cache, &warnings);
  // The program, found from AT_PHDR with --exe; its first page is not in the core.
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find("not checked against the core"), std::string::npos) << warnings[0];
  const auto expected = expected_frames(dir_);
  ASSERT_EQ(core_->threads().size(), expected.size());
  const Unwinder unwinder(modules, core_->memory(), core_->machine());
  size_t signal_frames = 0, named = 0, exidx_frames = 0, prologue_frames = 0;
  for (const CoreThread& t : core_->threads()) {
    SCOPED_TRACE(t.tid);
    auto want = expected.find(t.tid);
    ASSERT_NE(want, expected.end());
    std::vector<Frame> frames;
    const WalkResult r = unwinder.walk(t.registers, [&](const Frame& f) {
      frames.push_back(f);
      return true;
    });
    // The crashing thread is the first (its NT_PRSTATUS comes first).
    EXPECT_EQ(r.reason, t.tid == core_->threads().front().tid ? StopReason::kOutermost : GetParam().thread_stop);
    ASSERT_EQ(frames.size(), want->second.size());
    for (size_t i = 0; i < frames.size(); ++i) {
      EXPECT_EQ(frames[i].pc, want->second[i].pc) << "frame " << i;
      signal_frames += frames[i].source == FrameSource::kSignal;
      exidx_frames += frames[i].source == FrameSource::kExidx;
      prologue_frames += frames[i].source == FrameSource::kPrologue;
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
  EXPECT_EQ(exidx_frames, GetParam().exidx_frames);
  EXPECT_EQ(prologue_frames, GetParam().prologue_frames);
  EXPECT_EQ(named, 11u + 3 + 12) << "main thread 11, thread_main 3, blocked 1 + 4 + 7";
}

// Without --exe, the program is looked for where the core says it was
// started (AT_EXECFN "./offline", beside the core): not found here, the core
// says so and names the way out; walks stop at the first frame.
TEST_P(OfflineCore, WithoutTheProgramItSaysWhatIsMissing) {
  auto core = CoreFile::parse(FileImage::from_buffer(unxz(dir_ / "core.xz")), "/nonexistent/core", CoreOptions{});
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

INSTANTIATE_TEST_SUITE_P(Recordings, OfflineCore, ::testing::ValuesIn(kRecordings),
                         [](const ::testing::TestParamInfo<Recording>& info) {
                           std::string name = info.param.dir;
                           for (char& c : name)
                             if (c == '-') c = '_';
                           return name;
                         });

}  // namespace
}  // namespace framewalk

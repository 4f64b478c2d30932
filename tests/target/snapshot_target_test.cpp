// Snapshots: the blocks of code without a file (the vDSO) are saved, read
// back and used for the vDSO's module; a damaged code file is named.
#include "target/snapshot_target.hpp"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <optional>
#include <string>

#include "support/tiny_elf.hpp"
#include "target/live_target.hpp"

namespace framewalk {
namespace {

std::string temp_dir(const char* what) {
  const std::string dir = std::filesystem::temp_directory_path() / (std::string(what) + std::to_string(getpid()));
  std::filesystem::remove_all(dir);
  return dir;
}

// An x86-64 process of one thread (42), its sp 0x7000 and pc 0x1000.
SnapshotData one_thread(std::vector<SnapshotData::Block> stack = {}) {
  SnapshotData data;
  data.machine = usual_machine_key(kEmX86_64);
  data.pid = 42;
  SnapshotData::Thread t;
  t.tid = 42;
  t.registers.set(7, 0x7000);
  t.registers.set(16, 0x1000);
  t.stack = std::move(stack);
  data.threads.push_back(t);
  return data;
}

TEST(Snapshot, CodeBlocksRoundTrip) {
  SnapshotData data = one_thread({{0x7000, {1, 2, 3, 4, 5, 6, 7, 8}}});
  data.code.push_back({0x9000, {0x7f, 'E', 'L', 'F'}});
  const std::string dir = temp_dir("fw_snapshot_code_");
  ASSERT_TRUE(write_snapshot(data, dir).ok());
  std::string problem;
  auto back = read_snapshot(dir, &problem);
  ASSERT_TRUE(back.ok()) << problem;
  ASSERT_EQ(back->code.size(), 1u);
  EXPECT_EQ(back->code[0].address, 0x9000u);
  EXPECT_EQ(back->code[0].bytes, (std::vector<uint8_t>{0x7f, 'E', 'L', 'F'}));
  // The target reads code blocks as memory, after the stacks.
  SnapshotTarget target(std::move(*back), nullptr);
  uint8_t bytes[4] = {};
  EXPECT_EQ(target.memory().read(0x9001, bytes, 4), 3u);
  EXPECT_EQ(bytes[0], 'E');
  EXPECT_EQ(target.memory().read(0x7004, bytes, 2), 2u);
  EXPECT_EQ(bytes[0], 5);
  // A code file cut short is named, with the offset.
  {
    std::ofstream cut(dir + "/code", std::ios::binary | std::ios::trunc);
    cut << std::string(20, '\0');
  }
  auto bad = read_snapshot(dir, &problem);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().code, ErrorCode::kTruncated);
  EXPECT_EQ(problem, dir + "/code: a block's address and size cut short at offset 16");
  std::filesystem::remove_all(dir);
}

TEST(Snapshot, MachinesByName) {
  // riscv64's and sparc64's are made through qemu's gdb stub (tests/cross/stub_snapshots.py).
  SnapshotData data = one_thread();
  data.machine = usual_machine_key(kEmRiscv);
  const std::string dir = temp_dir("fw_snapshot_machine_");
  ASSERT_TRUE(write_snapshot(data, dir).ok());
  std::string text;
  std::getline(std::ifstream(dir + "/machine"), text);
  EXPECT_EQ(text, "riscv64");
  std::string problem;
  auto back = read_snapshot(dir, &problem);
  ASSERT_TRUE(back.ok()) << problem;
  EXPECT_EQ(back->machine.elf_machine, kEmRiscv);
  EXPECT_TRUE(back->machine.is_64);
  std::ofstream(dir + "/machine", std::ios::trunc) << "riscv32\n";
  EXPECT_FALSE(read_snapshot(dir, &problem).ok());
  EXPECT_EQ(problem, dir + "/machine: unknown machine 'riscv32' (x86_64, aarch64, arm, i386, ppc64le, ppc, s390x, "
                           "riscv64, sparc64)");
  std::filesystem::remove_all(dir);
}

// Objects that were in memory only (a GDB JIT object, a jitdump's code) are
// written under objects/, named in maps by their absolute paths, and read
// back as modules from there, never under the sysroot the snapshot is
// walked with.
TEST(Snapshot, ObjectsInMemoryAreSavedAsFiles) {
  SnapshotData data = one_thread();
  MapEntry e;
  e.start = 0x50000000;
  e.end = 0x50001000;
  e.perms = "r-xp";
  e.path = "0-gdb-jit@0x1234.elf";
  data.maps.push_back(e);
  data.objects.push_back({"0-gdb-jit@0x1234.elf", test::tiny_elf(true, Endian::kLittle)});
  const std::string dir = temp_dir("fw_snapshot_objects_");
  ASSERT_TRUE(write_snapshot(data, dir).ok());
  const std::string saved = std::filesystem::absolute(dir + "/objects/0-gdb-jit@0x1234.elf").lexically_normal();
  ASSERT_TRUE(std::filesystem::exists(saved));
  std::ifstream maps(dir + "/maps");
  std::string line;
  std::getline(maps, line);
  EXPECT_NE(line.find(" " + saved), std::string::npos) << line;
  std::string problem;
  auto back = read_snapshot(dir, &problem);
  ASSERT_TRUE(back.ok()) << problem;
  SnapshotTarget target(std::move(*back), nullptr, "/nonexistent-sysroot");
  const Module* m = target.modules().find(0x50000800);
  ASSERT_NE(m, nullptr);
  EXPECT_NE(m->data, nullptr) << m->problem;
  EXPECT_EQ(m->name, saved);
  std::filesystem::remove_all(dir);
}

// A live process's snapshot keeps its vDSO (ptrace: left out under qemu-user,
// tests/cross/inprocess.sh): replayed, the vDSO is a module
// with its ELF image (before, it had none: its bytes were not saved).
TEST(SnapshotOfPtraceTarget, TheVdsoIsSavedAndReplayed) {
  int ready[2];
  ASSERT_EQ(pipe(ready), 0);
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    close(ready[0]);
    (void)!write(ready[1], "r", 1);
    for (;;) pause();
  }
  close(ready[1]);
  char c;
  ASSERT_EQ(read(ready[0], &c, 1), 1);
  close(ready[0]);
  LiveOptions options;
  auto live = LiveTarget::open(child, options, std::make_shared<ModuleCache>());
  if (!live.ok()) {
    kill(child, SIGKILL);
    waitpid(child, nullptr, 0);
    GTEST_SKIP() << "cannot attach: " << thread_error_text(live.error());
  }
  SnapshotData data = snapshot_of(**live);
  std::optional<Module> live_vdso;  // a copy: the live target's map may change
  for (const auto& m : (*live)->modules().modules())
    if (m->name == "[vdso]") live_vdso = *m;
  (*live)->detach();
  kill(child, SIGKILL);
  waitpid(child, nullptr, 0);
  if (!live_vdso) GTEST_SKIP() << "no vDSO in this process";
  ASSERT_EQ(data.code.size(), 1u);
  EXPECT_EQ(data.code[0].address, live_vdso->start);
  ASSERT_GE(data.code[0].bytes.size(), 4u);
  EXPECT_EQ(std::string(data.code[0].bytes.begin(), data.code[0].bytes.begin() + 4), "\x7f" "ELF");
  const std::string dir = temp_dir("fw_snapshot_vdso_");
  ASSERT_TRUE(write_snapshot(data, dir).ok());
  std::string problem;
  auto back = read_snapshot(dir, &problem);
  ASSERT_TRUE(back.ok()) << problem;
  SnapshotTarget replay(std::move(*back), nullptr);
  const Module* vdso = replay.modules().find(live_vdso->start);
  ASSERT_NE(vdso, nullptr);
  EXPECT_EQ(vdso->name, "[vdso]");
  EXPECT_NE(vdso->data, nullptr) << vdso->problem;
  EXPECT_EQ(vdso->bias, live_vdso->bias);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace framewalk

// Modules from /proc/PID/maps text: files, the vDSO, and executable memory
// no file backs (jit code).
#include <gtest/gtest.h>

#include "support/sparse_memory.hpp"
#include "target/jitdump_modules.hpp"
#include "target/proc_maps.hpp"

namespace framewalk {
namespace {

TEST(ProcMaps, ExecutableAnonymousMemoryIsJitCode) {
  const std::string text =
      "7f1114000000-7f1114002000 rw-p 00000000 00:00 0 \n"
      "7f1114003000-7f111403f000 rwxp 00000000 00:00 0 \n"
      "7f1114040000-7f1114041000 r-xp 00000000 00:00 0                          [anon:v8 code]\n"
      "7f1114050000-7f1114051000 r-xs 00000000 00:01 4242                       /memfd:jit (deleted)\n"
      "7f1114060000-7f1114061000 rw-p 00000000 00:00 0                          [anon:data]\n"
      "7ffd00000000-7ffd00021000 rw-p 00000000 00:00 0                          [stack]\n"
      "ffffffffff600000-ffffffffff601000 --xp 00000000 00:00 0                  [vsyscall]\n";
  const std::vector<MapEntry> maps = parse_proc_maps(text);
  ASSERT_EQ(maps.size(), 7u);
  ModuleCache cache;
  test::SparseMemory memory;
  const ModuleMap modules = modules_from_maps(0, maps, cache, memory);
  ASSERT_EQ(modules.size(), 3u);
  const Module* m = modules.find(0x7f1114010000);
  ASSERT_NE(m, nullptr);
  EXPECT_TRUE(m->jit);
  EXPECT_EQ(m->name, "[anon]");
  EXPECT_EQ(m->start, 0x7f1114003000u);
  EXPECT_EQ(m->end, 0x7f111403f000u);
  EXPECT_EQ(m->bias, 0u);
  EXPECT_EQ(m->data, nullptr);
  EXPECT_TRUE(m->problem.empty());
  ASSERT_NE(modules.find(0x7f1114040010), nullptr);
  EXPECT_EQ(modules.find(0x7f1114040010)->name, "[anon:v8 code]");
  ASSERT_NE(modules.find(0x7f1114050010), nullptr);
  EXPECT_TRUE(modules.find(0x7f1114050010)->jit);
  EXPECT_EQ(modules.find(0x7f1114000000), nullptr);  // not executable
  EXPECT_EQ(modules.find(0x7f1114060000), nullptr);
  EXPECT_EQ(modules.find(0xffffffffff600000), nullptr);  // the vsyscall page is no jit code
}

TEST(ProcMaps, AnonymousNames) {
  for (const char* name : {"", "[anon]", "[anon:x]", "[anon_shmem:y]", "/memfd:z (deleted)", "//anon", "/dev/zero (deleted)",
                           "/anon_hugepage (deleted)"})
    EXPECT_TRUE(is_anonymous_mapping(name)) << name;
  for (const char* name : {"/usr/lib/libc.so.6", "[vdso]", "[vsyscall]", "[stack]", "[heap]", "/tmp/perf-1.map"})
    EXPECT_FALSE(is_anonymous_mapping(name)) << name;
}

}  // namespace
}  // namespace framewalk

namespace framewalk {
namespace {

// perf's convention: the runtime maps its jit-PID.dump; a marker is no module.
TEST(ProcMaps, JitdumpMarker) {
  const std::vector<MapEntry> maps = parse_proc_maps(
      "7ff4b38d4000-7ff4b38d5000 r-xp 00000000 fe:00 10962033                   /tmp/x/jit-910.dump\n"
      "7ff4b38d6000-7ff4b38d7000 r-xp 00000000 fe:00 10962034                   /tmp/x/jit-911.dump\n"
      "7ff4b38d8000-7ff4b38d9000 r-xp 00000000 fe:00 10962035                   /tmp/x/jit-912.dump (deleted)\n");
  EXPECT_EQ(jitdump_marker(maps, 910), "/tmp/x/jit-910.dump");
  EXPECT_EQ(jitdump_marker(maps, 911), "/tmp/x/jit-911.dump");
  EXPECT_EQ(jitdump_marker(maps, 912), "");  // deleted: nothing to read
  EXPECT_EQ(jitdump_marker(maps, 91), "");
  EXPECT_TRUE(is_jitdump_marker("/tmp/x/jit-910.dump"));
  EXPECT_FALSE(is_jitdump_marker("/usr/lib/libjit-1.so"));
  ModuleCache cache;
  test::SparseMemory memory;
  EXPECT_EQ(modules_from_maps(0, maps, cache, memory).size(), 0u);
}

}  // namespace
}  // namespace framewalk

// SampleTarget: one perf sample's registers and stack copy, nothing else;
// ModuleTracker: mappings per process over time (a mapping over another
// replaces it, a fork copies its parent's, a missing file is named once).
#include <gtest/gtest.h>
#include <unistd.h>

#include <climits>
#include <string>

#include "elf/elf_file.hpp"
#include "target/sample_target.hpp"

namespace framewalk {
namespace {

std::string self_path() {
  char buf[PATH_MAX];
  const ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
  return n > 0 ? std::string(buf, static_cast<size_t>(n)) : std::string();
}

perf::Mmap mapping(uint32_t pid, uint64_t address, uint64_t length, const std::string& name) {
  perf::Mmap m;
  m.pid = m.tid = pid;
  m.address = address;
  m.length = length;
  m.filename = name;
  m.executable = true;
  m.prot = 5;
  return m;
}

TEST(ModuleTracker, MappingsOverTime) {
  ModuleTracker tracker(nullptr, ModuleTracker::Options{});
  const std::string self = self_path();
  ASSERT_FALSE(self.empty());
  tracker.on_mmap(mapping(10, 0x100000, 0x10000, self), perf::misc::kUser);
  ModuleTracker::Process& p = tracker.process(10);
  ASSERT_EQ(p.modules.size(), 1u);
  const Module* first = p.modules.find(0x100800);
  ASSERT_NE(first, nullptr);
  EXPECT_NE(first->data, nullptr);
  const uint64_t first_id = first->id;
  const uint64_t generation = p.modules.generation();
  // A new mapping over part of it: the old module goes, a new one (a new id) comes.
  tracker.on_mmap(mapping(10, 0x108000, 0x10000, self), perf::misc::kUser);
  EXPECT_NE(p.modules.generation(), generation);
  ASSERT_EQ(p.modules.size(), 1u);
  EXPECT_EQ(p.modules.find(0x100800), nullptr);
  ASSERT_NE(p.modules.find(0x108000), nullptr);
  EXPECT_NE(p.modules.find(0x108000)->id, first_id);
  // A data mapping over it only removes it.
  perf::Mmap data = mapping(10, 0x108000, 0x1000, "//anon");
  data.executable = false;
  tracker.on_mmap(data, perf::misc::kUser);
  EXPECT_EQ(p.modules.size(), 0u);
  // A fork copies the parent's mappings; the child's own come and go alone.
  tracker.on_mmap(mapping(10, 0x200000, 0x1000, self), perf::misc::kUser);
  perf::Comm comm;
  comm.pid = comm.tid = 10;
  comm.comm = "parent";
  tracker.on_comm(comm);
  perf::Task fork;
  fork.pid = fork.tid = 11;
  fork.ppid = fork.ptid = 10;
  tracker.on_fork(fork);
  ModuleTracker::Process& child = tracker.process(11);
  ASSERT_EQ(child.modules.size(), 1u);
  EXPECT_EQ(tracker.thread_name(11, 11), "parent");
  tracker.on_mmap(mapping(11, 0x200000, 0x1000, "/nonexistent/libgone.so"), perf::misc::kUser);
  tracker.on_mmap(mapping(11, 0x300000, 0x1000, "/nonexistent/libgone.so"), perf::misc::kUser);
  EXPECT_EQ(tracker.process(10).modules.size(), 1u);
  ASSERT_EQ(child.modules.size(), 2u);
  EXPECT_EQ(child.modules.find(0x200000)->data, nullptr);
  EXPECT_FALSE(child.modules.find(0x200000)->problem.empty());
  // Anonymous code (a JIT's: "//anon", as V8's code space comes; memfd and
  // the rest perf takes for anonymous memory): a jit module, no warning.
  for (const char* anon : {"//anon", "/memfd:jit (deleted)", "/dev/zero (deleted)", "/anon_hugepage"}) {
    tracker.on_mmap(mapping(11, 0x400000, 0x1000, anon), perf::misc::kUser);
    const Module* jit = child.modules.find(0x400000);
    ASSERT_NE(jit, nullptr) << anon;
    EXPECT_TRUE(jit->jit);
    EXPECT_EQ(jit->name, anon);
    EXPECT_EQ(jit->data, nullptr);
    EXPECT_EQ(jit->bias, 0u);
  }
  EXPECT_EQ(child.modules.size(), 3u);  // each replaced the last
  // Named once, though mapped twice.
  ASSERT_EQ(tracker.warnings().size(), 1u);
  EXPECT_NE(tracker.warnings()[0].find("/nonexistent/libgone.so"), std::string::npos);
  // An exec: the old program's mappings go.
  perf::Comm exec;
  exec.pid = exec.tid = 11;
  exec.comm = "newprog";
  exec.exec = true;
  tracker.on_comm(exec);
  EXPECT_EQ(child.modules.size(), 0u);
  EXPECT_EQ(tracker.thread_name(11, 11), "newprog");
  EXPECT_EQ(tracker.process(10).modules.size(), 1u);
  // Kernel mappings are not the process's.
  tracker.on_mmap(mapping(12, 0xffffffff81000000, 0x1000000, "[kernel.kallsyms]_text"), perf::misc::kKernel);
  EXPECT_EQ(tracker.process(12).modules.size(), 0u);
}

TEST(ModuleTracker, BuildIdMismatch) {
  ModuleTracker tracker(nullptr, ModuleTracker::Options{});
  const std::string self = self_path();
  perf::Mmap m = mapping(10, 0x100000, 0x10000, self);
  m.has_build_id = true;
  m.build_id_size = 20;
  for (int i = 0; i < 20; ++i) m.build_id[i] = static_cast<uint8_t>(0xee);
  tracker.on_mmap(m, perf::misc::kUser);
  const Module* module = tracker.process(10).modules.find(0x100000);
  ASSERT_NE(module, nullptr);
  EXPECT_EQ(module->data, nullptr);  // not the recorded file: not used
  ASSERT_EQ(tracker.warnings().size(), 1u);
  EXPECT_NE(tracker.warnings()[0].find("build-id"), std::string::npos) << tracker.warnings()[0];
}

TEST(SampleTarget, RegistersAndOnlyTheStackCopy) {
  SampleTarget target(elf::kEmX86_64);
  perf::Sample s;
  s.pid = 5;
  s.tid = 6;
  s.regs_user_abi = 2;
  s.regs_user_mask = 1u << 6 | 1u << 7 | 1u << 8;  // bp, sp, ip
  s.regs_user[0] = 0x7ffe1010;
  s.regs_user[1] = 0x7ffe1000;
  s.regs_user[2] = 0x401000;
  s.regs_user_count = 3;
  uint8_t stack[32];
  for (int i = 0; i < 32; ++i) stack[i] = static_cast<uint8_t>(i);
  s.stack_user = Bytes(stack, 32);
  s.stack_dyn_size = 24;
  ModuleMap modules;
  target.set_sample(s, &modules);
  EXPECT_EQ(target.next_thread(0).value(), 6);
  EXPECT_EQ(target.next_thread(6).value(), 0);
  arch::RegisterFile regs;
  ASSERT_TRUE(target.initial_registers(6, &regs));
  EXPECT_EQ(regs.value_or(7, 0), 0x7ffe1000u);
  EXPECT_EQ(regs.value_or(16, 0), 0x401000u);
  auto word = target.memory().read_word(0x7ffe1008, 8, Endian::kLittle);
  ASSERT_TRUE(word);
  EXPECT_EQ(*word & 0xff, 8u);
  // Past dyn_size (the bytes the kernel copied but the stack did not have): unreadable, with the address.
  auto past = target.memory().read_word(0x7ffe1018, 8, Endian::kLittle);
  ASSERT_FALSE(past);
  EXPECT_EQ(past.error().code, ErrorCode::kMemoryUnreadable);
  EXPECT_EQ(past.error().offset, 0x7ffe1018u);
  EXPECT_FALSE(target.memory().read_word(0x7ffe0ff8, 8, Endian::kLittle));
  // No user registers (a kernel thread's sample).
  s.regs_user_abi = 0;
  target.set_sample(s, &modules);
  EXPECT_FALSE(target.initial_registers(6, &regs));
}

TEST(SampleTarget, A32BitTaskOfA64BitRecordingIsItsOwnMachine) {
  // PERF_SAMPLE_REGS_ABI_32 on x86-64: an i386 program, its registers in
  // x86 perf numbering (bp 6, sp 7, ip 8), its stack in 4-byte words.
  SampleTarget target(elf::kEmX86_64);
  perf::Sample s;
  s.pid = 5;
  s.tid = 6;
  s.regs_user_abi = 1;
  s.regs_user_mask = 1u << 6 | 1u << 7 | 1u << 8;
  s.regs_user[0] = 0xffd01010;
  s.regs_user[1] = 0xffd01000;
  s.regs_user[2] = 0x56555000;
  s.regs_user_count = 3;
  uint8_t stack[16] = {0x78, 0x56, 0x34, 0x12};
  s.stack_user = Bytes(stack, 16);
  s.stack_dyn_size = 16;
  ModuleMap modules;
  target.set_sample(s, &modules);
  EXPECT_EQ(target.machine(), usual_machine_key(kEm386));
  arch::RegisterFile regs;
  ASSERT_TRUE(target.initial_registers(6, &regs));
  EXPECT_EQ(regs.value_or(4, 0), 0xffd01000u);  // esp
  EXPECT_EQ(regs.value_or(5, 0), 0xffd01010u);  // ebp
  EXPECT_EQ(regs.value_or(8, 0), 0x56555000u);  // eip
  auto word = target.memory().read_word(0xffd01000, 4, Endian::kLittle);
  ASSERT_TRUE(word);
  EXPECT_EQ(*word, 0x12345678u);
  // The next sample, of a 64-bit task: x86-64 again.
  s.regs_user_abi = 2;
  target.set_sample(s, &modules);
  EXPECT_EQ(target.machine(), usual_machine_key(kEmX86_64));
  // A 32-bit recording has no 32-bit sibling: ABI 2 there is not its own.
  SampleTarget arm(elf::kEmArm);
  arm.set_sample(s, &modules);
  EXPECT_FALSE(arm.initial_registers(6, &regs));
}

}  // namespace
}  // namespace framewalk

namespace framewalk {
namespace {

// A jitdump's marker (the runtime maps jit-PID.dump executable) is no
// module: it names the process's jitdump, when the pid in its name is the
// process's.
TEST(ModuleTracker, JitdumpMarker) {
  ModuleTracker tracker(nullptr, ModuleTracker::Options{});
  tracker.on_mmap(mapping(20, 0x7000000, 0x1000, "/tmp/x/jit-21.dump"), perf::misc::kUser);
  EXPECT_EQ(tracker.process(20).jitdump, "");  // another process's
  tracker.on_mmap(mapping(20, 0x7001000, 0x1000, "/tmp/x/jit-20.dump"), perf::misc::kUser);
  EXPECT_EQ(tracker.process(20).jitdump, "/tmp/x/jit-20.dump");
  EXPECT_EQ(tracker.process(20).modules.size(), 0u);
  EXPECT_TRUE(tracker.warnings().empty());
}

}  // namespace
}  // namespace framewalk

// perf_event_open's PERF_SAMPLE_REGS_USER, converted per machine: the tables
// on hand-made samples, and on the host a real sample from the kernel, whose
// PC must be the sample's IP and whose SP must lie on the sampled stack.
#include <gtest/gtest.h>
#include <linux/perf_event.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <bit>
#include <cerrno>
#include <cstring>
#include <vector>

#include "arch/machine.hpp"
#include "elf/elf_file.hpp"

namespace framewalk::arch {
namespace {

TEST(PerfSampleRegisters, X86_64InTheKernelsOrder) {
  const Machine& m = *machine_for(usual_machine_key(elf::kEmX86_64));
  // AX, BX, BP, SP, IP, R15: bits 0, 1, 6, 7, 8, 23.
  const uint64_t mask = 1u << 0 | 1u << 1 | 1u << 6 | 1u << 7 | 1u << 8 | 1u << 23;
  const uint64_t values[] = {0xa0, 0xb0, 0x7ffe1000, 0x7ffe0f00, 0x401234, 0xf15};
  const RegisterFile r = m.registers_from_perf_sample(mask, values);
  EXPECT_EQ(r.value_or(0, 0), 0xa0u);         // rax
  EXPECT_EQ(r.value_or(3, 0), 0xb0u);         // rbx is DWARF 3
  EXPECT_EQ(r.value_or(6, 0), 0x7ffe1000u);   // rbp
  EXPECT_EQ(r.value_or(7, 0), 0x7ffe0f00u);   // rsp
  EXPECT_EQ(r.value_or(16, 0), 0x401234u);    // rip
  EXPECT_EQ(r.value_or(15, 0), 0xf15u);       // r15
  EXPECT_FALSE(r.known(1));                   // rdx: not sampled
  // The mask leaves out what the kernel refuses for a 64-bit task (DS, ES, FS, GS).
  EXPECT_EQ(m.perf_sample_register_mask() & 0xf000, 0u);
  EXPECT_EQ(std::popcount(m.perf_sample_register_mask()), 20);
}

TEST(PerfSampleRegisters, AArch64AndArm) {
  const Machine& a64 = *machine_for(usual_machine_key(elf::kEmAarch64));
  const uint64_t values[] = {0x29, 0x30, 0xfff0, 0x400800};
  const uint64_t a64_mask = uint64_t{1} << 29 | uint64_t{1} << 30 | uint64_t{1} << 31 | uint64_t{1} << 32;
  RegisterFile r = a64.registers_from_perf_sample(a64_mask, values);
  EXPECT_EQ(r.value_or(29, 0), 0x29u);
  EXPECT_EQ(r.value_or(30, 0), 0x30u);
  EXPECT_EQ(r.value_or(31, 0), 0xfff0u);     // sp
  EXPECT_EQ(r.value_or(32, 0), 0x400800u);   // pc
  EXPECT_EQ(a64.perf_sample_register_mask(), (uint64_t{1} << 33) - 1);

  const Machine& arm = *machine_for(usual_machine_key(elf::kEmArm));
  const uint64_t arm_values[] = {0x7, 0xbeef0000, 0xf00d1234, 0x10401};
  r = arm.registers_from_perf_sample(1u << 7 | 1u << 13 | 1u << 14 | 1u << 15, arm_values);
  EXPECT_EQ(r.value_or(7, 0), 0x7u);
  EXPECT_EQ(r.value_or(13, 0), 0xbeef0000u);
  EXPECT_EQ(r.value_or(14, 0), 0xf00d1234u);
  EXPECT_EQ(r.value_or(15, 0), 0x10401u);
  // Fewer values than bits: the rest stay unknown.
  r = arm.registers_from_perf_sample(0xffff, std::span<const uint64_t>(arm_values, 2));
  EXPECT_TRUE(r.known(1));
  EXPECT_FALSE(r.known(2));
}

long perf_event_open(perf_event_attr* attr) {
  return syscall(SYS_perf_event_open, attr, 0 /* this thread */, -1, -1, PERF_FLAG_FD_CLOEXEC);
}

__attribute__((noinline)) uint64_t spin(volatile uint64_t* sink) {
  uint64_t x = 0;
  for (int i = 0; i < 20'000'000; ++i) x += static_cast<uint64_t>(i) * *sink;
  return x;
}

// A task-clock sample of this thread (a software event: this machine kind
// has no PMU), with the user registers.
TEST(PerfSampleRegisters, ARealSampleOfThisThread) {
  const Machine& host = host_machine();
  perf_event_attr attr{};
  attr.size = sizeof attr;
  attr.type = PERF_TYPE_SOFTWARE;
  attr.config = PERF_COUNT_SW_TASK_CLOCK;
  attr.sample_period = 200'000;  // ns of CPU time
  attr.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_REGS_USER;
  attr.sample_regs_user = host.perf_sample_register_mask();
  attr.exclude_kernel = 1;
  attr.exclude_hv = 1;
  attr.disabled = 1;
  const long fd = perf_event_open(&attr);
  if (fd < 0) GTEST_SKIP() << "perf_event_open: " << std::strerror(errno);
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  const size_t data_pages = 16;
  void* ring = mmap(nullptr, (1 + data_pages) * page, PROT_READ | PROT_WRITE, MAP_SHARED, static_cast<int>(fd), 0);
  ASSERT_NE(ring, MAP_FAILED);
  volatile uint64_t sink = 1;
  const auto stack_marker = reinterpret_cast<uint64_t>(&sink);
  ioctl(static_cast<int>(fd), PERF_EVENT_IOC_ENABLE, 0);
  spin(&sink);
  ioctl(static_cast<int>(fd), PERF_EVENT_IOC_DISABLE, 0);

  auto* meta = static_cast<perf_event_mmap_page*>(ring);
  const uint64_t head = __atomic_load_n(&meta->data_head, __ATOMIC_ACQUIRE);
  const auto* data = static_cast<const uint8_t*>(ring) + page;
  const uint64_t size = data_pages * page;
  int samples = 0;
  for (uint64_t at = meta->data_tail; at + sizeof(perf_event_header) <= head;) {
    // Records do not wrap in the first pass of a ring this large.
    perf_event_header header;
    std::memcpy(&header, data + at % size, sizeof header);
    if (header.size == 0 || at % size + header.size > size) break;
    if (header.type == PERF_RECORD_SAMPLE) {
      const uint8_t* p = data + at % size + sizeof header;
      uint64_t ip, abi;
      std::memcpy(&ip, p, 8);
      std::memcpy(&abi, p + 8, 8);
      ASSERT_NE(abi, uint64_t{PERF_SAMPLE_REGS_ABI_NONE});
      const int count = std::popcount(attr.sample_regs_user);
      std::vector<uint64_t> values(static_cast<size_t>(count));
      std::memcpy(values.data(), p + 16, values.size() * 8);
      const RegisterFile r = host.registers_from_perf_sample(attr.sample_regs_user, values);
      EXPECT_EQ(r.value_or(host.program_counter(), 0), ip);
      const uint64_t sp = r.value_or(host.stack_pointer(), 0);
      // spin's frame is below the test's local variable, on the same stack.
      EXPECT_LT(sp, stack_marker);
      EXPECT_GT(sp + (1 << 20), stack_marker);
      ++samples;
    }
    at += header.size;
  }
  munmap(ring, (1 + data_pages) * page);
  close(static_cast<int>(fd));
  EXPECT_GT(samples, 0) << "no sample in " << head << " bytes";
}

}  // namespace
}  // namespace framewalk::arch

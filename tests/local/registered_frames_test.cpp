// framewalk_backtrace through code made at run time: a function written
// into an executable mapping, called with a C callback that takes the
// backtrace, its CFI in a hand-built .eh_frame. Unregistered, the walk stops
// in it (no frame pointer, no module); registered through
// framewalk_register_frame or libgcc's __register_frame (interposed, and
// passed on: a C++ exception then crosses it too), the walk goes on to its
// caller. Also while another thread registers and deregisters it, from a
// signal handler.
#include <gtest/gtest.h>
#include <pthread.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/time.h>

#include <atomic>
#include <thread>
#include <cstring>
#include <stdexcept>
#include <vector>

#include "framewalk/backtrace.h"

extern "C" void __register_frame(void*);
extern "C" void __deregister_frame(void*);

namespace {

#if defined(__x86_64__) || defined(__aarch64__) || defined(__arm__) || (defined(__riscv) && __riscv_xlen == 64) || \
    (defined(__powerpc64__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__)

// The function: calls its argument, a void(*)(), with a frame of its own.
#if defined(__x86_64__)
// sub $8,%rsp; call *%rdi; add $8,%rsp; ret
const uint8_t kCode[] = {0x48, 0x83, 0xec, 0x08, 0xff, 0xd7, 0x48, 0x83, 0xc4, 0x08, 0xc3};
constexpr size_t kReturnOffset = 6;  // after the call
// CIE: code 1, data -8, RA r16, CFA = rsp + 8, r16 at CFA - 8.
const uint8_t kCieRules[] = {1, 0x78, 16, 0x0c, 7, 8, 0x90, 1};
// FDE: after sub, CFA = rsp + 16; after add (offset 10), CFA = rsp + 8.
const uint8_t kFdeRules[] = {0x44, 0x0e, 16, 0x46, 0x0e, 8};
#elif defined(__arm__)
// ARM state: push {r4, lr}; blx r0; pop {r4, pc}. On 32-bit ARM the walk
// looks a registered table up after the EHABI index (the code has no entry there).
const uint32_t kInsns[] = {0xe92d4010, 0xe12fff30, 0xe8bd8010};
const uint8_t* const kCode = reinterpret_cast<const uint8_t*>(kInsns);
constexpr size_t kCodeSize = sizeof kInsns;
constexpr size_t kReturnOffset = 8;
// CIE: code 4, data -4, RA r14, CFA = r13.
const uint8_t kCieRules[] = {4, 0x7c, 14, 0x0c, 13, 0};
// FDE: after push, CFA = r13 + 8, r4 at -8, r14 at -4.
const uint8_t kFdeRules[] = {0x41, 0x0e, 8, 0x84, 2, 0x8e, 1};
#elif defined(__riscv)
// addi sp,sp,-16; sd ra,8(sp); sd s0,0(sp); li s0,1; jalr a0; ld ra,8(sp);
// ld s0,0(sp); addi sp,sp,16; ret (s0 is no frame pointer in it: only its
// CFI leads out of it).
const uint32_t kInsns[] = {0xff010113, 0x00113423, 0x00813023, 0x00100413, 0x000500e7,
                           0x00813083, 0x00013403, 0x01010113, 0x00008067};
const uint8_t* const kCode = reinterpret_cast<const uint8_t*>(kInsns);
constexpr size_t kCodeSize = sizeof kInsns;
constexpr size_t kReturnOffset = 20;
// CIE: code 4, data -8, RA x1, CFA = x2 (sp).
const uint8_t kCieRules[] = {4, 0x78, 1, 0x0c, 2, 0};
// FDE: after addi, CFA = sp + 16; after the saves (offset 12), ra at -8, s0
// at -16; after the loads (offset 28) restored; after addi (32), CFA = sp.
const uint8_t kFdeRules[] = {0x41, 0x0e, 16, 0x42, 0x81, 1, 0x88, 2, 0x44, 0xc1, 0xc8, 0x41, 0x0e, 0};
#elif defined(__powerpc64__)
// mflr r0; std r0,16(r1); stdu r1,-32(r1); li r0,1; std r0,0(r1);
// mr r12,r3; mtctr r3; std r2,24(r1); bctrl; ld r2,24(r1); addi r1,r1,32;
// ld r0,16(r1); mtlr r0; blr. Its back chain is 1, not its caller's r1:
// only its CFI leads out of it (the machine's own way out of a frame
// without CFI is the back chain).
const uint32_t kInsns[] = {0x7c0802a6, 0xf8010010, 0xf821ffe1, 0x38000001, 0xf8010000, 0x7c6c1b78, 0x7c6903a6,
                           0xf8410018, 0x4e800421, 0xe8410018, 0x38210020, 0xe8010010, 0x7c0803a6, 0x4e800020};
const uint8_t* const kCode = reinterpret_cast<const uint8_t*>(kInsns);
constexpr size_t kCodeSize = sizeof kInsns;
constexpr size_t kReturnOffset = 36;
// CIE: code 4, data -8, RA r65 (LR), CFA = r1.
const uint8_t kCieRules[] = {4, 0x78, 65, 0x0c, 1, 0};
// FDE: after stdu (offset 12), CFA = r1 + 32, LR at CFA + 16 (in the
// caller's frame); after addi (44), CFA = r1; after mtlr (52), LR restored.
const uint8_t kFdeRules[] = {0x43, 0x0e, 32, 0x11, 65, 0x7e, 0x48, 0x0e, 0, 0x42, 0x06, 65};
#else
// stp x29,x30,[sp,#-16]!; mov x29,#1; blr x0; ldp x29,x30,[sp],#16; ret
// (x29 is no frame pointer in it: only its CFI leads out of it.)
const uint32_t kInsns[] = {0xa9bf7bfd, 0xd280003d, 0xd63f0000, 0xa8c17bfd, 0xd65f03c0};
const uint8_t* const kCode = reinterpret_cast<const uint8_t*>(kInsns);
constexpr size_t kCodeSize = sizeof kInsns;
constexpr size_t kReturnOffset = 12;
// CIE: code 4, data -8, RA x30, CFA = sp.
const uint8_t kCieRules[] = {4, 0x78, 30, 0x0c, 31, 0};
// FDE: after stp, CFA = sp + 16, x29 at -16, x30 at -8; after ldp (offset 16), CFA = sp.
const uint8_t kFdeRules[] = {0x41, 0x0e, 16, 0x9d, 2, 0x9e, 1, 0x43, 0x0e, 0, 0xdd, 0xde};
#endif
#if defined(__x86_64__)
constexpr size_t kCodeSize = sizeof kCode;
#endif
// Why a walk ends at the jit frame while nothing describes it: no rule, but
// on ppc64, where the back chain is the way out of any frame, the word it
// leads to (1 + 16) is unreadable.
#if defined(__powerpc64__)
constexpr int kUnregisteredEnd = FRAMEWALK_BT_BAD_MEMORY;
#else
constexpr int kUnregisteredEnd = FRAMEWALK_BT_NO_UNWIND_INFO;
#endif

void put32(std::vector<uint8_t>* out, uint32_t v) { out->insert(out->end(), reinterpret_cast<uint8_t*>(&v), reinterpret_cast<uint8_t*>(&v) + 4); }
// An address as DW_EH_PE_absptr has it: the machine's word.
void put_address(std::vector<uint8_t>* out, uintptr_t v) { out->insert(out->end(), reinterpret_cast<uint8_t*>(&v), reinterpret_cast<uint8_t*>(&v) + sizeof v); }
void pad(std::vector<uint8_t>* out, size_t record_start) {
  while ((out->size() - record_start) % 8 != 4) out->push_back(0);  // DW_CFA_nop: the length word + body a multiple of 8
}

// An .eh_frame of one CIE ("zR", absolute addresses) and one FDE for
// [code, code + kCodeSize), ended by a zero word.
std::vector<uint8_t> eh_frame_for(uint64_t code) {
  std::vector<uint8_t> out;
  out.reserve(256);
  put32(&out, 0);  // the CIE's length, set below
  put32(&out, 0);  // CIE id
  out.push_back(1);  // version
  for (char c : {'z', 'R', '\0'}) out.push_back(static_cast<uint8_t>(c));
  out.insert(out.end(), kCieRules, kCieRules + 3);  // code and data alignment, RA column
  out.push_back(1);     // augmentation data length
  out.push_back(0x00);  // DW_EH_PE_absptr
  out.insert(out.end(), kCieRules + 3, kCieRules + sizeof kCieRules);
  pad(&out, 0);
  const uint32_t cie_length = static_cast<uint32_t>(out.size() - 4);
  std::memcpy(out.data(), &cie_length, 4);
  const size_t fde = out.size();
  put32(&out, 0);
  put32(&out, static_cast<uint32_t>(fde + 4));  // back to the CIE
  put_address(&out, static_cast<uintptr_t>(code));
  put_address(&out, kCodeSize);
  out.push_back(0);  // augmentation data length
  out.insert(out.end(), kFdeRules, kFdeRules + sizeof kFdeRules);
  pad(&out, fde);
  const uint32_t fde_length = static_cast<uint32_t>(out.size() - fde - 4);
  std::memcpy(out.data() + fde, &fde_length, 4);
  put32(&out, 0);
  return out;
}

using Jit = void (*)(void (*)());

Jit make_code() {
  void* page = mmap(nullptr, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (page == MAP_FAILED) return nullptr;
  std::memcpy(page, kCode, kCodeSize);
  if (mprotect(page, 4096, PROT_READ | PROT_EXEC) != 0) return nullptr;
  __builtin___clear_cache(static_cast<char*>(page), static_cast<char*>(page) + kCodeSize);
  return reinterpret_cast<Jit>(page);
}

void* g_frames[64];
int g_depth;
framewalk_backtrace_info g_info;

__attribute__((noinline)) void take_backtrace() { g_depth = framewalk_backtrace_status(g_frames, 64, &g_info); }

// The jit code's caller: returns the index of the jit frame in the
// backtrace (-1: none) and whether the frame after it is in this function.
__attribute__((noinline)) int call_through(Jit jit, bool* caller_found) {
  jit(take_backtrace);
  __asm__ volatile("" ::: "memory");
  const auto code = reinterpret_cast<uintptr_t>(jit);
  for (int i = 0; i < g_depth; ++i) {
    if (reinterpret_cast<uintptr_t>(g_frames[i]) != code + kReturnOffset) continue;
    const auto next = i + 1 < g_depth ? reinterpret_cast<uintptr_t>(g_frames[i + 1]) : 0;
    const auto self = reinterpret_cast<uintptr_t>(&call_through);
    *caller_found = next > self && next < self + 512;
    return i;
  }
  return -1;
}

TEST(RegisteredFrames, WalkThroughJitCodeOnlyWhileRegistered) {
  const Jit jit = make_code();
  ASSERT_NE(jit, nullptr);
  std::vector<uint8_t> table = eh_frame_for(reinterpret_cast<uintptr_t>(jit));
  bool caller = false;
  // Unregistered: the jit frame is the last (nothing says how to leave it).
  int at = call_through(jit, &caller);
  ASSERT_GE(at, 0);
  EXPECT_EQ(at + 1, g_depth);
  EXPECT_EQ(g_info.end, kUnregisteredEnd);
  ASSERT_EQ(framewalk_register_frame(table.data()), 0);
  at = call_through(jit, &caller);
  ASSERT_GE(at, 0);
  EXPECT_TRUE(caller) << "the frame after the jit code is its caller's";
#if defined(__arm__)
  // glibc's _start has no .ARM.exidx entry: the stack ends there (backtrace.md).
  EXPECT_TRUE(g_info.end == FRAMEWALK_BT_OUTERMOST ||
              (g_info.end == FRAMEWALK_BT_NO_UNWIND_INFO &&
               g_info.address - reinterpret_cast<uintptr_t>(jit) >= kCodeSize))
      << framewalk_backtrace_end_name(g_info.end) << " at 0x" << std::hex << g_info.address;
#else
  EXPECT_EQ(g_info.end, FRAMEWALK_BT_OUTERMOST);
#endif
  EXPECT_EQ(framewalk_deregister_frame(table.data()), 0);
  EXPECT_EQ(framewalk_deregister_frame(table.data()), -1);
  at = call_through(jit, &caller);
  EXPECT_EQ(at + 1, g_depth) << "deregistered: its rules are gone from the cache too";
  EXPECT_EQ(framewalk_register_frame(nullptr), -1);
  const uint8_t empty[4] = {0, 0, 0, 0};
  EXPECT_EQ(framewalk_register_frame(empty), -1);
  munmap(reinterpret_cast<void*>(jit), 4096);
}

// A lone FDE, as LLVM's libunwind registers: its CIE precedes it.
TEST(RegisteredFrames, ALoneFde) {
  const Jit jit = make_code();
  ASSERT_NE(jit, nullptr);
  std::vector<uint8_t> table = eh_frame_for(reinterpret_cast<uintptr_t>(jit));
  uint32_t cie_length;
  std::memcpy(&cie_length, table.data(), 4);
  const uint8_t* fde = table.data() + 4 + cie_length;
  ASSERT_EQ(framewalk_register_frame(fde), 0);
  bool caller = false;
  EXPECT_GE(call_through(jit, &caller), 0);
  EXPECT_TRUE(caller);
  EXPECT_EQ(framewalk_deregister_frame(fde), 0);
  munmap(reinterpret_cast<void*>(jit), 4096);
}

#if !defined(__arm__)
__attribute__((noinline)) void throw_from_callback() { throw std::runtime_error("through jit code"); }
#endif

// Through libgcc's __register_frame: framewalk sees it, and libgcc still
// does (an exception unwinds through the jit code to its catcher).
TEST(RegisteredFrames, LibgccRegistrationSeenAndPassedOn) {
  const Jit jit = make_code();
  ASSERT_NE(jit, nullptr);
  std::vector<uint8_t> table = eh_frame_for(reinterpret_cast<uintptr_t>(jit));
  __register_frame(table.data());
  bool caller = false;
  EXPECT_GE(call_through(jit, &caller), 0);
  EXPECT_TRUE(caller);
#if !defined(__arm__)  // ARM's libgcc unwinds exceptions by the EHABI index alone
  bool caught = false;
  try {
    jit(throw_from_callback);
  } catch (const std::runtime_error&) {
    caught = true;
  }
  EXPECT_TRUE(caught);
#endif
  __deregister_frame(table.data());
  call_through(jit, &caller);
  EXPECT_EQ(g_info.end, kUnregisteredEnd);
  munmap(reinterpret_cast<void*>(jit), 4096);
}

std::atomic<int> g_signal_walks{0}, g_signal_through{0};
Jit g_jit;

void on_prof(int, siginfo_t*, void* uc) {
  void* frames[64];
  const int n = framewalk_backtrace_ucontext(uc, frames, 64);
  g_signal_walks.fetch_add(1, std::memory_order_relaxed);
  for (int i = 0; i + 1 < n; ++i)
    if (reinterpret_cast<uintptr_t>(frames[i]) == reinterpret_cast<uintptr_t>(g_jit) + kReturnOffset)
      g_signal_through.fetch_add(1, std::memory_order_relaxed);
}

__attribute__((noinline)) void spin_a_little() {
  for (int i = 0; i < 20000; ++i) __asm__ volatile("" ::: "memory");  // not optimized away
}

// Registration and deregistration on one thread while another walks
// through the code, also from a profiling signal's handler: no crash, and
// walks go on through the code while it is registered.
TEST(RegisteredFrames, RegisterWhileOthersWalk) {
  g_jit = make_code();
  ASSERT_NE(g_jit, nullptr);
  std::vector<uint8_t> table = eh_frame_for(reinterpret_cast<uintptr_t>(g_jit));
  std::atomic<bool> done{false};
  std::thread toggler([&] {
    for (int i = 0; i < 2000 && !done.load(); ++i) {
      ASSERT_EQ(framewalk_register_frame(table.data()), 0);
      sched_yield();
      ASSERT_EQ(framewalk_deregister_frame(table.data()), 0);
    }
  });
  struct sigaction sa {};
  sa.sa_sigaction = on_prof;
  sa.sa_flags = SA_SIGINFO | SA_RESTART;
  struct sigaction old {};
  ASSERT_EQ(sigaction(SIGPROF, &sa, &old), 0);
  itimerval timer{{0, 1000}, {0, 1000}};
  setitimer(ITIMER_PROF, &timer, nullptr);
  int walks = 0, through = 0;
  for (int i = 0; i < 3000; ++i) {
    g_jit(spin_a_little);
    bool caller = false;
    if (call_through(g_jit, &caller) >= 0) ++walks;
    through += caller;
  }
  itimerval off{};
  setitimer(ITIMER_PROF, &off, nullptr);
  sigaction(SIGPROF, &old, nullptr);
  done = true;
  toggler.join();
  EXPECT_EQ(walks, 3000);
  std::printf("%d of 3000 walks went through the jit code while it was registered; %d signal walks, %d through it\n",
              through, g_signal_walks.load(), g_signal_through.load());
  // The end: registered for good, every walk goes through.
  ASSERT_EQ(framewalk_register_frame(table.data()), 0);
  bool caller = false;
  call_through(g_jit, &caller);
  EXPECT_TRUE(caller);
  EXPECT_EQ(framewalk_deregister_frame(table.data()), 0);
}

#endif  // x86-64, AArch64, ARM, riscv64, ppc64le

}  // namespace

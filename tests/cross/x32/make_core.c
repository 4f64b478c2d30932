// Runs an x32 program's code in this x86-64 process and writes the core an
// x32 kernel would write when it dies, for tests/cross/x32/core.py.
//
// This kernel runs no x32 program (no CONFIG_X86_X32_ABI), and qemu has no
// x32 target; but x32 code is x86-64 code with 4-byte pointers, which runs
// in a 64-bit process while every address it touches is below 4 GiB. So:
// the program's PT_LOAD segments are mapped at their addresses, two stacks
// below 4 GiB (MAP_32BIT), and the program entered at its entry point with
// one of them; it must touch nothing but its own memory and end in an
// instruction that traps (ud2). It runs twice (elf32_core.h): first as the
// main thread waiting in a join (rdi 1), whose registers the SIGILL handler
// keeps, then, entered again on the other stack, as the crashing thread
// (rdi 0). At the crashing thread's trap the handler writes an ELFCLASS32
// EM_X86_64 core: NT_PRSTATUS of each thread in x32's layout (the 32-bit
// prstatus with x86-64's user_regs_struct at offset 72), the crashing
// thread's first, NT_FILE naming the program, its segments without
// contents (as the kernel leaves file pages out, but for the first page:
// its ELF header), and both stacks' contents.
//
// With HANDLER and RESTORER (addresses in the program), the crashing
// thread's first trap is instead turned into a signal delivered as an x32
// kernel delivers one (arch/x86/kernel/signal_64.c, x32_setup_rt_frame):
// an rt_sigframe_x32 below the red zone (the return address RESTORER, an
// 8-byte slot, then ucontext_x32 with the 64-bit sigcontext at its offset
// 24, then siginfo), and the handler entered with rdi, rsi and rdx as the
// kernel sets them; the core is written at the next trap, in the handler.
//
//   make_core X32_PROGRAM CORE [HANDLER RESTORER]
#define _GNU_SOURCE
#include <signal.h>
#include <ucontext.h>

#include "../elf32_core.h"

static const char* g_core_path;
static struct program32 g_program;
static struct stack32 g_stacks[2];
static ucontext_t g_joining;  // the main thread's registers at its trap
static int g_joined;          // 1 once it trapped
static uint32_t g_handler, g_restorer;  // 0: no signal delivered

// x32's rt_sigframe: pretcode (8), ucontext_x32 (flags, link, stack_t of 12,
// a pad, sigcontext: gregs r8..r15, rdi, rsi, rbp, rbx, rdx, rax, rcx, rsp,
// rip, eflags, cs/gs/fs/ss, err, trapno, oldmask, cr2, fpstate, 8 reserved;
// then the sigset), compat siginfo (128).
enum { kUcOffset = 8, kMcontextInUc = 24, kSigcontextSize = 256, kUcSize = 24 + kSigcontextSize + 8,
       kInfoOffset = kUcOffset + kUcSize, kFrameSize = kInfoOffset + 128 };

// Turns the trap in `uc` into the program's x32 signal handler's entry.
static void deliver(int sig, ucontext_t* uc) {
  greg_t* g = uc->uc_mcontext.gregs;
  // Below the red zone, aligned as at a call: (frame + 8) % 16 == 0.
  uint64_t frame = ((uint64_t)g[REG_RSP] - 128 - kFrameSize) & ~(uint64_t)15;
  frame -= 8;
  unsigned char* f = (unsigned char*)(uintptr_t)frame;
  memset(f, 0, kFrameSize);
  const uint64_t pretcode = g_restorer;
  memcpy(f, &pretcode, 8);
  static const int kOrder[] = {REG_R8,  REG_R9,  REG_R10, REG_R11, REG_R12, REG_R13, REG_R14, REG_R15, REG_RDI,
                               REG_RSI, REG_RBP, REG_RBX, REG_RDX, REG_RAX, REG_RCX, REG_RSP, REG_RIP, REG_EFL};
  uint64_t* sc = (uint64_t*)(f + kUcOffset + kMcontextInUc);
  for (unsigned i = 0; i < sizeof kOrder / sizeof kOrder[0]; ++i) sc[i] = (uint64_t)g[kOrder[i]];
  const int32_t signo = sig;
  memcpy(f + kInfoOffset, &signo, 4);
  g[REG_RSP] = (greg_t)frame;
  g[REG_RIP] = (greg_t)g_handler;
  g[REG_RDI] = sig;
  g[REG_RSI] = (greg_t)(frame + kInfoOffset);
  g[REG_RDX] = (greg_t)(frame + kUcOffset);
  g[REG_RAX] = 0;
}

// x86-64's user_regs_struct, from a signal's ucontext (gregs order r8..r15,
// rdi, rsi, rbp, rbx, rdx, rax, rcx, rsp, rip, eflags).
static void user_regs(const ucontext_t* uc, uint64_t out[27]) {
  const greg_t* g = uc->uc_mcontext.gregs;
  memset(out, 0, 27 * 8);
  out[0] = g[REG_R15], out[1] = g[REG_R14], out[2] = g[REG_R13], out[3] = g[REG_R12];
  out[4] = g[REG_RBP], out[5] = g[REG_RBX], out[6] = g[REG_R11], out[7] = g[REG_R10];
  out[8] = g[REG_R9], out[9] = g[REG_R8], out[10] = g[REG_RAX], out[11] = g[REG_RCX];
  out[12] = g[REG_RDX], out[13] = g[REG_RSI], out[14] = g[REG_RDI], out[15] = (uint64_t)-1;
  out[16] = g[REG_RIP], out[17] = 0x33, out[18] = g[REG_EFL], out[19] = g[REG_RSP], out[20] = 0x2b;
}

// Enters the program's entry point on `stack` with rdi `main_thread`.
static void enter(greg_t* g, const struct stack32* stack, int main_thread) {
  g[REG_RSP] = (greg_t)stack->top;
  g[REG_RIP] = (greg_t)g_program.entry;
  g[REG_RDI] = main_thread;
}

// NT_PRSTATUS (x32: 296 bytes, pr_reg at 72).
static size_t put_prstatus(unsigned char* out, int sig, uint32_t tid, const ucontext_t* uc) {
  unsigned char prstatus[296] = {0};
  const uint16_t cursig = (uint16_t)sig;
  memcpy(prstatus + 12, &cursig, 2);
  memcpy(prstatus + 24, &tid, 4);
  uint64_t regs[27];
  user_regs(uc, regs);
  memcpy(prstatus + 72, regs, sizeof regs);
  return put_note(out, NT_PRSTATUS, prstatus, sizeof prstatus);
}

static void on_trap(int sig, siginfo_t* info, void* context) {
  (void)info;
  ucontext_t* uc = context;
  if (!g_joined) {
    g_joining = *uc;
    g_joined = 1;
    enter(uc->uc_mcontext.gregs, &g_stacks[kCrashing], 0);
    return;
  }
  if (g_handler) {
    deliver(sig, uc);
    g_handler = 0;
    return;
  }
  // Notes as the kernel orders them: the crashing thread's NT_PRSTATUS,
  // NT_FILE, the main thread's NT_PRSTATUS.
  static unsigned char notes[4096];
  size_t notes_size = 0;
  const uint32_t pid = (uint32_t)getpid();
  notes_size += put_prstatus(notes + notes_size, sig, pid + 1, uc);
  notes_size += put_file_note(notes + notes_size, &g_program);
  notes_size += put_prstatus(notes + notes_size, sig, pid, &g_joining);
  write_core32(g_core_path, EM_X86_64, &g_program, notes, notes_size, g_stacks, 2);
  _exit(0);
}

int main(int argc, char** argv) {
  if (argc != 3 && argc != 5) {
    fprintf(stderr, "usage: %s X32_PROGRAM CORE [HANDLER RESTORER]\n", argv[0]);
    return 2;
  }
  if (argc == 5) {
    g_handler = (uint32_t)strtoul(argv[3], NULL, 0);
    g_restorer = (uint32_t)strtoul(argv[4], NULL, 0);
  }
  g_core_path = argv[2];
  load_program32(argv[1], EM_X86_64, &g_program);
  for (int i = 0; i < 2; ++i) {
    void* stack = mmap(NULL, kStackSize, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_32BIT, -1, 0);
    if (stack == MAP_FAILED) die("mapping a stack");
    // As the kernel would start it: 16-byte aligned at the top.
    set_stack32(&g_stacks[i], stack, 16);
  }
  static unsigned char altstack[64 * 1024];
  const stack_t ss = {.ss_sp = altstack, .ss_size = sizeof altstack};
  struct sigaction sa = {.sa_sigaction = on_trap, .sa_flags = SA_SIGINFO | SA_ONSTACK | SA_NODEFER};
  if (sigaltstack(&ss, NULL) != 0 || sigaction(SIGILL, &sa, NULL) != 0) die("signals");
  // The main thread first: its entry point is jumped to (nothing to return to).
  __asm__ volatile("mov %0, %%rsp\n\tjmp *%1"
                   :
                   : "r"(g_stacks[kJoining].top), "r"((uintptr_t)g_program.entry), "D"(1)
                   : "memory");
  __builtin_unreachable();
}

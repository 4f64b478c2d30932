// Runs a 31-bit s390 program's code in this s390x process, in 31-bit
// addressing mode, and writes the core a 64-bit kernel writes for a 31-bit
// (compat) process when it dies, for tests/cross/s390/core.py. Run under
// qemu-s390x (qemu has no 31-bit target, Debian no 31-bit libc).
//
// 31-bit code runs in a 64-bit process while every address it touches is
// below 2 GiB: the program's PT_LOAD segments are mapped at their
// addresses, two stacks below 2 GiB, and the program entered at its entry
// point through `sam31` (a two-instruction trampoline below 2 GiB: the
// instruction after sam31 must lie there). It runs twice (elf32_core.h):
// first as the main thread waiting in a join (r2 1), whose registers the
// SIGILL handler keeps, then, entered again in 31-bit mode on the other
// stack, as the crashing thread (r2 0). In 31-bit mode bras, brasl and
// basr leave the addressing-mode bit 0x80000000 in r14, as on a 31-bit
// kernel; qemu-user honours sam31 and enters the signal handler below in
// 64-bit mode. The program must touch nothing but its own memory and end
// in an invalid instruction (opcode 0). The SIGILL handler takes the
// registers and writes an ELFCLASS32 EM_S390 core (elf32_core.h): each
// thread's NT_PRSTATUS of the compat layout (compat_elf_prstatus:
// s390_compat_regs at offset 72, the PSW address with the addressing-mode
// bit) and NT_PRFPREG, the crashing thread's first, NT_FILE, the segments
// and both stacks.
//
// With KIND (sigframe or rt), HANDLER and RESTORER (addresses in the
// program), the crashing thread's first trap is instead turned into a
// signal delivered as the compat layer delivers one
// (arch/s390/kernel/compat_signal.c,
// setup_frame32 / setup_rt_frame32, with SA_RESTORER and without vector
// registers): the frame 8-aligned below r15, its back chain, a sigframe32
// (sigcontext32 whose sregs points at the _sigregs32 after it, the signal
// number, the high halves of the registers) or an rt_sigframe32 (siginfo,
// then ucontext32 with the _sigregs32 and the high halves), and the
// handler entered with r14 = RESTORER | 0x80000000 and r2.. as the kernel
// sets them; RESTORER 0: no SA_RESTORER, the kernel's `svc 119` or `svc
// 173` written on the frame the return address. The core is written at the
// next trap, in the handler.
//
//   make_core S390_PROGRAM CORE [sigframe|rt HANDLER RESTORER]
#define _GNU_SOURCE
#include <signal.h>
#include <ucontext.h>

#include "../elf32_core.h"

// Below 2 GiB: the stacks, and the page with the trampoline into 31-bit mode.
static const uintptr_t kStackAddresses[2] = {0x7eff0000, 0x7efc0000}, kTrampolineAddress = 0x7efe0000;
static const uint32_t kAmode31 = 0x80000000;  // PSW32_ADDR_AMODE; PSW_MASK_BA in the 64-bit PSW mask
// The compat layer's PSW mask: PSW32_USER_BITS (DAT, I/O, external, base,
// machine check, problem state) and the condition code and program mask.
static const uint32_t kPsw32UserBits = 0x070d0000, kPsw32MaskUser = 0x0000ff00;

static const char* g_core_path;
static struct program32 g_program;
static struct stack32 g_stacks[2];
static ucontext_t g_joining;  // the main thread's registers at its trap
static int g_joined;          // 1 once it trapped
static int g_rt;                        // the kind of frame to deliver
static uint32_t g_handler;   // 0: no signal delivered
static uint32_t g_restorer;  // 0: the svc on the frame

static void put32(unsigned char* at, uint32_t v) { memcpy(at, &v, 4); }  // big-endian, as the machine

// psw_compat_t, gprs[16] (low halves), acrs[16]: 136 bytes, the start of
// s390_compat_regs and of _sigregs32.
static void put_regs32(unsigned char* out, const ucontext_t* uc) {
  const mcontext_t* m = &uc->uc_mcontext;
  put32(out, kPsw32UserBits | ((uint32_t)(m->psw.mask >> 32) & kPsw32MaskUser));
  put32(out + 4, (uint32_t)m->psw.addr | ((m->psw.mask & kAmode31) ? kAmode31 : 0));
  for (int i = 0; i < 16; ++i) put32(out + 8 + 4 * i, (uint32_t)m->gregs[i]);
  for (int i = 0; i < 16; ++i) put32(out + 72 + 4 * i, m->aregs[i]);
}

// s390_fp_regs: fpc, a pad word, fprs[16]; also _sigregs32's fpregs.
static void put_fpregs(unsigned char* out, const ucontext_t* uc) {
  put32(out, uc->uc_mcontext.fpregs.fpc);
  put32(out + 4, 0);
  memcpy(out + 8, uc->uc_mcontext.fpregs.fprs, 16 * 8);
}

static void put_sigregs32(unsigned char* out, const ucontext_t* uc) {
  put_regs32(out, uc);
  put_fpregs(out + 136, uc);
}

// _sigregs_ext32's gprs_high: what the 31-bit registers leave out.
static void put_gprs_high(unsigned char* out, const ucontext_t* uc) {
  for (int i = 0; i < 16; ++i) put32(out + 4 * i, (uint32_t)(uc->uc_mcontext.gregs[i] >> 32));
}

// sigframe32: callee_used_stack[96], sigcontext32 { oldmask[2]; sregs } at
// 96, _sigregs32 (8-aligned) at 112, signo at 384, _sigregs_ext32 at 392
// (only gprs_high without vector registers): 464 bytes with the svc slot.
// rt_sigframe32: callee_used_stack[96], svc_insn, compat_siginfo_t at 100,
// ucontext32 at 232 (uc_flags, uc_link, uc_stack, _sigregs32 at +24,
// uc_sigmask at +296, uc_mcontext_ext at +424): 720 bytes.
enum { kSigframeSize = 464, kRtSigframeSize = 720, kRtInfo = 100, kRtUc = 232 };

static void deliver(int sig, const siginfo_t* info, ucontext_t* uc) {
  unsigned long* g = uc->uc_mcontext.gregs;
  const uint32_t sp = (uint32_t)g[15];
  const uint32_t size = g_rt ? kRtSigframeSize : kSigframeSize;
  const uint32_t frame = (sp - size) & ~7u;
  unsigned char* f = (unsigned char*)(uintptr_t)frame;
  memset(f, 0, size);
  put32(f, sp);  // the back chain
  // Without SA_RESTORER: svc_insn (rt_sigframe32's at 96, sigframe32's last).
  uint32_t restorer = g_restorer;
  if (!restorer) {
    restorer = g_rt ? frame + 96 : frame + size - 2;
    const uint8_t svc[2] = {0x0a, g_rt ? 173 : 119};
    memcpy((void*)(uintptr_t)restorer, svc, 2);
  }
  if (g_rt) {
    put32(f + kRtInfo, (uint32_t)sig);
    put32(f + kRtInfo + 8, (uint32_t)info->si_code);
    put32(f + kRtInfo + 12, (uint32_t)(uintptr_t)info->si_addr);
    put32(f + kRtUc, 1);           // UC_GPRS_HIGH
    put32(f + kRtUc + 12, 2);      // uc_stack.ss_flags: SS_DISABLE
    put_sigregs32(f + kRtUc + 24, uc);
    put_gprs_high(f + kRtUc + 424, uc);
    g[3] = frame + kRtInfo;
    g[4] = frame + kRtUc;
    g[5] = 0;  // the last breaking-event address
  } else {
    put32(f + 104, frame + 112);  // sc.sregs
    put_sigregs32(f + 112, uc);
    put32(f + 384, (uint32_t)g[2]);  // "signo": the kernel stores r2
    put_gprs_high(f + 392, uc);
    g[3] = frame + 96;  // &sc
    g[4] = 1;           // the interruption code: an operation exception
    g[5] = 0;
    g[6] = 0;
  }
  g[2] = (unsigned long)sig;
  g[14] = restorer | kAmode31;
  g[15] = frame;
  uc->uc_mcontext.psw.addr = g_handler;  // the PSW mask keeps 31-bit mode
}

// Enters the program's entry point on `stack` with r2 `main_thread`, r14
// 0, in the addressing mode of the PSW.
static void enter(ucontext_t* uc, const struct stack32* stack, int main_thread) {
  uc->uc_mcontext.gregs[2] = (unsigned long)main_thread;
  uc->uc_mcontext.gregs[14] = 0;
  uc->uc_mcontext.gregs[15] = stack->top;
  uc->uc_mcontext.psw.addr = g_program.entry;
}

// The thread's NT_PRSTATUS (compat_elf_prstatus: 224 bytes, pr_reg at 72,
// 144 bytes of s390_compat_regs, pr_fpvalid at 216) and NT_PRFPREG, with
// `between` (NT_FILE of the first thread) in between, as the kernel orders them.
static size_t put_thread_notes(unsigned char* out, int sig, uint32_t tid, const ucontext_t* uc,
                               const unsigned char* between, size_t between_size) {
  unsigned char prstatus[224] = {0};
  const uint16_t cursig = (uint16_t)sig;
  put32(prstatus, (uint32_t)sig);
  memcpy(prstatus + 12, &cursig, 2);
  put32(prstatus + 24, tid);
  put_regs32(prstatus + 72, uc);
  put32(prstatus + 72 + 136, (uint32_t)uc->uc_mcontext.gregs[2]);  // orig_gpr2
  put32(prstatus + 216, 1);
  size_t size = put_note(out, NT_PRSTATUS, prstatus, sizeof prstatus);
  memcpy(out + size, between, between_size);
  size += between_size;
  unsigned char fpregs[8 + 16 * 8];
  put_fpregs(fpregs, uc);
  return size + put_note(out + size, NT_PRFPREG, fpregs, sizeof fpregs);
}

static void on_trap(int sig, siginfo_t* info, void* context) {
  ucontext_t* uc = context;
  if (!(uc->uc_mcontext.psw.mask & kAmode31) || (uc->uc_mcontext.psw.mask & (1ul << 32))) {
    fprintf(stderr, "trapped outside 31-bit mode (PSW mask %#lx)\n", uc->uc_mcontext.psw.mask);
    _exit(3);
  }
  if (!g_joined) {
    g_joining = *uc;
    g_joined = 1;
    enter(uc, &g_stacks[kCrashing], 0);
    return;
  }
  if (g_handler) {
    deliver(sig, info, uc);
    g_handler = 0;
    return;
  }
  // Notes: the crashing thread's (with NT_FILE), the main thread's.
  static unsigned char file_note[2048], notes[4096];
  const size_t file_size = put_file_note(file_note, &g_program);
  const uint32_t pid = (uint32_t)getpid();
  size_t notes_size = put_thread_notes(notes, sig, pid + 1, uc, file_note, file_size);
  notes_size += put_thread_notes(notes + notes_size, sig, pid, &g_joining, NULL, 0);
  write_core32(g_core_path, EM_S390, &g_program, notes, notes_size, g_stacks, 2);
  _exit(0);
}

int main(int argc, char** argv) {
  if (argc != 3 && argc != 6) {
    fprintf(stderr, "usage: %s S390_PROGRAM CORE [sigframe|rt HANDLER RESTORER]\n", argv[0]);
    return 2;
  }
  if (argc == 6) {
    g_rt = strcmp(argv[3], "rt") == 0;
    g_handler = (uint32_t)strtoul(argv[4], NULL, 0);
    g_restorer = (uint32_t)strtoul(argv[5], NULL, 0);
  }
  g_core_path = argv[2];
  load_program32(argv[1], EM_S390, &g_program);
  for (int i = 0; i < 2; ++i) {
    void* stack = mmap((void*)kStackAddresses[i], kStackSize, PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
    if (stack != (void*)kStackAddresses[i]) die("mapping a stack");
    // As the kernel would start it: 8-aligned at the top.
    set_stack32(&g_stacks[i], stack, 8);
  }
  // sam31; br %r1.
  static const unsigned char kEnter31[] = {0x01, 0x0d, 0x07, 0xf1};
  unsigned char* trampoline = mmap((void*)kTrampolineAddress, kPage, PROT_READ | PROT_WRITE | PROT_EXEC,
                                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
  if (trampoline != (void*)kTrampolineAddress) die("mapping the trampoline");
  memcpy(trampoline, kEnter31, sizeof kEnter31);
  static unsigned char altstack[64 * 1024];
  const stack_t ss = {.ss_sp = altstack, .ss_size = sizeof altstack};
  struct sigaction sa = {.sa_sigaction = on_trap, .sa_flags = SA_SIGINFO | SA_ONSTACK | SA_NODEFER};
  if (sigaltstack(&ss, NULL) != 0 || sigaction(SIGILL, &sa, NULL) != 0) die("signals");
  // The main thread first, r14 0: its entry point is jumped to in 31-bit
  // mode (nothing to return to).
  register uintptr_t entry __asm__("r1") = g_program.entry;
  __asm__ volatile("lgr %%r15,%1\n\tlghi %%r14,0\n\tlghi %%r2,1\n\tbr %2"
                   :
                   : "r"(entry), "a"(g_stacks[kJoining].top), "a"(trampoline)
                   : "r2", "memory");
  __builtin_unreachable();
}

// Runs an x32 program's code in this x86-64 process and writes the core an
// x32 kernel would write when it dies, for tests/cross/x32/core.sh.
//
// This kernel runs no x32 program (no CONFIG_X86_X32_ABI), and qemu has no
// x32 target; but x32 code is x86-64 code with 4-byte pointers, which runs
// in a 64-bit process while every address it touches is below 4 GiB. So:
// the program's PT_LOAD segments are mapped at their addresses, a stack
// below 4 GiB (MAP_32BIT), and the program entered at its entry point with
// that stack; it must touch nothing but its own memory and end in an
// instruction that traps (ud2). The SIGILL handler takes the registers and
// writes an ELFCLASS32 EM_X86_64 core: NT_PRSTATUS in x32's layout (the
// 32-bit prstatus with x86-64's user_regs_struct at offset 72), NT_FILE
// naming the program, its segments without contents (as the kernel leaves
// file pages out, but for the first page: its ELF header), and the stack's
// contents.
//
// With HANDLER and RESTORER (addresses in the program), the first trap is
// instead turned into a signal delivered as an x32 kernel delivers one
// (arch/x86/kernel/signal_64.c, x32_setup_rt_frame): an rt_sigframe_x32
// below the red zone (the return address RESTORER, an 8-byte slot, then
// ucontext_x32 with the 64-bit sigcontext at its offset 24, then siginfo),
// and the handler entered with rdi, rsi and rdx as the kernel sets them; the
// core is written at the next trap, in the handler.
//
//   make_core X32_PROGRAM CORE [HANDLER RESTORER]
#define _GNU_SOURCE
#include <elf.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <ucontext.h>
#include <unistd.h>

#ifndef NT_FILE
#define NT_FILE 0x46494c45
#endif

enum { kStackSize = 64 * 1024, kMaxLoads = 8, kPage = 4096 };

static const char* g_core_path;
static char g_program[PATH_MAX];
static Elf32_Phdr g_loads[kMaxLoads];
static int g_load_count;
static unsigned char* g_stack;
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

static void die(const char* what) {
  perror(what);
  _exit(2);
}

// The 4-byte-aligned note: header, "CORE\0" padded, then the descriptor.
static size_t put_note(unsigned char* out, uint32_t type, const void* desc, uint32_t size) {
  Elf32_Nhdr h = {5, size, type};
  memcpy(out, &h, sizeof h);
  memcpy(out + sizeof h, "CORE\0\0\0", 8);
  memcpy(out + sizeof h + 8, desc, size);
  return sizeof h + 8 + ((size + 3u) & ~3u);
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

static void on_trap(int sig, siginfo_t* info, void* context) {
  (void)info;
  ucontext_t* uc = context;
  if (g_handler) {
    deliver(sig, uc);
    g_handler = 0;
    return;
  }
  // Notes: NT_PRSTATUS (x32: 296 bytes, pr_reg at 72) and NT_FILE.
  static unsigned char notes[4096];
  size_t notes_size = 0;
  unsigned char prstatus[296] = {0};
  const uint16_t cursig = (uint16_t)sig;
  const uint32_t pid = (uint32_t)getpid();
  memcpy(prstatus + 12, &cursig, 2);
  memcpy(prstatus + 24, &pid, 4);
  uint64_t regs[27];
  user_regs(uc, regs);
  memcpy(prstatus + 72, regs, sizeof regs);
  notes_size += put_note(notes + notes_size, NT_PRSTATUS, prstatus, sizeof prstatus);
  // NT_FILE: count, page size, (start, end, page offset) each, the names.
  static uint32_t file_note[512];
  size_t words = 0;
  file_note[words++] = (uint32_t)g_load_count;
  file_note[words++] = kPage;
  for (int i = 0; i < g_load_count; ++i) {
    const uint32_t start = g_loads[i].p_vaddr & ~(kPage - 1u);
    file_note[words++] = start;
    file_note[words++] = (g_loads[i].p_vaddr + g_loads[i].p_memsz + kPage - 1u) & ~(kPage - 1u);
    file_note[words++] = (g_loads[i].p_offset & ~(kPage - 1u)) / kPage;
  }
  size_t file_size = words * 4;
  for (int i = 0; i < g_load_count; ++i) {
    const size_t n = strlen(g_program) + 1;
    memcpy((char*)file_note + file_size, g_program, n);
    file_size += n;
  }
  notes_size += put_note(notes + notes_size, NT_FILE, file_note, (uint32_t)file_size);

  const int phnum = 1 + g_load_count + 1;
  const uint32_t notes_offset = sizeof(Elf32_Ehdr) + phnum * sizeof(Elf32_Phdr);
  const uint32_t stack_offset = (notes_offset + notes_size + kPage - 1u) & ~(kPage - 1u);
  Elf32_Ehdr eh = {0};
  memcpy(eh.e_ident, ELFMAG, SELFMAG);
  eh.e_ident[EI_CLASS] = ELFCLASS32;
  eh.e_ident[EI_DATA] = ELFDATA2LSB;
  eh.e_ident[EI_VERSION] = EV_CURRENT;
  eh.e_type = ET_CORE;
  eh.e_machine = EM_X86_64;
  eh.e_version = EV_CURRENT;
  eh.e_phoff = sizeof eh;
  eh.e_ehsize = sizeof eh;
  eh.e_phentsize = sizeof(Elf32_Phdr);
  eh.e_phnum = (Elf32_Half)phnum;
  Elf32_Phdr ph[kMaxLoads + 2] = {{0}};
  uint32_t data_offset = stack_offset + kStackSize;  // the first page of the file, after the stack
  ph[0].p_type = PT_NOTE;
  ph[0].p_offset = notes_offset;
  ph[0].p_filesz = (uint32_t)notes_size;
  ph[0].p_align = 4;
  for (int i = 0; i < g_load_count; ++i) {
    Elf32_Phdr* p = &ph[1 + i];
    p->p_type = PT_LOAD;
    p->p_vaddr = g_loads[i].p_vaddr & ~(kPage - 1u);
    p->p_memsz = ((g_loads[i].p_vaddr + g_loads[i].p_memsz + kPage - 1u) & ~(kPage - 1u)) - p->p_vaddr;
    p->p_offset = data_offset;
    p->p_filesz = 0;
    if (g_loads[i].p_offset == 0) {
      p->p_filesz = kPage;
      data_offset += kPage;
    }
    p->p_flags = g_loads[i].p_flags;
    p->p_align = kPage;
  }
  Elf32_Phdr* st = &ph[phnum - 1];
  st->p_type = PT_LOAD;
  st->p_vaddr = (uint32_t)(uintptr_t)g_stack;
  st->p_memsz = st->p_filesz = kStackSize;
  st->p_offset = stack_offset;
  st->p_flags = PF_R | PF_W;
  st->p_align = kPage;

  const int fd = open(g_core_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd < 0) die(g_core_path);
  static unsigned char head[2 * kPage];
  if (stack_offset > sizeof head) die("notes too large");
  memcpy(head, &eh, sizeof eh);
  memcpy(head + sizeof eh, ph, phnum * sizeof(Elf32_Phdr));
  memcpy(head + notes_offset, notes, notes_size);
  if (write(fd, head, stack_offset) != (ssize_t)stack_offset || write(fd, g_stack, kStackSize) != kStackSize)
    die("write");
  for (int i = 0; i < g_load_count; ++i)
    if (g_loads[i].p_offset == 0 && write(fd, (void*)(uintptr_t)(g_loads[i].p_vaddr & ~(kPage - 1u)), kPage) != kPage)
      die("write");
  close(fd);
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
  if (!realpath(argv[1], g_program)) die(argv[1]);
  g_core_path = argv[2];
  const int fd = open(g_program, O_RDONLY);
  struct stat sb;
  if (fd < 0 || fstat(fd, &sb) != 0) die(g_program);
  unsigned char* file = mmap(NULL, (size_t)sb.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
  if (file == MAP_FAILED) die("mmap");
  const Elf32_Ehdr* eh = (const void*)file;
  if ((size_t)sb.st_size < sizeof *eh || memcmp(eh->e_ident, ELFMAG, SELFMAG) != 0 ||
      eh->e_ident[EI_CLASS] != ELFCLASS32 || eh->e_machine != EM_X86_64 || eh->e_type != ET_EXEC ||
      eh->e_phoff + (size_t)eh->e_phnum * sizeof(Elf32_Phdr) > (size_t)sb.st_size) {
    fprintf(stderr, "%s: not a static x32 executable\n", g_program);
    return 2;
  }
  const Elf32_Phdr* ph = (const void*)(file + eh->e_phoff);
  for (int i = 0; i < eh->e_phnum; ++i) {
    if (ph[i].p_type != PT_LOAD) continue;
    if (g_load_count == kMaxLoads || ph[i].p_offset + (size_t)ph[i].p_filesz > (size_t)sb.st_size) {
      fprintf(stderr, "%s: unexpected segments\n", g_program);
      return 2;
    }
    g_loads[g_load_count++] = ph[i];
    const uintptr_t start = ph[i].p_vaddr & ~(uintptr_t)(kPage - 1);
    const size_t size = ph[i].p_vaddr + ph[i].p_memsz - start;
    void* at = mmap((void*)start, size, PROT_READ | PROT_WRITE | PROT_EXEC,
                    MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
    if (at != (void*)start) die("mapping a segment");
    memcpy((void*)(uintptr_t)ph[i].p_vaddr, file + ph[i].p_offset, ph[i].p_filesz);
  }
  g_stack = mmap(NULL, kStackSize, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_32BIT, -1, 0);
  if (g_stack == MAP_FAILED) die("mapping the stack");
  static unsigned char altstack[64 * 1024];
  const stack_t ss = {.ss_sp = altstack, .ss_size = sizeof altstack};
  struct sigaction sa = {.sa_sigaction = on_trap, .sa_flags = SA_SIGINFO | SA_ONSTACK | SA_NODEFER};
  if (sigaltstack(&ss, NULL) != 0 || sigaction(SIGILL, &sa, NULL) != 0) die("signals");
  // The program's stack as the kernel would start it: 16-byte aligned at the
  // top; its entry point is jumped to (nothing to return to).
  const uintptr_t top = ((uintptr_t)g_stack + kStackSize - 64) & ~(uintptr_t)15;
  __asm__ volatile("mov %0, %%rsp\n\tjmp *%1" : : "r"(top), "r"((uintptr_t)eh->e_entry) : "memory");
  __builtin_unreachable();
}

/* A jit that publishes its code through the GDB JIT interface: the ELF
 * object argv[1] (tests/jit/gdb_jit_code.S linked at a fixed address) has
 * its executable segment copied to that address, and the whole object is
 * registered in __jit_debug_descriptor's list, as LLVM's and V8's jits do.
 * Then main -> run_object -> gdbjit_outer -> gdbjit_inner -> c_block,
 * which prints "ready PID" and waits to be killed.
 *
 * argv[2] "loop": the list's only entry points back at itself as its own
 * successor and predecessor's successor (a reader must stop, not spin);
 * "wild": its symfile_addr points at unmapped memory; "jitdump": nothing
 * registered, the code described instead by ./jit-PID.dump (mapped
 * executable as its marker, as V8 and perf's agent map theirs): one
 * CODE_LOAD "gdbjit_code" from the code's start up to the object's
 * .eh_frame, after an UNWINDING_INFO with that .eh_frame (which perf's
 * readers place at the load's end, rounded up to 8: where it was linked)
 * and a DEBUG_INFO giving gdbjit_outer the line outer.js:11 and
 * gdbjit_inner inner.js:22;
 * "abort": registered as without a mode, and c_block aborts (a core with the
 * jit frames on the stack, as qemu-user writes one for tests/cross);
 * "list": as without a mode; "register": nothing published, the object's
 * .eh_frame copied to its address and registered with libgcc's
 * __register_frame (in libgcc's list of objects not yet searched);
 * "register-seen": as "register", then looked up once with
 * _Unwind_Find_FDE, which sorts it into libgcc's list of searched objects;
 * "register-abort" and "jitdump-abort": as "register" and "jitdump", and
 * c_block aborts. The "register" modes are not on 32-bit ARM, whose libgcc
 * has no registry (EHABI).
 *
 * argv[3] "spin", argv[4] S: c_block spins for about S seconds and returns
 * (samples taken under the jit frames), in any mode. */
#define _GNU_SOURCE
#include <elf.h>
#include <fcntl.h>
#include <link.h> /* ElfW: the machine's ELF class */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

struct jit_code_entry {
  struct jit_code_entry* next_entry;
  struct jit_code_entry* prev_entry;
  const char* symfile_addr;
  uint64_t symfile_size;
};
struct jit_descriptor {
  uint32_t version;
  uint32_t action_flag;
  struct jit_code_entry* relevant_entry;
  struct jit_code_entry* first_entry;
};

/* The names gdb looks for: not static, and the function not inlined away. */
struct jit_descriptor __jit_debug_descriptor = {1, 0, 0, 0};
void __attribute__((noinline)) __jit_debug_register_code(void) { __asm__ volatile("" ::: "memory"); }

static int abort_in_block; /* argv[2] "abort": c_block aborts (a core of the jit frames) */
static uint64_t spin_until;  /* argv[3] "spin": c_block spins until then (CLOCK_MONOTONIC ns) */

static uint64_t now_ns(void);

#if !defined(__arm__) /* ARM's libgcc unwinds by EHABI tables: no registry */
#define HAVE_REGISTER_FRAME 1
/* libgcc's (unwind-dw2-fde.h). */
struct dwarf_eh_bases {
  void* tbase;
  void* dbase;
  void* func;
};
void __register_frame(void* begin);
const void* _Unwind_Find_FDE(void* pc, struct dwarf_eh_bases* bases);
#endif

__attribute__((noinline)) void c_block(void) {
  if (spin_until) {
    while (now_ns() < spin_until) __asm__ volatile("" ::: "memory");
    return;
  }
  printf("ready %d\n", (int)getpid());
  fflush(stdout);
  if (abort_in_block) abort();
  for (;;) pause();
}

__attribute__((noinline)) void run_object(void (*outer)(void (*)(void))) {
  outer(c_block);
  __asm__ volatile("" ::: "memory");
}

static uint64_t now_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

static void put(FILE* f, const void* p, size_t n) { fwrite(p, 1, n, f); }
static void record_header(FILE* f, uint32_t id, uint32_t size) {
  const uint64_t t = now_ns();
  put(f, &id, 4);
  put(f, &size, 4);
  put(f, &t, 8);
}

/* ./jit-PID.dump for [code, code + size) named `name`, with `eh_frame`. */
/* The address of the object's symbol `name` (0: none). */
static uint64_t symbol_address(const char* image, const char* name) {
  const ElfW(Ehdr)* eh = (const ElfW(Ehdr)*)image;
  const ElfW(Shdr)* sh = (const ElfW(Shdr)*)(image + eh->e_shoff);
  for (int i = 0; i < eh->e_shnum; ++i) {
    if (sh[i].sh_type != SHT_SYMTAB) continue;
    const ElfW(Sym)* syms = (const ElfW(Sym)*)(image + sh[i].sh_offset);
    const char* strings = image + sh[sh[i].sh_link].sh_offset;
    for (size_t k = 0; k < sh[i].sh_size / sizeof *syms; ++k)
      if (strcmp(strings + syms[k].st_name, name) == 0) return syms[k].st_value;
  }
  return 0;
}

/* A DEBUG_INFO entry: an address, its line and its file. */
struct jit_line {
  uint64_t address;
  uint32_t line;
  const char* file;
};

static int write_jitdump(uint64_t code, uint64_t size, const char* name, const char* eh_frame, uint64_t eh_size,
                         const struct jit_line* lines, int nlines) {
  char path[64];
  snprintf(path, sizeof path, "jit-%d.dump", (int)getpid());
  FILE* f = fopen(path, "wb");
  if (!f) return -1;
  const uint32_t header[6] = {0x4A695444, 1, 40, EM_X86_64, 0, (uint32_t)getpid()};
  uint32_t h[6];
  memcpy(h, header, sizeof h);
#if defined(__aarch64__)
  h[3] = EM_AARCH64;
#elif defined(__arm__)
  h[3] = EM_ARM;
#elif defined(__s390x__)
  h[3] = EM_S390;
#endif
  put(f, h, sizeof h);
  const uint64_t t = now_ns(), flags = 0;
  put(f, &t, 8);
  put(f, &flags, 8);
  /* DEBUG_INFO: code_addr, nr_entry, then (addr, line, discrim, file). */
  uint32_t debug_size = 16 + 16;
  for (int k = 0; k < nlines; ++k) debug_size += 16 + (uint32_t)strlen(lines[k].file) + 1;
  record_header(f, 2, debug_size);
  const uint64_t debug_head[2] = {code, (uint64_t)nlines};
  put(f, debug_head, sizeof debug_head);
  for (int k = 0; k < nlines; ++k) {
    const uint32_t line_discrim[2] = {lines[k].line, 0};
    put(f, &lines[k].address, 8);
    put(f, line_discrim, sizeof line_discrim);
    put(f, lines[k].file, strlen(lines[k].file) + 1);
  }
  /* UNWINDING_INFO: sizes, then .eh_frame (no .eh_frame_hdr), padded to 8. */
  const uint64_t padded = (eh_size + 7) & ~(uint64_t)7;
  record_header(f, 4, (uint32_t)(16 + 24 + padded));
  const uint64_t sizes[3] = {padded, 0, 0};
  put(f, sizes, sizeof sizes);
  put(f, eh_frame, eh_size);
  for (uint64_t i = eh_size; i < padded; ++i) fputc(0, f);
  /* CODE_LOAD */
  const uint32_t ids[2] = {(uint32_t)getpid(), (uint32_t)getpid()};
  const uint64_t fields[4] = {code, code, size, 1};
  record_header(f, 0, (uint32_t)(16 + 8 + 32 + strlen(name) + 1 + size));
  put(f, ids, sizeof ids);
  put(f, fields, sizeof fields);
  put(f, name, strlen(name) + 1);
  put(f, (const void*)(uintptr_t)code, size);
  fclose(f);
  /* The marker: the file mapped executable. */
  const int fd = open(path, O_RDONLY);
  if (fd < 0) return -1;
  if (mmap(NULL, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, 0) == MAP_FAILED) return -1;
  close(fd);
  return 0;
}

int main(int argc, char** argv) {
  if (argc < 2) return 2;
  FILE* f = fopen(argv[1], "rb");
  if (!f) return 2;
  static char image[1 << 16];
  const size_t size = fread(image, 1, sizeof image, f);
  fclose(f);
  const ElfW(Ehdr)* eh = (const ElfW(Ehdr)*)image;
  if (size < sizeof *eh || memcmp(eh->e_ident, ELFMAG, SELFMAG) != 0) return 2;
  /* The executable segment, at its address. */
  const char* mode = argc > 2 ? argv[2] : "";
  uintptr_t outer = 0, code_start = 0, code_end = 0;
  for (int i = 0; i < eh->e_phnum; ++i) {
    const ElfW(Phdr)* ph = (const ElfW(Phdr)*)(image + eh->e_phoff + i * eh->e_phentsize);
    if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_X)) continue;
    const uintptr_t page = ph->p_vaddr & ~(uintptr_t)4095;
    const size_t length = (ph->p_vaddr + ph->p_memsz - page + 4095) & ~(size_t)4095;
    void* at = mmap((void*)page, length, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
    if (at != (void*)page) return 3;
    memcpy((void*)ph->p_vaddr, image + ph->p_offset, ph->p_filesz);
    /* qemu-user's cores leave out executable pages that begin with an ELF
     * header (a file's, it takes them for); the registered table is data
     * that must be in the core. */
    if (strncmp(mode, "register", 8) == 0 && memcmp((void*)page, ELFMAG, SELFMAG) == 0) *(char*)page = 0;
    if (mprotect(at, length, PROT_READ | PROT_EXEC) != 0) return 3;
    __builtin___clear_cache((char*)page, (char*)page + length);
    outer = eh->e_entry;
    code_start = page;
    code_end = page + length;
  }
  if (!outer) return 2;
  abort_in_block = strcmp(mode, "abort") == 0 || strcmp(mode, "register-abort") == 0 ||
                   strcmp(mode, "jitdump-abort") == 0;
  if (argc > 3 && strcmp(argv[3], "spin") == 0) spin_until = now_ns() + (uint64_t)((argc > 4 ? atof(argv[4]) : 1.0) * 1e9);
#ifdef HAVE_REGISTER_FRAME
  if (strncmp(mode, "register", 8) == 0) {
    const ElfW(Shdr)* sh = (const ElfW(Shdr)*)(image + eh->e_shoff);
    const char* names = image + sh[eh->e_shstrndx].sh_offset;
    for (int i = 0; i < eh->e_shnum; ++i) {
      if (strcmp(names + sh[i].sh_name, ".eh_frame") != 0) continue;
      /* At its link-time address (its pointers are pc-relative), with a zero
       * length word after it (the page is zeroed): what __register_frame
       * takes. Where the code's segment holds it, it is there already. */
      const int copied = sh[i].sh_addr >= code_start && sh[i].sh_addr + sh[i].sh_size + 4 <= code_end;
      if (!copied) {
        const uintptr_t page = sh[i].sh_addr & ~(uintptr_t)4095;
        const size_t length = (sh[i].sh_addr + sh[i].sh_size + 4 - page + 4095) & ~(size_t)4095;
        void* at = mmap((void*)page, length, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE,
                        -1, 0);
        if (at != (void*)page) return 3;
        memcpy((void*)sh[i].sh_addr, image + sh[i].sh_offset, sh[i].sh_size);
      }
      __register_frame((void*)sh[i].sh_addr);
      if (strcmp(mode, "register-seen") == 0) {
        struct dwarf_eh_bases bases;
        if (!_Unwind_Find_FDE((void*)(outer + 1), &bases)) return 5;
      }
    }
    run_object((void (*)(void (*)(void)))outer);
    return 0;
  }
#endif
  if (strncmp(mode, "jitdump", 7) == 0) {
    const ElfW(Shdr)* sh = (const ElfW(Shdr)*)(image + eh->e_shoff);
    const char* names = image + sh[eh->e_shstrndx].sh_offset;
    for (int i = 0; i < eh->e_shnum; ++i) {
      if (strcmp(names + sh[i].sh_name, ".eh_frame") != 0) continue;
      const uint64_t start = outer & ~(uint64_t)4095;  /* the code's page: .text's start */
      /* Source lines for the two functions, as a JIT gives its code's. */
      const struct jit_line lines[2] = {{symbol_address(image, "gdbjit_outer"), 11, "outer.js"},
                                        {symbol_address(image, "gdbjit_inner"), 22, "inner.js"}};
      if (write_jitdump(start, sh[i].sh_addr - start, "gdbjit_code", image + sh[i].sh_offset, sh[i].sh_size, lines,
                        2) != 0)
        return 4;
    }
    run_object((void (*)(void (*)(void)))outer);
    return 0;
  }
  /* The object, registered as a jit registers it. */
  static struct jit_code_entry entry;
  char* copy = malloc(size);
  memcpy(copy, image, size);
  entry.symfile_addr = copy;
  entry.symfile_size = size;
  if (strcmp(mode, "loop") == 0) entry.next_entry = &entry;
  if (strcmp(mode, "wild") == 0) entry.symfile_addr = (const char*)(uintptr_t)0x10;
  __jit_debug_descriptor.first_entry = &entry;
  __jit_debug_descriptor.relevant_entry = &entry;
  __jit_debug_descriptor.action_flag = 1; /* JIT_REGISTER */
  __jit_debug_register_code();
  run_object((void (*)(void (*)(void)))outer);
  return 0;
}

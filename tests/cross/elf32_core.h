// What the harnesses that run a 32-bit program's code inside a 64-bit
// process of the same byte order share (tests/cross/x32/make_core.c,
// tests/cross/s390/make_core.c): mapping a static ELFCLASS32 executable's
// PT_LOAD segments at their addresses, and writing the core its kernel
// would write: the notes the harness makes (NT_PRSTATUS in the machine's
// 32-bit layout, ...) and NT_FILE naming the program, its segments without
// contents (as the kernel leaves file pages out, but for the first page:
// its ELF header), and the contents of the threads' stacks. Header-only:
// each harness is one translation unit, and the core is written from a
// signal handler (static buffers, no allocation).
//
// The cores have two threads (chain32.c): the main thread, run first (the
// program entered with 1, its thread id the process id), waits in a join
// until its trap; the harness keeps its registers and enters the program
// again on the other stack with 0: the crashing thread (thread id the
// process id + 1), written first as the kernel writes the dumping thread.
#pragma once

#include <elf.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#ifndef NT_FILE
#define NT_FILE 0x46494c45
#endif

enum { kMaxLoads = 8, kMaxStacks = 2, kPage = 4096, kStackSize = 64 * 1024 };

// The threads' stacks: the crashing thread's, the joining main thread's.
enum { kCrashing, kJoining };
struct stack32 {
  unsigned char* base;
  uintptr_t top;  // where the program is entered: `align`-aligned, 64 bytes below the end
};

static void set_stack32(struct stack32* s, void* base, uintptr_t align) {
  s->base = base;
  s->top = ((uintptr_t)base + kStackSize - 64) & ~(align - 1);
}

struct program32 {
  char path[PATH_MAX];
  Elf32_Phdr loads[kMaxLoads];
  int load_count;
  Elf32_Addr entry;
};

static void die(const char* what) {
  perror(what);
  _exit(2);
}

// Maps the static ELFCLASS32 executable `path` of `machine`: its PT_LOAD
// segments at their addresses, writable and executable.
static void load_program32(const char* path, uint16_t machine, struct program32* p) {
  if (!realpath(path, p->path)) die(path);
  const int fd = open(p->path, O_RDONLY);
  struct stat sb;
  if (fd < 0 || fstat(fd, &sb) != 0) die(p->path);
  unsigned char* file = mmap(NULL, (size_t)sb.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
  if (file == MAP_FAILED) die("mmap");
  const Elf32_Ehdr* eh = (const void*)file;
  if ((size_t)sb.st_size < sizeof *eh || memcmp(eh->e_ident, ELFMAG, SELFMAG) != 0 ||
      eh->e_ident[EI_CLASS] != ELFCLASS32 || eh->e_machine != machine || eh->e_type != ET_EXEC ||
      eh->e_phoff + (size_t)eh->e_phnum * sizeof(Elf32_Phdr) > (size_t)sb.st_size) {
    fprintf(stderr, "%s: not a static ELFCLASS32 executable of machine %u\n", p->path, machine);
    _exit(2);
  }
  p->entry = eh->e_entry;
  const Elf32_Phdr* ph = (const void*)(file + eh->e_phoff);
  for (int i = 0; i < eh->e_phnum; ++i) {
    if (ph[i].p_type != PT_LOAD) continue;
    if (p->load_count == kMaxLoads || ph[i].p_offset + (size_t)ph[i].p_filesz > (size_t)sb.st_size) {
      fprintf(stderr, "%s: unexpected segments\n", p->path);
      _exit(2);
    }
    p->loads[p->load_count++] = ph[i];
    const uintptr_t start = ph[i].p_vaddr & ~(uintptr_t)(kPage - 1);
    const size_t size = ph[i].p_vaddr + ph[i].p_memsz - start;
    void* at = mmap((void*)start, size, PROT_READ | PROT_WRITE | PROT_EXEC,
                    MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
    if (at != (void*)start) die("mapping a segment");
    memcpy((void*)(uintptr_t)ph[i].p_vaddr, file + ph[i].p_offset, ph[i].p_filesz);
  }
}

// The 4-byte-aligned note: header, "CORE\0" padded, then the descriptor.
static size_t put_note(unsigned char* out, uint32_t type, const void* desc, uint32_t size) {
  Elf32_Nhdr h = {5, size, type};
  memcpy(out, &h, sizeof h);
  memcpy(out + sizeof h, "CORE\0\0\0", 8);
  memcpy(out + sizeof h + 8, desc, size);
  return sizeof h + 8 + ((size + 3u) & ~3u);
}

// NT_FILE: count, page size, (start, end, page offset) each, the names.
static size_t put_file_note(unsigned char* out, const struct program32* p) {
  static uint32_t file_note[512];
  size_t words = 0;
  file_note[words++] = (uint32_t)p->load_count;
  file_note[words++] = kPage;
  for (int i = 0; i < p->load_count; ++i) {
    file_note[words++] = p->loads[i].p_vaddr & ~(kPage - 1u);
    file_note[words++] = (p->loads[i].p_vaddr + p->loads[i].p_memsz + kPage - 1u) & ~(kPage - 1u);
    file_note[words++] = (p->loads[i].p_offset & ~(kPage - 1u)) / kPage;
  }
  size_t file_size = words * 4;
  for (int i = 0; i < p->load_count; ++i) {
    const size_t n = strlen(p->path) + 1;
    memcpy((char*)file_note + file_size, p->path, n);
    file_size += n;
  }
  return put_note(out, NT_FILE, file_note, (uint32_t)file_size);
}

// Writes the core: the ELF header of `machine` in this process's byte
// order, PT_NOTE with `notes`, the program's segments, and the `count`
// stacks (kStackSize each, the program below them), PT_LOADs in address order.
static void write_core32(const char* core_path, uint16_t machine, const struct program32* p, const unsigned char* notes,
                         size_t notes_size, const struct stack32* stacks, int count) {
  const unsigned char* sorted[kMaxStacks];
  for (int i = 0; i < count; ++i) {
    int at = i;
    for (; at > 0 && sorted[at - 1] > stacks[i].base; --at) sorted[at] = sorted[at - 1];
    sorted[at] = stacks[i].base;
  }
  const size_t stack_size = (size_t)count * kStackSize;
  const int phnum = 1 + p->load_count + count;
  const uint32_t notes_offset = sizeof(Elf32_Ehdr) + phnum * sizeof(Elf32_Phdr);
  const uint32_t stack_offset = (notes_offset + notes_size + kPage - 1u) & ~(kPage - 1u);
  Elf32_Ehdr eh = {0};
  memcpy(eh.e_ident, ELFMAG, SELFMAG);
  eh.e_ident[EI_CLASS] = ELFCLASS32;
  eh.e_ident[EI_DATA] = __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__ ? ELFDATA2MSB : ELFDATA2LSB;
  eh.e_ident[EI_VERSION] = EV_CURRENT;
  eh.e_type = ET_CORE;
  eh.e_machine = machine;
  eh.e_version = EV_CURRENT;
  eh.e_phoff = sizeof eh;
  eh.e_ehsize = sizeof eh;
  eh.e_phentsize = sizeof(Elf32_Phdr);
  eh.e_phnum = (Elf32_Half)phnum;
  Elf32_Phdr ph[1 + kMaxLoads + kMaxStacks] = {{0}};
  uint32_t data_offset = stack_offset + stack_size;  // the first page of the file, after the stacks
  ph[0].p_type = PT_NOTE;
  ph[0].p_offset = notes_offset;
  ph[0].p_filesz = (uint32_t)notes_size;
  ph[0].p_align = 4;
  for (int i = 0; i < p->load_count; ++i) {
    Elf32_Phdr* load = &ph[1 + i];
    load->p_type = PT_LOAD;
    load->p_vaddr = p->loads[i].p_vaddr & ~(kPage - 1u);
    load->p_memsz = ((p->loads[i].p_vaddr + p->loads[i].p_memsz + kPage - 1u) & ~(kPage - 1u)) - load->p_vaddr;
    load->p_offset = data_offset;
    load->p_filesz = 0;
    if (p->loads[i].p_offset == 0) {
      load->p_filesz = kPage;
      data_offset += kPage;
    }
    load->p_flags = p->loads[i].p_flags;
    load->p_align = kPage;
  }
  for (int i = 0; i < count; ++i) {
    Elf32_Phdr* st = &ph[1 + p->load_count + i];
    st->p_type = PT_LOAD;
    st->p_vaddr = (uint32_t)(uintptr_t)sorted[i];
    st->p_memsz = st->p_filesz = kStackSize;
    st->p_offset = stack_offset + i * kStackSize;
    st->p_flags = PF_R | PF_W;
    st->p_align = kPage;
  }

  const int fd = open(core_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd < 0) die(core_path);
  static unsigned char head[2 * kPage];
  if (stack_offset > sizeof head) die("notes too large");
  memcpy(head, &eh, sizeof eh);
  memcpy(head + sizeof eh, ph, phnum * sizeof(Elf32_Phdr));
  memcpy(head + notes_offset, notes, notes_size);
  if (write(fd, head, stack_offset) != (ssize_t)stack_offset) die("write");
  for (int i = 0; i < count; ++i)
    if (write(fd, sorted[i], kStackSize) != kStackSize) die("write");
  for (int i = 0; i < p->load_count; ++i)
    if (p->loads[i].p_offset == 0 &&
        write(fd, (void*)(uintptr_t)(p->loads[i].p_vaddr & ~(kPage - 1u)), kPage) != kPage)
      die("write");
  close(fd);
}

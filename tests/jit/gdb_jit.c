/* A jit that publishes its code through the GDB JIT interface: the ELF
 * object argv[1] (tests/jit/gdb_jit_code.S linked at a fixed address) has
 * its executable segment copied to that address, and the whole object is
 * registered in __jit_debug_descriptor's list, as LLVM's and V8's jits do.
 * Then main -> run_object -> gdbjit_outer -> gdbjit_inner -> c_block,
 * which prints "ready PID" and waits to be killed.
 *
 * argv[2] "loop": the list's only entry points back at itself as its own
 * successor and predecessor's successor (a reader must stop, not spin);
 * "wild": its symfile_addr points at unmapped memory. */
#define _GNU_SOURCE
#include <elf.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
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

__attribute__((noinline)) void c_block(void) {
  printf("ready %d\n", (int)getpid());
  fflush(stdout);
  for (;;) pause();
}

__attribute__((noinline)) void run_object(void (*outer)(void (*)(void))) {
  outer(c_block);
  __asm__ volatile("" ::: "memory");
}

int main(int argc, char** argv) {
  if (argc < 2) return 2;
  FILE* f = fopen(argv[1], "rb");
  if (!f) return 2;
  static char image[1 << 16];
  const size_t size = fread(image, 1, sizeof image, f);
  fclose(f);
  const Elf64_Ehdr* eh = (const Elf64_Ehdr*)image;
  if (size < sizeof *eh || memcmp(eh->e_ident, ELFMAG, SELFMAG) != 0) return 2;
  /* The executable segment, at its address. */
  uintptr_t outer = 0;
  for (int i = 0; i < eh->e_phnum; ++i) {
    const Elf64_Phdr* ph = (const Elf64_Phdr*)(image + eh->e_phoff + i * eh->e_phentsize);
    if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_X)) continue;
    const uintptr_t page = ph->p_vaddr & ~(uintptr_t)4095;
    const size_t length = (ph->p_vaddr + ph->p_memsz - page + 4095) & ~(size_t)4095;
    void* at = mmap((void*)page, length, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
    if (at != (void*)page) return 3;
    memcpy((void*)ph->p_vaddr, image + ph->p_offset, ph->p_filesz);
    if (mprotect(at, length, PROT_READ | PROT_EXEC) != 0) return 3;
    __builtin___clear_cache((char*)page, (char*)page + length);
    outer = eh->e_entry;
  }
  if (!outer) return 2;
  /* The object, registered as a jit registers it. */
  static struct jit_code_entry entry;
  char* copy = malloc(size);
  memcpy(copy, image, size);
  entry.symfile_addr = copy;
  entry.symfile_size = size;
  const char* mode = argc > 2 ? argv[2] : "";
  if (strcmp(mode, "loop") == 0) entry.next_entry = &entry;
  if (strcmp(mode, "wild") == 0) entry.symfile_addr = (const char*)(uintptr_t)0x10;
  __jit_debug_descriptor.first_entry = &entry;
  __jit_debug_descriptor.relevant_entry = &entry;
  __jit_debug_descriptor.action_flag = 1; /* JIT_REGISTER */
  __jit_debug_register_code();
  run_object((void (*)(void (*)(void)))outer);
  return 0;
}

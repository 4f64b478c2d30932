/* A user back-end: replays a snapshot directory (as `framewalk stack
 * --save-snapshot DIR` writes it: machine, maps, TID.regs, TID.stack, code)
 * through the C API's callbacks, the way a crash reporter or a debugger
 * plugs in its own registers and memory.  replay_backend DIR */
#include <dirent.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <framewalk/framewalk.h>

#define MAX_THREADS 64

struct block {
  uint64_t address;
  size_t size;
  unsigned char *bytes;
};
struct thread {
  int tid;
  struct block blocks[16];
  int count;
};
struct snapshot {
  const char *dir;
  struct thread threads[MAX_THREADS];
  int count;
  struct thread code; /* code without a file (the vDSO, qemu's signal trampoline) */
};

static FILE *open_in(const struct snapshot *s, const char *name, const char *mode) {
  char path[4096];
  snprintf(path, sizeof path, "%s/%s", s->dir, name);
  return fopen(path, mode);
}

/* Process level: the threads in order. */
static int next_thread(void *arg, int after) {
  const struct snapshot *s = arg;
  for (int i = 0; i < s->count; ++i)
    if (after == 0 || s->threads[i].tid == after) return after == 0 ? s->threads[i].tid : i + 1 < s->count ? s->threads[i + 1].tid : 0;
  return -1;
}

/* Thread level: the registers, one range of DWARF numbers at a time. */
static int set_initial_registers(void *arg, int tid, fw_thread_state *state) {
  char name[64];
  snprintf(name, sizeof name, "%d.regs", tid);
  FILE *f = open_in(arg, name, "r");
  if (!f) return -1;
  unsigned reg;
  uint64_t value;
  while (fscanf(f, "%u %" SCNx64, &reg, &value) == 2)
    if (fw_thread_state_set_registers(state, reg, 1, &value) != FW_OK) break;
  fclose(f);
  return 0;
}

static size_t read_blocks(const struct thread *t, uint64_t address, void *out, size_t size) {
  for (int k = 0; k < t->count; ++k) {
    const struct block *b = &t->blocks[k];
    if (address < b->address || address - b->address >= b->size) continue;
    const size_t off = (size_t)(address - b->address);
    const size_t n = size < b->size - off ? size : b->size - off;
    memcpy(out, b->bytes + off, n);
    return n;
  }
  return 0;
}

/* Memory: the stacks saved and the code without a file; the rest of the
 * code comes from the files. */
static size_t memory_read(void *arg, uint64_t address, void *out, size_t size) {
  const struct snapshot *s = arg;
  for (int i = 0; i < s->count; ++i) {
    const size_t n = read_blocks(&s->threads[i], address, out, size);
    if (n) return n;
  }
  return read_blocks(&s->code, address, out, size);
}

/* Which files are mapped where: the maps file's executable lines. */
static int report_mappings(void *arg, fw_mappings *mappings) {
  FILE *f = open_in(arg, "maps", "r");
  if (!f) return -1;
  char line[4096], perms[8], path[4096];
  uint64_t start, end, offset;
  while (fgets(line, sizeof line, f)) {
    path[0] = '\0';
    if (sscanf(line, "%" SCNx64 "-%" SCNx64 " %7s %" SCNx64 " %*s %*s %4095s", &start, &end, perms, &offset, path) >= 4 &&
        perms[2] == 'x' && path[0])
      fw_mappings_add(mappings, start, end, offset, path);
  }
  fclose(f);
  return 0;
}

/* A blocks file (TID.stack, code): address, size (8 bytes each, little-endian), bytes. */
static void load_blocks(const struct snapshot *s, const char *name, struct thread *t) {
  FILE *f = open_in(s, name, "rb");
  unsigned char head[16];
  while (f && t->count < 16 && fread(head, 1, 16, f) == 16) {
    struct block *b = &t->blocks[t->count];
    uint64_t size = 0;
    b->address = 0;
    for (int i = 7; i >= 0; --i) {
      b->address = b->address << 8 | head[i];
      size = size << 8 | head[8 + i];
    }
    if (size > (64u << 20) || !(b->bytes = malloc(size ? size : 1))) break;
    b->size = fread(b->bytes, 1, size, f);
    ++t->count;
    if (b->size != size) break;
  }
  if (f) fclose(f);
}

static void load_stacks(struct snapshot *s) {
  DIR *d = opendir(s->dir);
  for (struct dirent *e; d && (e = readdir(d)) && s->count < MAX_THREADS;) {
    int tid;
    char rest[16];
    if (sscanf(e->d_name, "%d.%15s", &tid, rest) != 2 || strcmp(rest, "regs") != 0) continue;
    struct thread *t = &s->threads[s->count++];
    memset(t, 0, sizeof *t);
    t->tid = tid;
    char name[64];
    snprintf(name, sizeof name, "%d.stack", tid);
    load_blocks(s, name, t);
  }
  load_blocks(s, "code", &s->code);
  if (d) closedir(d);
  for (int i = 1; i < s->count; ++i) /* in the order of their ids */
    for (int j = i; j > 0 && s->threads[j].tid < s->threads[j - 1].tid; --j) {
      struct thread tmp = s->threads[j];
      s->threads[j] = s->threads[j - 1];
      s->threads[j - 1] = tmp;
    }
}

static fw_walk_action print_frame(const fw_frame *frame, void *arg) {
  (void)arg;
  uint64_t offset = 0;
  const char *function = fw_frame_function(frame, &offset);
  printf("#%-2zu 0x%016" PRIx64 " %s+0x%" PRIx64 " [%s]\n", fw_frame_index(frame), fw_frame_pc(frame),
         function ? function : "??", offset, fw_frame_source_name(fw_frame_get_source(frame)));
  return FW_CONTINUE;
}

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: replay_backend SNAPSHOT-DIR\n");
    return 2;
  }
  struct snapshot s = {argv[1], {{0}}, 0, {0}};
  load_stacks(&s);
  char machine[16] = "";
  FILE *f = open_in(&s, "machine", "r");
  if (!f || fscanf(f, "%15s", machine) != 1) {
    fprintf(stderr, "replay_backend: %s/machine: unreadable\n", argv[1]);
    return 2;
  }
  fclose(f);
  fw_backend backend = {sizeof backend, 0, 0, next_thread, NULL, set_initial_registers, memory_read, NULL,
                        report_mappings};
  backend.machine = strcmp(machine, "aarch64") == 0   ? 183
                    : strcmp(machine, "arm") == 0     ? 40
                    : strcmp(machine, "ppc64le") == 0 ? 21
                    : strcmp(machine, "ppc") == 0     ? 20
                    : strcmp(machine, "s390x") == 0   ? 22
                    : strcmp(machine, "riscv64") == 0 ? 243
                    : strcmp(machine, "sparc64") == 0 ? 43
                                                      : 62;
  fw_context *context = fw_context_new();
  fw_target *target = NULL;
  if (fw_target_backend(context, &backend, &s, &target) != FW_OK) {
    fprintf(stderr, "replay_backend: %s\n", fw_last_error());
    return 2;
  }
  for (int tid = 0; fw_next_thread(target, tid, &tid) == FW_OK && tid != 0;) {
    fw_walk_end end;
    printf("TID %d:\n", tid);
    const fw_walk_options options = {sizeof options, 100000, 0}; /* a stack overflow's frames too */
    if (fw_walk(target, tid, print_frame, NULL, &options, &end) != FW_OK) printf("  (%s)\n", fw_last_error());
    else printf("  stop: %s\n", end.message);
  }
  fw_target_free(target);
  fw_context_free(context);
  for (int i = 0; i < s.count; ++i)
    for (int k = 0; k < s.threads[i].count; ++k) free(s.threads[i].blocks[k].bytes);
  return 0;
}

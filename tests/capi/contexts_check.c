/* Contexts and threads, through the C API alone.
 *   contexts_check threads CORE EXECUTABLE
 *     two threads, each with a context of its own, walk every thread of the
 *     core 25 times at once and must see the same frames as a walk alone
 *     (CI builds this under ThreadSanitizer too: no data race between them);
 *   contexts_check reuse CORE EXECUTABLE N
 *     one context opens, walks and frees N targets of the core: its memory
 *     (resident set) may not grow after the first tenth by more than 4 MiB.
 * Exit status 0 when every check holds. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <framewalk/framewalk.h>

#define MAX_PCS 512

struct walk_result {
  uint64_t pcs[MAX_PCS];
  size_t count;
};

static const char *g_core, *g_exe;

static fw_walk_action record(const fw_frame *frame, void *arg) {
  struct walk_result *r = arg;
  if (r->count == MAX_PCS) return FW_STOP;
  uint64_t offset = 0;
  (void)fw_frame_function(frame, &offset); /* the symbol tables are read too */
  r->pcs[r->count++] = fw_frame_pc(frame);
  return FW_CONTINUE;
}

/* Every thread's PCs, one after another, into `out`; 0 on success. */
static int walk_core(fw_context *context, struct walk_result *out) {
  fw_target *target = NULL;
  if (fw_target_core(context, g_core, g_exe, &target) != FW_OK) {
    fprintf(stderr, "open: %s\n", fw_last_error());
    return 1;
  }
  memset(out, 0, sizeof *out);
  int failed = 0;
  for (int tid = 0; fw_next_thread(target, tid, &tid) == FW_OK && tid != 0;)
    if (fw_walk(target, tid, record, out, NULL, NULL) != FW_OK) failed = 1;
  fw_target_free(target);
  return failed;
}

static struct walk_result g_alone;

static void *walker(void *arg) {
  (void)arg;
  fw_context *context = fw_context_new();
  long mismatches = 0;
  for (int i = 0; i < 25; ++i) {
    struct walk_result r;
    if (walk_core(context, &r) != 0 || r.count != g_alone.count ||
        memcmp(r.pcs, g_alone.pcs, r.count * sizeof r.pcs[0]) != 0)
      ++mismatches;
  }
  fw_context_free(context);
  return (void *)mismatches;
}

static long resident_kib(void) {
  FILE *f = fopen("/proc/self/statm", "r");
  long pages = 0, resident = 0;
  if (f) {
    if (fscanf(f, "%ld %ld", &pages, &resident) != 2) resident = 0;
    fclose(f);
  }
  return resident * 4;
}

int main(int argc, char **argv) {
  if (argc < 4) {
    fprintf(stderr, "usage: contexts_check threads|reuse CORE EXECUTABLE [N]\n");
    return 2;
  }
  g_core = argv[2];
  g_exe = argv[3];
  if (strcmp(argv[1], "threads") == 0) {
    fw_context *context = fw_context_new();
    if (walk_core(context, &g_alone) != 0 || g_alone.count == 0) {
      printf("FAIL: the core alone gives no frames\n");
      return 1;
    }
    fw_context_free(context);
    pthread_t a, b;
    void *ra, *rb;
    pthread_create(&a, NULL, walker, NULL);
    pthread_create(&b, NULL, walker, NULL);
    pthread_join(a, &ra);
    pthread_join(b, &rb);
    printf("%s: 2 threads x 25 walks of %zu frames, %ld and %ld differed from the walk alone\n",
           ra || rb ? "FAIL" : "OK", g_alone.count, (long)ra, (long)rb);
    return ra || rb ? 1 : 0;
  }
  const int n = argc > 4 ? atoi(argv[4]) : 1000;
  fw_context *context = fw_context_new();
  long after_tenth = 0;
  struct walk_result first, r;
  if (walk_core(context, &first) != 0) return 1;
  for (int i = 1; i < n; ++i) {
    if (walk_core(context, &r) != 0 || r.count != first.count) {
      printf("FAIL: target %d walked differently\n", i);
      return 1;
    }
    if (i == n / 10) after_tenth = resident_kib();
  }
  const long end = resident_kib();
  fw_context_free(context);
  const int ok = end - after_tenth <= 4096;
  printf("%s: one context, %d targets: resident %ld KiB after %d, %ld KiB after %d (%+ld KiB)\n", ok ? "OK" : "FAIL", n,
         after_tenth, n / 10, end, n, end - after_tenth);
  return ok ? 0 : 1;
}

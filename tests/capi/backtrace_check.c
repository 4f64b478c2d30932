/* The checks elfutils' backtrace test makes, through the C API alone: the
 * thread stopped in raise from a signal handler shows, in order, the
 * handler, the signal frame, the interrupted raise (an activation), then
 * level3, level2, level1 and thread_start (return addresses); the main
 * thread shows main below pthread_join; both walks end at the outermost
 * frame, and only frame 0 and the frame a signal interrupted are activations.
 *   backtrace_check live PID process|thread|copy
 *   backtrace_check core CORE EXECUTABLE
 * Exit status 0 when every check holds; each failure is printed. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <framewalk/framewalk.h>

#define MAX_FRAMES 64

struct walked {
  int count;
  char names[MAX_FRAMES][128];
  int activation[MAX_FRAMES];
};

static fw_walk_action record(const fw_frame *frame, void *arg) {
  struct walked *w = arg;
  if (w->count == MAX_FRAMES) return FW_STOP;
  const char *function = fw_frame_function(frame, NULL);
  snprintf(w->names[w->count], sizeof w->names[0], "%s", function ? function : "??");
  w->activation[w->count] = fw_frame_is_activation(frame);
  ++w->count;
  return FW_CONTINUE;
}

static int failures = 0;

static void check(int ok, const char *what, int tid) {
  if (!ok) {
    printf("FAIL thread %d: %s\n", tid, what);
    ++failures;
  }
}

static int find(const struct walked *w, const char *name, int from) {
  for (int i = from; i < w->count; ++i)
    if (strcmp(w->names[i], name) == 0) return i;
  return -1;
}

static void check_signal_thread(const struct walked *w, int tid) {
  const char *chain[] = {"sigusr2_handler", "level3", "level2", "level1", "thread_start"};
  int at = 0;
  int where[5];
  for (int k = 0; k < 5; ++k) {
    where[k] = find(w, chain[k], at);
    char what[160];
    snprintf(what, sizeof what, "%s missing or out of order", chain[k]);
    check(where[k] >= 0, what, tid);
    if (where[k] < 0) return;
    at = where[k] + 1;
  }
  /* Between the handler and level3: the signal frame, then the interrupted
   * raise, an activation (its PC is exact). */
  int interrupted = -1;
  for (int i = where[0] + 1; i < where[1]; ++i)
    if (w->activation[i]) interrupted = i;
  check(interrupted > where[0] + 1, "no activation between the signal frame and level3 (the interrupted raise)", tid);
  check(w->activation[0] == 1, "frame 0 is not an activation", tid);
  for (int i = 1; i < w->count; ++i) {
    if (i == interrupted) continue;
    char what[200];
    snprintf(what, sizeof what, "frame %d (%s) is an activation", i, w->names[i]);
    check(w->activation[i] == 0, what, tid);
  }
}

static void check_main_thread(const struct walked *w, int tid) {
  const int m = find(w, "main", 0);
  check(m > 0, "main missing (or frame 0)", tid);
  int join = -1;
  for (int i = 0; i < m; ++i)
    if (strstr(w->names[i], "pthread_join") || strstr(w->names[i], "pthread_clockjoin")) join = i;
  check(join >= 0, "no pthread_join frame above main", tid);
  check(w->activation[0] == 1, "frame 0 is not an activation", tid);
  for (int i = 1; i < w->count; ++i) check(w->activation[i] == 0, "a frame after 0 is an activation", tid);
}

int main(int argc, char **argv) {
  if (argc != 4) {
    fprintf(stderr, "usage: backtrace_check live PID process|thread|copy | core CORE EXECUTABLE\n");
    return 2;
  }
  fw_context *context = fw_context_new();
  fw_target *target = NULL;
  fw_status s;
  if (strcmp(argv[1], "live") == 0) {
    const fw_freeze freeze = strcmp(argv[3], "thread") == 0 ? FW_FREEZE_THREAD
                             : strcmp(argv[3], "copy") == 0 ? FW_FREEZE_COPY
                                                            : FW_FREEZE_PROCESS;
    s = fw_target_attach(context, atoi(argv[2]), freeze, &target);
  } else {
    s = fw_target_core(context, argv[2], argv[3], &target);
  }
  if (s != FW_OK) {
    printf("FAIL open: %s\n", fw_last_error());
    return 1;
  }
  int threads = 0, signal_threads = 0, main_threads = 0;
  for (int tid = 0; (s = fw_next_thread(target, tid, &tid)) == FW_OK && tid != 0;) {
    struct walked w;
    memset(&w, 0, sizeof w);
    fw_walk_end end;
    ++threads;
    if (fw_walk(target, tid, record, &w, NULL, &end) != FW_OK) {
      printf("FAIL thread %d: %s\n", tid, fw_last_error());
      ++failures;
      continue;
    }
    printf("thread %d:", tid);
    for (int i = 0; i < w.count; ++i) printf(" %s%s", w.names[i], w.activation[i] ? "*" : "");
    printf(" (%s)\n", end.message);
    check(end.end == FW_END_OUTERMOST, "the walk did not reach the outermost frame", tid);
    check(end.frames == (size_t)w.count, "fw_walk_end.frames is not the frames seen", tid);
    if (find(&w, "sigusr2_handler", 0) >= 0) {
      ++signal_threads;
      check_signal_thread(&w, tid);
    } else {
      ++main_threads;
      check_main_thread(&w, tid);
    }
  }
  if (s != FW_OK) {
    printf("FAIL threads: %s\n", fw_last_error());
    ++failures;
  }
  if (threads != 2 || signal_threads != 1 || main_threads != 1) {
    printf("FAIL: %d threads, %d with the handler, %d without (want 2, 1, 1)\n", threads, signal_threads, main_threads);
    ++failures;
  }
  fw_target_free(target);
  fw_context_free(context);
  printf("%s\n", failures ? "FAILED" : "OK");
  return failures ? 1 : 0;
}

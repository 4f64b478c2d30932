/* Every thread's frames through the C API alone, as JSON, for comparison with
 * `framewalk stack --format=json` (tests/stack/compare_with_gdb.py --api):
 *   api_stack live PID process|thread|copy
 *   api_stack core CORE
 *   api_stack snapshot DIR
 * {"threads":[{"tid":N,"pcs":["0x...",...],"functions":["name"|null,...],"stop":"outermost"},...]} */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <framewalk/framewalk.h>

/* Each frame's PC and function name, kept for the two lists. */
struct frames {
  int count;
  uint64_t pcs[4096];
  char *names[4096];
};

static fw_walk_action keep_frame(const fw_frame *frame, void *arg) {
  struct frames *f = arg;
  if (f->count == 4096) return FW_STOP;
  const char *name = fw_frame_function(frame, NULL);
  f->pcs[f->count] = fw_frame_pc(frame);
  f->names[f->count] = NULL;
  if (name && (f->names[f->count] = malloc(strlen(name) + 1)) != NULL) strcpy(f->names[f->count], name);
  ++f->count;
  return FW_CONTINUE;
}

/* A JSON string (names may hold quotes and backslashes). */
static void print_string(const char *s) {
  putchar('"');
  for (; *s; ++s) {
    if (*s == '"' || *s == '\\') putchar('\\');
    if ((unsigned char)*s < 0x20) printf("\\u%04x", *s);
    else putchar(*s);
  }
  putchar('"');
}

int main(int argc, char **argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: api_stack live PID process|thread|copy | core CORE | snapshot DIR\n");
    return 2;
  }
  fw_context *context = fw_context_new();
  fw_target *target = NULL;
  fw_status s;
  if (strcmp(argv[1], "live") == 0) {
    const char *freeze = argc > 3 ? argv[3] : "process";
    s = fw_target_attach(context, atoi(argv[2]), strcmp(freeze, "thread") == 0 ? FW_FREEZE_THREAD
                                                 : strcmp(freeze, "copy") == 0 ? FW_FREEZE_COPY
                                                                                : FW_FREEZE_PROCESS, &target);
  } else if (strcmp(argv[1], "snapshot") == 0) {
    s = fw_target_snapshot(context, argv[2], &target);
  } else {
    s = fw_target_core(context, argv[2], NULL, &target);
  }
  if (s != FW_OK) {
    fprintf(stderr, "api_stack: %s\n", fw_last_error());
    return 2;
  }
  const fw_walk_options options = {sizeof options, 4096, 0};
  printf("{\"threads\":[");
  int first = 1;
  for (int tid = 0; fw_next_thread(target, tid, &tid) == FW_OK && tid != 0;) {
    printf("%s\n{\"tid\":%d,\"pcs\":[", first ? "" : ",", tid);
    first = 0;
    static struct frames f;
    f.count = 0;
    fw_walk_end end;
    const fw_status walked = fw_walk(target, tid, keep_frame, &f, &options, &end);
    for (int i = 0; i < f.count; ++i) printf("%s\"0x%" PRIx64 "\"", i ? "," : "", f.pcs[i]);
    printf("],\"functions\":[");
    for (int i = 0; i < f.count; ++i) {
      if (i) putchar(',');
      if (f.names[i]) print_string(f.names[i]);
      else printf("null");
      free(f.names[i]);
    }
    if (walked != FW_OK) {
      printf("],\"stop\":\"unreadable\"}");
      continue;
    }
    char stop[64];
    sscanf(end.message, "%63s", stop);
    printf("],\"stop\":\"%s\"}", stop);
  }
  printf("]}\n");
  fw_target_free(target);
  fw_context_free(context);
  return 0;
}

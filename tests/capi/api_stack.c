/* Every thread's frames through the C API alone, as JSON, for comparison with
 * `framewalk stack --format=json` (tests/stack/compare_with_gdb.py --api):
 *   api_stack live PID process|thread|copy
 *   api_stack core CORE
 * {"threads":[{"tid":N,"pcs":["0x...",...],"stop":"outermost"},...]} */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <framewalk/framewalk.h>

static fw_walk_action print_pc(const fw_frame *frame, void *arg) {
  int *count = arg;
  printf("%s\"0x%" PRIx64 "\"", (*count)++ ? "," : "", fw_frame_pc(frame));
  return FW_CONTINUE;
}

int main(int argc, char **argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: api_stack live PID process|thread|copy | core CORE\n");
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
    int count = 0;
    fw_walk_end end;
    if (fw_walk(target, tid, print_pc, &count, &options, &end) != FW_OK) {
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

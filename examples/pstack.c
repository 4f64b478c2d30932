/* pstack: every thread's stack of a live process or a core, through the C
 * API (<framewalk/framewalk.h>).  pstack PID | pstack CORE [EXECUTABLE] */
#include <stdio.h>
#include <stdlib.h>

#include <framewalk/framewalk.h>

static fw_walk_action print_frame(const fw_frame *frame, void *arg) {
  (void)arg;
  uint64_t offset = 0;
  fw_module_info module;
  const char *function = fw_frame_function(frame, &offset);
  printf("#%-2zu 0x%016llx %s", fw_frame_index(frame), (unsigned long long)fw_frame_pc(frame),
         function ? function : "??");
  if (function && offset) printf("+0x%llx", (unsigned long long)offset);
  if (fw_frame_module(frame, &module)) printf(" - %s", module.path);
  printf("\n");
  return FW_CONTINUE;
}

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: pstack PID | pstack CORE [EXECUTABLE]\n");
    return 2;
  }
  fw_context *context = fw_context_new();
  fw_target *target = NULL;
  char *end;
  const long pid = strtol(argv[1], &end, 10);
  fw_status status = *end == '\0' ? fw_target_attach(context, (int)pid, FW_FREEZE_PROCESS, &target)
                                  : fw_target_core(context, argv[1], argc > 2 ? argv[2] : NULL, &target);
  if (status != FW_OK) {
    fprintf(stderr, "pstack: %s\n", fw_last_error());
    fw_context_free(context);
    return 2;
  }
  int failed = 0;
  for (int tid = 0; fw_next_thread(target, tid, &tid) == FW_OK && tid != 0;) {
    fw_walk_end walk_end;
    printf("Thread %d (%s):\n", tid, fw_thread_name(target, tid));
    if (fw_walk(target, tid, print_frame, NULL, NULL, &walk_end) != FW_OK) {
      printf("  (%s)\n", fw_last_error());
      failed = 1;
    } else if (walk_end.end != FW_END_OUTERMOST) {
      printf("  stop: %s\n", walk_end.message);
      failed = 1;
    }
  }
  fw_target_free(target);
  fw_context_free(context);
  return failed;
}

/* In-process backtraces with <framewalk/backtrace.h>: a program prints its own
 * stack, from normal code and from inside a signal handler (walked from the
 * interrupted context, async-signal-safely), with why each walk ended.
 * Names come from dladdr, after the handler has returned. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <signal.h>
#include <stdio.h>

#include <framewalk/backtrace.h>

static void *g_frames[64];
static int g_count;
static struct framewalk_backtrace_info g_info;

static void print_stack(const char *title, void **frames, int n, const struct framewalk_backtrace_info *info) {
  printf("%s\n", title);
  for (int i = 0; i < n; ++i) {
    Dl_info where;
    const char *name = "??";
    unsigned long offset = 0;
    if (dladdr(frames[i], &where) && where.dli_sname) {
      name = where.dli_sname;
      offset = (unsigned long)((char *)frames[i] - (char *)where.dli_saddr);
    }
    printf("  #%-2d %p %s+0x%lx\n", i, frames[i], name, offset);
  }
  printf("  (%d frames; the walk ended: %s)\n", n, framewalk_backtrace_end_name(info->end));
}

static void on_signal(int signal_number, siginfo_t *info, void *context) {
  (void)signal_number;
  (void)info;
  /* Only the walk here: it allocates nothing and takes no lock. */
  g_count = framewalk_backtrace_ucontext_status(context, g_frames, 64, &g_info);
}

__attribute__((noinline)) void inner(void) {
  void *frames[64];
  struct framewalk_backtrace_info end;
  const int n = framewalk_backtrace_status(frames, 64, &end);
  print_stack("framewalk_backtrace_status:", frames, n, &end);
  raise(SIGUSR1);
  print_stack("from the SIGUSR1 handler (the first frame is the interrupted PC):", g_frames, g_count, &g_info);
}

__attribute__((noinline)) void outer(void) {
  inner();
  __asm__ volatile("" ::: "memory");
}

int main(void) {
  struct sigaction sa = {0};
  framewalk_backtrace_prepare(); /* optional: the one-time costs now */
  sa.sa_sigaction = on_signal;
  sa.sa_flags = SA_SIGINFO;
  sigaction(SIGUSR1, &sa, NULL);
  outer();
  return 0;
}

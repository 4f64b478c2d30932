// fork and dumps on request under the mcount runtime (tests/mcount/check_gmon.py
// fork): 10 calls before the fork, then a dump of the counts so far
// (framewalk_mcount_dump, into mid.out), then 5 calls in the child and 7 in
// the parent. Run with GMON_OUT_PREFIX=prof, each process writes
// prof.<its pid>; it prints `pid parent N` and `pid child N`.
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

#define NOINLINE __attribute__((noinline, noclone))


volatile int sink;

NOINLINE void before_fork(void) { sink++; }
NOINLINE void in_child(void) { sink++; }
NOINLINE void in_parent(void) { sink++; }

int main(void) {
  for (int i = 0; i < 10; ++i) before_fork();
  int (*dump)(const char*) = (int (*)(const char*))dlsym(RTLD_DEFAULT, "framewalk_mcount_dump");
  if (dump == NULL || dump("mid.out") != 0) return 3;
  fflush(stdout);
  pid_t child = fork();
  if (child < 0) return 4;
  if (child == 0) {
    for (int i = 0; i < 5; ++i) in_child();
    return 0;
  }
  for (int i = 0; i < 7; ++i) in_parent();
  int status = 0;
  if (waitpid(child, &status, 0) != child || !WIFEXITED(status) || WEXITSTATUS(status) != 0) return 5;
  printf("pid parent %d\npid child %d\n", (int)getpid(), (int)child);
  return 0;
}

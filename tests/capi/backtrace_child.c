/* The process elfutils' backtrace test walks, rebuilt: a thread runs a chain
 * of known functions, the last raises SIGUSR2, whose handler stops the whole
 * process with raise(SIGSTOP), so that the thread sits in raise called from
 * a signal handler called from the chain; the main thread waits in
 * pthread_join (the thread waits until the main thread sleeps there).
 * Built with -O0 -fno-inline -fno-omit-frame-pointer. */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static int joining; /* read and written with __atomic builtins */

void sigusr2_handler(int sig) {
  (void)sig;
  raise(SIGSTOP);
}

void level3(void) { raise(SIGUSR2); }
void level2(void) { level3(); }
void level1(void) { level2(); }

/* Whether the main thread is asleep (in pthread_join's futex wait). */
static int main_thread_sleeps(void) {
  char path[64], stat[512];
  snprintf(path, sizeof path, "/proc/self/task/%d/stat", (int)getpid());
  FILE *f = fopen(path, "r");
  if (!f) return 0;
  const size_t n = fread(stat, 1, sizeof stat - 1, f);
  fclose(f);
  stat[n] = '\0';
  const char *end = strrchr(stat, ')');
  return end && end[1] == ' ' && end[2] == 'S';
}

void *thread_start(void *arg) {
  (void)arg;
  while (!__atomic_load_n(&joining, __ATOMIC_ACQUIRE) || !main_thread_sleeps()) usleep(1000);
  level1();
  for (;;) pause();
  return NULL;
}

int main(void) {
  signal(SIGUSR2, sigusr2_handler);
  pthread_t t;
  printf("%d\n", (int)getpid());
  fflush(stdout);
  if (pthread_create(&t, NULL, thread_start, NULL) != 0) return 1;
  __atomic_store_n(&joining, 1, __ATOMIC_RELEASE);
  pthread_join(t, NULL);
  return 0;
}

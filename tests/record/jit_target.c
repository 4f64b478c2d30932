/* A program that runs code it made at run time, for framewalk record's
 * perf-map names (x86-64 only): a counting loop's machine code copied into
 * an anonymous executable mapping, named "jit_spin" in /tmp/perf-PID.map
 * (with a malformed line before it, which a reader must count and skip),
 * called for about argv[1] seconds. Nothing else names that code: the
 * samples whose leaf is in it are named from the map alone. The map is
 * left behind, as runtimes leave theirs (a profiler may read it after the
 * process ends); it prints its pid, so that its caller can remove it. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

/* long jit_spin(long n): mov %rdi,%rax; 1: sub $1,%rax; jne 1b; ret */
static const unsigned char kCode[] = {0x48, 0x89, 0xf8, 0x48, 0x83, 0xe8, 0x01, 0x75, 0xfa, 0xc3};

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + t.tv_nsec / 1e9;
}

int main(int argc, char** argv) {
  const double seconds = argc > 1 ? atof(argv[1]) : 1.0;
  unsigned char* code = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (code == MAP_FAILED) return 1;
  memcpy(code, kCode, sizeof kCode);
  if (mprotect(code, 4096, PROT_READ | PROT_EXEC) != 0) return 1;
  char path[64];
  snprintf(path, sizeof path, "/tmp/perf-%d.map", (int)getpid());
  FILE* map = fopen(path, "w");
  if (!map) return 1;
  fprintf(map, "this line is not a perf map line\n%lx %zx jit_spin\n", (unsigned long)code, sizeof kCode);
  fclose(map);
  long (*spin)(long) = (long (*)(long))(void*)code;
  const double end = now() + seconds;
  long total = 0;
  while (now() < end) total += spin(1000000) + 1;
  printf("%d %ld\n", (int)getpid(), total > 0);
  return 0;
}

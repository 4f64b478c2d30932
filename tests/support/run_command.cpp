#include "support/run_command.hpp"

#include <sys/wait.h>

#include <cstdio>

namespace framewalk::test {

std::string run_command(const std::string& command, int* exit_status, bool with_stderr) {
  std::string out;
  FILE* p = popen((with_stderr ? command + " 2>&1" : command).c_str(), "r");
  if (!p) {
    *exit_status = -1;
    return out;
  }
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
  const int raw = pclose(p);
  *exit_status = WIFEXITED(raw) ? WEXITSTATUS(raw) : -1;
  return out;
}

const char* const kSframeSampleProgram = R"(
#include <alloca.h>
#include <stdio.h>
#include <string.h>
__attribute__((noinline)) int leaf(int x) { return x * 3 + 1; }
__attribute__((noinline)) int with_alloca(int n) {
  char* p = alloca(n + 16);
  memset(p, n, n + 16);
  return p[n] + leaf(n);
}
__attribute__((noinline)) long many(long a, long b, long c, long d, long e, long f, long g) {
  long v[32];
  for (int i = 0; i < 32; ++i) v[i] = a * i + b - c + d * e - f + g;
  return v[a & 31] + with_alloca((int)(b & 63));
}
int main(int argc, char** argv) {
  (void)argv;
  printf("%ld\n", many(argc, 2, 3, 4, 5, 6, 7));
  return 0;
}
)";

}  // namespace framewalk::test

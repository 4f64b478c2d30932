// Call-heavy programs for bench/mcount_overhead.sh: `fib N` (naive recursion)
// and `containers N` (a C++ workload: std::map inserts and lookups, vector
// sorts, string building — many small instrumented calls through the
// standard library's inline templates, which -pg instruments in the program).
// Prints a checksum so that nothing is optimised away.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <vector>

__attribute__((noinline)) long fib(int n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); }

long containers(int rounds) {
  long sum = 0;
  for (int r = 0; r < rounds; ++r) {
    std::map<int, std::string> m;
    for (int i = 0; i < 2000; ++i) m[(i * 7919 + r) % 5003] = std::to_string(i);
    std::vector<int> v;
    for (const auto& [k, s] : m) v.push_back(k * static_cast<int>(s.size()));
    std::sort(v.begin(), v.end(), [](int a, int b) { return a > b; });
    for (int i = 0; i < 2000; i += 3) {
      auto it = m.find(i);
      if (it != m.end()) sum += static_cast<long>(it->second.size());
    }
    sum += v.empty() ? 0 : v.front();
  }
  return sum;
}

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: %s fib|containers N\n", argv[0]);
    return 2;
  }
  const int n = std::atoi(argv[2]);
  const long result = std::strcmp(argv[1], "fib") == 0 ? fib(n) : containers(n);
  std::printf("%ld\n", result);
  return 0;
}

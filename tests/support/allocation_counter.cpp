#include "support/allocation_counter.hpp"

#include <cstddef>

namespace framewalk::test {

constinit thread_local bool t_unwinding = false;
std::atomic<int> g_allocations_while_unwinding{0};

}  // namespace framewalk::test

extern "C" void* __libc_malloc(size_t);
extern "C" void* __libc_calloc(size_t, size_t);
extern "C" void* __libc_realloc(void*, size_t);
extern "C" void __libc_free(void*);

using framewalk::test::g_allocations_while_unwinding;
using framewalk::test::t_unwinding;

extern "C" void* malloc(size_t n) {
  if (t_unwinding) g_allocations_while_unwinding.fetch_add(1);
  return __libc_malloc(n);
}
extern "C" void* calloc(size_t a, size_t b) {
  if (t_unwinding) g_allocations_while_unwinding.fetch_add(1);
  return __libc_calloc(a, b);
}
extern "C" void* realloc(void* p, size_t n) {
  if (t_unwinding) g_allocations_while_unwinding.fetch_add(1);
  return __libc_realloc(p, n);
}
extern "C" void free(void* p) { __libc_free(p); }

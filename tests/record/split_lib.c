/* libfw_split.so: a call path through a shared library (split_target.c). */
__attribute__((noinline)) double lib_call(double (*fn)(long), long n) {
  double r = fn(n);
  __asm__ volatile("" : "+x"(r));
  return r + 1;
}

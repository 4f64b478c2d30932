// A library that the signal-storm test loads and unloads in a loop.
__attribute__((noinline)) int fw_dlopen_target_work(int n) {
  volatile int s = 0;
  for (int i = 0; i < n; ++i) s += i;
  return s;
}

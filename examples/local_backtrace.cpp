// framewalk's local back-end: a program prints its own stack, from normal code
// and from inside a signal handler (with the interrupted context).
#include <signal.h>
#include <ucontext.h>

#include <cstdio>

#include "target/local_target.hpp"
#include "unwind/symbolize.hpp"

namespace {

void print_stack(const char* title, const ucontext_t* uc) {
  std::printf("%s\n", title);
  int n = 0;
  framewalk::LocalUnwinder::instance().walk(uc, [&](const framewalk::Frame& f) {
    const framewalk::FrameSymbol s = framewalk::symbolize(f);
    std::printf("  #%-2d 0x%016llx %s+0x%llx [%s]\n", n++, static_cast<unsigned long long>(f.pc),
                s.found ? s.function.c_str() : "??", static_cast<unsigned long long>(s.offset),
                framewalk::to_string(f.source));
    return true;
  });
}

void on_signal(int, siginfo_t*, void* context) {
  print_stack("from the SIGUSR1 handler (async-signal-safe unwinding):", static_cast<ucontext_t*>(context));
}

__attribute__((noinline)) void inner() {
  void* frames[64];
  const int n = framewalk::backtrace(frames, 64);
  std::printf("framewalk::backtrace returned %d return addresses\n", n);
  raise(SIGUSR1);
}

__attribute__((noinline)) void outer() {
  inner();
  asm volatile("" ::: "memory");
}

}  // namespace

int main() {
  framewalk::LocalUnwinder::instance();  // load and index every module up front
  struct sigaction sa {};
  sa.sa_sigaction = on_signal;
  sa.sa_flags = SA_SIGINFO;
  sigaction(SIGUSR1, &sa, nullptr);
  outer();
  return 0;
}

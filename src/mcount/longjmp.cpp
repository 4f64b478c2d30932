// longjmp, _longjmp, siglongjmp and __longjmp_chk (what _FORTIFY_SOURCE
// calls), interposed by the shared runtime: the jump leaves activations
// whose exit hook never runs, so the thread's next -finstrument-functions
// hook drops them from its shadow stack (function_times.hpp). Each wrapper
// marks the thread and jumps with the C library's own, looked up once with
// dlsym(RTLD_NEXT), which does not allocate when the symbol is found.
#include <dlfcn.h>
#include <setjmp.h>

#include "mcount/runtime.hpp"

namespace framewalk::mcount {
namespace {

using JumpFn = void (*)(__jmp_buf_tag*, int);
using CheckedJumpFn = void (*)(__jmp_buf_tag*, int);

JumpFn resolve(JumpFn* cache, const char* name) {
  JumpFn fn = __atomic_load_n(cache, __ATOMIC_ACQUIRE);
  if (fn == nullptr) {
    fn = reinterpret_cast<JumpFn>(dlsym(RTLD_NEXT, name));
    __atomic_store_n(cache, fn, __ATOMIC_RELEASE);
  }
  return fn;
}

[[noreturn]] void jump(JumpFn* cache, const char* name, __jmp_buf_tag* env, int value) {
  note_longjmp();
  JumpFn fn = resolve(cache, name);
  if (fn != nullptr) fn(env, value);
  __builtin_trap();  // the C library has no such jump: nothing sensible is left to do
}

JumpFn g_longjmp, g__longjmp, g_siglongjmp, g_longjmp_chk;

}  // namespace
}  // namespace framewalk::mcount

using namespace framewalk::mcount;

extern "C" {

__attribute__((visibility("default"))) void longjmp(__jmp_buf_tag env[1], int value) noexcept {
  jump(&g_longjmp, "longjmp", env, value);
}
__attribute__((visibility("default"))) void _longjmp(__jmp_buf_tag env[1], int value) noexcept {
  jump(&g__longjmp, "_longjmp", env, value);
}
__attribute__((visibility("default"))) void siglongjmp(__jmp_buf_tag env[1], int value) noexcept {
  jump(&g_siglongjmp, "siglongjmp", env, value);
}
__attribute__((visibility("default"))) void __longjmp_chk(__jmp_buf_tag env[1], int value) {
  jump(&g_longjmp_chk, "__longjmp_chk", env, value);
}

}  // extern "C"

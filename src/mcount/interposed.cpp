// What the shared runtime (libframewalk_mcount.so, preloaded or linked
// before the C library) interposes; the static library has
// wrapped_pthread_create.cpp and wrapped_longjmp.cpp instead, for programs
// linked with --wrap (a static link has no second definition to forward to).
//
// pthread_create: every new thread attaches as it starts (thread_start.hpp).
//
// longjmp, _longjmp, siglongjmp and __longjmp_chk (what _FORTIFY_SOURCE
// calls): the jump leaves activations whose exit hook never runs, so the
// thread's next -finstrument-functions hook drops them from its shadow stack
// (function_times.hpp). Each wrapper marks the thread and jumps with the C
// library's own.
//
// The unwinder's entry points (_Unwind_RaiseException, _Unwind_ForcedUnwind,
// _Unwind_Resume_or_Rethrow) and __cxa_begin_catch, for -pg -mfentry's
// return-address patching (FRAMEWALK_MCOUNT_FENTRY_TIMES=1): the patched
// slots get their addresses back before an unwinder walks the stack, and
// the frames still live where the exception is caught are patched again
// (runtime.hpp). Without patching they only pass the call on.
//
// The C library's (and libgcc_s's, libstdc++'s) functions are looked up once
// with dlsym(RTLD_NEXT), which does not allocate when the symbol is found.
#include <cerrno>
#include <dlfcn.h>
#include <setjmp.h>
#include <unwind.h>

#include "mcount/runtime.hpp"
#include "mcount/thread_start.hpp"

namespace framewalk::mcount {
namespace {

template <typename Fn>
Fn resolve(Fn* cache, const char* name) {
  Fn fn = __atomic_load_n(cache, __ATOMIC_ACQUIRE);
  if (fn == nullptr) {
    fn = reinterpret_cast<Fn>(dlsym(RTLD_NEXT, name));
    __atomic_store_n(cache, fn, __ATOMIC_RELEASE);
  }
  return fn;
}

CreateFn g_create;

using JumpFn = void (*)(__jmp_buf_tag*, int);

[[noreturn]] void jump(JumpFn* cache, const char* name, __jmp_buf_tag* env, int value) {
  note_longjmp();
  JumpFn fn = resolve(cache, name);
  if (fn != nullptr) fn(env, value);
  __builtin_trap();  // the C library has no such jump: nothing sensible is left to do
}

JumpFn g_longjmp, g__longjmp, g_siglongjmp, g_longjmp_chk;

using RaiseFn = _Unwind_Reason_Code (*)(_Unwind_Exception*);
using ForcedFn = _Unwind_Reason_Code (*)(_Unwind_Exception*, _Unwind_Stop_Fn, void*);
using CatchFn = void* (*)(void*);
RaiseFn g_raise, g_rethrow;
ForcedFn g_forced;
CatchFn g_begin_catch;

// Without the real entry point an unwind ends as at the end of the stack
// (_URC_END_OF_STACK: a code every ABI's unwind.h has, ARM EHABI's too).

// The caller's stack pointer before its call: the catching function's, for __cxa_begin_catch.
#define FW_CALLER_STACK() reinterpret_cast<uintptr_t>(__builtin_dwarf_cfa())

}  // namespace
}  // namespace framewalk::mcount

using namespace framewalk::mcount;

extern "C" {

__attribute__((visibility("hidden"))) extern const int framewalk_mcount_unwinder_interposed = 1;

__attribute__((visibility("default"))) _Unwind_Reason_Code _Unwind_RaiseException(_Unwind_Exception* exception) {
  restore_return_addresses();
  const RaiseFn real = resolve(&g_raise, "_Unwind_RaiseException");
  return real != nullptr ? real(exception) : _URC_END_OF_STACK;
}
__attribute__((visibility("default"))) _Unwind_Reason_Code _Unwind_Resume_or_Rethrow(_Unwind_Exception* exception) {
  restore_return_addresses();
  const RaiseFn real = resolve(&g_rethrow, "_Unwind_Resume_or_Rethrow");
  return real != nullptr ? real(exception) : _URC_END_OF_STACK;
}
__attribute__((visibility("default"))) _Unwind_Reason_Code _Unwind_ForcedUnwind(_Unwind_Exception* exception,
                                                                               _Unwind_Stop_Fn stop, void* arg) {
  restore_return_addresses();
  const ForcedFn real = resolve(&g_forced, "_Unwind_ForcedUnwind");
  return real != nullptr ? real(exception, stop, arg) : _URC_END_OF_STACK;
}
__attribute__((visibility("default"))) void* __cxa_begin_catch(void* exception) noexcept {
  repatch_live_frames(FW_CALLER_STACK());
  const CatchFn real = resolve(&g_begin_catch, "__cxa_begin_catch");
  return real != nullptr ? real(exception) : nullptr;
}

__attribute__((visibility("default"))) int pthread_create(pthread_t* thread, const pthread_attr_t* attr,
                                                          StartRoutine start, void* arg) {
  const CreateFn real = resolve(&g_create, "pthread_create");
  if (real == nullptr) return EAGAIN;
  return create_attached_thread(real, thread, attr, start, arg);
}

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

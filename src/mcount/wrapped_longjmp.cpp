// The longjmp family for a program linked with the static runtime and
// -Wl,--wrap=longjmp,--wrap=_longjmp,--wrap=siglongjmp,--wrap=__longjmp_chk:
// each marks the thread (its next -finstrument-functions hook drops the
// activations the jump leaves) and jumps with the C library's own, as the
// shared runtime's interposed ones do (interposed.cpp). A member of its own
// in the archive, linked only when one of those --wrap options asks for it
// (then all four must be given: the member needs every __real_ name).
#include <setjmp.h>

#include "mcount/runtime.hpp"

extern "C" {

void __real_longjmp(__jmp_buf_tag env[1], int value) __attribute__((noreturn));
void __real__longjmp(__jmp_buf_tag env[1], int value) __attribute__((noreturn));
void __real_siglongjmp(__jmp_buf_tag env[1], int value) __attribute__((noreturn));
void __real___longjmp_chk(__jmp_buf_tag env[1], int value) __attribute__((noreturn));

__attribute__((visibility("default"), noreturn)) void __wrap_longjmp(__jmp_buf_tag env[1], int value) {
  framewalk::mcount::note_longjmp();
  __real_longjmp(env, value);
}
__attribute__((visibility("default"), noreturn)) void __wrap__longjmp(__jmp_buf_tag env[1], int value) {
  framewalk::mcount::note_longjmp();
  __real__longjmp(env, value);
}
__attribute__((visibility("default"), noreturn)) void __wrap_siglongjmp(__jmp_buf_tag env[1], int value) {
  framewalk::mcount::note_longjmp();
  __real_siglongjmp(env, value);
}
__attribute__((visibility("default"), noreturn)) void __wrap___longjmp_chk(__jmp_buf_tag env[1], int value) {
  framewalk::mcount::note_longjmp();
  __real___longjmp_chk(env, value);
}

}  // extern "C"

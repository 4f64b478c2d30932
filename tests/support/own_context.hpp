// A ucontext_t of the calling function, for the in-process walks from a
// context.
#pragma once

#include <ucontext.h>

namespace framewalk::test {

// After getcontext(uc): glibc's getcontext on s390x stores no PSW (its
// setcontext returns through r14), so the context's PC is set to r14, the
// return address into the caller, which is where other machines'
// getcontext put their PC.
inline void complete_getcontext(ucontext_t* uc) {
#if defined(__s390x__)
  uc->uc_mcontext.psw.addr = uc->uc_mcontext.gregs[14];
#else
  (void)uc;
#endif
}

}  // namespace framewalk::test

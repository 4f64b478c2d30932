/* framewalk: fast, async-signal-safe backtraces of the calling thread.
 *
 * framewalk_backtrace() is a drop-in for glibc's backtrace(): it stores up to
 * `size` return addresses in `buffer`, the first being the return address into
 * the function that called it, and returns how many it stored. It does not
 * allocate, takes no lock that a signal could interrupt, never faults on bad
 * memory (a corrupt or unreadable stack ends the walk), and may be called
 * from signal handlers and from several threads at once.
 *
 * framewalk_backtrace_ucontext() starts from the context a SA_SIGINFO signal
 * handler receives (its third argument): the first entry is the PC the signal
 * interrupted.
 *
 * Unwind rules are cached process-wide by PC. framewalk interposes dlclose()
 * (it calls the C library's, then forgets the rules cached for the library's
 * address range), so code loaded later where a library was is never unwound
 * with the old code's rules. Code unmapped by other means (munmap of a
 * library mapped by hand) needs framewalk_backtrace_flush_cache().
 *
 * framewalk_backtrace_prepare() is optional: called once early (where signal
 * handlers are installed, say), it takes the one-time costs out of the first
 * backtrace: it faults in the rule cache's pages, binds the few C library
 * functions the unwinder calls, and caches the rules of the calling stack.
 * It is async-signal-safe too.
 */
#ifndef FRAMEWALK_BACKTRACE_H
#define FRAMEWALK_BACKTRACE_H

#include "framewalk/api.h"

#ifdef __cplusplus
extern "C" {
#endif

FRAMEWALK_API int framewalk_backtrace(void **buffer, int size);
FRAMEWALK_API int framewalk_backtrace_ucontext(const void *ucontext, void **buffer, int size);

/* Why a walk ended, from the _status variants (a walk that ends early is
 * never silent there). `address` is what the reason names, 0 otherwise. */
enum framewalk_backtrace_end {
  FRAMEWALK_BT_OUTERMOST = 0,           /* the stack's declared end: a zero or undefined return
                                           address, or a function marked outermost (address: its PC) */
  FRAMEWALK_BT_FULL = 1,                /* the buffer is full; the stack may go on */
  FRAMEWALK_BT_NO_UNWIND_INFO = 2,      /* no rule for the PC at `address`, and no safe fallback */
  FRAMEWALK_BT_BAD_MEMORY = 3,          /* the word at `address` a rule needs is unreadable */
  FRAMEWALK_BT_CFA_DID_NOT_ADVANCE = 4, /* the caller's stack pointer (`address`) is not above the
                                           callee's: a loop or a corrupt stack */
  FRAMEWALK_BT_BAD_UNWIND_INFO = 5      /* the rule for the PC at `address` cannot be evaluated */
};
struct framewalk_backtrace_info {
  int end; /* enum framewalk_backtrace_end */
  unsigned long long address;
};
/* framewalk_backtrace and framewalk_backtrace_ucontext, telling in *info
 * (which may be NULL) why the walk ended. As fast and as safe. */
FRAMEWALK_API int framewalk_backtrace_status(void **buffer, int size, struct framewalk_backtrace_info *info);
FRAMEWALK_API int framewalk_backtrace_ucontext_status(const void *ucontext, void **buffer, int size,
                                                      struct framewalk_backtrace_info *info);
/* "outermost", "full", "no-unwind-info", "bad-memory", "cfa-did-not-advance",
 * "bad-unwind-info" (the names framewalk stack prints); "unknown" otherwise. */
FRAMEWALK_API const char *framewalk_backtrace_end_name(int end);
FRAMEWALK_API void framewalk_backtrace_flush_cache(void);

/* Code made at run time (a JIT's), unwound by its own .eh_frame:
 * `eh_frame` is a sequence of CIEs and FDEs ended by a zero length word (what
 * libgcc's __register_frame takes) or a single FDE whose CIE precedes it
 * (what LLVM's libunwind takes); its FDEs' addresses are absolute or
 * relative to where the table is. From then until it is deregistered,
 * framewalk_backtrace walks through the code the FDEs cover, in any thread
 * or signal handler. The table stays where it is and is not copied. Returns
 * 0, or -1 when no FDE can be read or 4096 tables are registered.
 * framewalk_deregister_frame waits for walks reading the table to finish;
 * -1 when the table is not registered. Neither is async-signal-safe.
 * framewalk interposes libgcc's __register_frame and __deregister_frame
 * (taking note, then calling libgcc's): programs that register their code
 * with libgcc (LLVM's ORC, LuaJIT, CPython's JIT...) need not call these. */
FRAMEWALK_API int framewalk_register_frame(const void *eh_frame);
FRAMEWALK_API int framewalk_deregister_frame(const void *eh_frame);
FRAMEWALK_API void framewalk_backtrace_prepare(void);
/* Bytes of memory the process-wide rule cache occupies, shared by all
 * threads; each thread that unwinds also keeps 24 bytes of thread-local state. */
FRAMEWALK_API unsigned long framewalk_backtrace_cache_bytes(void);

#ifdef __cplusplus
}  /* extern "C" */

namespace framewalk {
inline int fast_backtrace(void **buffer, int size) { return framewalk_backtrace(buffer, size); }
inline int fast_backtrace(const void *ucontext, void **buffer, int size) {
  return framewalk_backtrace_ucontext(ucontext, buffer, size);
}
}  // namespace framewalk
#endif

#endif /* FRAMEWALK_BACKTRACE_H */

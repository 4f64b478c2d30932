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
FRAMEWALK_API void framewalk_backtrace_flush_cache(void);
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

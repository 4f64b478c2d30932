/* framewalk: the mcount runtime (libframewalk_mcount) for code compiled with
 * gcc's -pg, -pg -mfentry or -finstrument-functions.
 *
 * The library defines the hooks gcc calls (x86-64 mcount/_mcount/__fentry__,
 * AArch64 _mcount, 32-bit ARM __gnu_mcount_nc, __cyg_profile_func_enter/
 * _exit) and glibc's __monstartup/_mcleanup/moncontrol, so that
 * LD_PRELOAD=libframewalk_mcount.so, or linking the library (shared or
 * static) before the C library, replaces glibc's profiling runtime.
 *
 * Every call is counted in a table of the calling thread (no lock, no shared
 * cache line written, no allocation once the thread's table exists; a full
 * table grows). At exit the tables of every thread, also of threads that have
 * ended, are merged into gmon.out ($GMON_OUT_PREFIX.<pid> when that is set,
 * as in glibc), which gprof reads.
 *
 * Code built with -finstrument-functions is also timed: each function's
 * calls and exact inclusive and self times go to a text file beside
 * gmon.out, its name with ".times" appended (src/mcount/function_times.hpp
 * documents it). FRAMEWALK_MCOUNT_TIMES=0 turns that off,
 * FRAMEWALK_MCOUNT_CLOCK=thread times CPU time instead of wall-clock time.
 *
 * framewalk_mcount_dump() writes the same file on request (NULL: the default
 * name), from the counts so far; it is async-signal-safe. It returns 0, or -1
 * when the file could not be written (another dump running, or an error of
 * open/write).
 *
 * framewalk_mcount_for_each_arc() hands every merged arc to `fn`: the
 * run-time addresses (from_pc: a return address in the caller; self_pc: a PC
 * in the callee) and the count, also for arcs outside the main executable,
 * which gmon.out cannot hold (gprof reads one program). It returns the number
 * of arcs, or -1 when another dump or walk was running.
 *
 * framewalk_mcount_lost() is the number of calls that could not be counted
 * (only when memory for a table could not be mapped, or more than 64 nested
 * signal handlers call instrumented code at one moment); it should be 0.
 */
#ifndef FRAMEWALK_MCOUNT_H
#define FRAMEWALK_MCOUNT_H

#include <stdint.h>

#if defined(FRAMEWALK_BUILDING_SHARED)
#define FRAMEWALK_MCOUNT_API __attribute__((visibility("default")))
#else
#define FRAMEWALK_MCOUNT_API __attribute__((visibility("default")))
#endif

#ifdef __cplusplus
extern "C" {
#endif

typedef void (*framewalk_mcount_arc_fn)(uintptr_t from_pc, uintptr_t self_pc, uint64_t count, void *context);

FRAMEWALK_MCOUNT_API int framewalk_mcount_dump(const char *path);
FRAMEWALK_MCOUNT_API long framewalk_mcount_for_each_arc(framewalk_mcount_arc_fn fn, void *context);
FRAMEWALK_MCOUNT_API uint64_t framewalk_mcount_lost(void);

#ifdef __cplusplus
}  /* extern "C" */
#endif

#endif /* FRAMEWALK_MCOUNT_H */

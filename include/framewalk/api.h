/* framewalk/api.h: what marks a function of libframewalk's interface
 * (<framewalk/backtrace.h>, <framewalk/framewalk.h>): exported from the
 * shared library when it is built, nothing for its users. */
#ifndef FRAMEWALK_API_H
#define FRAMEWALK_API_H

#if defined(FRAMEWALK_BUILDING_SHARED)
#define FRAMEWALK_API __attribute__((visibility("default")))
#else
#define FRAMEWALK_API
#endif

#endif /* FRAMEWALK_API_H */

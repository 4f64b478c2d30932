/* tests/local/fp_only.c: a chain of functions without unwind information. */
#ifndef FRAMEWALK_TESTS_LOCAL_FP_ONLY_H
#define FRAMEWALK_TESTS_LOCAL_FP_ONLY_H
#ifdef __cplusplus
extern "C" {
#endif
int fp_only_a(int (*leaf)(void *), void *arg);
int fp_only_b(int (*leaf)(void *), void *arg);
int fp_only_c(int (*leaf)(void *), void *arg);
#ifdef __cplusplus
}
#endif
#endif

// A malloc interposer for the whole test binary: allocations a thread makes
// while its t_unwinding flag is set are counted, for the tests that prove a
// path never allocates (async-signal-safe paths).
#pragma once

#include <atomic>

namespace framewalk::test {

extern constinit thread_local bool t_unwinding;
extern std::atomic<int> g_allocations_while_unwinding;

}  // namespace framewalk::test

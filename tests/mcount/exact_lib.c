// The shared library of the exact-count program (tests/mcount/exact_calls.c),
// built with -pg too: the program calls lib_entry through the PLT, and
// lib_entry calls lib_inner through the library's own PLT.
#define NOINLINE __attribute__((noinline, noclone))

NOINLINE int lib_inner(int x) { return x * 3; }

NOINLINE int lib_entry(int x) { return lib_inner(x) + 1; }

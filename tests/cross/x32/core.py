#!/usr/bin/env python3
"""x32 cores, made here from registers and stack contents, read by framewalk.

This kernel runs no x32 program and qemu has no x32 target, so
make_core.c runs an x32 program's code (../chain32.c, start.S: no libc) inside an
x86-64 process, below 4 GiB, and writes the core an x32 kernel would write
when it traps: ELFCLASS32, EM_X86_64, NT_PRSTATUS in x32's layout, NT_FILE.
Optionally it first delivers a signal at the trap as an x32 kernel does (an
rt_sigframe_x32 returning to the program's __restore_rt), so that the core
is written inside the handler, a few calls deep.

Variants: `cfi` (gcc's .eh_frame), `fp` (no unwind tables: prologue
analysis and frame pointers, `mov %esp,%ebp`), `short` (the trampoline's
`mov $0x40000201,%eax` form). Each program gives two cores, `plain` (trapped
in trap()) and `signal` (trapped in trap2() under the handler); each core
has a second thread, the main thread waiting in a join (join_main ..
join_futex: the shape of elfutils' pthread_join thread, without libc), run
first on a stack of its own and written after the crashing thread.

The truth:
- chain: framewalk's functions of both threads equal the chain the
  program's construction gives, and each walk ends `outermost`; always.
- gdb-multiarch, PC for PC, every thread, where gdb 13 is right: the main
  thread and the `plain` cores whole, and the handler's frames of the
  signal cores up to its "<signal handler called>"; not the `fp` cores. gdb 13 reads x32's signal frame at x86-64's ucontext
  offset (40, not x32's 24: it finds PC 0 beyond it) and stops at the first
  frame-pointer frame built with `mov %esp,%ebp`.
eu-stack reads no x32 core ("not a valid ELF file"): it is not compared.

  core.py --framewalk build/framewalk --work DIR
Exit 77 (skipped) without x86_64-linux-gnux32-gcc.
"""
import argparse
import os
import shutil
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
from made_cores import check, chain_problems, framewalk_threads, gdb_frames, names, pc_problem, pcs  # noqa: E402
CC = "x86_64-linux-gnux32-gcc"
PLAIN = ["trap", "f3", "f2", "f1", "_start"]
SIGNAL = ["trap2", "h2", "h1", "chain_handler", "__restore_rt"] + PLAIN
VARIANTS = {
    "cfi": ["-O2", "-g", "-fno-omit-frame-pointer"],
    "fp": ["-O2", "-g0", "-fno-omit-frame-pointer", "-fno-asynchronous-unwind-tables", "-fno-unwind-tables"],
    "short": ["-O2", "-g", "-DSHORT_TRAMPOLINE"],
}


def symbol(program, name):
    for line in check(["nm", program]).splitlines():
        parts = line.split()
        if len(parts) == 3 and parts[2] == name:
            return "0x" + parts[0]
    raise RuntimeError("%s: no symbol %s" % (program, name))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--framewalk", required=True)
    ap.add_argument("--work", required=True)
    args = ap.parse_args()
    if not shutil.which(CC):
        print("skip: no " + CC)
        return 77
    fw = os.path.abspath(args.framewalk)
    os.makedirs(args.work, exist_ok=True)
    make_core = os.path.join(args.work, "make_core")
    check(["cc", "-O1", "-Wall", "-Wextra", "-Werror", "-o", make_core, os.path.join(HERE, "make_core.c")])
    failures = 0
    compared = 0
    gdb_compared = 0
    for variant, flags in VARIANTS.items():
        program = os.path.join(args.work, "chain_" + variant)
        check([CC] + flags + ["-nostdlib", "-static", "-Wl,-Ttext-segment=0x10000000", "-o", program,
                              os.path.join(HERE, "..", "chain32.c"), os.path.join(HERE, "start.S")])
        for kind, expected in (("plain", PLAIN), ("signal", SIGNAL)):
            core = os.path.join(args.work, "%s_%s.core" % (variant, kind))
            extra = [symbol(program, "chain_handler"), symbol(program, "__restore_rt")] if kind == "signal" else []
            check([make_core, program, core] + extra)
            threads = framewalk_threads(fw, core)
            problems = chain_problems(threads, expected)
            gdb = gdb_frames(program, core) if variant != "fp" else None
            for thread in threads if gdb is not None else ():
                theirs = gdb.get(thread["tid"], [])
                # Up to gdb's signal frame: gdb 13 misreads x32's (see above).
                upto = next((i for i, f in enumerate(theirs) if f[1]), len(theirs))
                problems += pc_problem(thread, pcs(thread)[:upto], [pc for pc, _, _ in theirs[:upto]])
                gdb_compared += upto
            compared += sum(len(t["frames"]) for t in threads)
            print("%-6s %-6s %-4s %s" % (variant, kind, "ok" if not problems else "FAIL", names(threads)))
            for p in problems:
                print("    " + p)
            failures += bool(problems)
    print("x32 cores: %d cores, %d frames against their construction, %d against gdb-multiarch; %d failed"
          % (2 * len(VARIANTS), compared, gdb_compared, failures))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())

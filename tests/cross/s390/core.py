#!/usr/bin/env python3
"""31-bit s390 cores, made here from real 31-bit code, read by framewalk.

qemu has no 31-bit s390 target and Debian no 31-bit libc, so make_core.c
(an s390x program, run under qemu-s390x) runs a 31-bit program's code
(../chain32.c, start.S: no libc, built with s390x-linux-gnu-gcc -m31) inside its
process, below 2 GiB and in true 31-bit addressing mode (`sam31`: brasl and
basr leave the addressing-mode bit 0x80000000 in r14, as on a 31-bit
kernel), and writes the core a 64-bit kernel's compat layer writes when the
program traps: ELFCLASS32, EM_S390, NT_PRSTATUS of s390_compat_regs (the
PSW address with the addressing-mode bit), NT_PRFPREG, NT_FILE. Optionally
it first delivers a signal at the trap as the compat layer does, so that
the core is written inside the handler, a few calls deep.

Variants: `cfi` (gcc's .eh_frame), `fp` (no unwind tables, a frame pointer:
`lr %r11,%r15`) and `backchain` (no unwind tables, -mbackchain: `st
%r14,0(%r15)` among the prologue's instructions), the last two unwound by
prologue analysis. Cores: `plain` (trapped in trap()), `sigframe` (a
sigframe32 returning to the program's __restore, `svc 119`), `rt` (an
rt_sigframe32 returning to its __restore_rt, `svc 173`) and `rt_stack` (an
rt_sigframe32 without SA_RESTORER: the kernel's `svc 173` on the frame).
Each core has a second thread, the main thread waiting in a join
(join_main .. join_futex: the shape of elfutils' pthread_join thread,
without libc), run first on a stack of its own and written after the
crashing thread.

The truth:
- chain: framewalk's functions of both threads equal the chain the
  program's construction gives, and each walk ends `outermost`; always.
- gdb-multiarch, PC for PC, every thread of every core whole, but where
  gdb 13 is wrong: it takes an rt_sigframe32 whose trampoline is not on
  the frame itself (SA_RESTORER, the `rt` cores) for an old-style
  sigframe, reads the sigcontext's sregs pointer where there is none and
  stops after the handler; there, the crashing thread's frames up to the
  handler.

  core.py --framewalk build/framewalk --work DIR
Exit 77 (skipped) without s390x-linux-gnu-gcc or qemu-s390x.
"""
import argparse
import os
import shutil
import struct
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
from made_cores import check, chain_problems, framewalk_threads, gdb_frames, names, pc_problem, pcs  # noqa: E402
CC = "s390x-linux-gnu-gcc"
QEMU = ["qemu-s390x", "-L", "/usr/s390x-linux-gnu"]
PLAIN = ["trap", "f3", "f2", "f1", "_start"]
HANDLER = ["trap2", "h2", "h1", "chain_handler"]
NO_TABLES = ["-g0", "-fno-asynchronous-unwind-tables", "-fno-unwind-tables"]
VARIANTS = {
    "cfi": ["-O2", "-g", "-fasynchronous-unwind-tables"],
    "fp": ["-O2", "-fno-omit-frame-pointer"] + NO_TABLES,
    "backchain": ["-O2", "-mbackchain"] + NO_TABLES,
}
# Core kind: (make_core's frame kind, the restorer's symbol or None for the
# kernel's svc on the frame, the trampoline frame's function).
KINDS = {
    "plain": None,
    "sigframe": ("sigframe", "__restore", "__restore"),
    "rt": ("rt", "__restore_rt", "__restore_rt"),
    "rt_stack": ("rt", None, None),
}


def symbols(program):
    out = {}
    for line in check(["s390x-linux-gnu-nm", program]).splitlines():
        parts = line.split()
        if len(parts) == 3:
            out[parts[2]] = "0x" + parts[0]
    return out


def core_r14(core):
    """r14 as the core's first NT_PRSTATUS (the crashing thread's) holds it
    (s390_compat_regs at 72: psw, then the gprs), big-endian ELF32 with one
    PT_NOTE first."""
    data = open(core, "rb").read()
    phoff, = struct.unpack_from(">I", data, 28)
    _, offset, _, _, size = struct.unpack_from(">IIIII", data, phoff)
    at = offset
    while at < offset + size:
        namesz, descsz, kind = struct.unpack_from(">III", data, at)
        desc = at + 12 + ((namesz + 3) & ~3)
        if kind == 1:
            return struct.unpack_from(">I", data, desc + 72 + 8 + 4 * 14)[0]
        at = desc + ((descsz + 3) & ~3)
    raise RuntimeError("%s: no NT_PRSTATUS" % core)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--framewalk", required=True)
    ap.add_argument("--work", required=True)
    args = ap.parse_args()
    for tool in (CC, QEMU[0]):
        if not shutil.which(tool):
            print("skip: no " + tool)
            return 77
    fw = os.path.abspath(args.framewalk)
    os.makedirs(args.work, exist_ok=True)
    make_core = os.path.join(args.work, "make_core")
    check([CC, "-O1", "-Wall", "-Wextra", "-Werror", "-o", make_core, os.path.join(HERE, "make_core.c")])
    failures = compared = gdb_compared = 0
    for variant, flags in VARIANTS.items():
        program = os.path.join(args.work, "chain_" + variant)
        check([CC, "-m31"] + flags + ["-nostdlib", "-static", "-o", program,
                                      os.path.join(HERE, "..", "chain32.c"), os.path.join(HERE, "start.S")])
        syms = symbols(program)
        for kind, signal in KINDS.items():
            core = os.path.join(args.work, "%s_%s.core" % (variant, kind))
            extra, expected = [], PLAIN
            if signal:
                frame_kind, restorer, trampoline = signal
                extra = [frame_kind, syms["chain_handler"], syms[restorer] if restorer else "0"]
                expected = HANDLER + [trampoline] + PLAIN
            check(QEMU + [make_core, program, core] + extra)
            threads = framewalk_threads(fw, core)
            problems = chain_problems(threads, expected)
            # trap() is a leaf: r14 is f3's return address, from brasl in 31-bit mode.
            if kind == "plain" and not core_r14(core) & 0x80000000:
                problems.append("r14 %#x without the addressing-mode bit: not run in 31-bit mode" % core_r14(core))
            gdb = gdb_frames(program, core)
            for crashing, thread in zip((True, False), threads if gdb is not None else ()):
                theirs = gdb.get(thread["tid"], [])
                # gdb stops after the handler of an rt_sigframe32 whose
                # trampoline is the program's (see above): compared up to there.
                upto = len(theirs) if crashing and kind == "rt" and len(theirs) >= len(HANDLER) else None
                problems += pc_problem(thread, pcs(thread)[:upto], [pc for pc, _, _ in theirs])
                if crashing and signal and len(theirs) > len(HANDLER) and not theirs[len(HANDLER)][1]:
                    problems.append("gdb's frame %d is no signal frame" % len(HANDLER))
                gdb_compared += len(theirs)
            compared += sum(len(t["frames"]) for t in threads)
            print("%-9s %-8s %-4s %s" % (variant, kind, "ok" if not problems else "FAIL", names(threads)))
            for p in problems:
                print("    " + p)
            failures += bool(problems)
    print("s390 cores: %d cores, %d frames against their construction, %d against gdb-multiarch; %d failed"
          % (len(VARIANTS) * len(KINDS), compared, gdb_compared, failures))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())

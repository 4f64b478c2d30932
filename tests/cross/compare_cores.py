#!/usr/bin/env python3
"""framewalk on cores of other machines, made by qemu-user, against gdb-multiarch
and against the call chains the fixtures know.

Each fixture (fixtures/) is cross-built with Debian's cross compiler, run under
qemu-user until it dies (abort or an unhandled fault), and the guest core qemu
writes is read by `framewalk stack --core --sysroot` and by gdb-multiarch
(tests/stack/gdb_frames.py, through gdb's Python API):

- truth "gdb": every thread's frames must equal gdb's PC for PC, and a walk
  gdb ends at the outermost frame must end `outermost` in framewalk too;
- with --replay, the core saved as a snapshot (`--save-snapshot`) must give
  the core's frames again, walked by `framewalk stack --snapshot` and by a
  user back-end of the C API replaying it (examples/replay_backend.c);
- truth "chain" (where gdb is wrong: PIE programs, whose libraries gdb 13 does
  not find in these cores; PAC-signed return addresses, where gdb stops):
  framewalk's function names, filtered to the fixture's own functions, must be
  the chain the program's construction gives, and the walk must end
  `outermost`;
- truth "prefix" (where gdb stops early and is right until then): the chain,
  and gdb's frames must be framewalk's first ones.

tests/cross/README.md has the list and what each fixture exercises. Exit 77
(skipped) when the cross compiler, qemu or gdb-multiarch is missing.
"""
import argparse
import json
import os
import re
import resource
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
FIXTURES = os.path.join(HERE, "fixtures")
GDB_FRAMES = os.path.join(HERE, "..", "stack", "gdb_frames.py")
sys.path.insert(0, os.path.join(HERE, "..", "capi"))
import compare_replay  # noqa: E402

MACHINES = {
    "aarch64": {
        "cc": "aarch64-linux-gnu-gcc",
        "cxx": "aarch64-linux-gnu-g++",
        "qemu": "qemu-aarch64",
        "sysroot": "/usr/aarch64-linux-gnu",
        # gdb 13 hangs on the SVE record of qemu's signal frames.
        "gdb_cpu": "max,sve=off",
    },
    "arm": {
        "cc": "arm-linux-gnueabihf-gcc",
        "cxx": "arm-linux-gnueabihf-g++",
        "qemu": "qemu-arm",
        "sysroot": "/usr/arm-linux-gnueabihf",
        "gdb_cpu": None,
    },
    "ppc64le": {
        "cc": "powerpc64le-linux-gnu-gcc",
        "cxx": "powerpc64le-linux-gnu-g++",
        "qemu": "qemu-ppc64le",
        "sysroot": "/usr/powerpc64le-linux-gnu",
        "gdb_cpu": None,
    },
    "ppc": {
        "cc": "powerpc-linux-gnu-gcc",
        "cxx": "powerpc-linux-gnu-g++",
        "qemu": "qemu-ppc",
        "sysroot": "/usr/powerpc-linux-gnu",
        "gdb_cpu": None,
    },
    "s390x": {
        "cc": "s390x-linux-gnu-gcc",
        "cxx": "s390x-linux-gnu-g++",
        "qemu": "qemu-s390x",
        "sysroot": "/usr/s390x-linux-gnu",
        "gdb_cpu": None,
    },
}


def recursion_chain(depth=40):
    chain = ["leaf"]
    for n in range(2 * depth + 1):
        chain.append("even" if n % 2 == 0 else "odd")
    return chain + ["main"]


SIGNAL_CHAIN = ["in_usr1_handler"] * 4 + ["on_usr1", "on_segv", "faulting_leaf"] + ["caller_of_leaf"] * 3 + ["main"]
NOINFO_CHAIN = ["noinfo_leaf", "noinfo_framed", "with_cfi", "main"]
TAILCALL_CHAIN = ["leaf", "land", "top", "main"]
DLOPEN_CHAIN = ["callback", "plugin_inner", "plugin_entry", "main"]
PROLOGUES_CHAIN = ["wide_frame", "odd_frame", "vfp_frame"] * 4 + ["main"]
ASM_CFI_CHAIN = ["cfi_expression_trampoline", "cfi_lr_in_reg", "cfi_remember", "with_cfi", "main"]
PLUGIN = [("libfw_plugin.so", ["plugin.c"], "-O2 -g -fPIC -shared")]
# tests/jit's GDB JIT program: an ELF object with CFI and no frame records
# (gdb_jit_code.S, linked at a fixed address), its code copied there and the
# object published in __jit_debug_descriptor's list, then an abort under the
# jit frames. The core holds the list and the object (heap memory).
GDB_JIT_CHAIN = ["c_block", "gdbjit_inner", "gdbjit_outer", "run_object", "main"]
GDB_JIT_OBJECT = [("gdb_jit_code.elf", ["../../jit/gdb_jit_code.S"],
                   "-nostdlib -static -Wl,-Ttext=0x50000000 -Wl,-e,gdbjit_outer -Wl,--eh-frame-hdr "
                   "-Wl,--build-id=none -Wl,-z,max-page-size=4096")]
# The same code described by a jitdump (jitdump-abort): the object linked
# without .eh_frame_hdr, its .eh_frame where the jitdump's readers place it
# (after the code the load describes, rounded up to 8: gdb_jit.c's load runs
# from the code's page to the .eh_frame, put at 0x800 for ARM's 4-aligned
# sections). qemu's cores have no NT_FILE to find the jitdump by: `stack
# --jitdump` names it (the run directory's jit-PID.dump).
JITDUMP_CHAIN = ["c_block", "gdbjit_code", "gdbjit_code", "run_object", "main"]
JITDUMP_OBJECT = [("gdb_jit_code.elf", ["../../jit/gdb_jit_code.S"],
                   "-nostdlib -static -Wl,-Ttext=0x50000000 -Wl,-e,gdbjit_outer "
                   "-Wl,--section-start=.eh_frame=0x50000800 -Wl,--build-id=none -Wl,-z,max-page-size=4096")]


# tests/jit's frame-pointer JIT: three functions written into an anonymous
# executable mapping, without unwind information, named by the perf map the
# program writes (/tmp/perf-PID.map, PID the core's); an abort under them.
# qemu dumps the mapping's pages, and no file explains them: jit code.
JIT_CHAIN = ["c_block", "jit_inner", "jit_middle", "jit_outer", "run_jit", "main"]


def jit_check(threads):
    """jit_chain.c: the callers of the three jit frames found by frame pointer
    through jit code (a frame's source is how it was found from its callee)."""
    t = threads[0]
    jit = [f["function"] for f in t["frames"] if f["source"] == "jit"]
    if jit != ["jit_middle", "jit_outer", "run_jit"]:
        return "thread %d: frames found through jit code %s" % (t["tid"], jit)
    return None


def registered_check(threads):
    """gdb_jit.c register-abort: the object's code unwound by the .eh_frame it
    registered with libgcc (a static program: its symbol table names libgcc's lists)."""
    t = threads[0]
    names = [f["function"] or "" for f in t["frames"]]
    modules = [f.get("module") or "" for f in t["frames"]]
    if "c_block" not in names:
        return "thread %d: no c_block in %s" % (t["tid"], names)
    at = names.index("c_block")
    registered = [m.startswith("[registered@0x") for m in modules[at + 1:at + 3]]
    if registered != [True, True] or names[at + 3:at + 5] != ["run_object", "main"]:
        return "thread %d: want c_block <- 2 registered frames <- run_object <- main: %s %s" % (
            t["tid"], names, modules)
    return None


def overflow_check(threads):
    """stack_overflow.c: the overflowing thread's handler, its hundreds of frames, its start."""
    for t in threads:
        names = [f["function"] for f in t["frames"] if f["function"] in ("on_segv", "overflow", "thread_main")]
        if "on_segv" not in names:
            continue
        k = names.count("overflow")
        if names != ["on_segv"] + ["overflow"] * k + ["thread_main"] or k < 100:
            return "thread %s: %d overflow frames, chain %s..." % (t["tid"], k, names[:4])
        return None
    return "no thread has the SIGSEGV handler"


class Fixture:
    def __init__(self, name, sources, flags, truth, chain=None, args=(), cpu=None, threads_chains=None, libs=(),
                 source_flags=None, perf_map=False, jitdump=False):
        self.name = name
        self.perf_map = perf_map    # the program writes /tmp/perf-PID.map: `stack --perf-map` it
        self.jitdump = jitdump      # the program writes ./jit-PID.dump: `stack --jitdump` it
        self.libs = libs            # (file name, sources, flags) built beside the program and copied with it
        self.sources = sources
        self.flags = flags
        self.source_flags = source_flags or {}  # source -> flags of its own, after `flags` (compiled apart)
        self.truth = truth          # "gdb" or "chain"
        self.chain = chain          # the crashing (first) thread's own functions, innermost first
        self.args = list(args)
        self.cpu = cpu              # qemu -cpu; None: the machine's gdb_cpu for gdb truth, qemu's default otherwise
        self.threads_chains = threads_chains  # for every thread: a function of its frames -> ok


def threads_check(threads):
    """threads.c: the main thread aborts; thread i is blocked 3i + 1 deep."""
    depths = []
    for t in threads:
        names = [f["function"] for f in t["frames"] if f["function"] in ("blocked", "thread_main", "main")]
        if names == ["main"]:
            continue
        k = names.count("blocked")
        if names != ["blocked"] * k + ["thread_main"]:
            return "thread %s: chain %s" % (t["tid"], names)
        depths.append(k)
    want = [3 * i + 1 for i in range(8)]
    if sorted(depths) != want:
        return "blocked depths %s, want %s" % (sorted(depths), want)
    return None


def backtrace_child_check(threads):
    """backtrace_child.c (elfutils' backtrace test): abort several frames deep in
    a SIGUSR2 handler over the thread's chain; main in pthread_join, a thread in pause()."""
    want = [["handler_deep"] * 3 + ["on_usr2", "level3", "level2", "level1", "aborting"], ["main"],
            ["paused", "pausing"]]
    own = set(sum(want, []))
    got = [[f["function"] for f in t["frames"] if f["function"] in own] for t in threads]
    if sorted(got) != sorted(want):
        return "chains %s, want %s" % (got, want)
    return None


def fp_over_cfi_check(threads):
    """fp_over_cfi.c: frame-pointer code over a function with unwind information
    (the aborting main thread) and over libc's pause (the other thread)."""
    want = [["cfi_abort", "fp_inner", "fp_outer", "main"], ["fp_wait", "fp_work", "thread_main"]]
    own = set(sum(want, []))
    got = [[f["function"] for f in t["frames"] if f["function"] in own] for t in threads]
    if sorted(got) != sorted(want):
        return "chains %s, want %s" % (got, want)
    return None


# Frame-pointer code without unwind tables, calling a function built apart
# with unwind tables that never mention the frame pointer.
FP_ONLY = "-O2 -no-pie -fno-omit-frame-pointer -fno-asynchronous-unwind-tables -fno-unwind-tables"
FP_OVER_CFI_CALLEE = {"fp_over_cfi_callee.c": "-fomit-frame-pointer -fasynchronous-unwind-tables -funwind-tables"}

AARCH64_FIXTURES = [
    Fixture("recursion", ["recursion.c"], "-O2 -g -no-pie", "gdb", recursion_chain()),
    Fixture("recursion_static", ["recursion.c"], "-O2 -g -static", "gdb", recursion_chain()),
    Fixture("recursion_pie", ["recursion.c"], "-O2 -g -fPIE -pie", "chain", recursion_chain()),
    Fixture("recursion_pac", ["recursion.c"], "-O2 -g -no-pie -mbranch-protection=standard", "chain",
            recursion_chain()),
    Fixture("recursion_pac_pie", ["recursion.c"], "-O2 -g -fPIE -pie -mbranch-protection=standard", "chain",
            recursion_chain()),
    Fixture("signals", ["signals.c"], "-O2 -g -no-pie", "gdb", SIGNAL_CHAIN),
    Fixture("signals_altstack", ["signals.c"], "-O2 -g -no-pie", "gdb", SIGNAL_CHAIN, args=["altstack"]),
    # qemu's default CPU has SVE: its signal frames carry an SVE record.
    Fixture("signals_sve", ["signals.c"], "-O2 -g -no-pie", "chain", SIGNAL_CHAIN, cpu="max"),
    Fixture("signals_pac_pie", ["signals.c"], "-O2 -g -fPIE -pie -mbranch-protection=standard", "chain",
            SIGNAL_CHAIN, args=["altstack"], cpu="max"),
    Fixture("threads", ["threads.c"], "-O2 -g -no-pie", "gdb", threads_chains=threads_check),
    Fixture("threads_pie", ["threads.c"], "-O2 -g -fPIE -pie", "chain", threads_chains=threads_check),
    Fixture("cxx_unwind", ["cxx_unwind.cpp"], "-O2 -g -no-pie", "gdb"),
    Fixture("noinfo", ["noinfo_main.c", "noinfo.S"], "-O2 -g -no-pie", "gdb", NOINFO_CHAIN),
    Fixture("noinfo_static", ["noinfo_main.c", "noinfo.S"], "-O2 -g -static", "gdb", NOINFO_CHAIN),
    # No unwind tables for the program's own code: frame records and prologues.
    Fixture("recursion_no_unwind_tables", ["recursion.c"],
            "-O2 -no-pie -fno-asynchronous-unwind-tables -fno-unwind-tables", "chain", recursion_chain()),
    Fixture("signals_no_unwind_tables", ["signals.c"],
            "-O2 -no-pie -fno-asynchronous-unwind-tables -fno-unwind-tables", "chain", SIGNAL_CHAIN),
    Fixture("tailcall", ["tailcall.c"], "-O2 -g -no-pie -foptimize-sibling-calls", "gdb", TAILCALL_CHAIN),
    Fixture("dlopen", ["dlopen_main.c"], "-O2 -g -no-pie -ldl", "gdb", DLOPEN_CHAIN, libs=PLUGIN),
    Fixture("dlopen_pie", ["dlopen_main.c"], "-O2 -g -fPIE -pie -ldl", "chain", DLOPEN_CHAIN, libs=PLUGIN),
    Fixture("stack_overflow", ["stack_overflow.c"], "-O2 -g -no-pie", "gdb", threads_chains=overflow_check),
    Fixture("asm_cfi", ["asm_main.c", "asm_cfi.S"], "-O2 -g -no-pie", "gdb", ASM_CFI_CHAIN),
    Fixture("fp_over_cfi", ["fp_over_cfi.c", "fp_over_cfi_callee.c"], FP_ONLY, "chain",
            threads_chains=fp_over_cfi_check, source_flags=FP_OVER_CFI_CALLEE),
    Fixture("fp_over_cfi_static", ["fp_over_cfi.c", "fp_over_cfi_callee.c"], FP_ONLY + " -static", "chain",
            threads_chains=fp_over_cfi_check, source_flags=FP_OVER_CFI_CALLEE),
    Fixture("gdb_jit", ["../../jit/gdb_jit.c"], "-O2 -g -no-pie", "gdb", GDB_JIT_CHAIN,
            args=["gdb_jit_code.elf", "abort"], libs=GDB_JIT_OBJECT),
    Fixture("jit_chain", ["../../jit/jit_chain.c"], "-O2 -g -no-pie", "chain", JIT_CHAIN, args=["abort"],
            threads_chains=jit_check, perf_map=True),
    Fixture("register_frame", ["../../jit/gdb_jit.c"], "-O2 -g -static", "chain",
            args=["gdb_jit_code.elf", "register-abort"], libs=GDB_JIT_OBJECT, threads_chains=registered_check),
    Fixture("jitdump", ["../../jit/gdb_jit.c"], "-O2 -g -no-pie", "chain", JITDUMP_CHAIN,
            args=["gdb_jit_code.elf", "jitdump-abort"], libs=JITDUMP_OBJECT, jitdump=True),
]


ARM_NO_TABLES = "-fno-unwind-tables -fno-asynchronous-unwind-tables"

# 32-bit ARM: gcc defaults to Thumb-2, and C without -funwind-tables gets no
# EHABI entries for its own functions (prologue analysis); C++ and
# -funwind-tables get .ARM.exidx; -marm gives ARM-state code.
ARM_FIXTURES = [
    Fixture("recursion", ["recursion.c"], "-O2 -g -no-pie", "gdb", recursion_chain()),
    Fixture("recursion_unwind_tables", ["recursion.c"], "-O2 -g -no-pie -funwind-tables", "gdb",
            recursion_chain()),
    Fixture("recursion_arm", ["recursion.c"], "-O2 -g -no-pie -marm", "gdb", recursion_chain()),
    Fixture("recursion_arm_unwind_tables", ["recursion.c"], "-O2 -g -no-pie -marm -funwind-tables", "gdb",
            recursion_chain()),
    Fixture("recursion_static", ["recursion.c"], "-O2 -g -static -funwind-tables", "gdb", recursion_chain()),
    Fixture("recursion_pie", ["recursion.c"], "-O2 -g -fPIE -pie -funwind-tables", "chain", recursion_chain()),
    Fixture("signals", ["signals.c"], "-O2 -g -no-pie -funwind-tables", "gdb", SIGNAL_CHAIN),
    Fixture("signals_altstack", ["signals.c"], "-O2 -g -no-pie -funwind-tables", "gdb", SIGNAL_CHAIN,
            args=["altstack"]),
    Fixture("signals_no_unwind_tables", ["signals.c"], "-O2 -g -no-pie", "chain", SIGNAL_CHAIN),
    Fixture("threads", ["threads.c"], "-O2 -g -no-pie -funwind-tables", "gdb", threads_chains=threads_check),
    Fixture("cxx_unwind", ["cxx_unwind.cpp"], "-O2 -g -no-pie", "gdb"),
    Fixture("tailcall", ["tailcall.c"], "-O2 -g -no-pie -funwind-tables -foptimize-sibling-calls", "gdb",
            TAILCALL_CHAIN),
    Fixture("dlopen", ["dlopen_main.c"], "-O2 -g -no-pie -funwind-tables -ldl", "gdb", DLOPEN_CHAIN,
            libs=[("libfw_plugin.so", ["plugin.c"], "-O2 -g -fPIC -shared -funwind-tables")]),
    # No unwind information at all for the program's own code (no -g: no
    # .debug_frame either): its frames from prologue analysis alone.
    Fixture("recursion_apcs", ["recursion.c"], "-O2 -no-pie -marm -mapcs-frame " + ARM_NO_TABLES, "gdb",
            recursion_chain()),
    Fixture("prologues", ["prologues.c"], "-O2 -no-pie -mfpu=vfpv3-d16 " + ARM_NO_TABLES, "gdb", PROLOGUES_CHAIN),
    # gdb 13 reads a PC of 0 as the caller of the ARM-state vfp_frame (after its vpush).
    Fixture("prologues_arm", ["prologues.c"], "-O2 -no-pie -marm -mfpu=vfpv3-d16 " + ARM_NO_TABLES, "chain",
            PROLOGUES_CHAIN),
    # Thumb-2 (r7) and ARM state (r11): the callee's unwind information is its .ARM.exidx entry.
    Fixture("fp_over_cfi", ["fp_over_cfi.c", "fp_over_cfi_callee.c"], FP_ONLY, "chain",
            threads_chains=fp_over_cfi_check, source_flags=FP_OVER_CFI_CALLEE),
    Fixture("fp_over_cfi_arm", ["fp_over_cfi.c", "fp_over_cfi_callee.c"], FP_ONLY + " -marm", "chain",
            threads_chains=fp_over_cfi_check, source_flags=FP_OVER_CFI_CALLEE),
    Fixture("fp_over_cfi_static", ["fp_over_cfi.c", "fp_over_cfi_callee.c"], FP_ONLY + " -static", "chain",
            threads_chains=fp_over_cfi_check, source_flags=FP_OVER_CFI_CALLEE),
    # The jit object's ARM-state code has DWARF CFI (.eh_frame), the program Thumb-2 with EHABI tables.
    Fixture("gdb_jit", ["../../jit/gdb_jit.c"], "-O2 -g -no-pie -funwind-tables", "gdb", GDB_JIT_CHAIN,
            args=["gdb_jit_code.elf", "abort"], libs=GDB_JIT_OBJECT),
    Fixture("jit_chain", ["../../jit/jit_chain.c"], "-O2 -g -no-pie -funwind-tables", "chain", JIT_CHAIN,
            args=["abort"], threads_chains=jit_check, perf_map=True),
    Fixture("jitdump", ["../../jit/gdb_jit.c"], "-O2 -g -no-pie -funwind-tables", "chain", JITDUMP_CHAIN,
            args=["gdb_jit_code.elf", "jitdump-abort"], libs=JITDUMP_OBJECT, jitdump=True),
]

# ppc64le (ELFv2): gcc's CFI everywhere; without it, the back chain. The
# fixtures in AArch64 or ARM assembly, and the jit ones (machine code of
# their own), are left out.
PPC64LE_NO_TABLES = "-O2 -no-pie -fno-asynchronous-unwind-tables -fno-unwind-tables"
PPC64LE_FIXTURES = [
    Fixture("recursion", ["recursion.c"], "-O2 -g -no-pie", "gdb", recursion_chain()),
    Fixture("recursion_static", ["recursion.c"], "-O2 -g -static", "gdb", recursion_chain()),
    Fixture("recursion_pie", ["recursion.c"], "-O2 -g -fPIE -pie", "chain", recursion_chain()),
    # gdb 13 reads qemu 7.2's signal frames at the kernel's offset (their
    # ucontext is 16 bytes higher): chain truth where a signal frame is walked.
    Fixture("signals", ["signals.c"], "-O2 -g -no-pie", "chain", SIGNAL_CHAIN),
    Fixture("signals_altstack", ["signals.c"], "-O2 -g -no-pie", "chain", SIGNAL_CHAIN, args=["altstack"]),
    Fixture("threads", ["threads.c"], "-O2 -g -no-pie", "gdb", threads_chains=threads_check),
    Fixture("threads_pie", ["threads.c"], "-O2 -g -fPIE -pie", "chain", threads_chains=threads_check),
    Fixture("cxx_unwind", ["cxx_unwind.cpp"], "-O2 -g -no-pie", "gdb"),
    Fixture("recursion_no_unwind_tables", ["recursion.c"], PPC64LE_NO_TABLES, "chain", recursion_chain()),
    Fixture("signals_no_unwind_tables", ["signals.c"], PPC64LE_NO_TABLES, "chain", SIGNAL_CHAIN),
    Fixture("tailcall", ["tailcall.c"], "-O2 -g -no-pie -foptimize-sibling-calls", "gdb", TAILCALL_CHAIN),
    Fixture("dlopen", ["dlopen_main.c"], "-O2 -g -no-pie -ldl", "gdb", DLOPEN_CHAIN, libs=PLUGIN),
    Fixture("dlopen_pie", ["dlopen_main.c"], "-O2 -g -fPIE -pie -ldl", "chain", DLOPEN_CHAIN, libs=PLUGIN),
    Fixture("stack_overflow", ["stack_overflow.c"], "-O2 -g -no-pie", "chain", threads_chains=overflow_check),
    Fixture("fp_over_cfi", ["fp_over_cfi.c", "fp_over_cfi_callee.c"], FP_ONLY, "chain",
            threads_chains=fp_over_cfi_check, source_flags=FP_OVER_CFI_CALLEE),
]


# 32-bit PowerPC (SysV, big-endian): gcc's CFI everywhere; without it, the
# back chain (the LR save word 4 bytes above the caller's r1). qemu's
# sigreturn and rt_sigreturn trampolines on a page of their own.
PPC_FIXTURES = [
    Fixture("recursion", ["recursion.c"], "-O2 -g -no-pie", "gdb", recursion_chain()),
    Fixture("recursion_static", ["recursion.c"], "-O2 -g -static", "gdb", recursion_chain()),
    Fixture("recursion_pie", ["recursion.c"], "-O2 -g -fPIE -pie", "chain", recursion_chain()),
    Fixture("signals", ["signals.c"], "-O2 -g -no-pie", "gdb", SIGNAL_CHAIN),
    Fixture("signals_altstack", ["signals.c"], "-O2 -g -no-pie", "gdb", SIGNAL_CHAIN, args=["altstack"]),
    Fixture("signals_old", ["signals.c"], "-O2 -g -no-pie", "gdb", SIGNAL_CHAIN, args=["nosiginfo"]),
    Fixture("threads", ["threads.c"], "-O2 -g -no-pie", "gdb", threads_chains=threads_check),
    Fixture("threads_pie", ["threads.c"], "-O2 -g -fPIE -pie", "chain", threads_chains=threads_check),
    Fixture("cxx_unwind", ["cxx_unwind.cpp"], "-O2 -g -no-pie", "gdb"),
    # Without unwind tables: the back chain, the prologues' saves, -msecure-plt's `bcl 20,31,.+4` in prologues.
    Fixture("recursion_no_unwind_tables", ["recursion.c"], PPC64LE_NO_TABLES, "gdb", recursion_chain()),
    Fixture("signals_no_unwind_tables", ["signals.c"], PPC64LE_NO_TABLES, "gdb", SIGNAL_CHAIN),
    Fixture("tailcall", ["tailcall.c"], "-O2 -g -no-pie -foptimize-sibling-calls", "gdb", TAILCALL_CHAIN),
    Fixture("dlopen", ["dlopen_main.c"], "-O2 -g -no-pie -ldl", "gdb", DLOPEN_CHAIN, libs=PLUGIN),
    Fixture("dlopen_pie", ["dlopen_main.c"], "-O2 -g -fPIE -pie -ldl", "chain", DLOPEN_CHAIN, libs=PLUGIN),
    Fixture("stack_overflow", ["stack_overflow.c"], "-O2 -g -no-pie", "gdb", threads_chains=overflow_check),
    Fixture("fp_over_cfi", ["fp_over_cfi.c", "fp_over_cfi_callee.c"], FP_ONLY, "gdb",
            threads_chains=fp_over_cfi_check, source_flags=FP_OVER_CFI_CALLEE),
    Fixture("backtrace_child", ["backtrace_child.c"], "-O2 -g -no-pie", "gdb", threads_chains=backtrace_child_check),
]

# s390x: big-endian, the CFA 160 bytes above the caller's r15, the return
# address in r14, qemu's signal trampolines (`svc 173`) on the stack.
S390X_FIXTURES = [
    Fixture("recursion", ["recursion.c"], "-O2 -g -no-pie", "gdb", recursion_chain()),
    Fixture("recursion_static", ["recursion.c"], "-O2 -g -static", "gdb", recursion_chain()),
    Fixture("recursion_pie", ["recursion.c"], "-O2 -g -fPIE -pie", "chain", recursion_chain()),
    # gdb 13 takes qemu's rt frames for old-style ones (their trampoline is not
    # in the frame) and stops at the first: right up to it.
    Fixture("signals", ["signals.c"], "-O2 -g -no-pie", "prefix", SIGNAL_CHAIN),
    Fixture("signals_altstack", ["signals.c"], "-O2 -g -no-pie", "prefix", SIGNAL_CHAIN, args=["altstack"]),
    Fixture("threads", ["threads.c"], "-O2 -g -no-pie", "gdb", threads_chains=threads_check),
    Fixture("cxx_unwind", ["cxx_unwind.cpp"], "-O2 -g -no-pie", "gdb"),
    Fixture("tailcall", ["tailcall.c"], "-O2 -g -no-pie -foptimize-sibling-calls", "gdb", TAILCALL_CHAIN),
    Fixture("dlopen", ["dlopen_main.c"], "-O2 -g -no-pie -ldl", "gdb", DLOPEN_CHAIN, libs=PLUGIN),
    Fixture("dlopen_pie", ["dlopen_main.c"], "-O2 -g -fPIE -pie -ldl", "chain", DLOPEN_CHAIN, libs=PLUGIN),
    Fixture("stack_overflow", ["stack_overflow.c"], "-O2 -g -no-pie", "prefix", threads_chains=overflow_check),
    Fixture("threads_pie", ["threads.c"], "-O2 -g -fPIE -pie", "chain", threads_chains=threads_check),
    # No unwind tables for the program's own code: prologue analysis (gdb 13
    # stops at the first such frame).
    Fixture("recursion_no_unwind_tables", ["recursion.c"],
            "-O2 -no-pie -fno-asynchronous-unwind-tables -fno-unwind-tables", "prefix", recursion_chain()),
    Fixture("signals_no_unwind_tables", ["signals.c"],
            "-O2 -no-pie -fno-asynchronous-unwind-tables -fno-unwind-tables", "prefix", SIGNAL_CHAIN),
    Fixture("fp_over_cfi", ["fp_over_cfi.c", "fp_over_cfi_callee.c"], FP_ONLY, "prefix",
            threads_chains=fp_over_cfi_check, source_flags=FP_OVER_CFI_CALLEE),
    Fixture("gdb_jit", ["../../jit/gdb_jit.c"], "-O2 -g -no-pie", "gdb", GDB_JIT_CHAIN,
            args=["gdb_jit_code.elf", "abort"], libs=GDB_JIT_OBJECT),
    Fixture("register_frame", ["../../jit/gdb_jit.c"], "-O2 -g -static", "chain",
            args=["gdb_jit_code.elf", "register-abort"], libs=GDB_JIT_OBJECT, threads_chains=registered_check),
    Fixture("jitdump", ["../../jit/gdb_jit.c"], "-O2 -g -no-pie", "chain", JITDUMP_CHAIN,
            args=["gdb_jit_code.elf", "jitdump-abort"], libs=JITDUMP_OBJECT, jitdump=True),
]

FIXTURES_OF = {"aarch64": AARCH64_FIXTURES, "arm": ARM_FIXTURES, "ppc": PPC_FIXTURES, "ppc64le": PPC64LE_FIXTURES,
               "s390x": S390X_FIXTURES}


def log(msg):
    print(msg, flush=True)


def run(cmd, cwd=None, timeout=120, preexec=None):
    return subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=timeout, preexec_fn=preexec)


def allow_cores():
    resource.setrlimit(resource.RLIMIT_CORE, (resource.RLIM_INFINITY, resource.RLIM_INFINITY))
    try:  # the host qemu process's own core: keep it tiny
        with open("/proc/self/coredump_filter", "w") as f:
            f.write("0")
    except OSError:
        pass


def compile_to(machine, sources, flags, out, source_flags=None):
    cxx = any(s.endswith(".cpp") for s in sources)
    cc = machine["cxx" if cxx else "cc"]
    srcs = []
    for s in sources:
        own = (source_flags or {}).get(s)
        if own is None:
            srcs.append(os.path.join(FIXTURES, s))
            continue
        obj = "%s.%s.o" % (out, os.path.splitext(s)[0])
        r = run([cc, "-c", os.path.join(FIXTURES, s)] + flags.split() + own.split() + ["-o", obj])
        if r.returncode != 0:
            raise RuntimeError("%s failed: %s" % (cc, r.stderr.strip()))
        srcs.append(obj)
    r = run([cc] + srcs + flags.split() + ["-o", out, "-pthread"])
    if r.returncode != 0:
        raise RuntimeError("%s failed: %s" % (cc, r.stderr.strip()))


def build(machine, fx, work):
    exe = os.path.join(work, fx.name)
    compile_to(machine, fx.sources, fx.flags, exe, fx.source_flags)
    for lib, sources, flags in fx.libs:
        compile_to(machine, sources, flags, os.path.join(work, lib))
    return exe


def make_core(machine, fx, exe, cpu):
    """Runs the fixture under qemu in a directory of its own; returns its core."""
    d = os.path.join(os.path.dirname(exe), fx.name + ".run" + ("-" + cpu.replace(",", "_") if cpu else ""))
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    cmd = [machine["qemu"], "-L", machine["sysroot"]]
    if cpu:
        cmd += ["-cpu", cpu]
    # Started by a relative path, as a user would: framewalk finds it through AT_EXECFN.
    shutil.copy(exe, os.path.join(d, fx.name))
    for lib, _, _ in fx.libs:
        shutil.copy(os.path.join(os.path.dirname(exe), lib), os.path.join(d, lib))
    run(cmd + ["./" + fx.name] + fx.args, cwd=d, preexec=allow_cores)
    cores = [f for f in os.listdir(d) if f.startswith("qemu_") and f.endswith(".core")]
    if len(cores) != 1:
        raise RuntimeError("qemu wrote %d guest cores in %s" % (len(cores), d))
    return os.path.join(d, cores[0]), os.path.join(d, fx.name)


def gdb_threads(machine, exe, core):
    # Libraries dlopen()ed by a relative path are found beside the program.
    r = run(["gdb-multiarch", "-nx", "-batch", "-ex", "set sysroot " + machine["sysroot"],
             "-ex", "set solib-search-path " + os.path.dirname(exe),
             "-ex", "set backtrace past-main on", "-ex", "set backtrace past-entry on", "-ex", "file " + exe,
             "-ex", "core-file " + core, "-x", GDB_FRAMES], cwd=os.path.dirname(exe), timeout=300)
    for line in r.stdout.splitlines():
        if line.startswith("FRAMEWALK-GDB-JSON "):
            return json.loads(line[len("FRAMEWALK-GDB-JSON "):])["threads"]
    raise RuntimeError("gdb-multiarch gave no frames: " + (r.stderr.strip() or r.stdout.strip())[-400:])


def perf_map_of(core):
    """The perf map the program of a qemu core wrote: qemu names its cores
    qemu_PROGRAM_DATE-TIME_PID.core, and the guest's pid is qemu's."""
    m = re.search(r"_(\d+)\.core$", core)
    if not m:
        raise RuntimeError("no pid in the core's name " + core)
    return "/tmp/perf-%s.map" % m.group(1)


def framewalk_threads(fw, machine, core, extra=()):
    r = run([fw, "stack", "--core", core, "--sysroot", machine["sysroot"], "--format=json", "-n", "4096"] +
            list(extra))
    if r.returncode not in (0, 1):
        raise RuntimeError("framewalk exited %d: %s" % (r.returncode, r.stderr.strip()))
    return json.loads(r.stdout)["threads"], r.stderr


def physical(frames):
    return [f for f in frames if f["type"] not in ("inline", "tailcall")]


def gdb_pcs(thread):
    """gdb's PCs of a thread's physical frames. gdb shows a last frame at PC 0
    where a ppc64 back chain ends (a saved LR of 0 after __libc_start_main):
    framewalk ends `outermost` there, without it."""
    pcs = [int(x["pc"], 16) for x in physical(thread["frames"])]
    while pcs and pcs[-1] == 0:
        pcs.pop()
    return pcs


GDB_CORRUPT = "previous frame inner to this frame (corrupt stack?)"


def compare_with_gdb(gdb, fw, prefix=False):
    """prefix: gdb stops early (truth "prefix"), its frames are framewalk's
    first ones; but for the last one where gdb says it found it in a corrupt
    stack (its return address read from memory it misread: qemu's sparc64
    signal frames)."""
    problems = []
    by_tid = {t["tid"]: t for t in fw}
    if sorted(by_tid) != sorted(t["tid"] for t in gdb):
        return ["threads differ: gdb %s, framewalk %s" % (sorted(t["tid"] for t in gdb), sorted(by_tid))]
    for g in gdb:
        f = by_tid[g["tid"]]
        gp = gdb_pcs(g)
        fp = [int(x["pc"], 16) for x in f["frames"]]
        if prefix:
            if g["stop"] == GDB_CORRUPT:
                gp = gp[:-1]
            fp = fp[:len(gp)]
        if gp != fp:
            n = next((i for i in range(min(len(gp), len(fp))) if gp[i] != fp[i]), min(len(gp), len(fp)))
            problems.append("thread %d: %d frames (gdb %d); first difference at #%d: gdb %s, framewalk %s" % (
                g["tid"], len(fp), len(gp), n, hex(gp[n]) if n < len(gp) else "-",
                hex(fp[n]) if n < len(fp) else "-"))
        elif not prefix and g["stop"] == "outermost" and f["stop"] != "outermost":
            problems.append("thread %d: framewalk stopped %s, gdb at the outermost frame" % (g["tid"], f["stop"]))
    return problems


def check_chain(fx, fw):
    problems = []
    if fx.chain:
        own = set(fx.chain)
        t = fw[0]
        names = [f["function"] for f in t["frames"] if f["function"] in own]
        if names != fx.chain:
            problems.append("thread %d: chain %s, want %s" % (t["tid"], names, fx.chain))
    if fx.threads_chains:
        p = fx.threads_chains(fw)
        if p:
            problems.append(p)
    for t in fw:
        # cannot-unwind: EXIDX_CANTUNWIND, the declared end of an ARM thread (glibc's __clone).
        if t["stop"] not in ("outermost", "cannot-unwind"):
            problems.append("thread %d: stopped %s (%s)" % (t["tid"], t["stop"], t.get("stop_detail")))
    return problems


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--framewalk", required=True)
    ap.add_argument("--machine", default="aarch64", choices=sorted(MACHINES))
    ap.add_argument("--work", required=True, help="directory for the fixtures and their cores")
    ap.add_argument("--only", help="comma-separated fixture names")
    ap.add_argument("--show-frames", action="store_true")
    ap.add_argument("--replay", help="examples/replay_backend: each core is also saved as a snapshot, which it and "
                                     "`framewalk stack --snapshot` must walk to the core's frames")
    args = ap.parse_args()
    machine = MACHINES[args.machine]
    for tool in (machine["cc"], machine["cxx"], machine["qemu"], "gdb-multiarch"):
        if not shutil.which(tool):
            log("skip: %s not found" % tool)
            return 77
    fw = os.path.abspath(args.framewalk)
    os.makedirs(args.work, exist_ok=True)
    only = set(args.only.split(",")) if args.only else None
    failures = 0
    tried = 0
    for fx in FIXTURES_OF[args.machine]:
        if only and fx.name not in only:
            continue
        tried += 1
        try:
            exe = build(machine, fx, args.work)
            cpu = fx.cpu or (machine["gdb_cpu"] if fx.truth == "gdb" else None)
            core, run_exe = make_core(machine, fx, exe, cpu)
            extra = []
            if fx.perf_map:
                perf_map = perf_map_of(core)
                shutil.move(perf_map, os.path.dirname(core))
                extra = ["--perf-map", os.path.join(os.path.dirname(core), os.path.basename(perf_map))]
            if fx.jitdump:
                pid = re.search(r"_(\d+)\.core$", core).group(1)
                extra += ["--jitdump", os.path.join(os.path.dirname(core), "jit-%s.dump" % pid)]
            fw_threads, fw_err = framewalk_threads(fw, machine, core, extra)
            problems = check_chain(fx, fw_threads)
            gdb_frames = "-"
            if fx.truth in ("gdb", "prefix"):
                gdb = gdb_threads(machine, run_exe, core)
                gdb_frames = sum(len(gdb_pcs(t)) for t in gdb)
                problems += compare_with_gdb(gdb, fw_threads, prefix=fx.truth == "prefix")
            if args.replay:
                replay_problems, _ = compare_replay.compare(fw, os.path.abspath(args.replay), core,
                                                            os.path.join(args.work, fx.name + ".replay"),
                                                            sysroot=machine["sysroot"])
                problems += ["snapshot replay: " + p for p in replay_problems]
        except (RuntimeError, subprocess.TimeoutExpired, ValueError, KeyError) as e:
            problems = ["error: %s" % e]
            fw_threads = []
            gdb_frames = "-"
        frames = sum(len(t["frames"]) for t in fw_threads)
        status = "ok  " if not problems else "FAIL"
        log("%s %-20s %-5s %2d threads %4d frames (gdb: %s)" % (status, fx.name, fx.truth, len(fw_threads), frames,
                                                             gdb_frames))
        for p in problems:
            log("       " + p)
        if args.show_frames or problems:
            for t in fw_threads[:4]:
                log("       thread %d (%s):" % (t["tid"], t["stop"]))
                for i, f in enumerate(t["frames"][:60]):
                    log("         #%-3d %s %s [%s]" % (i, f["pc"], f["function"], f["source"]))
        failures += bool(problems)
    log("%s: %d fixtures, %d failed" % (args.machine, tried, failures))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())

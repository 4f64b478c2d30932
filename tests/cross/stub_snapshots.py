#!/usr/bin/env python3
"""framewalk on riscv64 and sparc64 programs run by qemu-user, against gdb-multiarch.

qemu-user 7.2 writes no core of these machines, so each fixture (fixtures/)
is cross-built, run under `qemu-MACHINE -g PORT`, and one gdb-multiarch
session continues it to its abort, saves it as a framewalk snapshot
(gdb_snapshot.py; on sparc64 after flushing each thread's register windows
to the stack, as a kernel does before it writes a core) and prints gdb's own
frames (tests/stack/gdb_frames.py). `framewalk stack --snapshot DIR
--sysroot /usr/TRIPLET` must then give gdb's frames PC for PC (truth "gdb"),
or the fixture's call chain (truth "chain", where gdb is wrong; "prefix":
the chain, and gdb's frames are framewalk's first ones where gdb stops
early: tests/cross/README.md says why).

  stub_snapshots.py --machine riscv64|sparc64 --framewalk build/framewalk --work DIR
  stub_snapshots.py --machine M --framewalk F --work DIR --program EXE ARGS...   (one program's snapshot and core)

Exit 77 (skipped) when the cross compiler, the qemu or gdb-multiarch is
missing. Every step is time-boxed; qemu is killed after each fixture.
"""
import argparse
import concurrent.futures
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import compare_cores as cc  # noqa: E402
import compare_replay  # noqa: E402  (tests/capi, on compare_cores' path)

GDB_SNAPSHOT = os.path.join(HERE, "gdb_snapshot.py")
SNAPSHOT_CORE = os.path.join(HERE, "snapshot_core.py")


def machine(triplet, qemu, pc_dwarf, registers, flush_windows=False, signal_sp_slot=0):
    return {"cc": triplet + "-gcc", "cxx": triplet + "-g++", "qemu": qemu, "sysroot": "/usr/" + triplet,
            "pc_dwarf": pc_dwarf, "registers": ",".join("%s=%d" % r for r in registers),
            "flush_windows": flush_windows, "signal_sp_slot": signal_sp_slot}


MACHINES = {
    # src/arch/riscv64/registers.hpp: x1..x31 are 1-31, the PC 64.
    "riscv64": machine("riscv64-linux-gnu", "qemu-riscv64", 64, [("x%d" % i, i) for i in range(1, 32)]),
    # src/arch/sparc/registers.hpp: %g1-%i7 are 1-31 (gdb names %o6 and
    # %i6 sp and fp), the PC 103.
    "sparc64": machine("sparc64-linux-gnu", "qemu-sparc64", 103,
                       [({"o6": "sp", "i6": "fp"}.get(n, n), r) for r, n in
                        enumerate("%s%d" % (bank, i) for bank in "goli" for i in range(8)) if r],
                       # pt_regs' %o6 in the rt_signal_frame at the trampoline's %sp + 2047.
                       flush_windows=True, signal_sp_slot=2047 + 192 + 128 + 8 * 14),
}
MACHINE = None  # MACHINES[--machine]

F = cc.Fixture
NO_TABLES = "-O2 -no-pie -fno-asynchronous-unwind-tables -fno-unwind-tables"


def fixtures(signals, no_tables, stack_overflow):
    """The fixtures, with the truths the machine's gdb allows: `signals` for
    the signal fixtures, `no_tables` for recursion_no_unwind_tables (the
    signals one is always "prefix"), stack_overflow where the machine runs it."""
    return [
        F("recursion", ["recursion.c"], "-O2 -g -no-pie", "gdb", cc.recursion_chain()),
        F("recursion_static", ["recursion.c"], "-O2 -g -static", "gdb", cc.recursion_chain()),
        F("recursion_pie", ["recursion.c"], "-O2 -g -fPIE -pie", "gdb", cc.recursion_chain()),
        F("signals", ["signals.c"], "-O2 -g -no-pie", signals, cc.SIGNAL_CHAIN),
        F("signals_altstack", ["signals.c"], "-O2 -g -no-pie", signals, cc.SIGNAL_CHAIN, args=["altstack"]),
        # gdb 13 stops at start_thread (Debian's libc has no CFI for it, and
        # .dynsym no symbol): framewalk goes on to __clone, its caller.
        F("threads", ["threads.c"], "-O2 -g -no-pie", "prefix", threads_chains=cc.threads_check),
        F("threads_pie", ["threads.c"], "-O2 -g -fPIE -pie", "prefix", threads_chains=cc.threads_check),
        F("cxx_unwind", ["cxx_unwind.cpp"], "-O2 -g -no-pie", "gdb"),
        F("tailcall", ["tailcall.c"], "-O2 -g -no-pie -foptimize-sibling-calls", "gdb", cc.TAILCALL_CHAIN),
        F("dlopen", ["dlopen_main.c"], "-O2 -g -no-pie -ldl", "gdb", cc.DLOPEN_CHAIN, libs=cc.PLUGIN),
        F("dlopen_pie", ["dlopen_main.c"], "-O2 -g -fPIE -pie -ldl", "gdb", cc.DLOPEN_CHAIN, libs=cc.PLUGIN),
    ] + ([
        # Where the main thread waits in pthread_join (no CFI, no symbol),
        # gdb calls the frame outermost: framewalk stops there without unwind information.
        F("stack_overflow", ["stack_overflow.c"], "-O2 -g -no-pie", "prefix", threads_chains=cc.overflow_check),
    ] if stack_overflow else []) + [
        # No unwind tables for the program's own code: prologue analysis
        # (riscv64; gdb 13 stops at leaf, whose call to abort is its last
        # instruction), register windows (sparc64).
        F("recursion_no_unwind_tables", ["recursion.c"], NO_TABLES, no_tables, cc.recursion_chain()),
        # gdb 13 stops at the first signal frame here: right up to it.
        F("signals_no_unwind_tables", ["signals.c"], NO_TABLES, "prefix", cc.SIGNAL_CHAIN),
        F("fp_over_cfi", ["fp_over_cfi.c", "fp_over_cfi_callee.c"], cc.FP_ONLY, "chain",
          threads_chains=cc.fp_over_cfi_check, source_flags=cc.FP_OVER_CFI_CALLEE),
    ]


# sparc64: qemu-user delivers a signal without flushing the interrupted
# window to its save area (it copies it into the frame, as the kernel also
# does): gdb reads the save area and stops after the interrupted frame,
# framewalk reads the frame's copy.
FIXTURES = {"riscv64": fixtures("gdb", "prefix", stack_overflow=True),
            "sparc64": fixtures("prefix", "gdb", stack_overflow=True)}

# gdb cannot call a function in one thread of several of qemu-user's:
# multi-threaded sparc64 fixtures run with sparc64/flush_windows.c
# preloaded, whose pause(), pthread_join() and abort() flush the thread's
# windows, and abort() stops the program on an illtrap.
FLUSHED = {"threads", "threads_pie", "fp_over_cfi", "stack_overflow"}
FLUSH_WINDOWS_C = os.path.join(HERE, "sparc64", "flush_windows.c")

# qemu 7.2 puts its riscv64 signal trampoline on the page after ld.so's,
# which no maps line names executable (a kernel's is in the vDSO): the
# replay back-end (executable mappings only) and a core (code from its
# files and the vDSO) do not take a caller there found by prologue analysis
# (without CFI), where framewalk's snapshot target (every mapping) does.
NO_REPLAY = {"riscv64": {"signals_no_unwind_tables"}, "sparc64": set()}


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def capture(fx, exe, work, timeout, threaded=False):
    """Runs the fixture under qemu's gdb stub; returns (snapshot directory,
    gdb's threads). `threaded`: as the FLUSHED fixtures."""
    d = os.path.join(work, fx.name + ".run")
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    shutil.copy(exe, os.path.join(d, fx.name))
    for lib, _, _ in fx.libs:
        shutil.copy(os.path.join(os.path.dirname(exe), lib), os.path.join(d, lib))
    snapshot = os.path.join(work, fx.name + ".snapshot")
    shutil.rmtree(snapshot, ignore_errors=True)
    port = free_port()
    preload = []
    if MACHINE["flush_windows"] and (fx.name in FLUSHED or threaded):
        lib = os.path.join(d, "flush_windows.so")
        r = cc.run([MACHINE["cc"], "-O2", "-shared", "-fPIC", FLUSH_WINDOWS_C, "-o", lib])
        if r.returncode != 0:
            raise RuntimeError("flush_windows.c: " + r.stderr.strip())
        preload = ["-E", "LD_PRELOAD=" + lib]
    qemu = subprocess.Popen([MACHINE["qemu"], "-L", MACHINE["sysroot"], "-g", str(port)] + preload +
                            ["./" + fx.name] + fx.args,
                            cwd=d, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        env = dict(os.environ, FW_SNAPSHOT_DIR=snapshot, FW_SYSROOT=MACHINE["sysroot"], FW_MACHINE=MACHINE["name"],
                   FW_PC_DWARF=str(MACHINE["pc_dwarf"]), FW_REGISTERS=MACHINE["registers"],
                   FW_FLUSH_WINDOWS="1" if MACHINE["flush_windows"] else "",
                   FW_SIGNAL_SP_SLOT=str(MACHINE["signal_sp_slot"]))
        r = subprocess.run(["gdb-multiarch", "-nx", "-batch", "-ex", "set sysroot " + MACHINE["sysroot"],
                            "-ex", "set solib-search-path " + d, "-ex", "set tcp connect-timeout 15",
                            "-ex", "set backtrace past-main on", "-ex", "set backtrace past-entry on",
                            "-ex", "file " + os.path.join(d, fx.name), "-ex", "target remote 127.0.0.1:%d" % port,
                            "-x", GDB_SNAPSHOT, "-x", cc.GDB_FRAMES],
                           cwd=d, env=env, capture_output=True, text=True, timeout=timeout)
    finally:
        try:
            os.killpg(qemu.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        qemu.wait()
    if "FRAMEWALK-SNAPSHOT-SAVED" not in r.stdout:
        raise RuntimeError("gdb saved no snapshot: " + (r.stderr.strip() or r.stdout.strip())[-400:])
    for line in r.stdout.splitlines():
        if line.startswith("FRAMEWALK-GDB-JSON "):
            with open(snapshot + ".gdb.json", "w") as f:
                f.write(line[len("FRAMEWALK-GDB-JSON "):])
            return snapshot, json.loads(line[len("FRAMEWALK-GDB-JSON "):])["threads"]
    raise RuntimeError("gdb-multiarch gave no frames: " + (r.stderr.strip() or r.stdout.strip())[-400:])


def framewalk_threads(fw, snapshot):
    r = cc.run([fw, "stack", "--snapshot", os.path.abspath(snapshot), "--sysroot", MACHINE["sysroot"],
                "--format=json", "-n", "4096"], timeout=60)
    if r.returncode not in (0, 1):
        raise RuntimeError("framewalk exited %d: %s" % (r.returncode, r.stderr.strip()))
    return json.loads(r.stdout)["threads"]


def replay_problems(replay, snapshot, fw_threads):
    """examples/replay_backend (the C API's user back-end) on the snapshot,
    its maps naming the sysroot's files by their host paths (the back-end
    opens what maps names): framewalk's frames and stops again."""
    host = snapshot + ".host"
    shutil.rmtree(host, ignore_errors=True)
    shutil.copytree(snapshot, host, symlinks=True)
    own = os.path.join(os.path.abspath(snapshot), "objects") + "/"
    with open(os.path.join(snapshot, "maps")) as f:
        lines = [l.split(None, 5) for l in f.read().splitlines()]
    with open(os.path.join(host, "maps"), "w") as f:
        for l in lines:
            path = l[5] if l[5].startswith(own) else MACHINE["sysroot"] + l[5]
            f.write(" ".join(l[:5] + [path]) + "\n")
    got = compare_replay.from_replay(replay, host)
    problems = []
    for t in fw_threads:
        pcs = [int(f["pc"], 16) for f in t["frames"]]
        if got.get(t["tid"]) != (pcs, t["stop"]):
            g = got.get(t["tid"], ([], None))
            problems.append("replay_backend: thread %d: %d frames, stop %s (framewalk: %d, %s)" % (
                t["tid"], len(g[0]), g[1], len(pcs), t["stop"]))
    return problems


def core_problems(fw, snapshot, fw_threads):
    """The core a kernel would write of the snapshot (snapshot_core.py),
    walked by `framewalk stack --core`: the snapshot's frames and stops again
    (the kernel's register note and NT_FILE, read as a core's)."""
    core = snapshot + ".core"
    r = cc.run([sys.executable, SNAPSHOT_CORE, snapshot, core])
    if r.returncode != 0:
        return ["snapshot_core.py: " + r.stderr.strip()]
    r = cc.run([fw, "stack", "--core", core, "--sysroot", MACHINE["sysroot"], "--format=json", "-n", "4096"],
               timeout=60)
    if r.returncode not in (0, 1):
        return ["framewalk --core exited %d: %s" % (r.returncode, r.stderr.strip()[-300:])]
    got = {t["tid"]: ([f["pc"] for f in t["frames"]], t["stop"]) for t in json.loads(r.stdout)["threads"]}
    problems = []
    for t in fw_threads:
        want = ([f["pc"] for f in t["frames"]], t["stop"])
        if got.get(t["tid"]) != want:
            g = got.get(t["tid"], ([], None))
            problems.append("core: thread %d: %d frames, stop %s (snapshot: %d, %s)" % (
                t["tid"], len(g[0]), g[1], len(want[0]), want[1]))
    return problems


def gives_up_with_gdb(gdb, fw_threads):
    """Threads framewalk ends `no-unwind-info` at the frame after which gdb
    also finds no caller (a return address in libc code without CFI or a
    symbol: stack_overflow's main thread, waiting in pthread_join)."""
    last = {t["tid"]: cc.gdb_pcs(t)[-1:] for t in gdb}
    return {t["tid"] for t in fw_threads if t["stop"] == "no-unwind-info" and t["frames"] and
            last.get(t["tid"]) == [int(t["frames"][-1]["pc"], 16)]}


def check(fw, fx, work, timeout, replay):
    """(problems, framewalk's threads, gdb's frame count) of one fixture."""
    try:
        exe = cc.build(MACHINE, fx, work)
        try:
            snapshot, gdb = capture(fx, exe, work, timeout)
        except RuntimeError as e:
            # qemu and gdb on a loaded machine: the capture, not a comparison,
            # is tried once more, and says so.
            cc.log("%s: capture failed (%s), trying once more" % (fx.name, str(e)[-200:]))
            snapshot, gdb = capture(fx, exe, work, timeout)
        fw_threads = framewalk_threads(fw, snapshot)
        same_end = gives_up_with_gdb(gdb, fw_threads)
        problems = [p for p in cc.check_chain(fx, fw_threads)
                    if not any(p.startswith("thread %d: stopped no-unwind-info" % tid) for tid in same_end)]
        if fx.truth in ("gdb", "prefix"):
            problems += cc.compare_with_gdb(gdb, fw_threads, prefix=fx.truth == "prefix")
        if fx.name not in NO_REPLAY[MACHINE["name"]]:
            if replay:
                problems += replay_problems(replay, snapshot, fw_threads)
            problems += core_problems(fw, snapshot, fw_threads)
        return problems, fw_threads, sum(len(cc.gdb_pcs(t)) for t in gdb)
    except (RuntimeError, subprocess.TimeoutExpired, ValueError, KeyError, OSError) as e:
        return ["error: %s" % e], [], "-"


def main():
    global MACHINE
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--machine", required=True, choices=sorted(MACHINES))
    ap.add_argument("--framewalk", required=True)
    ap.add_argument("--work", required=True, help="directory for the fixtures and their snapshots")
    ap.add_argument("--only", help="comma-separated fixture names")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--timeout", type=int, default=60, help="seconds for one fixture's gdb session")
    ap.add_argument("--show-frames", action="store_true")
    ap.add_argument("--replay", help="examples/replay_backend: it must walk each snapshot to framewalk's frames")
    ap.add_argument("--program", nargs=argparse.REMAINDER,
                    help="EXE ARGS...: instead of the fixtures, save a program of the machine that ends in abort() "
                         "(multi-threaded: as the FLUSHED fixtures) as WORK/EXE.snapshot and WORK/EXE.snapshot.core")
    args = ap.parse_args()
    MACHINE = dict(MACHINES[args.machine], name=args.machine)
    if args.program:
        exe = os.path.abspath(args.program[0])
        fx = F(os.path.basename(exe), [], "", "chain", args=args.program[1:])
        work = os.path.abspath(args.work)  # gdb runs in the program's directory
        os.makedirs(work, exist_ok=True)
        snapshot, _ = capture(fx, exe, work, args.timeout, threaded=True)
        r = cc.run([sys.executable, SNAPSHOT_CORE, snapshot, snapshot + ".core"])
        if r.returncode != 0:
            cc.log("snapshot_core.py: " + r.stderr.strip())
            return 1
        print(snapshot + ".core")
        return 0
    for tool in (MACHINE["cc"], MACHINE["cxx"], MACHINE["qemu"], "gdb-multiarch"):
        if not shutil.which(tool):
            cc.log("skip: %s not found" % tool)
            return 77
    fw = os.path.abspath(args.framewalk)
    os.makedirs(args.work, exist_ok=True)
    only = set(args.only.split(",")) if args.only else None
    fixtures = [fx for fx in FIXTURES[args.machine] if not only or fx.name in only]
    start = time.time()
    with concurrent.futures.ThreadPoolExecutor(max_workers=args.jobs) as pool:
        results = list(pool.map(lambda fx: check(fw, fx, args.work, args.timeout, args.replay and os.path.abspath(args.replay)), fixtures))
    failures = 0
    for fx, (problems, fw_threads, gdb_frames) in zip(fixtures, results):
        frames = sum(len(t["frames"]) for t in fw_threads)
        cc.log("%s %-20s %-5s %2d threads %4d frames (gdb: %s)" % ("ok  " if not problems else "FAIL", fx.name,
                                                                fx.truth, len(fw_threads), frames, gdb_frames))
        for p in problems:
            cc.log("       " + p)
        if args.show_frames or problems:
            for t in fw_threads[:4]:
                cc.log("       thread %d (%s):" % (t["tid"], t["stop"]))
                for i, f in enumerate(t["frames"][:60]):
                    cc.log("         #%-3d %s %s [%s]" % (i, f["pc"], f["function"], f["source"]))
        failures += bool(problems)
    cc.log("%s: %d fixtures, %d failed (%.0f s)" % (args.machine, len(fixtures), failures, time.time() - start))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())

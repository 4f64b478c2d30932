#!/usr/bin/env python3
"""framewalk on riscv64 programs run by qemu-user, against gdb-multiarch.

qemu-user 7.2 writes no riscv64 core, so each fixture (fixtures/) is
cross-built, run under `qemu-riscv64 -g PORT`, and one gdb-multiarch session
continues it to its abort, saves it as a framewalk snapshot
(gdb_snapshot.py) and prints gdb's own frames (tests/stack/gdb_frames.py).
`framewalk stack --snapshot DIR --sysroot /usr/riscv64-linux-gnu` must then
give gdb's frames PC for PC (truth "gdb"), or the fixture's call chain
(truth "chain", where gdb is wrong: tests/cross/README.md says why).

Exit 77 (skipped) when the cross compiler, qemu-riscv64 or gdb-multiarch is
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
MACHINE = {
    "cc": "riscv64-linux-gnu-gcc",
    "cxx": "riscv64-linux-gnu-g++",
    "qemu": "qemu-riscv64",
    "sysroot": "/usr/riscv64-linux-gnu",
}
PC_DWARF = 64  # src/arch/riscv64/registers.hpp: kPc

F = cc.Fixture
FIXTURES = [
    F("recursion", ["recursion.c"], "-O2 -g -no-pie", "gdb", cc.recursion_chain()),
    F("recursion_static", ["recursion.c"], "-O2 -g -static", "gdb", cc.recursion_chain()),
    F("recursion_pie", ["recursion.c"], "-O2 -g -fPIE -pie", "gdb", cc.recursion_chain()),
    F("signals", ["signals.c"], "-O2 -g -no-pie", "gdb", cc.SIGNAL_CHAIN),
    F("signals_altstack", ["signals.c"], "-O2 -g -no-pie", "gdb", cc.SIGNAL_CHAIN, args=["altstack"]),
    # gdb 13 stops at start_thread (Debian's libc has no CFI for it, and
    # .dynsym no symbol): framewalk goes on to __clone, its caller.
    F("threads", ["threads.c"], "-O2 -g -no-pie", "prefix", threads_chains=cc.threads_check),
    F("threads_pie", ["threads.c"], "-O2 -g -fPIE -pie", "prefix", threads_chains=cc.threads_check),
    F("cxx_unwind", ["cxx_unwind.cpp"], "-O2 -g -no-pie", "gdb"),
    F("tailcall", ["tailcall.c"], "-O2 -g -no-pie -foptimize-sibling-calls", "gdb", cc.TAILCALL_CHAIN),
    F("dlopen", ["dlopen_main.c"], "-O2 -g -no-pie -ldl", "gdb", cc.DLOPEN_CHAIN, libs=cc.PLUGIN),
    F("dlopen_pie", ["dlopen_main.c"], "-O2 -g -fPIE -pie -ldl", "gdb", cc.DLOPEN_CHAIN, libs=cc.PLUGIN),
    # And where the main thread waits in pthread_join (no CFI, no symbol),
    # gdb calls the frame outermost: framewalk stops there without unwind information.
    F("stack_overflow", ["stack_overflow.c"], "-O2 -g -no-pie", "prefix", threads_chains=cc.overflow_check),
    # No unwind tables for the program's own code: prologue analysis.
    # gdb 13 stops at leaf (its call to abort is its last instruction): right up to it.
    F("recursion_no_unwind_tables", ["recursion.c"], "-O2 -no-pie -fno-asynchronous-unwind-tables -fno-unwind-tables",
      "prefix", cc.recursion_chain()),
    # gdb 13 stops at the first signal frame here: right up to it.
    F("signals_no_unwind_tables", ["signals.c"], "-O2 -no-pie -fno-asynchronous-unwind-tables -fno-unwind-tables",
      "prefix", cc.SIGNAL_CHAIN),
    F("fp_over_cfi", ["fp_over_cfi.c", "fp_over_cfi_callee.c"], cc.FP_ONLY, "chain",
      threads_chains=cc.fp_over_cfi_check, source_flags=cc.FP_OVER_CFI_CALLEE),
]

# qemu 7.2 puts its signal trampoline on the page after ld.so's, which no
# maps line names executable: the replay back-end (executable mappings only)
# does not take a caller there found by prologue analysis (without CFI),
# where framewalk's snapshot target (every mapping) does.
NO_REPLAY = {"signals_no_unwind_tables"}


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def capture(fx, exe, work, timeout):
    """Runs the fixture under qemu's gdb stub; returns (snapshot directory, gdb's threads)."""
    d = os.path.join(work, fx.name + ".run")
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    shutil.copy(exe, os.path.join(d, fx.name))
    for lib, _, _ in fx.libs:
        shutil.copy(os.path.join(os.path.dirname(exe), lib), os.path.join(d, lib))
    snapshot = os.path.join(work, fx.name + ".snapshot")
    shutil.rmtree(snapshot, ignore_errors=True)
    port = free_port()
    qemu = subprocess.Popen([MACHINE["qemu"], "-L", MACHINE["sysroot"], "-g", str(port), "./" + fx.name] + fx.args,
                            cwd=d, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        env = dict(os.environ, FW_SNAPSHOT_DIR=snapshot, FW_SYSROOT=MACHINE["sysroot"], FW_MACHINE="riscv64",
                   FW_PC_DWARF=str(PC_DWARF))
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
        snapshot, gdb = capture(fx, exe, work, timeout)
        fw_threads = framewalk_threads(fw, snapshot)
        same_end = gives_up_with_gdb(gdb, fw_threads)
        problems = [p for p in cc.check_chain(fx, fw_threads)
                    if not any(p.startswith("thread %d: stopped no-unwind-info" % tid) for tid in same_end)]
        if fx.truth in ("gdb", "prefix"):
            problems += cc.compare_with_gdb(gdb, fw_threads, prefix=fx.truth == "prefix")
        if replay and fx.name not in NO_REPLAY:
            problems += replay_problems(replay, snapshot, fw_threads)
        return problems, fw_threads, sum(len(cc.gdb_pcs(t)) for t in gdb)
    except (RuntimeError, subprocess.TimeoutExpired, ValueError, KeyError, OSError) as e:
        return ["error: %s" % e], [], "-"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--framewalk", required=True)
    ap.add_argument("--work", required=True, help="directory for the fixtures and their snapshots")
    ap.add_argument("--only", help="comma-separated fixture names")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--timeout", type=int, default=60, help="seconds for one fixture's gdb session")
    ap.add_argument("--show-frames", action="store_true")
    ap.add_argument("--replay", help="examples/replay_backend: it must walk each snapshot to framewalk's frames")
    args = ap.parse_args()
    for tool in (MACHINE["cc"], MACHINE["cxx"], MACHINE["qemu"], "gdb-multiarch"):
        if not shutil.which(tool):
            cc.log("skip: %s not found" % tool)
            return 77
    fw = os.path.abspath(args.framewalk)
    os.makedirs(args.work, exist_ok=True)
    only = set(args.only.split(",")) if args.only else None
    fixtures = [fx for fx in FIXTURES if not only or fx.name in only]
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
    cc.log("riscv64: %d fixtures, %d failed (%.0f s)" % (len(fixtures), failures, time.time() - start))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())

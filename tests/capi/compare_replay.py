#!/usr/bin/env python3
"""A core, its snapshot, and a user back-end replaying the snapshot must give
the same frames: `framewalk stack --core CORE --save-snapshot DIR` walks the
core and saves what a walk needs (registers, stack blocks, maps); then
`framewalk stack --snapshot DIR` (the library's snapshot target) and
examples/replay_backend.c (a user back-end of C callbacks over the C API)
walk the saved snapshot. Every thread's PCs, and how its walk ended, must be
the core's.

  compare_replay.py FRAMEWALK REPLAY CORE WORKDIR [--sysroot DIR] [--exe FILE]

Importable: compare(framewalk, replay, core, work, sysroot, exe) -> problems."""
import argparse
import json
import os
import re
import shutil
import subprocess
import sys


def run(cmd):
    return subprocess.run(cmd, capture_output=True, text=True, timeout=300)


def core_and_snapshot(framewalk, core, snapshot, sysroot=None, exe=None):
    cmd = [framewalk, "stack", "--core", core, "--format=json", "--save-snapshot", snapshot, "-n", "4096"]
    if sysroot:
        cmd += ["--sysroot", sysroot]
    if exe:
        cmd += ["--exe", exe]
    r = run(cmd)
    if r.returncode not in (0, 1):
        raise RuntimeError("framewalk --core exited %d: %s" % (r.returncode, r.stderr.strip()))
    return {t["tid"]: ([int(f["pc"], 16) for f in t["frames"]], t["stop"]) for t in json.loads(r.stdout)["threads"]}


def from_snapshot(framewalk, snapshot):
    r = run([framewalk, "stack", "--snapshot", snapshot, "--format=json", "-n", "4096"])
    if r.returncode not in (0, 1):
        raise RuntimeError("framewalk --snapshot exited %d: %s" % (r.returncode, r.stderr.strip()))
    return {t["tid"]: ([int(f["pc"], 16) for f in t["frames"]], t["stop"]) for t in json.loads(r.stdout)["threads"]}


def from_replay(replay, snapshot):
    r = run([replay, snapshot])
    if r.returncode != 0:
        raise RuntimeError("replay_backend exited %d: %s" % (r.returncode, r.stderr.strip()))
    threads, tid = {}, None
    for line in r.stdout.splitlines():
        m = re.match(r"TID (\d+):", line)
        if m:
            tid = int(m.group(1))
            threads[tid] = ([], None)
            continue
        m = re.match(r"#\d+\s+0x([0-9a-f]+) ", line)
        if m and tid is not None:
            threads[tid][0].append(int(m.group(1), 16))
            continue
        m = re.match(r"\s+stop: (\S+)", line)
        if m and tid is not None:
            threads[tid] = (threads[tid][0], m.group(1))
    return threads


def compare(framewalk, replay, core, work, sysroot=None, exe=None):
    snapshot = os.path.join(work, "snapshot")
    shutil.rmtree(snapshot, ignore_errors=True)
    truth = core_and_snapshot(framewalk, core, snapshot, sysroot, exe)
    problems = []
    for name, got in (("--snapshot", from_snapshot(framewalk, snapshot)), ("replay_backend", from_replay(replay, snapshot))):
        if sorted(got) != sorted(truth):
            problems.append("%s: threads %s, the core's %s" % (name, sorted(got), sorted(truth)))
            continue
        for tid, (pcs, stop) in truth.items():
            if got[tid][0] != pcs:
                n = next((i for i in range(min(len(pcs), len(got[tid][0]))) if pcs[i] != got[tid][0][i]),
                         min(len(pcs), len(got[tid][0])))
                problems.append("%s: thread %d: %d frames (the core's %d), first difference at #%d" % (
                    name, tid, len(got[tid][0]), len(pcs), n))
            elif got[tid][1] != stop:
                problems.append("%s: thread %d stopped %s, the core's walk %s" % (name, tid, got[tid][1], stop))
    return problems, sum(len(p) for p, _ in truth.values())


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("framewalk")
    ap.add_argument("replay")
    ap.add_argument("core")
    ap.add_argument("work")
    ap.add_argument("--sysroot")
    ap.add_argument("--exe")
    a = ap.parse_args()
    os.makedirs(a.work, exist_ok=True)
    problems, frames = compare(a.framewalk, a.replay, a.core, a.work, a.sysroot, a.exe)
    for p in problems:
        print("FAIL " + p)
    print("%s: %d frames of the core, from its snapshot and its replay" % ("FAILED" if problems else "OK", frames))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())

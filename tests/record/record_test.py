#!/usr/bin/env python3
"""framewalk record against a program whose time split is known by
construction (split_target.c: 50/30/20 units of the same leaf across three
call paths in two threads, one 300 frames deep, one through a shared
library), -O2 without frame pointers:

  - `-- COMMAND`: each path's share of the samples within 2 points of its
    share of the work, at 4 kHz; at least 99% of the walks reach the
    thread's root (the stop reasons the report lists); lost samples are
    counted in the summary; the command's output and exit status intact;
  - `-p PID --duration`: a running process recorded for half a second is
    left running, and its recording has samples of both its threads, 99%
    of them walked to the thread's root;
  (the formats' own checks, equal totals in each, are
  conformance.sample_reports).

usage: record_test.py FRAMEWALK SOURCE_DIR WORK_DIR"""
import os
import re
import signal
import subprocess
import sys
import time


def run(cmd, **kw):
    return subprocess.run(cmd, capture_output=True, text=True, **kw)


def shares(framewalk, recording):
    folded = run([framewalk, "report", recording, "--format=folded"], check=True).stdout
    total = paths = 0
    by_path = {"main_path": 0, "deep_path": 0, "lib_call": 0}
    rooted = 0
    for line in folded.splitlines():
        stack, _, count = line.rpartition(" ")
        n = int(count)
        total += n
        frames = stack.split(";")
        if frames and frames[0] in ("_start", "clone3", "clone", "start_thread"):
            rooted += n
        for path in by_path:
            if path in frames:
                by_path[path] += n
    return total, by_path, rooted


def main():
    framewalk, source, work = sys.argv[1], sys.argv[2], sys.argv[3]
    os.makedirs(work, exist_ok=True)
    cc = os.environ.get("CC", "cc")
    lib = os.path.join(work, "libfw_split.so")
    target = os.path.join(work, "split_target")
    flags = ["-O2", "-fomit-frame-pointer", "-fno-optimize-sibling-calls"]
    build = run([cc, *flags, "-fPIC", "-shared", "-o", lib, os.path.join(source, "tests/record/split_lib.c")])
    if build.returncode != 0:
        print("no C compiler:", build.stderr)
        return 77
    run([cc, *flags, "-o", target, os.path.join(source, "tests/record/split_target.c"), "-L" + work, "-lfw_split",
         "-Wl,-rpath," + work, "-pthread"], check=True)
    probe = run([framewalk, "record", "-q", "-o", os.path.join(work, "probe.fwprof"), "--", "true"])
    if "not permitted" in probe.stderr:
        print("perf_event_open not permitted here:", probe.stderr)
        return 77
    failures = []

    # Calibrate: about 1.5 s of CPU in all, whatever this machine's speed.
    unit = 2000000
    start = time.monotonic()
    run([target, str(unit)], check=True)
    elapsed = time.monotonic() - start
    unit = max(unit, int(unit * 1.0 / max(elapsed, 1e-3)))

    recording = os.path.join(work, "split.fwprof")
    rec = run([framewalk, "record", "-q", "-F", "4000", "-o", recording, "--", target, str(unit)])
    print(rec.stderr.strip())
    if rec.returncode != 0 or not rec.stdout.strip():
        failures.append(f"record exited {rec.returncode}, the command printed {rec.stdout!r}")
    summary = re.search(r"(\d+) samples in .* (\d+) lost; walks: (\d+) complete, (\d+) stopped early", rec.stderr)
    if not summary:
        failures.append("no summary line")
    total, by_path, rooted = shares(framewalk, recording)
    want = {"main_path": 50, "deep_path": 30, "lib_call": 20}
    for path, share in want.items():
        got = 100.0 * by_path[path] / total if total else 0
        print(f"{path}: {got:.2f}% of {total} ns (want {share} +- 2)")
        if abs(got - share) > 2:
            failures.append(f"{path} {got:.2f}%")
    print(f"rooted: {100.0 * rooted / total:.2f}%")
    if summary:
        samples, lost, complete, stopped = (int(x) for x in summary.groups())
        if complete < 0.99 * samples:
            failures.append(f"only {complete} of {samples} walks complete")
        text = run([framewalk, "report", recording], check=True).stdout
        if f"lost samples: {lost};" not in text:
            failures.append("the report does not give the lost count the recorder gave")
    # -p: a running process, left running.
    proc = subprocess.Popen([target, str(unit * 20)], stdout=subprocess.DEVNULL)
    time.sleep(0.2)
    attached = os.path.join(work, "attached.fwprof")
    rec = run([framewalk, "record", "-q", "-F", "1000", "--duration", "0.5", "-p", str(proc.pid), "-o", attached])
    print(rec.stderr.strip())
    alive = proc.poll() is None
    if not alive:
        failures.append("the process recorded with -p did not keep running")
    with open(f"/proc/{proc.pid}/status") as f:
        state = next(l for l in f if l.startswith("State:"))
    if "R" not in state and "S" not in state:
        failures.append(f"the process is left {state.strip()}")
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    total, by_path, rooted = shares(framewalk, attached)
    header = run([framewalk, "report", attached], check=True).stdout
    threads = re.search(r"samples, (\d+) threads", header)
    if total == 0 or not threads or int(threads.group(1)) < 2:
        failures.append(f"-p recording: {total} ns, threads: {threads.group(1) if threads else None}")
    if rooted < 0.99 * total:
        failures.append(f"-p recording: {rooted} of {total} rooted")

    if failures:
        print("FAILED:", "; ".join(failures))
        return 1
    print("record: all as expected")
    return 0


if __name__ == "__main__":
    sys.exit(main())

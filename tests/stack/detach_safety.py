#!/usr/bin/env python3
"""framewalk stack interrupted by SIGINT/SIGTERM must leave its target running.

Starts detach_target (64 threads that keep counting, each its own counter;
the main thread answers a line on stdin with every count), then runs 100
trials: start `framewalk stack -p PID` (the --freeze policy cycles through
process, thread, copy), send it SIGINT or SIGTERM after a random delay of
0-50 ms, wait for it, and check that

  - framewalk ended by the signal or finished (no crash, no hang),
  - every /proc/PID/task/*/status says TracerPid: 0,
  - no thread is stopped (state t or T in /proc/PID/task/*/stat),
  - no thread is gone, and every thread's counter moves again.

Prints one line per trial and "N/100 trials ok"; exit status 0 only for
100/100. After a failed trial the target is replaced by a fresh one. The target is killed at the end, also on failure or interruption.

  detach_safety.py --framewalk build/framewalk --target build/tests/stack/fixtures/detach_target [--trials 100] [--seed N]
"""

import argparse
import atexit
import os
import random
import select
import signal
import subprocess
import sys
import time

children = []


def cleanup():
    for p in children:
        if p.poll() is None:
            try:
                p.kill()
            except OSError:
                pass
        try:
            p.wait(timeout=5)
        except Exception:
            pass


def on_signal(signum, frame):
    cleanup()
    sys.exit(128 + signum)


def log(msg):
    print(msg, flush=True)


class Target:
    def __init__(self, path):
        self.p = subprocess.Popen([path], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        children.append(self.p)
        self.pid = self.p.pid
        self.buf = b""
        line = self.readline(15)
        if line != "ready":
            raise RuntimeError("detach_target did not say ready (got %r)" % line)

    def readline(self, timeout):
        deadline = time.time() + timeout
        while b"\n" not in self.buf:
            left = deadline - time.time()
            if left <= 0:
                return None
            r, _, _ = select.select([self.p.stdout], [], [], left)
            if r:
                chunk = os.read(self.p.stdout.fileno(), 65536)
                if not chunk:
                    return None
                self.buf += chunk
        line, self.buf = self.buf.split(b"\n", 1)
        return line.decode()

    def counters(self, timeout=5):
        """Every thread's count, or None when the main thread does not answer."""
        try:
            self.p.stdin.write(b"\n")
            self.p.stdin.flush()
        except OSError:
            return None
        line = self.readline(timeout)
        return [int(x) for x in line.split()] if line else None


def tasks(pid):
    try:
        return sorted(int(t) for t in os.listdir("/proc/%d/task" % pid))
    except OSError:
        return []


def task_state(pid, tid):
    with open("/proc/%d/task/%d/stat" % (pid, tid)) as f:
        s = f.read()
    return s[s.rindex(")") + 2]


def tracer(pid, tid):
    with open("/proc/%d/task/%d/status" % (pid, tid)) as f:
        for line in f:
            if line.startswith("TracerPid:"):
                return int(line.split()[1])
    return -1


def check_target(target, expected_tasks):
    """None when the target runs, untraced, with every thread; else why not."""
    pid = target.pid
    if target.p.poll() is not None:
        return "the target exited (status %s)" % target.p.poll()
    now = tasks(pid)
    if len(now) != expected_tasks:
        return "the target has %d threads, expected %d" % (len(now), expected_tasks)
    traced = []
    for tid in now:
        try:
            t = tracer(pid, tid)
        except OSError:
            continue
        if t != 0:
            traced.append("%d (TracerPid %d)" % (tid, t))
    if traced:
        return "traced threads: " + ", ".join(traced[:8])
    # A detached thread is woken at once; allow the scheduler a moment.
    deadline = time.time() + 1.0
    while True:
        stopped = []
        for tid in now:
            try:
                st = task_state(pid, tid)
            except OSError:
                continue
            if st in "tT":
                stopped.append("%d (%s)" % (tid, st))
        if not stopped:
            break
        if time.time() > deadline:
            return "stopped threads: " + ", ".join(stopped[:8])
        time.sleep(0.01)
    # Every thread counts on: poll until each counter has moved.
    first = target.counters()
    if first is None:
        return "the main thread does not answer"
    deadline = time.time() + 5.0
    while True:
        time.sleep(0.02)
        again = target.counters()
        if again is None:
            return "the main thread does not answer"
        still = [i for i, (a, b) in enumerate(zip(first, again)) if b <= a]
        if not still:
            return None
        if time.time() > deadline:
            return "threads no longer counting: " + ", ".join(map(str, still[:8]))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--framewalk", required=True)
    ap.add_argument("--target", required=True)
    ap.add_argument("--trials", type=int, default=100)
    ap.add_argument("--seed", type=int, default=None)
    ap.add_argument("--max-delay-ms", type=float, default=50.0)
    args = ap.parse_args()

    atexit.register(cleanup)
    for s in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(s, on_signal)
    seed = args.seed if args.seed is not None else int.from_bytes(os.urandom(4), "little")
    rng = random.Random(seed)
    log("seed %d (rerun the same delays with --seed %d)" % (seed, seed))

    target = Target(args.target)
    expected = len(tasks(target.pid))
    log("target pid %d, %d threads" % (target.pid, expected))
    why = check_target(target, expected)
    if why:
        log("FAIL before any trial: " + why)
        return 1

    ok = 0
    interrupted = finished = 0
    policies = ["process", "thread", "copy"]
    for trial in range(args.trials):
        sig = rng.choice([signal.SIGINT, signal.SIGTERM])
        delay = rng.uniform(0, args.max_delay_ms) / 1000.0
        policy = policies[trial % 3]
        fw = subprocess.Popen([args.framewalk, "stack", "-p", str(target.pid), "--freeze=" + policy],
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        children.append(fw)
        time.sleep(delay)
        sent = fw.poll() is None
        if sent:
            fw.send_signal(sig)
        problem = None
        try:
            fw.wait(timeout=20)
        except subprocess.TimeoutExpired:
            fw.kill()
            fw.wait()
            problem = "framewalk did not exit within 20 s of the signal"
        rc = fw.returncode
        err = fw.stderr.read().decode(errors="replace").strip()
        fw.stderr.close()
        children.remove(fw)
        if problem is None:
            if rc in (0, 1):
                finished += 1
                how = "finished (status %d)" % rc
            elif rc in (128 + sig, -sig):
                interrupted += 1
                how = "interrupted (status %d)" % rc
            else:
                how = "status %d" % rc
                problem = "framewalk ended with status %d%s" % (rc, (": " + err[-300:]) if err else "")
        else:
            how = "hung"
        if problem is None:
            problem = check_target(target, expected)
        name = "SIGINT" if sig == signal.SIGINT else "SIGTERM"
        line = "trial %3d: --freeze=%-7s %-7s after %5.1f ms%s: framewalk %s" % (
            trial + 1, policy, name, delay * 1000, "" if sent else " (already done)", how)
        if problem:
            log(line + ": FAIL: " + problem)
            # Later trials get a fresh target, so that each trial counts on its own.
            target.p.kill()
            target.p.wait()
            target = Target(args.target)
            expected = len(tasks(target.pid))
        else:
            ok += 1
            log(line + ": target runs, untraced")

    log("\n%d/%d trials ok (framewalk interrupted in %d, finished before the signal in %d; seed %d)"
        % (ok, args.trials, interrupted, finished, seed))
    return 0 if ok == args.trials else 1


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""framewalk on cores the kernel writes, also once the executable has moved.

For each fixture of compare_with_gdb.py that knows its call chains
(Fixture.chains: frame-pointer code without unwind tables), a copy of the
program runs in a directory of its own with RLIMIT_CORE raised; once it is
ready and every thread sits in its blocking system call, it gets SIGABRT and
the kernel writes its core there (kernel.core_pattern a plain file name; with
a pipe, gcore writes the core instead). Then

  (a) `framewalk stack --core CORE` must walk every thread along its chain to
      its natural end ("outermost");
  (b) the program is moved away, so that the path the core's NT_FILE note
      names no longer exists (as for a core read on another machine, e.g.
      elfutils' tests/backtrace.*.fp.core), and `framewalk stack --core CORE
      --exe MOVED` must walk the same chains: the code of the program, which
      the core does not hold, comes from --exe.

The threads are named from /proc before the signal (a kernel core has the
process's name only). For fp_over_cfi, the construction is checked too: the
CFI of the functions its frame-pointer code calls (cfi_block, fw_block) has
no rule for rbp (readelf), so the frame pointer passes through them.

Exit 0 when every walk follows its chain, 1 otherwise, 77 when neither the
kernel nor gcore can write a core.

  kernel_core.py --framewalk build/framewalk --fixtures build/tests/stack/fixtures [--only NAME,...]
"""

import argparse
import atexit
import json
import os
import re
import resource
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import compare_with_gdb as cwg  # noqa: E402  (the fixtures, their chains, the settling wait)

# Functions with CFI that fp_over_cfi.c's frame-pointer code calls: their
# rows must leave rbp alone for the fixture to have its point.
PASS_THROUGH = {"fp_over_cfi": ["cfi_block", "fw_block"]}

children = []


def cleanup():
    for p in children:
        if p.poll() is None:
            p.kill()
        try:
            p.wait(timeout=5)
        except subprocess.TimeoutExpired:
            pass


def log(msg):
    print(msg, flush=True)


def kernel_writes_cores():
    try:
        with open("/proc/sys/kernel/core_pattern") as f:
            pattern = f.read().strip()
    except OSError:
        return False
    return bool(pattern) and not pattern.startswith("|") and "/" not in pattern


def allow_cores():
    resource.setrlimit(resource.RLIMIT_CORE, (resource.RLIM_INFINITY, resource.RLIM_INFINITY))


def start(path, cwd):
    p = subprocess.Popen([path], cwd=cwd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, preexec_fn=allow_cores)
    children.append(p)
    deadline = time.time() + 15
    buf = b""
    while time.time() < deadline and b"ready\n" not in buf:
        if p.poll() is not None:
            return p, "exited with status %s before 'ready'" % p.returncode
        if select.select([p.stdout], [], [], 0.2)[0]:
            buf += os.read(p.stdout.fileno(), 4096)
    return p, None if b"ready\n" in buf else "no 'ready'"


def core_in(directory, before):
    cores = [f for f in os.listdir(directory) if f.startswith("core") and f not in before]
    return os.path.join(directory, cores[0]) if len(cores) == 1 else None


def make_core(path, run_dir, use_kernel):
    """Runs `path` in run_dir until settled, then kills it; returns (core, {tid: name}, error)."""
    before = set(os.listdir(run_dir))
    p, err = start(path, run_dir)
    if err:
        p.kill()
        return None, None, err
    err = cwg.wait_settled(p.pid, 0)
    if err:
        p.kill()
        return None, None, err
    names = {tid: name for tid, (name, _) in cwg.thread_states(p.pid).items()}
    core = None
    if not use_kernel:
        core, err = cwg.gcore(p.pid, run_dir)
        if err:
            p.kill()
            return None, None, err
    p.send_signal(signal.SIGABRT)
    try:
        p.wait(timeout=30)
    except subprocess.TimeoutExpired:
        p.kill()
        return None, None, "did not die of SIGABRT"
    if use_kernel:
        if p.returncode != -signal.SIGABRT:
            return None, None, "exit status %s, not SIGABRT" % p.returncode
        core = core_in(run_dir, before)
        if not core:
            return None, None, "the kernel wrote no core in %s" % run_dir
    return core, names, None


def walk(fw, args):
    r = subprocess.run([fw, "stack", "--format=json", "-n", "4096"] + args, capture_output=True, text=True,
                       timeout=120)
    if r.returncode not in (0, 1):
        return None, "framewalk exit %d: %s" % (r.returncode, r.stderr.strip()[-400:])
    return json.loads(r.stdout), None


def check_walks(fx, out, names):
    """Every thread along its chain: a list of problems."""
    problems = []
    seen = set()
    for t in out["threads"]:
        name = names.get(t["tid"])
        chain = cwg.expected_chain(fx.chains, name)
        if chain is None:
            problems.append("thread %d (%s): no known chain" % (t["tid"], name))
            continue
        seen.add(t["tid"])
        why = cwg.framewalk_matches(chain, t)
        if why:
            problems.append("thread %d %s: %s" % (t["tid"], name, why))
    for tid in sorted(set(names) - seen):
        problems.append("thread %d %s: not in the core" % (tid, names[tid]))
    return problems


def rbp_rules(exe, function):
    """Whether readelf shows a rule for rbp in the FDE of `function` (None: no such FDE)."""
    nm = subprocess.run(["nm", exe], capture_output=True, text=True).stdout
    m = re.search(r"^([0-9a-f]+) [tT] %s$" % re.escape(function), nm, re.M)
    if not m:
        return None
    address = int(m.group(1), 16)
    frames = subprocess.run(["readelf", "--debug-dump=frames-interp", exe], capture_output=True, text=True).stdout
    for block in frames.split("\n\n"):
        fde = re.search(r"FDE cie=\S+ pc=([0-9a-f]+)\.\.([0-9a-f]+)", block)
        if fde and int(fde.group(1), 16) <= address < int(fde.group(2), 16):
            header = next((line for line in block.splitlines() if line.strip().startswith("LOC")), "")
            return "rbp" in header.split()
    return None


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--framewalk", required=True)
    ap.add_argument("--fixtures", required=True)
    ap.add_argument("--only", help="comma-separated fixture names")
    args = ap.parse_args()
    use_kernel = kernel_writes_cores()
    if not use_kernel and not shutil.which("gcore"):
        log("SKIP: the kernel writes no core files here (kernel.core_pattern) and gcore is missing")
        return 77
    fw = os.path.abspath(args.framewalk)
    only = set(args.only.split(",")) if args.only else None
    atexit.register(cleanup)
    work = tempfile.mkdtemp(prefix="framewalk-kcore-")
    failures = tried = 0
    try:
        for fx in cwg.FIXTURES:
            if not fx.chains or (only and fx.name not in only):
                continue
            path = os.path.join(args.fixtures, fx.binary)
            if not os.path.exists(path):
                log("skip %s: not built" % fx.name)
                continue
            tried += 1
            problems = []
            for base, functions in PASS_THROUGH.items():
                if not fx.name.startswith(base + "_"):
                    continue
                for function in functions:
                    rule = rbp_rules(path, function)
                    if rule is not False:
                        problems.append("construction: %s's CFI %s" % (
                            function, "has a rule for rbp" if rule else "was not found"))
            run_dir = os.path.join(work, fx.name)
            os.makedirs(run_dir)
            exe = os.path.join(run_dir, fx.binary)
            shutil.copy(path, exe)
            core, names, err = make_core(exe, run_dir, use_kernel)
            frames = 0
            if err:
                problems.append("core: " + err)
            else:
                out, err = walk(fw, ["--core", core])
                problems += ["core: " + err] if err else ["core: " + p for p in check_walks(fx, out, names)]
                moved = os.path.join(work, fx.name + ".moved")
                os.rename(exe, moved)
                out, err = walk(fw, ["--core", core, "--exe", moved])
                if err:
                    problems.append("moved, --exe: " + err)
                else:
                    problems += ["moved, --exe: " + p for p in check_walks(fx, out, names)]
                    frames = sum(len(t["frames"]) for t in out["threads"])
            log("%s %-26s %s core, %d threads, %d frames" % ("ok  " if not problems else "FAIL", fx.name,
                                                          "kernel" if use_kernel else "gcore",
                                                          len(names or {}), frames))
            for p in problems:
                log("       " + p)
            failures += bool(problems)
    finally:
        cleanup()
        shutil.rmtree(work, ignore_errors=True)
    log("%d fixtures, %d failed" % (tried, failures))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())

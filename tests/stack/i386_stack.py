#!/usr/bin/env python3
"""framewalk on 32-bit x86 (i386) processes and their cores, against gdb and eu-stack.

fixtures/i386_signals.c is built with i686-linux-gnu-gcc twice: with CFI
(-O2 -g) and as frame-pointer code without unwind tables (-O2
-fno-asynchronous-unwind-tables -fno-omit-frame-pointer: the program's own
functions have no CFI), and run natively. Two threads stop inside signal
handlers three calls deep, one entered through the non-RT frame
(__kernel_sigreturn), one through the RT frame (__kernel_rt_sigreturn),
while the main thread blocks in pthread_join.

  live: `framewalk stack -p PID` (64-bit framewalk, 32-bit process);
  core: the same program with the RT thread's handler ending in
        raise(SIGABRT), its core written by the kernel (core_pattern a
        plain file name; else gcore of the live process);

each compared with gdb (gdb_frames.py: every thread, PC for PC, gdb's
inline frames left out, a walk gdb ends at the outermost frame must end
`outermost`) and with eu-stack (the same PCs). The handler threads must also
reach their thread start through the handler's callers by name.

Exit 0 when all agree, 1 otherwise, 77 without i686-linux-gnu-gcc, gdb or
eu-stack, or where 32-bit programs do not run.

  i386_stack.py --framewalk build/framewalk --work build/tests/stack/i386
"""
import argparse
import os
import re
import select
import shutil
import signal
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import compare_with_gdb as cwg  # noqa: E402  (gdb's frames, framewalk's JSON, the comparison)
import kernel_core as kc  # noqa: E402  (the children, RLIMIT_CORE, whether the kernel writes cores here)

CC = "i686-linux-gnu-gcc"
SOURCE = os.path.join(HERE, "fixtures", "i386_signals.c")
VARIANTS = [
    ("i386_signals", ["-O2", "-g"]),
    ("i386_signals_fp", ["-O2", "-fno-asynchronous-unwind-tables", "-fno-omit-frame-pointer"]),
]
# The handler threads' own functions, innermost first, by the thread's name.
CHAINS = {
    "sigreturn": ["fw_block", "handler_leaf", "handler_middle", "handler_outer", "on_usr1",
                  "interrupted_leaf", "interrupted_outer", "sigreturn_thread"],
    "rt_sigreturn": ["handler_leaf", "handler_middle", "handler_outer", "on_usr2",
                     "interrupted_leaf", "interrupted_outer", "rt_sigreturn_thread"],
}
# Where gdb or eu-stack is wrong, by (variant, mode or None for both, thread
# name): why. framewalk must still agree with the other one on every frame,
# and with the one that is wrong on what it lists here.
KNOWN = {
    # eu-stack 0.188 -p ends the main thread's walk at main, without an error
    # (from the core it goes on to _start, as gdb and framewalk do): its
    # frames must be framewalk's first ones.
    ("i386_signals", "live", "i386_signals"): ("eu-stack", "prefix"),
    # eu-stack 0.188 -p, in frame-pointer code, keeps garbage in the upper
    # half of the PCs it finds and goes from the signal trampoline straight
    # to the interrupted function's caller (from the core it does not): its
    # frames, the upper halves dropped, must be framewalk's up to the
    # trampoline.
    ("i386_signals_fp", "live", "sigreturn"): ("eu-stack", "to-trampoline"),
    ("i386_signals_fp", "live", "rt_sigreturn"): ("eu-stack", "to-trampoline"),
    # Without CFI, main realigns its stack (lea 0x4(%esp),%ecx; and
    # $-16,%esp; ...; push %ecx): gdb 13 and eu-stack do not read that
    # prologue and stop after __libc_start_call_main (gdb: "previous frame
    # inner to this frame"; eu-stack with a frame from a wrong stack
    # pointer); framewalk reads the CFA saved below ebp and goes on to
    # _start. Both must be framewalk's first frames but their last.
    ("i386_signals_fp", None, "i386_signals_fp"): ("both", "prefix-but-last"),
}


def start(path, mode, cwd):
    p = subprocess.Popen([path, mode], cwd=cwd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, preexec_fn=kc.allow_cores)
    kc.children.append(p)
    return p


def wait_ready(p, timeout=15):
    deadline = time.time() + timeout
    buf = b""
    while time.time() < deadline and b"ready\n" not in buf:
        if p.poll() is not None:
            return "exited with status %s before 'ready'" % p.returncode
        if select.select([p.stdout], [], [], 0.2)[0]:
            buf += os.read(p.stdout.fileno(), 4096)
    return None if b"ready\n" in buf else "no 'ready'"


def wait_settled(pid, timeout=15):
    """Until every thread sits in a system call with the same state across two looks."""
    deadline = time.time() + timeout
    prev = None
    while time.time() < deadline:
        states = cwg.thread_states(pid)
        settled = states and all(sc.split()[0] not in ("running", "-1") for _, sc in states.values())
        if settled and states == prev:
            return states
        prev = states
        time.sleep(0.05)
    return None


def eu_stack(args):
    """{tid: [pc]} from eu-stack."""
    rc, out, err = cwg.run(["eu-stack"] + args)
    threads, tid = {}, None
    for line in out.splitlines():
        m = re.match(r"^TID (\d+):", line)
        if m:
            tid = int(m.group(1))
            threads[tid] = []
            continue
        m = re.match(r"^#\d+\s+0x([0-9a-f]+)", line)
        if m and tid is not None:
            threads[tid].append(int(m.group(1), 16))
    return threads, (None if threads else "eu-stack gave no frames (%d): %s" % (rc, err.strip()[-400:]))


class Tally:
    def __init__(self):
        self.frames = 0
        self.threads = 0
        self.problems = []
        self.known = []


def agrees(known_how, theirs, ours):
    """Whether a known-wrong walk `theirs` agrees with `ours` as far as it is right."""
    if known_how == "prefix":
        return len(theirs) < len(ours) and ours[:len(theirs)] == theirs
    if known_how == "prefix-but-last":
        return len(theirs) <= len(ours) and ours[:len(theirs) - 1] == theirs[:-1]
    if known_how == "to-trampoline":
        n = next((i for i in range(min(len(theirs), len(ours))) if theirs[i] != ours[i]), None)
        return n is not None and n > 0 and ours[n - 1] in SIGRETURN_PCS
    return False


SIGRETURN_PCS = set()  # the trampolines' addresses, from framewalk's frames


def compare(tally, label, fw, gdb, eu, names):
    gthreads = {t["tid"]: t for t in gdb["threads"]}
    fthreads = {t["tid"]: t for t in fw["threads"]}
    if set(gthreads) != set(fthreads) or set(eu) != set(fthreads):
        tally.problems.append("%s: threads differ: gdb %s, eu-stack %s, framewalk %s" % (
            label, sorted(gthreads), sorted(eu), sorted(fthreads)))
    variant, mode = label.split()
    for tid, f in sorted(fthreads.items()):
        name = names.get(tid, f.get("name") or "")
        where = "%s thread %d (%s)" % (label, tid, name)
        g = gthreads.get(tid)
        if g is None:
            continue
        known = KNOWN.get((variant, mode, name)) or KNOWN.get((variant, None, name))
        wrong, how = known if known else (None, None)
        pcs = [pc for pc, _ in cwg.fw_pcs(f)]
        SIGRETURN_PCS.update(pc for pc, fn in cwg.fw_pcs(f) if fn in ("__kernel_sigreturn", "__kernel_rt_sigreturn"))
        gpcs = [pc for pc, _ in cwg.gdb_pcs(g)]
        if wrong in ("gdb", "both"):
            if agrees(how, gpcs, pcs) and f["stop"] == "outermost":
                tally.known.append("%s: gdb stops after %d frames (%s), framewalk goes on to %d" % (
                    where, len(gpcs), g["stop"], len(pcs)))
            else:
                tally.problems.append("%s: against gdb (known to stop early): %s" % (where, cwg.compare_thread(g, f)))
        else:
            m = cwg.compare_thread(g, f)
            if m:
                tally.problems.append("%s: against gdb: %s" % (where, m))
        # eu-stack's PCs are 32-bit addresses (its frame-pointer fallback leaves garbage above).
        theirs = [pc & 0xffffffff for pc in eu.get(tid, [])]
        if wrong in ("eu-stack", "both"):
            if agrees(how, theirs, pcs):
                tally.known.append("%s: eu-stack has %d frames, framewalk %d (%s)" % (
                    where, len(theirs), len(pcs), how))
            else:
                tally.problems.append("%s: against eu-stack (known wrong, %s): %s, framewalk %s" % (
                    where, how, [hex(p) for p in theirs], [hex(p) for p in pcs]))
        elif tid in eu and theirs != pcs:
            first = next((i for i in range(min(len(pcs), len(theirs))) if pcs[i] != theirs[i]),
                         min(len(pcs), len(theirs)))
            tally.problems.append("%s: against eu-stack: first difference at #%d (%d frames, eu-stack %d)" % (
                where, first, len(pcs), len(theirs)))
        chain = CHAINS.get(name)
        if chain:
            own = [fn for _, fn in cwg.fw_pcs(f) if fn in chain]
            if own != chain:
                tally.problems.append("%s: functions %s, want %s" % (where, own, chain))
        tally.threads += 1
        tally.frames += len(pcs)


def framewalk(fw, args):
    out, err = cwg.framewalk(argparse.Namespace(path=fw, extra=[]), args)
    return out, err


def check_live(fw, exe, work, tally):
    p = start(exe, "live", work)
    err = wait_ready(p)
    states = wait_settled(p.pid) if not err else None
    if err or not states:
        tally.problems.append("%s live: %s" % (os.path.basename(exe), err or "threads never settled"))
        p.kill()
        return
    names = {tid: n for tid, (n, _) in states.items()}
    gdb, err = cwg.gdb_frames(["-p", str(p.pid)])
    eu, err2 = eu_stack(["-p", str(p.pid)]) if not err else (None, None)
    out, err3 = framewalk(fw, ["-p", str(p.pid)]) if not (err or err2) else (None, None)
    p.kill()
    p.wait()
    if err or err2 or err3:
        tally.problems.append("%s live: %s" % (os.path.basename(exe), err or err2 or err3))
        return
    compare(tally, os.path.basename(exe) + " live", out, gdb, eu, names)


def make_core(exe, work):
    """(core, {tid: name}, error): the kernel's core of the abort mode, else gcore of the live mode."""
    run_dir = os.path.join(work, os.path.basename(exe) + ".core.d")
    shutil.rmtree(run_dir, ignore_errors=True)
    os.makedirs(run_dir)
    if kc.kernel_writes_cores():
        p = start(exe, "abort", run_dir)
        # The RT thread aborts once the other thread is in its handler; name the
        # threads while they live.
        names = {}
        deadline = time.time() + 15
        while p.poll() is None and time.time() < deadline:
            names.update({tid: n for tid, (n, _) in cwg.thread_states(p.pid).items()})
            time.sleep(0.005)
        if p.poll() is None:
            p.kill()
            return None, None, "did not abort"
        if p.returncode != -signal.SIGABRT:
            return None, None, "exit status %s, not SIGABRT" % p.returncode
        cores = [f for f in os.listdir(run_dir) if f.startswith("core")]
        if len(cores) != 1:
            return None, None, "the kernel wrote no core in %s" % run_dir
        return os.path.join(run_dir, cores[0]), names, None
    p = start(exe, "live", run_dir)
    err = wait_ready(p)
    states = wait_settled(p.pid) if not err else None
    if err or not states:
        p.kill()
        return None, None, err or "threads never settled"
    core, err = cwg.gcore(p.pid, run_dir)
    p.kill()
    return core, {tid: n for tid, (n, _) in states.items()}, err


def check_core(fw, exe, work, tally):
    core, names, err = make_core(exe, work)
    if err:
        tally.problems.append("%s core: %s" % (os.path.basename(exe), err))
        return
    gdb, err = cwg.gdb_frames([exe, core])
    eu, err2 = eu_stack(["--core=" + core, "--executable=" + exe]) if not err else (None, None)
    out, err3 = framewalk(fw, ["--core", core]) if not (err or err2) else (None, None)
    if err or err2 or err3:
        tally.problems.append("%s core: %s" % (os.path.basename(exe), err or err2 or err3))
        return
    # A thread that was not seen by name before the abort (a kernel core names
    # the process only) is named by its start function.
    starts = {"sigreturn_thread": "sigreturn", "rt_sigreturn_thread": "rt_sigreturn",
              "main": os.path.basename(exe)}
    for t in out["threads"]:
        if not names.get(t["tid"]):
            fns = [fn for _, fn in cwg.fw_pcs(t) if fn in starts]
            names[t["tid"]] = starts[fns[-1]] if fns else ""
    compare(tally, os.path.basename(exe) + " core", out, gdb, eu, names)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--framewalk", required=True)
    ap.add_argument("--work", required=True)
    args = ap.parse_args()
    for tool in (CC, "gdb", "eu-stack"):
        if not shutil.which(tool):
            print("SKIP: no %s" % tool)
            return 77
    os.makedirs(args.work, exist_ok=True)
    exes = []
    for name, flags in VARIANTS:
        exe = os.path.join(args.work, name)
        r = subprocess.run([CC] + flags + ["-D_GNU_SOURCE", "-I" + os.path.dirname(SOURCE), SOURCE, "-o", exe,
                                           "-pthread"], capture_output=True, text=True)
        if r.returncode != 0:
            print("FAIL: %s: %s" % (name, r.stderr[-600:]))
            return 1
        exes.append(exe)
    try:
        runs = subprocess.run([exes[0], "check"], capture_output=True, timeout=30).returncode == 0
    except OSError:
        runs = False
    if not runs:
        print("SKIP: 32-bit x86 programs do not run here")
        return 77
    tally = Tally()
    for exe in exes:
        check_live(args.framewalk, exe, args.work, tally)
        check_core(args.framewalk, exe, args.work, tally)
    print("i386: %d threads, %d frames compared with gdb and eu-stack (%d variants, live and core)" % (
        tally.threads, tally.frames, len(exes)))
    for k in tally.known:
        print("known: " + k)
    for p in tally.problems:
        print("FAIL: " + p)
    return 1 if tally.problems else 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    finally:
        kc.cleanup()

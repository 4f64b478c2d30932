#!/usr/bin/env python3
"""framewalk stack against gdb, PC for PC, on the fixtures of tests/stack.

For each fixture: start it, wait for "ready" and for every thread to sit in
its blocking system call (or spin, for the threads that are meant to), then

  (a) take gdb's truth: gdb attaches and walks every thread (gdb_frames.py,
      through gdb's Python API: frame.pc() is frame 0's exact PC and each
      caller's return address, as `bt` prints them);
  (b) run `framewalk stack -p PID --format=json` with --freeze=process,
      thread and copy;
  (c) gcore the process and run `framewalk stack --core CORE --format=json`;

and compare framewalk's frames with gdb's, thread by thread (by TID): the same
number of frames and the same PCs, and a natural end ("outermost") wherever
gdb's walk ends at the outermost frame. gdb's inline frames (they repeat the
PC of the frame that contains them) and tail-call frames (synthesised from
DWARF call-site records) are left out of gdb's list: no CFI unwinder has them.

Fixtures that know their threads' call chains (Fixture.chains,
EXPECTED_CHAINS) are held to those first: framewalk's function names must
follow each chain, and gdb's PCs count only where gdb's walk follows it too.

The PLT and vDSO fixtures have threads calling through a PLT stub, or into
the vDSO, in a loop: they are sampled until a thread is caught with its PC
inside .plt/.plt.sec/.plt.got, or [vdso] (gcore for the core comparison,
which gdb then reads from the same core; framewalk's live output for the
live modes, whose callers outside the region must match those gdb shows).
Each mode is skipped with a message when no sample hits within a few seconds.

Prints a table (fixture, thread, gdb frames, framewalk frames per mode, first
mismatch) and the frames of every mismatch. Exit status 0 when everything
matches (or differs only as listed in KNOWN_DIFFERENCES), 1 otherwise, 77 when
gdb/gcore are missing. Every fixture process is killed at the end, also on
failure or interruption (and the fixtures die with this script:
PR_SET_PDEATHSIG).

  compare_with_gdb.py --framewalk build/framewalk --fixtures build/tests/stack/fixtures [--only NAME,...] [-v]
"""

import argparse
import atexit
import json
import os
import re
import select
import shutil
import signal
import struct
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
GDB_SCRIPT = os.path.join(HERE, "gdb_frames.py")

MODES = ["process", "thread", "copy", "core"]  # the three --freeze policies, then the core file


class Fixture:
    def __init__(self, name, argv=None, spinners=0, kind="static", binary=None, exercises=(), chains=None):
        self.name = name
        # The call chain of each thread, as the fixture knows it (thread name
        # regular expression -> function name regular expressions, innermost
        # first): framewalk must walk exactly these; gdb is compared with
        # only where its own walk follows them (EXPECTED_CHAINS).
        self.chains = chains
        # framewalk frame sources the fixture is there to exercise: when its
        # output shows none of one, a note says so (the fixture may have lost
        # its point, e.g. a compiler that now emits .eh_frame).
        self.exercises = set(exercises)
        self.binary = binary or name
        self.argv = argv or []
        self.spinners = spinners  # threads meant to be running (not in a system call)
        self.kind = kind          # "static": the stack does not change; "plt", "vdso": sampled


_LIBC = r"(__GI_)?(__libc_|__)?"
# raise() down to the kill system call in glibc 2.36 (pthread_kill and
# __pthread_kill_internal are inlined).
_RAISE = [r"__pthread_kill_implementation(\.constprop\.\d+)?", _LIBC + "raise"]
_MAIN_START = [_LIBC + "libc_start_call_main", _LIBC + "libc_start_main(_impl)?", "_start"]
_THREAD_START = ["start_thread", _LIBC + "clone3?"]

# Call chains the fixtures know, for the fixtures whose code has no CFI and
# where gdb is not always right (see Fixture.chains).
EXPECTED_CHAINS = {
    # fp_scheduled.c: frame pointers, no unwind tables, scheduled prologues.
    "fp_scheduled": {
        "fp-main": [_LIBC + "pause", "fw_block", "on_usr2", "__restore_rt"] + _RAISE +
                   ["on_usr1", "__restore_rt"] + _RAISE + ["middle", "outer", "main"] + _MAIN_START,
        "fp-worker": [_LIBC + "read", "fw_block_read", "work_c", "work_b", "work_a", "worker"] + _THREAD_START,
    },
    # fp_over_cfi.c: frame-pointer code without unwind tables over functions
    # with CFI that never mention the frame pointer (cfi_block, fw_block, read).
    "fp_over_cfi": {
        "fpc-main": [_LIBC + "pause", "fw_block", "cfi_block", "fp_inner", "fp_outer", "main"] + _MAIN_START,
        "fpc-worker": [_LIBC + "read", "fp_read", "fp_work", "worker"] + _THREAD_START,
    },
}

FIXTURES = [
    Fixture("recursion"),
    Fixture("recursion_clang"),
    Fixture("realign"),
    Fixture("signal_normal", ["normal"], binary="signals"),
    Fixture("signal_altstack", ["altstack"], binary="signals"),
    Fixture("signal_nested", ["nested"], binary="signals"),
    Fixture("signal_restorer", ["restorer"], binary="signals", exercises={"signal"}),
    Fixture("signal_restorer_unnamed", ["restorer"], binary="signals_unnamed", exercises={"signal"}),
    Fixture("stack_overflow"),
    Fixture("noreturn"),
    Fixture("asm_cfi", spinners=1, exercises={"fp", "prologue"}),
    Fixture("threads"),
    Fixture("cxx_unwind"),
    Fixture("tailcall"),
    Fixture("link_pie"),
    Fixture("link_nopie"),
    Fixture("link_static"),
    Fixture("link_static_pie"),
    Fixture("dlopen"),
    Fixture("debug_frame_only", exercises={"debug_frame"}),
    Fixture("plt", spinners=4, kind="plt"),
    Fixture("vdso", spinners=3, kind="vdso"),
] + [Fixture("fp_scheduled_" + variant, exercises={"fp"}, chains=EXPECTED_CHAINS["fp_scheduled"])
     for variant in ("gcc", "gcc_static", "clang", "clang_static")] + \
    [Fixture("fp_over_cfi_" + variant, exercises={"fp"}, chains=EXPECTED_CHAINS["fp_over_cfi"])
     for variant in ("gcc", "gcc_static", "clang", "clang_static")]

# Differences that are not framewalk's fault, each with its reason. A
# difference listed here is reported as "known" and does not fail the test; a
# listed difference that no longer occurs is reported so that it is removed.
# Keys: fixture, thread (regular expression on the thread's name), modes
# (None: every mode), reason, `agree`: how many frames must still be the
# same as gdb's (up to where gdb goes wrong), and `framewalk`: since gdb
# cannot vouch for framewalk's frames beyond, regular expressions that
# framewalk's function names must match, frame for frame (else the case
# fails all the same).
# framewalk's own bugs never go here: they fail.
KNOWN_DIFFERENCES = [
    # gdb (13.1, amd64_linux_sigtramp_p) takes a PC for a signal trampoline
    # only if its function is named __restore_rt, or has no name (or one
    # containing "sigaction") and the code matches; a trampoline without CFI
    # under any other name (gdb even calls it frame_dummy here) is unwound as
    # an ordinary function, and gdb's walk goes astray (0x7, then 0).
    # framewalk recognises the trampoline by its code, mov $15,%rax; syscall.
    {"fixture": "signal_restorer_unnamed", "thread": "signals.*", "modes": None, "agree": 4,
     "reason": "gdb checks the code of a signal trampoline without CFI only when it is named __restore_rt or nameless",
     "framewalk": [_LIBC + "pause", "fw_block", "in_handler_block", "fw_sigreturn_stub", "faulting_leaf",
                   "before_fault", "main", _LIBC + "libc_start_call_main", _LIBC + "libc_start_main(_impl)?",
                   "_start"]},
    {"fixture": "signal_restorer_unnamed", "thread": "usr1-in-read", "modes": None, "agree": 4,
     "reason": "gdb checks the code of a signal trampoline without CFI only when it is named __restore_rt or nameless",
     "framewalk": [_LIBC + "pause", "fw_block", "in_handler_block", "fw_sigreturn_stub", _LIBC + "read",
                   "fw_block_read", "thread_body", "start_thread", _LIBC + "clone3"]},
]


def names_match(who, expected, names):
    """None when the function names match `expected` frame for frame, else why not."""
    names = [n or "??" for n in names]
    if len(names) != len(expected):
        return "%s has %d frames, %d expected: %s" % (who, len(names), len(expected), " < ".join(names))
    for i, (n, e) in enumerate(zip(names, expected)):
        if not re.fullmatch(e, n):
            return "%s's #%d is %s, expected %s" % (who, i, n, e)
    return None


def framewalk_matches(expected, fw_thread):
    """None when framewalk's function names match `expected`, else why not."""
    why = names_match("framewalk", expected, [f["function"] for f in fw_thread["frames"]])
    if not why and fw_thread["stop"] != "outermost":
        why = "framewalk stops with %s" % (fw_thread.get("stop_detail") or fw_thread["stop"])
    return why


def expected_chain(chains, thread_name):
    """The call chain a fixture knows for this thread (Fixture.chains), or None."""
    for pattern, chain in (chains or {}).items():
        if re.fullmatch(pattern, thread_name or ""):
            return chain
    return None


def gdb_follows(chain, g):
    """None when gdb's walk of a thread follows its known chain to the end, else how it does not."""
    why = names_match("gdb", chain, [fn for _, fn in gdb_pcs(g)])
    if not why and g["stop"] != "outermost":
        why = "gdb stops with %s" % g["stop"]
    return why

# System calls the fixtures block in (x86-64 numbers): read, pause.
BLOCKING_SYSCALLS = {"0", "34"}

PLT_SECTIONS = (".plt", ".plt.sec", ".plt.got")

children = []  # every process started here, killed at exit


def cleanup():
    for p in children:
        if p.poll() is None:
            try:
                p.kill()
            except OSError:
                pass
    for p in children:
        try:
            p.wait(timeout=5)
        except Exception:
            pass


def on_signal(signum, frame):
    cleanup()
    sys.exit(128 + signum)


def log(msg):
    print(msg, flush=True)


# ---------------------------------------------------------------- processes

def start_fixture(path, argv, env=None):
    p = subprocess.Popen([path] + argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, env=env)
    children.append(p)
    deadline = time.time() + 15
    buf = b""
    while time.time() < deadline:
        r, _, _ = select.select([p.stdout], [], [], 0.2)
        if r:
            chunk = os.read(p.stdout.fileno(), 4096)
            if not chunk:
                break
            buf += chunk
            if b"ready\n" in buf:
                return p, None
        if p.poll() is not None:
            break
    err = p.stderr.read1(4096).decode(errors="replace") if p.poll() is not None else ""
    return p, "no 'ready' (exit status %s) %s" % (p.poll(), err.strip())


def thread_states(pid):
    """{tid: (name, syscall line)} for every thread of pid."""
    out = {}
    try:
        tids = os.listdir("/proc/%d/task" % pid)
    except OSError:
        return out
    for t in tids:
        try:
            with open("/proc/%d/task/%s/syscall" % (pid, t)) as f:
                sc = f.read().strip()
            with open("/proc/%d/task/%s/comm" % (pid, t)) as f:
                name = f.read().strip()
        except OSError:
            continue
        out[int(t)] = (name, sc)
    return out


def wait_settled(pid, spinners, timeout=15):
    """Until every thread but the `spinners` is blocked in read/pause, and
    stays so with the same PC and stack pointer across two looks (spinners
    may be running or, like a vDSO falling back on the system call, not)."""
    deadline = time.time() + timeout
    prev = None
    states = {}
    while time.time() < deadline:
        states = thread_states(pid)
        blocked = {t: sc for t, (_, sc) in states.items() if sc.split()[0] in BLOCKING_SYSCALLS}
        good = states and len(states) - len(blocked) == spinners
        if good and prev == blocked:
            return None
        prev = blocked if good else None
        time.sleep(0.05)
    return "threads did not settle: " + "; ".join("%d %s: %s" % (t, n, sc[:40]) for t, (n, sc) in sorted(states.items()))


def run(cmd, timeout=180):
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=timeout)
    return r.returncode, r.stdout.decode(errors="replace"), r.stderr.decode(errors="replace")


GDB_SETTINGS = ["set debuginfod enabled off", "set pagination off", "set confirm off",
                "set backtrace past-main on", "set backtrace past-entry on", "set print thread-events off"]


def gdb_frames(target_args):
    cmd = ["gdb", "-nx", "-batch", "-q"]
    for s in GDB_SETTINGS:
        cmd += ["-iex", s]
    cmd += target_args + ["-x", GDB_SCRIPT]
    try:
        rc, out, err = run(cmd)
    except subprocess.TimeoutExpired:
        return None, "gdb timed out"
    for line in out.splitlines():
        if line.startswith("FRAMEWALK-GDB-JSON "):
            return json.loads(line[len("FRAMEWALK-GDB-JSON "):]), None
    return None, "gdb gave no frames (status %d): %s" % (rc, (err or out).strip()[-600:])


class Walker:
    """How framewalk is run and the fixtures are started: as built (CFI), or
    with --sframe from copies carrying SFrame made by framewalk, their
    libraries found there first (LD_LIBRARY_PATH), walked with --source=sframe."""

    def __init__(self, path, sframe_dir=None):
        self.path = path
        self.sframe_dir = sframe_dir
        self.extra = ["--source=sframe"] if sframe_dir else []
        self.api = None  # --api: tests/capi/api_stack, whose frames must be the command's
        self.api_checks = 0
        self.env = None
        if sframe_dir:
            self.env = dict(os.environ, LD_LIBRARY_PATH=sframe_dir)


def framewalk(fw, args):
    try:
        rc, out, err = run([fw.path, "stack", "--format=json", "-n", "4096"] + fw.extra + args)
    except subprocess.TimeoutExpired:
        return None, "framewalk timed out"
    if rc not in (0, 1):
        return None, "framewalk exit %d: %s" % (rc, err.strip()[-600:])
    try:
        return json.loads(out), None
    except ValueError as e:
        return None, "framewalk printed no JSON (%s): %s %s" % (e, out[:300], err.strip()[-300:])


def api_matches(fw, args, out):
    """With --api: the C API's frames (tests/capi/api_stack.c) must be the
    command's, thread for thread and PC for PC, with the same stop."""
    if not fw.api:
        return None
    try:
        rc, text, err = run([fw.api] + args)
    except subprocess.TimeoutExpired:
        return "the C API's walk timed out"
    if rc != 0:
        return "the C API's walk exited %d: %s" % (rc, err.strip()[-300:])
    api = {t["tid"]: t for t in json.loads(text)["threads"]}
    cmd = {t["tid"]: t for t in out["threads"]}
    if sorted(api) != sorted(cmd):
        return "the C API listed threads %s, the command %s" % (sorted(api), sorted(cmd))
    for tid, t in cmd.items():
        pcs = [f["pc"] for f in t["frames"]]
        if api[tid]["pcs"] != pcs or api[tid]["stop"] != t["stop"]:
            return "thread %d: the C API gave %d frames (%s), the command %d (%s)" % (
                tid, len(api[tid]["pcs"]), api[tid]["stop"], len(pcs), t["stop"])
    fw.api_checks += 1
    return None


def gcore(pid, directory):
    prefix = os.path.join(directory, "core")
    try:
        rc, out, err = run(["gcore", "-o", prefix, str(pid)])
    except subprocess.TimeoutExpired:
        return None, "gcore timed out"
    path = "%s.%d" % (prefix, pid)
    if rc != 0 or not os.path.exists(path):
        return None, "gcore failed (%d): %s" % (rc, (err or out).strip()[-400:])
    return path, None


# ---------------------------------------------------------------- SFrame

# With --sframe, every frame past frame 0 must be recovered from its callee's
# SFrame row, except where SFrame cannot describe the callee. Those cases are
# listed here, each with its reason: the sources framewalk may fall back on
# there and the reason it must give ("sframe_miss" of the frame, which -v
# shows). A listed case no longer seen is reported so that it is removed.
# Keys: fixture, callee (regular expression on the callee's function name, or
# None for a callee outside every file), sources, miss, reason.
# framewalk's own bugs never go here: they fail.
SFRAME_FALLBACKS = [
    {"fixture": "signal_restorer", "callee": "__restore_rt", "sources": ["signal"], "miss": "no SFrame FDE for the PC",
     "reason": "the program's own sigreturn trampoline has no CFI, so no SFrame is made for it; "
               "framewalk recognises it by its code"},
    {"fixture": "signal_restorer_unnamed", "callee": "fw_sigreturn_stub", "sources": ["signal"],
     "miss": "no SFrame FDE for the PC",
     "reason": "the program's own sigreturn trampoline has no CFI, so no SFrame is made for it; "
               "framewalk recognises it by its code"},
    {"fixture": "asm_cfi", "callee": "leaf_nocfi|push_rbp_spin|real_prologue_nocfi|fp_nocfi",
     "sources": ["fp", "prologue"], "miss": "no SFrame FDE for the PC",
     "reason": "functions written without CFI: no SFrame is made for them (the CFI walk falls back the same way)"},
    {"fixture": "asm_cfi", "callee": "val_offset_callee|val_offset_caller", "sources": ["fp", "prologue"],
     "miss": "SFrame row valid in the topmost frame only",
     "reason": "their CFAs are r12+40 and rbx+40, registers their callees restore by DW_CFA_val_expression and "
               "DW_CFA_val_offset; SFrame recovers only the CFA, FP and RA, so a CFA based on another register "
               "holds in the topmost frame only"},
    {"fixture": "vdso", "callee": "__vdso_clock_gettime", "sources": ["fp", "prologue"],
     "miss": "no .sframe in the file",
     "reason": "the vDSO is the kernel's image, mapped without a file: no SFrame can be added to it"},
] + [{"fixture": "fp_scheduled_" + variant,
      "callee": "fw_block|fw_block_read|on_usr1|on_usr2|middle|outer|main|work_a|work_b|work_c|worker",
      "sources": ["fp", "prologue"], "miss": "no SFrame FDE for the PC",
      "reason": "the program's own functions are built without unwind tables: no SFrame is made for them "
                "(the CFI walk falls back the same way)"}
     for variant in ("gcc", "gcc_static", "clang", "clang_static")] + \
    [{"fixture": "fp_over_cfi_" + variant, "callee": "fp_inner|fp_outer|main|fp_read|fp_work|worker",
      "sources": ["fp", "prologue"], "miss": "no SFrame FDE for the PC",
      "reason": "the program's frame-pointer functions are built without unwind tables: no SFrame is made for "
                "them (the CFI walk falls back the same way)"}
     for variant in ("gcc", "gcc_static", "clang", "clang_static")]


def is_elf_program(path):
    """An ELF executable or shared object (e_type 2 or 3)."""
    try:
        with open(path, "rb") as f:
            head = f.read(18)
    except OSError:
        return False
    return len(head) == 18 and head[:4] == b"\x7fELF" and head[16] in (2, 3) and head[17] == 0


def prepare_sframe(fw, fixtures, directory):
    """Copies of the fixtures, their own libraries and the system libraries
    they load (ldd: libc, libstdc++, libgcc_s, libm), each with SFrame
    generated by framewalk. The dynamic loader stays the system's: the kernel
    maps the one PT_INTERP names (no fixture stack has its frames)."""
    inputs = {}
    for name in sorted(os.listdir(fixtures)):
        if is_elf_program(os.path.join(fixtures, name)):
            inputs[name] = os.path.join(fixtures, name)
    for path in list(inputs.values()):
        rc, out, _ = run(["ldd", path])
        for line in out.splitlines():
            m = re.match(r"\s*(\S+) => (/\S+)", line)
            if m and not m.group(1).startswith("ld-linux"):
                inputs.setdefault(m.group(1), m.group(2))
    os.makedirs(directory)
    summary = []
    for name, path in sorted(inputs.items()):
        rc, out, err = run([fw, "sframe", "--generate", path, "-o", os.path.join(directory, name)])
        if rc != 0:
            return None, "framewalk sframe --generate %s failed (%d): %s" % (path, rc, (err or out).strip()[-400:])
        summary.append("%s: %s" % (name, " ".join(out.split("\n")[1:2]).strip()))
    return summary, None


def foreign_mappings(pid, directory):
    """Executable file mappings of pid from outside `directory` (but the
    dynamic loader): the fixture did not load the SFrame copies."""
    out = []
    with open("/proc/%d/maps" % pid) as f:
        for line in f:
            parts = line.split()
            if len(parts) >= 6 and "x" in parts[1] and parts[5].startswith("/") and \
                    not os.path.basename(parts[5]).startswith("ld-linux") and \
                    not parts[5].startswith(directory + "/"):
                out.append(parts[5])
    return sorted(set(out))


def sframe_fallback(fixture, callee, source, miss):
    for k in SFRAME_FALLBACKS:
        if k["fixture"] == fixture and source in k["sources"] and k["miss"] == miss and \
                (re.fullmatch(k["callee"], callee) if k["callee"] is not None and callee else k["callee"] is callee):
            return k
    return None


def sframe_sources(res, fixture, f):
    """None when every frame of framewalk's walk came from SFrame or falls
    back as listed in SFRAME_FALLBACKS, else the first that does not."""
    frames = f["frames"]
    for i in range(1, len(frames)):
        source = frames[i]["source"]
        if source == "sframe":
            continue
        callee = frames[i - 1]["function"]
        miss = frames[i].get("sframe_miss")
        k = sframe_fallback(fixture, callee, source, miss)
        if k is None:
            return "#%d (caller of %s) recovered by '%s', not SFrame (%s)" % (
                i, callee or "??", source, miss or "no reason given")
        res.fallbacks_used.add(id(k))
        res.fallbacks += 1
    if f["stop"] == "no-unwind-info":
        return "framewalk stops: %s" % f.get("stop_detail")
    return None


def verbose_reasons(fw, args, fw_json):
    """None when `framewalk stack -v` (text) names, on each frame recovered
    by a fallback, the reason its JSON gives; else the first that it does not."""
    try:
        rc, out, err = run([fw.path, "stack", "-v", "-n", "4096"] + fw.extra + args)
    except subprocess.TimeoutExpired:
        return "framewalk -v timed out"
    tags = {}  # (tid, frame number) -> the [...] at the end of its line
    tid = None
    for line in out.splitlines():
        m = re.match(r"TID (\d+)", line)
        if m:
            tid = int(m.group(1))
            continue
        m = re.match(r"#(\d+)\s.*\[([^\]]*)\]$", line)
        if m and tid is not None:
            tags[(tid, int(m.group(1)))] = m.group(2)
    for t in fw_json["threads"]:
        for i, f in enumerate(t["frames"]):
            if not f.get("sframe_miss"):
                continue
            want = "%s: %s" % (f["source"], f["sframe_miss"])
            got = tags.get((t["tid"], i))
            if got != want:
                return "-v shows thread %d #%d as [%s], not [%s]" % (t["tid"], i, got, want)
    return None


# ---------------------------------------------------------------- comparison

def gdb_pcs(thread):
    """gdb's frames without inline and tail-call frames: [(pc, function)]."""
    return [(int(f["pc"], 16), f["function"]) for f in thread["frames"] if f["type"] not in ("inline", "tailcall")]


def fw_pcs(thread):
    return [(int(f["pc"], 16), f["function"]) for f in thread["frames"]]


def fmt_frame(pc_fn):
    pc, fn = pc_fn
    return "0x%x %s" % (pc, fn or "??")


def compare_thread(g, f):
    """None when they agree, else the first mismatch as text."""
    gp, fp = gdb_pcs(g), fw_pcs(f)
    for i in range(min(len(gp), len(fp))):
        if gp[i][0] != fp[i][0]:
            return "#%d gdb %s, framewalk %s" % (i, fmt_frame(gp[i]), fmt_frame(fp[i]))
    if len(gp) > len(fp):
        return "#%d framewalk stops (%s), gdb goes on: %s" % (len(fp), f.get("stop_detail") or f["stop"], fmt_frame(gp[len(fp)]))
    if len(fp) > len(gp):
        return "#%d gdb stops (%s), framewalk goes on: %s" % (len(gp), g["stop"], fmt_frame(fp[len(gp)]))
    if g["stop"] == "outermost" and f["stop"] != "outermost":
        return "same %d frames, but framewalk stops with %s (gdb: outermost)" % (len(fp), f.get("stop_detail") or f["stop"])
    return None


def compare_callers(reference, f):
    """For a thread caught in a PLT stub: frames 1.. against gdb's chain."""
    fp = fw_pcs(f)[1:]
    for i in range(min(len(reference), len(fp))):
        if reference[i][0] != fp[i][0]:
            return "#%d gdb %s, framewalk %s" % (i + 1, fmt_frame(reference[i]), fmt_frame(fp[i]))
    if len(reference) != len(fp):
        return "#%d: gdb has %d callers, framewalk %d (%s)" % (min(len(reference), len(fp)) + 1, len(reference), len(fp), f["stop"])
    if f["stop"] != "outermost":
        return "framewalk stops with %s" % (f.get("stop_detail") or f["stop"])
    return None


def known_difference(fixture, thread_name, mode):
    for k in KNOWN_DIFFERENCES:
        if k["fixture"] == fixture and re.fullmatch(k["thread"], thread_name or "") and \
                (k.get("modes") is None or mode in k["modes"]):
            return k
    return None


class Results:
    def __init__(self):
        self.rows = {}       # (fixture, tid) -> {"name", "gdb": n, mode: (n, mismatch or None)}
        self.order = []
        self.details = []    # (fixture, mode, tid, name, mismatch, gdb frames, fw frames)
        self.problems = []   # fixture-level failures (no ready, gdb failed, ...)
        self.skips = []
        self.notes = []
        self.known_used = set()
        self.failures = 0
        self.known = 0
        self.show_frames = False
        self.shown = []  # with --show-frames: the frames of the walks that agree
        self.sframe = False  # --sframe: frames must come from SFrame, but as listed
        self.fallbacks = 0
        self.fallbacks_used = set()
        self.gdb_wrong = []  # (fixture, mode, tid, name, how): gdb's walk leaves a known chain

    def row(self, fixture, tid, name):
        key = (fixture, tid, name)
        if key not in self.rows:
            self.rows[key] = {"name": name}
            self.order.append(key)
        return self.rows[key]

    def add(self, fixture, mode, tid, name, gdb_count, fw_count, mismatch, gdb_list=None, fw_list=None,
            fw_thread=None):
        r = self.row(fixture, tid, name)
        if self.show_frames and not mismatch:
            self.shown.append((fixture, mode, tid, name, gdb_list, fw_list))
        if gdb_count is not None:
            r["gdb"] = gdb_count
        status = None
        if mismatch:
            k = known_difference(fixture, name, mode)
            why_not = None
            if k and k.get("framewalk") is not None:
                why_not = framewalk_matches(k["framewalk"], fw_thread) if fw_thread else "no framewalk frames"
            if k and not why_not and k.get("agree"):
                n = k["agree"]
                if [pc for pc, _ in (gdb_list or [])[:n]] != [pc for pc, _ in (fw_list or [])[:n]]:
                    why_not = "the first %d frames differ from gdb's" % n
            if k:
                self.known_used.add(id(k))
            if k and why_not:
                mismatch += "; and not the known difference: " + why_not
            if k and not why_not:
                self.known += 1
                status = "known"
            else:
                self.failures += 1
                status = "FAIL"
            self.details.append((fixture, mode, tid, name, mismatch, status, gdb_list, fw_list))
        r[mode] = (fw_count, mismatch, status)

    def problem(self, fixture, text):
        self.failures += 1
        self.problems.append((fixture, text))


def compare_snapshot(res, fixture, mode, truth, fw_json, names, chains=None):
    """Every thread of gdb's and framewalk's outputs; `names`: tid -> the
    label of its row (its /proc name). With `chains` (Fixture.chains), a
    thread with a known chain must follow it, and is compared with gdb only
    where gdb's walk follows it too."""
    gthreads = {t["tid"]: t for t in truth["threads"]}
    fthreads = {t["tid"]: t for t in fw_json["threads"]}
    for tid in sorted(set(gthreads) | set(fthreads), key=lambda t: (t != fw_json.get("pid"), t)):
        g, f = gthreads.get(tid), fthreads.get(tid)
        name = names.get(tid) or (g or {}).get("name") or (f or {}).get("name") or ""
        if g is None:
            res.add(fixture, mode, tid, name, None, len(f["frames"]), "thread not seen by gdb")
            continue
        if f is None:
            res.add(fixture, mode, tid, name, len(gdb_pcs(g)), None, "thread missing from framewalk's output")
            continue
        if f["stop"] == "unreadable":
            res.add(fixture, mode, tid, name, len(gdb_pcs(g)), 0, "framewalk could not read the thread: %s" % f.get("error"))
            continue
        m = compare_thread(g, f)
        chain = expected_chain(chains, name)
        if chain is not None:
            gdb_wrong = gdb_follows(chain, g)
            if gdb_wrong:
                res.gdb_wrong.append((fixture, mode, tid, name, gdb_wrong))
                res.row(fixture, tid, name)["gdb_wrong"] = True
            m = framewalk_matches(chain, f) or (None if gdb_wrong else m)
        if res.sframe:
            why = sframe_sources(res, fixture, f)
            if why and not m:
                m = why
            elif why:  # the walk differs from gdb's as listed, and its sources are wrong too
                res.problem(fixture, "%s, thread %d %s: %s" % (mode_text(mode), tid, name, why))
        res.add(fixture, mode, tid, name, len(gdb_pcs(g)), len(f["frames"]), m, gdb_pcs(g), fw_pcs(f), f)


# ---------------------------------------------------------------- fixtures

def settle(fw, fx, p):
    """Waits until the fixture's threads have settled; in --sframe mode also
    checks that its code comes only from the SFrame copies. An error, or None."""
    err = wait_settled(p.pid, fx.spinners)
    if not err and fw.sframe_dir:
        foreign = foreign_mappings(p.pid, fw.sframe_dir)
        if foreign:
            err = "code mapped from outside the SFrame copies: " + ", ".join(foreign)
    return err


def run_static(fw, fx, path, workdir, res, verbose):
    p, err = start_fixture(path, fx.argv, fw.env)
    try:
        if err:
            res.problem(fx.name, err)
            return
        err = settle(fw, fx, p)
        if err:
            res.problem(fx.name, err)
            return
        truth, err = gdb_frames(["-p", str(p.pid)])
        if err:
            res.problem(fx.name, err)
            return
        if verbose:
            kinds = [f["type"] for t in truth["threads"] for f in t["frames"]]
            log("  gdb: %d threads, %d frames (%d inline and %d tail-call frames left out)"
                % (len(truth["threads"]), len(kinds), kinds.count("inline"), kinds.count("tailcall")))
        names = {tid: n for tid, (n, _) in thread_states(p.pid).items()}
        for mode in MODES[:3]:
            out, err = framewalk(fw, ["-p", str(p.pid), "--freeze=" + mode])
            if err:
                res.problem(fx.name, "%s: %s" % (mode, err))
                continue
            compare_snapshot(res, fx.name, mode, truth, out, names, fx.chains)
            err = api_matches(fw, ["live", str(p.pid), mode], out)
            if err:
                res.problem(fx.name, "%s: %s" % (mode, err))
            if mode == "process":
                seen = {f["source"] for t in out["threads"] for f in t["frames"]}
                # With --sframe, SFrame stands for every CFI source.
                wanted = fx.exercises - {"cfi", "debug_frame"} if fw.sframe_dir else fx.exercises
                for missing in sorted(wanted - seen):
                    res.notes.append("%s: no frame of framewalk's came from '%s', which the fixture is meant to exercise"
                                     % (fx.name, missing))
        core, err = gcore(p.pid, workdir)
        if err:
            res.problem(fx.name, "core: " + err)
            return
        out, err = framewalk(fw, ["--core", core])
        if err:
            res.problem(fx.name, "core: " + err)
        else:
            compare_snapshot(res, fx.name, "core", truth, out, names, fx.chains)
            err = api_matches(fw, ["core", core], out)
            if err:
                res.problem(fx.name, "core: " + err)
            err = fw.sframe_dir and verbose_reasons(fw, ["--core", core], out)
            if err:
                res.problem(fx.name, "core: " + err)
        os.unlink(core)
        # Nothing may have moved while we looked: gdb again, same answer.
        again, err = gdb_frames(["-p", str(p.pid)])
        if not err and json.dumps(again["threads"]) != json.dumps(truth["threads"]):
            res.problem(fx.name, "the fixture's stacks changed during the test (gdb before and after differ)")
    finally:
        p.kill()
        p.wait()


def read_sections(path):
    """{name: (address, size)} from an ELF64 file's section headers."""
    with open(path, "rb") as f:
        data = f.read()
    if data[:4] != b"\x7fELF" or data[4] != 2:
        return {}
    shoff, = struct.unpack_from("<Q", data, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", data, 0x3A)
    headers = [struct.unpack_from("<IIQQQQIIQQ", data, shoff + i * shentsize) for i in range(shnum)]
    strtab_off = headers[shstrndx][4]
    out = {}
    for h in headers:
        name_end = data.index(b"\0", strtab_off + h[0])
        out[data[strtab_off + h[0]:name_end].decode()] = (h[3], h[5])
    return out


def plt_ranges(exe, pid):
    # The PLT fixture is not position independent: link-time addresses are runtime addresses.
    secs = read_sections(exe)
    return [(secs[s][0], secs[s][0] + secs[s][1], s) for s in PLT_SECTIONS if s in secs and secs[s][1]]


def vdso_ranges(exe, pid):
    with open("/proc/%d/maps" % pid) as f:
        for line in f:
            if line.rstrip().endswith("[vdso]"):
                lo, hi = line.split()[0].split("-")
                return [(int(lo, 16), int(hi, 16), "[vdso]")]
    return []


REGIONS = {"plt": plt_ranges, "vdso": vdso_ranges}


def region_of(ranges, pc):
    for lo, hi, name in ranges:
        if lo <= pc < hi:
            return name
    return None


def region_hits(ranges, frames_of_threads):
    """{tid: region name} for the threads whose frame 0 is in the region."""
    out = {}
    for t in frames_of_threads:
        if t["frames"]:
            where = region_of(ranges, int(t["frames"][0]["pc"], 16))
            if where:
                out[t["tid"]] = where
    return out


def callers_outside(ranges, frames):
    """The frames from the first one outside the region on (after frame 0)."""
    k = 1
    while k < len(frames) and region_of(ranges, frames[k][0]):
        k += 1
    return k, frames[k:]


def compare_callers(reference, ranges, f):
    """For a thread caught in the region: its callers outside the region
    against gdb's (from another sample: the region's own frames may differ)."""
    k, fp = callers_outside(ranges, fw_pcs(f))
    for i in range(min(len(reference), len(fp))):
        if reference[i][0] != fp[i][0]:
            return "#%d gdb %s, framewalk %s" % (k + i, fmt_frame(reference[i]), fmt_frame(fp[i]))
    if len(reference) != len(fp):
        return "#%d: gdb has %d callers outside the region, framewalk %d (%s)" % (
            k + min(len(reference), len(fp)), len(reference), len(fp), f.get("stop_detail") or f["stop"])
    if f["stop"] != "outermost":
        return "framewalk stops with %s" % (f.get("stop_detail") or f["stop"])
    return None


def run_sampled(fw, fx, path, workdir, res, verbose, seconds):
    """Fixtures whose threads spin through a region (the PLT, the vDSO): the
    core comparison is made on a core where some thread is in the region, with
    gdb reading that same core; the live modes sample framewalk until a
    thread is in the region and compare its callers with gdb's."""
    p, err = start_fixture(path, fx.argv, fw.env)
    try:
        if err:
            res.problem(fx.name, err)
            return
        err = settle(fw, fx, p)
        if err:
            res.problem(fx.name, err)
            return
        ranges = REGIONS[fx.kind](path, p.pid)
        if not ranges:
            res.problem(fx.name, "no %s region in %s" % (fx.kind, path))
            return
        what = "/".join(r[2] for r in ranges)
        names = {tid: n for tid, (n, _) in thread_states(p.pid).items()}
        # Core: sample with gcore until a thread is in the region; gdb then reads the same core.
        reference = None
        deadline = time.time() + seconds
        samples = 0
        while time.time() < deadline:
            core, err = gcore(p.pid, workdir)
            if err:
                res.problem(fx.name, "core: " + err)
                return
            samples += 1
            out, err = framewalk(fw, ["--core", core])
            if err:
                res.problem(fx.name, "core: " + err)
                os.unlink(core)
                return
            hits = region_hits(ranges, out["threads"])
            if hits:
                truth, err = gdb_frames([path, core])
                if err:
                    res.problem(fx.name, "gdb on the core: " + err)
                    os.unlink(core)
                    return
                labels = {}
                for t in truth["threads"]:
                    g = gdb_pcs(t)
                    where = hits.get(t["tid"]) or (g[0][1] if g else "?")
                    labels[t["tid"]] = "%s, in %s" % (names.get(t["tid"], "?"), where)
                    if t["tid"] in hits and g and region_of(ranges, g[0][0]):
                        reference = callers_outside(ranges, g)[1]
                compare_snapshot(res, fx.name, "core", truth, out, labels)
                err = fw.sframe_dir and verbose_reasons(fw, ["--core", core], out)
                if err:
                    res.problem(fx.name, "core: " + err)
                if verbose:
                    log("  core: %s hit after %d gcore samples (threads %s)" % (what, samples, sorted(hits)))
                os.unlink(core)
                break
            os.unlink(core)
        if reference is None:
            if samples:
                res.skips.append((fx.name, "core", "no thread stopped in %s within %d gcore samples (%ds)"
                                  % (what, samples, seconds)))
            # The callers from gdb live instead.
            deadline = time.time() + seconds
            while reference is None and time.time() < deadline:
                truth, err = gdb_frames(["-p", str(p.pid)])
                if err:
                    break
                for t in truth["threads"]:
                    g = gdb_pcs(t)
                    if g and region_of(ranges, g[0][0]):
                        reference = callers_outside(ranges, g)[1]
                        break
        if reference is None:
            res.skips.append((fx.name, "live", "gdb never caught a thread in %s: no reference callers" % what))
            return
        # Live: framewalk's own samples; a thread in the region must show gdb's callers.
        for mode in MODES[:3]:
            deadline = time.time() + seconds
            samples = 0
            hit = False
            while time.time() < deadline and not hit:
                out, err = framewalk(fw, ["-p", str(p.pid), "--freeze=" + mode])
                samples += 1
                if err:
                    res.problem(fx.name, "%s: %s" % (mode, err))
                    break
                hits = region_hits(ranges, out["threads"])
                for t in out["threads"]:
                    if t["tid"] not in hits:
                        continue
                    hit = True
                    name = "%s, in %s, live sample" % (names.get(t["tid"], "?"), hits[t["tid"]])
                    k, _ = callers_outside(ranges, fw_pcs(t))
                    m = compare_callers(reference, ranges, t)
                    if res.sframe:
                        m = m or sframe_sources(res, fx.name, t)
                    res.add(fx.name, mode, t["tid"], name, k + len(reference), len(t["frames"]), m,
                            [(pc, "(in %s, not compared)" % what) for pc, _ in fw_pcs(t)[:k]] + reference,
                            fw_pcs(t))
            if not hit:
                res.skips.append((fx.name, mode, "no thread stopped in %s within %d samples (%ds)" % (what, samples, seconds)))
            elif verbose:
                log("  %s: %s hit after %d samples" % (mode, what, samples))
    finally:
        p.kill()
        p.wait()


# ---------------------------------------------------------------- report

def cell(r, mode):
    if mode not in r:
        return "-"
    n, mismatch, status = r[mode]
    n = "?" if n is None else str(n)
    if not mismatch:
        return n + " ok"
    return n + (" known" if status == "known" else " FAIL")


def print_table(res):
    header = ["fixture", "thread", "gdb"] + ["live:" + m for m in MODES[:3]] + ["core", "first mismatch"]
    rows = []
    for key in res.order:
        fixture, tid, _ = key
        r = res.rows[key]
        first = next((r[m][1] for m in MODES if m in r and r[m][1]), "")
        gdb = str(r.get("gdb", "-")) + (" (off chain)" if r.get("gdb_wrong") else "")
        rows.append([fixture, "%d %s" % (tid, r["name"] or ""), gdb] +
                    [cell(r, m) for m in MODES] + [first])
    widths = [max(len(str(x[i])) for x in rows + [header]) for i in range(len(header) - 1)]
    line = lambda cols: "  ".join(str(c).ljust(w) for c, w in zip(cols, widths)) + "  " + cols[-1]
    log(line(header))
    log(line(["-" * w for w in widths] + ["-" * 14]))
    for r in rows:
        log(line(r))


def print_frames(gl, fl):
    gl, fl = gl or [], fl or []
    for i in range(max(len(gl), len(fl))):
        a = fmt_frame(gl[i]) if i < len(gl) else ""
        b = fmt_frame(fl[i]) if i < len(fl) else ""
        mark = "   " if i < len(gl) and i < len(fl) and gl[i][0] == fl[i][0] else " ! "
        log("  #%-3d%s%-52s | %s" % (i, mark, a, b))


def mode_text(mode):
    return mode if mode == "core" else "live --freeze=" + mode


def print_details(res):
    if res.shown:
        log("\nWalks that agree (gdb's frames | framewalk's frames):")
        for fixture, mode, tid, name, gl, fl in res.shown:
            log("\n* %s, %s, thread %d %s" % (fixture, mode_text(mode), tid, name))
            print_frames(gl, fl)
    if not res.details:
        return
    log("\nMismatches (gdb's frames | framewalk's frames; the same walk in several modes is shown once):")
    groups = []
    for fixture, mode, tid, name, mismatch, status, gl, fl in res.details:
        key = (fixture, tid, name, mismatch, status, tuple(gl or ()), tuple(fl or ()))
        for g in groups:
            if g[0] == key:
                g[1].append(mode)
                break
        else:
            groups.append((key, [mode]))
    for (fixture, tid, name, mismatch, status, gl, fl), modes in groups:
        log("\n* %s, %s, thread %d %s: %s [%s]" % (fixture, ", ".join(mode_text(m) for m in modes), tid, name,
                                                 mismatch, status))
        k = known_difference(fixture, name, modes[0])
        if k:
            log("  known difference: " + k["reason"])
        print_frames(list(gl), list(fl))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--framewalk", required=True)
    ap.add_argument("--fixtures", required=True, help="the directory of the built fixtures")
    ap.add_argument("--only", help="comma-separated fixture names")
    ap.add_argument("--sample-seconds", type=int, default=6,
                    help="sampling time per mode for the PLT and vDSO fixtures before they are skipped")
    ap.add_argument("--show-frames", action="store_true", help="print the frames of every walk, also those that agree")
    ap.add_argument("--sframe", action="store_true",
                    help="run copies of the fixtures and their libraries with SFrame generated by framewalk, "
                         "walk them with --source=sframe")
    ap.add_argument("--api", help="tests/capi/api_stack: every walk is also made through the C API, whose frames "
                                  "must be the command's")
    ap.add_argument("-v", "--verbose", action="store_true")
    args = ap.parse_args()

    for tool in ("gdb", "gcore"):
        if not shutil.which(tool):
            log("SKIP: %s is not installed" % tool)
            return 77
    atexit.register(cleanup)
    for s in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(s, on_signal)

    only = set(args.only.split(",")) if args.only else None
    res = Results()
    res.show_frames = args.show_frames
    res.sframe = args.sframe
    workdir = tempfile.mkdtemp(prefix="framewalk-stack-")
    fw = Walker(args.framewalk)
    fw.api = args.api
    fixtures = args.fixtures
    try:
        if args.sframe:
            fixtures = os.path.join(workdir, "sframe")
            summary, err = prepare_sframe(args.framewalk, args.fixtures, fixtures)
            if err:
                log("FAIL: " + err)
                return 1
            fw = Walker(args.framewalk, fixtures)
            if args.verbose:
                log("SFrame copies in %s:" % fixtures)
                for line in summary:
                    log("  " + line)
        for fx in FIXTURES:
            if only and fx.name not in only:
                continue
            path = os.path.join(fixtures, fx.binary)
            if not os.path.exists(path):
                res.skips.append((fx.name, "all", "not built (%s)" % path))
                continue
            t0 = time.time()
            log("== %s" % fx.name)
            if fx.kind in REGIONS:
                run_sampled(fw, fx, path, workdir, res, args.verbose, args.sample_seconds)
            else:
                run_static(fw, fx, path, workdir, res, args.verbose)
            if args.verbose:
                log("  %.1fs" % (time.time() - t0))
    finally:
        cleanup()
        shutil.rmtree(workdir, ignore_errors=True)

    log("")
    if fw.api:
        log("the C API gave the command's frames in %d walks" % fw.api_checks)
    print_table(res)
    print_details(res)
    if res.problems:
        log("\nProblems:")
        for fixture, text in res.problems:
            log("  %s: %s" % (fixture, text))
    if res.skips:
        log("\nSkipped:")
        for fixture, mode, text in res.skips:
            log("  %s (%s): %s" % (fixture, mode, text))
    if res.gdb_wrong:
        log("\ngdb left the known call chain (off chain: framewalk checked against the chain only):")
        modes_of = {}
        for fixture, mode, tid, name, how in res.gdb_wrong:
            modes_of.setdefault((fixture, tid, name, how), []).append(mode_text(mode))
        for (fixture, tid, name, how), modes in modes_of.items():
            log("  %s, thread %d %s (%s): %s" % (fixture, tid, name, ", ".join(modes), how))
    for note in res.notes:
        log("\nnote: " + note)
    for k in KNOWN_DIFFERENCES:
        if id(k) not in res.known_used and (not only or k["fixture"] in only):
            log("\nnote: known difference no longer seen, remove it: %s / %s" % (k["fixture"], k["thread"]))
    for k in SFRAME_FALLBACKS if args.sframe else []:
        if id(k) not in res.fallbacks_used and (not only or k["fixture"] in only):
            log("\nnote: SFrame fallback no longer seen, remove it: %s / %s" % (k["fixture"], k["callee"]))
    compared = sum(1 for r in res.rows.values() for m in MODES if m in r)
    log("\n%d thread walks compared: %d failed, %d known differences, %d fixture problems, %d skipped"
        % (compared, res.failures - len(res.problems), res.known, len(res.problems), len(res.skips)))
    if args.sframe:
        log("SFrame: every frame from SFrame but %d listed fallbacks" % res.fallbacks)
    return 1 if res.failures else 0


if __name__ == "__main__":
    sys.exit(main())

"""What the tests of cores made here from a 32-bit program's code share
(x32/core.py, s390/core.py): running the tools, framewalk's frames of the
core's threads checked against the program's construction, gdb-multiarch's
frames of them."""
import json
import shutil
import subprocess

# The main thread waiting in a join (../chain32.c), the core's second thread.
JOIN = ["join_futex", "join_block", "join_wait", "join_main", "_start"]


def run(cmd, **kw):
    return subprocess.run(cmd, capture_output=True, text=True, timeout=120, **kw)


def check(cmd, **kw):
    r = run(cmd, **kw)
    if r.returncode != 0:
        raise RuntimeError("%s: exit %d\n%s%s" % (" ".join(cmd), r.returncode, r.stdout, r.stderr))
    return r.stdout


def framewalk_threads(fw, core):
    return json.loads(check([fw, "stack", "--core", core, "--format", "json"]))["threads"]


def chain_problems(threads, crashing):
    """framewalk's threads against the construction: the crashing thread's
    functions `crashing`, then the joining main thread's JOIN (its thread id
    one less), every walk ending `outermost`."""
    if len(threads) != 2:
        return ["%d threads, expected 2" % len(threads)]
    problems = []
    if threads[1]["tid"] != threads[0]["tid"] - 1:
        problems.append("thread ids %d, %d: not the crashing thread, then the main thread"
                        % (threads[0]["tid"], threads[1]["tid"]))
    for thread, expected in zip(threads, (crashing, JOIN)):
        names = [f.get("function") for f in thread["frames"]]
        if names != expected:
            problems.append("thread %d: functions %s, expected %s" % (thread["tid"], names, expected))
        if thread.get("stop") != "outermost":
            problems.append("thread %d: stop %s, expected outermost" % (thread["tid"], thread.get("stop")))
    return problems


def names(threads):
    return " | ".join(" ".join(f.get("function") or "?" for f in t["frames"]) for t in threads)


def pcs(thread):
    return [int(f["pc"], 16) for f in thread["frames"]]


def pc_problem(thread, ours, theirs):
    """A problem when framewalk's PCs `ours` of `thread` differ from gdb's
    `theirs`, or gdb has none."""
    if ours == theirs and theirs:
        return []
    return ["thread %d: PCs %s, gdb's %s" % (thread["tid"], [hex(p) for p in ours], [hex(p) for p in theirs])]


def gdb_frames(program, core):
    """gdb's frames of each of the core's threads, by thread id: (pc, is a
    signal frame, function) each; None without gdb-multiarch."""
    if not shutil.which("gdb-multiarch"):
        return None
    script = ("python\nimport gdb\nfor t in gdb.selected_inferior().threads():\n"
              "    t.switch()\n    print('THREAD', t.ptid[1])\n    f = gdb.newest_frame()\n"
              "    while f is not None:\n"
              "        print('FRAME', hex(f.pc()), f.type() == gdb.SIGTRAMP_FRAME, f.name())\n"
              "        f = f.older()\nend\n")
    r = run(["gdb-multiarch", "-nx", "-batch", "-ex", "file " + program, "-ex", "core-file " + core,
             "-ex", script])
    threads = {}
    frames = None
    for line in r.stdout.splitlines():
        if line.startswith("THREAD "):
            frames = threads.setdefault(int(line.split()[1]), [])
        elif line.startswith("FRAME ") and frames is not None:
            _, pc, sigtramp, name = line.split(" ", 3)
            frames.append((int(pc, 16), sigtramp == "True", name))
    return threads

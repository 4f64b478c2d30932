#!/usr/bin/env python3
"""framewalk stack -s (and -i) against gdb: the source line of every frame.

For each fixture: start it, wait until every thread blocks, take gdb's frames
with their source lines (gdb_frames.py: frame.find_sal(), at the PC for frame
0 and inside the call for callers), then run `framewalk stack -s
--format=json` on the live process and on a gcore core, and compare thread by
thread. gdb shows each physical frame as the inlined calls at its PC
(INLINE_FRAME, innermost first) followed by the frame itself:

  - without -i, framewalk's frame must give the line of the innermost of
    them (the line the line table has for the PC, as addr2line without -i);
  - with --inlines, framewalk runs with -i and must give the same frames:
    each inlined call as a frame marked "inline", with the same file and line
    (the call site, for each caller of an inlined call) and the same function
    (the last component of gdb's name found in framewalk's).

A frame gdb has no line for must have none from framewalk either. Files are
equal when their normalised paths are, or when gdb's relative name is the end
of framewalk's path (gdb resolves a relative name against the unit's
directory only when the source exists).

Tail-call frames (gdb's TAILCALL_FRAME, framewalk's "tailcall": rebuilt from
DWARF call sites between two physical frames) are compared like physical
frames: the same PC (the address after the jump), the same function and the
same line, in the same place; also from split DWARF (tailcalls_split,
tailcalls_split4: .dwo files; tailcalls_dwp, tailcalls_dwp4: a .dwp only;
tailcalls_dwp, on which gdb crashes, against its twin: GDB_CRASHES), and the tail
calls tailcalls.c makes must be there (OWN_TAILCALLS: a comparison with a
gdb that rebuilds nothing either cannot pass unnoticed). A jump at the end
of inlined code is where gdb 13 is wrong (GDB_TAIL_IN_INLINE). And the physical frames of `-s` (and `-i`)
must be those of a run without source information: pc, sp, function,
module, source and activation of each, in order.

Exit status 0 when everything matches, 1 otherwise, 77 without gdb/gcore.

  source_lines.py --framewalk build/framewalk --fixtures build/tests/stack/fixtures [--inlines] [-v]
"""
import argparse
import atexit
import os
import re
import shutil
import signal
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import compare_with_gdb as cwg  # noqa: E402  (processes, gdb, framewalk runs)

FIXTURES = ["inlines", "inlines_clang", "recursion", "threads", "cxx_unwind", "link_static",
            "tailcalls", "tailcalls_clang", "tailcall",
            "tailcalls_split", "tailcalls_split4", "tailcalls_dwp", "tailcalls_dwp4"]
# Threads of a fixture that block elsewhere than in read/pause (tailcalls:
# one waits on a semaphore, in a futex).
SPINNERS = {"tailcalls": 1, "tailcalls_clang": 1, "tailcalls_split": 1, "tailcalls_split4": 1,
            "tailcalls_dwp": 1, "tailcalls_dwp4": 1}
# Tail-call frames of the program's own code that a run must show, by
# thread name (tailcalls.c): gdb's and framewalk's frames are equal only if
# both rebuilt them, so that a reader of call sites that finds none (split
# DWARF read from the main file only: gdb and framewalk both empty) fails
# here. The main thread: c, b; "partial": k, m; "inlined": outer (with the
# call of tail_helper inlined at its jump).
OWN_TAILCALLS = {"main": ["c", "b"], "partial": ["k", "m"], "inlined": ["outer"]}
# Fixtures gdb cannot read: gdb 13 crashes (SIGSEGV in `bt`) on the DWARF 5
# .dwp llvm-dwp 16 makes of tailcalls_dwp (gcore still works). Their frames
# must be those of a twin gdb confirms in the same run: the same program
# with its .dwo files (the same code; its thread frames, by thread, as
# function, offset, file, line and kind, pc aside).
GDB_CRASHES = {"tailcalls_dwp": "tailcalls_split"}
OWN_TAILCALL_FIXTURES = ("tailcalls", "tailcalls_split", "tailcalls_split4", "tailcalls_dwp", "tailcalls_dwp4")


def same_file(fw_file, gdb_file, gdb_full):
    if not fw_file or not gdb_file:
        return False
    n = os.path.normpath(fw_file)
    if gdb_full and n == os.path.normpath(gdb_full):
        return True
    rest = os.path.normpath(gdb_file)
    while rest.startswith("../"):
        rest = rest[3:]
    return n == rest or n.endswith("/" + rest)


def physical_groups(frames, is_inline):
    """Frames as physical frames: [inlined calls innermost first..., the frame]."""
    groups, current = [], []
    for f in frames:
        current.append(f)
        if not is_inline(f):
            groups.append(current)
            current = []
    if current:
        groups.append(current)
    return groups


def gdb_groups(frames):
    return physical_groups(frames, lambda f: f["type"] == "inline")


def fw_groups(frames):
    return physical_groups(frames, lambda f: f.get("inline"))


def last_name_component(name):
    name = re.sub(r"\(.*\)$", "", name or "") if not (name or "").endswith("operator()") else name
    return name.split("::")[-1]


def tail_name_differs(fw, g):
    """None when a tail-call frame's name is gdb's: framewalk names it by its
    symbol as it names physical frames (sem_wait, do_futex_wait.constprop.0),
    gdb by its DWARF function (__new_sem_wait, do_futex_wait): one name
    holds the other."""
    want, have = last_name_component(g.get("function")), fw.get("function") or ""
    if not want or want in have or (have and have in want):
        return None
    return "function: gdb %s, framewalk %s" % (g.get("function"), have)


def describe(f):
    where = "%s:%s" % (f.get("file"), f.get("line")) if f.get("file") else "no line"
    return "%s %s (%s)" % (f.get("pc"), f.get("function"), where)


def compare_frame(fw, g, check_name):
    """None when they agree, else why not."""
    g_has = "file" in g
    fw_has = "file" in fw
    if g_has != fw_has:
        return "gdb %s, framewalk %s" % ("has a line" if g_has else "has none", "has one" if fw_has else "has none")
    if g_has:
        if fw["line"] != g["line"] or not same_file(fw["file"], g["file"], g.get("fullname")):
            return "line: gdb %s:%d, framewalk %s:%d" % (g["fullname"] or g["file"], g["line"], fw["file"], fw["line"])
    if check_name and g.get("function"):
        want = last_name_component(g["function"])
        if want and want not in (fw.get("function") or ""):
            return "function: gdb %s, framewalk %s" % (g["function"], fw.get("function"))
    return None


# A jump at the end of inlined code (tailcalls.c, thread "inlined": outer()
# with tail_helper() inlined at line 125, whose last line, 121, jumps to
# g()). gdb 13 makes a tail-call frame one frame, named after the innermost
# block at the jump (tail_helper, line 121), and no inline frames in it: the
# function that jumped, outer, is missing, and gdb's caller frame
# (inlined_caller at line 128, `outer(x + 59)`) seems to call tail_helper.
# framewalk gives with -i the inlined call at the jump, then the function
# (tail_helper at 121 marked inline, outer at 125 marked tailcall), and
# without -i the function by its symbol at the jump's line (outer at 121).
# gdb's frame must be framewalk's innermost; the rest is pinned here by the
# program's construction: gdb's name -> (the function that jumped, the line
# of the inlined call in it).
GDB_TAIL_IN_INLINE = {"tail_helper": ("outer", 125)}


def tail_in_inline_differs(i, g, f, pinned, inlines):
    function, line = pinned
    if not inlines:
        why = compare_frame(f[-1], g, False)
        if not why and f[-1].get("function") != function:
            why = "function: %s, the program's construction says %s" % (f[-1].get("function"), function)
        return ["frame %d tailcall %s: %s" % (i, describe(f[-1]), why)] if why else []
    have = " <- ".join(describe(x) for x in f)
    if len(f) != 2:
        return ["frame %d: framewalk %s, the program makes the inlined %s then %s" % (
            i, have, g.get("function"), function)]
    why = compare_frame(f[0], g, True) or (None if f[-1].get("function") == function and f[-1].get("line") == line
                                           else "then %s:%s, the program's construction says %s:%d" % (
                                               f[-1].get("function"), f[-1].get("line"), function, line))
    return ["frame %d: %s: %s" % (i, have, why)] if why else []


def compare_thread(gdb_thread, fw_thread, inlines):
    problems = []
    gg = gdb_groups(gdb_thread["frames"])
    fg = fw_groups(fw_thread["frames"])
    if len(gg) != len(fg):
        problems.append("%d physical frames from gdb, %d from framewalk" % (len(gg), len(fg)))
    for i, (g, f) in enumerate(zip(gg, fg)):
        if int(g[-1]["pc"], 16) != int(f[-1]["pc"], 16):
            problems.append("frame %d: pc %s from gdb, %s from framewalk" % (i, g[-1]["pc"], f[-1]["pc"]))
            break
        g_tail, f_tail = g[-1]["type"] == "tailcall", bool(f[-1].get("tailcall"))
        if g_tail != f_tail:
            problems.append("frame %d %s: %s from gdb, %s from framewalk" % (
                i, describe(f[-1]), "tailcall" if g_tail else "not tailcall", "tailcall" if f_tail else "not"))
            continue
        inlined_at_jump = g_tail and GDB_TAIL_IN_INLINE.get(last_name_component(g[-1].get("function")))
        if inlined_at_jump:  # gdb's one frame is framewalk's innermost; the function that jumped is pinned
            problems += tail_in_inline_differs(i, g[-1], f, inlined_at_jump, inlines)
            continue
        if g_tail:  # the function that made the jump, at the line of the jump
            why = compare_frame(f[-1], g[-1], False) or tail_name_differs(f[-1], g[-1])
            if why:
                problems.append("frame %d tailcall %s: %s" % (i, describe(f[-1]), why))
            if not inlines:
                continue
        if not inlines:
            why = compare_frame(f[-1], g[0], False)
            if why:
                problems.append("frame %d %s: %s" % (i, describe(f[-1]), why))
            continue
        if len(g) != len(f):
            problems.append("frame %d: gdb %s, framewalk %s" % (
                i, " <- ".join(describe(x) for x in g), " <- ".join(describe(x) for x in f)))
            continue
        for k, (gk, fk) in enumerate(zip(g, f)):
            why = compare_frame(fk, gk, k + 1 < len(g))
            if why:
                problems.append("frame %d.%d %s: %s" % (i, k, describe(fk), why))
    return problems


def thread_key(fw_thread, pid):
    return "main" if fw_thread["tid"] == pid else fw_thread.get("name") or ""


def frame_shapes(fw_json):
    """{thread's rank by tid (the order the fixture made them): [(function, offset, file, line, inline,
    tailcall) of each frame]}"""
    threads = sorted(fw_json["threads"], key=lambda t: t["tid"])
    return {i: [(f.get("function"), f.get("offset"), f.get("file"), f.get("line"),
                 bool(f.get("inline")), bool(f.get("tailcall"))) for f in t["frames"]]
            for i, t in enumerate(threads)}


def compare_twin(fw_json, twin):
    """What differs from the twin's frames (frame_shapes), as problems."""
    have = frame_shapes(fw_json)
    problems = []
    for key in sorted(set(have) | set(twin)):
        a, b = have.get(key), twin.get(key)
        if a != b:
            problems.append("thread %d: %s, the twin %s" % (key, a, b))
    return problems


def missing_tailcalls(fw_thread, pid):
    """What OWN_TAILCALLS says this thread must show and framewalk does not, in order."""
    want = OWN_TAILCALLS.get(thread_key(fw_thread, pid))
    if want is None:
        return []
    have = [f.get("function") for f in fw_thread["frames"] if f.get("tailcall")]
    if have[:len(want)] != want:
        return ["tail-call frames %s, the program makes %s" % (have, want)]
    return []


PHYSICAL_KEYS = ("pc", "sp", "function", "offset", "module", "source", "activation")


def physical_frames(thread):
    return [tuple(f.get(k) for k in PHYSICAL_KEYS) for f in thread["frames"]
            if not f.get("inline") and not f.get("tailcall")]


def compare_physical(with_source, without):
    """None when the physical frames of a run with -s/-i equal those of a plain run, else why not."""
    plain = {t["tid"]: t for t in without["threads"]}
    for t in with_source["threads"]:
        p = plain.get(t["tid"])
        if p is None:
            return "thread %d missing without -s" % t["tid"]
        a, b = physical_frames(t), physical_frames(p)
        if a != b:
            for i, (x, y) in enumerate(zip(a, b)):
                if x != y:
                    return "thread %d frame %d: %s with source lines, %s without" % (t["tid"], i, x, y)
            return "thread %d: %d physical frames with source lines, %d without" % (t["tid"], len(a), len(b))
    return None


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--framewalk", required=True)
    ap.add_argument("--fixtures", required=True)
    ap.add_argument("--inlines", action="store_true", help="run framewalk with -i and compare the inline frames")
    ap.add_argument("--only", help="only the fixtures whose name contains this (for development)")
    ap.add_argument("-v", "--verbose", action="store_true")
    args = ap.parse_args()
    for tool in ("gdb", "gcore"):
        if not shutil.which(tool):
            print("SKIP: %s is not installed" % tool)
            return 77
    atexit.register(cwg.cleanup)
    for s in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(s, cwg.on_signal)
    walker = cwg.Walker(args.framewalk)
    flags = ["-s"] + (["-i"] if args.inlines else [])
    workdir = tempfile.mkdtemp(prefix="framewalk-lines-")
    failures, frames_compared, with_lines, inline_frames = 0, 0, 0, 0
    tail_frames, gdb_tail_frames, physical_checked, twin_tail_frames = 0, 0, 0, 0
    confirmed = {}  # (fixture, mode) -> frame_shapes, when every thread equals gdb's
    try:
        for name in FIXTURES:
            if args.only and args.only not in name:
                continue
            path = os.path.join(args.fixtures, name)
            if not os.path.exists(path):
                print("skip %s: not built" % name)
                continue
            p, err = cwg.start_fixture(path, [])
            err = err or cwg.wait_settled(p.pid, SPINNERS.get(name, 0))
            truth = None
            if not err and name not in GDB_CRASHES:
                truth, err = cwg.gdb_frames(["-p", str(p.pid)])
            if err:
                print("FAIL %s: %s" % (name, err))
                failures += 1
                p.kill()
                continue
            core, err = cwg.gcore(p.pid, workdir)
            runs = [("live", ["-p", str(p.pid)])]
            if core:
                runs.append(("core", ["--core", core]))
            else:
                print("FAIL %s: %s" % (name, err))
                failures += 1
            for mode, target in runs:
                fw_json, err = cwg.framewalk(walker, flags + target)
                if err:
                    print("FAIL %s %s: %s" % (name, mode, err))
                    failures += 1
                    continue
                plain_json, err = cwg.framewalk(walker, target)
                why = err or compare_physical(fw_json, plain_json)
                if why:
                    print("FAIL %s %s: physical frames: %s" % (name, mode, why))
                    failures += 1
                else:
                    physical_checked += sum(len(physical_frames(t)) for t in fw_json["threads"])
                if name in GDB_CRASHES:
                    twin = confirmed.get((GDB_CRASHES[name], mode))
                    problems = compare_twin(fw_json, twin) if twin else [
                        "its twin %s was not confirmed by gdb in this run" % GDB_CRASHES[name]]
                    for f in fw_json["threads"]:
                        problems += missing_tailcalls(f, p.pid)
                    twin_tail_frames += sum(1 for t in fw_json["threads"] for x in t["frames"] if x.get("tailcall"))
                    print("%s %s %s: %d threads equal to %s's%s" % (
                        "FAIL" if problems else "ok", name, mode, len(fw_json["threads"]) if not problems else 0,
                        GDB_CRASHES[name], "" if problems else " (gdb crashes on this one)"))
                    for why in problems[:10]:
                        print("    " + why)
                    failures += bool(problems)
                    continue
                by_tid = {t["tid"]: t for t in fw_json["threads"]}
                agreed = True
                for g in truth["threads"]:
                    f = by_tid.get(g["tid"])
                    if f is None:
                        print("FAIL %s %s: thread %d missing" % (name, mode, g["tid"]))
                        failures += 1
                        continue
                    problems = compare_thread(g, f, args.inlines)
                    if name in OWN_TAILCALL_FIXTURES:
                        problems += missing_tailcalls(f, p.pid)
                    frames_compared += len(f["frames"])
                    with_lines += sum(1 for x in f["frames"] if "file" in x)
                    inline_frames += sum(1 for x in f["frames"] if x.get("inline"))
                    tail_frames += sum(1 for x in f["frames"] if x.get("tailcall"))
                    gdb_tail_frames += sum(1 for x in g["frames"] if x["type"] == "tailcall")
                    status = "FAIL" if problems else "ok"
                    if problems or args.verbose:
                        print("%s %s %s thread %d (%s)" % (status, name, mode, g["tid"], g.get("name")))
                    for why in problems[:10]:
                        print("    " + why)
                    failures += bool(problems)
                    agreed = agreed and not problems
                if agreed and len(truth["threads"]) == len(fw_json["threads"]):
                    confirmed[(name, mode)] = frame_shapes(fw_json)
            if core:
                os.unlink(core)
            p.kill()
            p.wait()
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    print("%d frames compared (%d with a line, %d inline, %d tailcall; gdb: %d tailcall), "
          "%d physical frames equal to a run without -s, %d tailcall frames equal to a twin's where gdb crashes, "
          "%d failures" % (frames_compared, with_lines, inline_frames, tail_frames, gdb_tail_frames,
                           physical_checked, twin_tail_frames, failures))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""Stacks through jit code (executable memory no file backs), against the
programs' known chains and eu-stack:

  - jit_chain.c: main -> run_jit -> jit_outer -> jit_middle -> jit_inner ->
    c_block, the jit_ functions machine code made at run time with frame
    pointers and no unwind information, named in /tmp/perf-PID.map. Live
    (framewalk stack -p), from a gcore core (--perf-map), and sampled
    (framewalk record, its spin mode).
  - gdb_jit.c: code published through the GDB JIT interface as an ELF
    object with CFI (gdb_jit_code.S), without frame pointers: the chain
    through it as gdb gives it, live and from a core; a list that loops and
    an object that cannot be read, reported.
    The same code described by a jitdump instead (./jit-PID.dump, its
    marker mapped): named and unwound by the .eh_frame of its UNWINDING_INFO,
    live, from a core, and sampled (framewalk record, its spin mode).
    And its .eh_frame registered with libgcc's __register_frame in a static
    build, read from libgcc's lists in the process's memory, live and from a
    core.
  - Node.js (where installed) with --interpreted-frames-native-stack and
    --perf-basic-prof (a perf map) or --perf-prof (a jitdump), blocked in
    Atomics.wait under first -> second -> third x4 -> leaf_wait: every
    JavaScript frame named, the walk to _start, the PCs eu-stack's; and
    recorded with --perf-prof, its samples named from the jitdump.
  - The JVM (where a JDK is installed), -XX:+PreserveFramePointer, with
    -Xcomp and interpreted, blocked in Thread.sleep under Chain.java's
    calls, named from the perf map jcmd Compiler.perfmap writes: the chain
    (compiled) or the interpreter's frames, the root, eu-stack's PCs.

The C API (tests/capi/api_stack, when given) walks the own jit live and the
jitdump-described code's core alike, naming the jit frames as the command does;
and the own jit walks itself through the C API (jit_chain's self mode, built
as capi_jit_chain_self, when given).

Usage: jit_test.py FRAMEWALK SOURCE_DIR WORK_DIR [API_STACK [JIT_CHAIN_SELF]]. Exit 77: not this machine.
"""
import glob
import os
import platform
import re
import shutil
import signal
import subprocess
import sys
import time

FRAME = re.compile(r"^#(\d+)\s+0x([0-9a-f]+) (.*?)(?:\+0x[0-9a-f]+)? - ([^ ]*?)(?: \[([\w-]+)\])?$")


def run(cmd, **kw):
    return subprocess.run(cmd, capture_output=True, text=True, timeout=120, **kw)


def frames_of(text, tid=None):
    """The first thread's (or `tid`'s) frames: (pc, function, module, source), and its stop line."""
    frames, stop, current = [], "", None
    for line in text.splitlines():
        if line.startswith("TID "):
            if current is not None and frames:
                break
            current = line.split()[1].rstrip(":")
            continue
        if tid is not None and current != str(tid):
            continue
        m = FRAME.match(line)
        if m:
            frames.append((int(m.group(2), 16), m.group(3), m.group(4), m.group(5) or ""))
        elif line.strip().startswith("stop:"):
            stop = line.strip()
    return frames, stop


def eu_stack_pcs(pid):
    if not shutil.which("eu-stack"):
        return None
    out = run(["eu-stack", "-p", str(pid)]).stdout
    pcs = []
    for line in out.splitlines()[2:]:
        if line.startswith("TID "):
            break
        m = re.match(r"^#\d+\s+0x([0-9a-f]+)", line)
        if m:
            pcs.append(int(m.group(1), 16))
    return pcs


def in_order(names, want):
    """Whether `want` appears in `names` as consecutive entries."""
    for i in range(len(names) - len(want) + 1):
        if names[i:i + len(want)] == want:
            return True
    return False


def check_chain(label, frames, stop, failures):
    names = [f[1] for f in frames]
    want = ["c_block", "jit_inner", "jit_middle", "jit_outer", "run_jit", "main"]
    print(f"{label}: {' <- '.join(names)} ({stop})")
    if not in_order(names, want):
        failures.append(f"{label}: want the chain {want} in {names}")
    jit = [f for f in frames if f[1].startswith("jit_")]
    if any(f[2] != "[anon]" for f in jit):
        failures.append(f"{label}: jit frames not in [anon]: {jit}")
    if "outermost" not in stop:
        failures.append(f"{label}: the walk did not reach the thread's root: {stop}")
    # The frames found by the jit code's frame pointer say so.
    after = [f for f, g in zip(frames[1:], frames) if g[1] in ("jit_middle", "jit_outer")]
    if any(f[3] != "jit" for f in after):
        failures.append(f"{label}: frames under jit code not marked [jit]: {after}")


API_STACK = None  # tests/capi/api_stack: the C API's frames and names, when given


def api_frames(args, tid):
    """(pcs, functions) of thread `tid` as the C API gives them, or None without api_stack."""
    if not API_STACK:
        return None
    import json
    out = run([API_STACK] + args)
    for t in json.loads(out.stdout)["threads"]:
        if t["tid"] == tid:
            return [int(p, 16) for p in t["pcs"]], t["functions"]
    return [], []


def check_api(label, args, tid, frames, failures):
    """The C API's walk of the thread: framewalk stack's PCs, its jit frames named alike."""
    got = api_frames(args, tid)
    if got is None:
        return
    pcs, functions = got
    want = [f[1] for f in frames]
    named = [fn for fn, w in zip(functions, want) if fn and fn == w]
    print(f"{label} C API: {len(pcs)} frames, {len(named)} named as framewalk stack names them")
    if pcs != [f[0] for f in frames]:
        failures.append(f"{label} C API: PCs differ: {pcs}")
    jit = [(fn, w) for fn, w in zip(functions, want) if w.startswith(("jit_", "gdbjit_", "JS:"))]
    if not jit or any(fn is None or fn.split("+")[0] != w for fn, w in jit):
        failures.append(f"{label} C API: jit frames not named as framewalk stack names them: {jit}")


def own_jit(framewalk, source, work):
    failures = []
    cc = shutil.which("cc") or shutil.which("gcc")
    target = os.path.join(work, "jit_chain")
    run([cc, "-O2", "-g", "-o", target, os.path.join(source, "tests/jit/jit_chain.c")], check=True)
    proc = subprocess.Popen([target, "block"], stdout=subprocess.PIPE, text=True)
    pid = proc.pid
    perf_map = f"/tmp/perf-{pid}.map"
    try:
        line = proc.stdout.readline()
        if not line.startswith("ready"):
            return [f"jit_chain: did not start: {line!r}"]
        time.sleep(0.2)  # into pause()
        live = run([framewalk, "stack", "-p", str(pid), "-v"])
        frames, stop = frames_of(live.stdout)
        check_chain("jit_chain live", frames, stop, failures)
        check_api("jit_chain live", ["live", str(pid), "process"], pid, frames, failures)
        # A snapshot keeps the names of the jit frames walked (its perf.map).
        snapshot = os.path.join(work, "jit_chain.snapshot")
        shutil.rmtree(snapshot, ignore_errors=True)
        run([framewalk, "stack", "-p", str(pid), "--save-snapshot", snapshot])
        replayed = run([framewalk, "stack", "--snapshot", snapshot, "-v"])
        sframes, sstop = frames_of(replayed.stdout)
        print(f"jit_chain snapshot: {' <- '.join(f[1] for f in sframes)} ({sstop})")
        if [f[:2] for f in sframes] != [f[:2] for f in frames]:
            failures.append(f"jit_chain snapshot: frames differ from the live process's: {sframes}")
        check_api("jit_chain snapshot", ["snapshot", snapshot], pid, sframes, failures)
        eu = eu_stack_pcs(pid)
        if eu is not None:
            mine = [f[0] for f in frames]
            print(f"jit_chain: eu-stack {len(eu)} frames, framewalk {len(mine)}, same PCs: {eu == mine}")
            if eu != mine:
                failures.append(f"jit_chain: PCs differ from eu-stack's: {[hex(p) for p in eu]} {[hex(p) for p in mine]}")
        if shutil.which("gcore"):
            core = os.path.join(work, "jit_chain.core")
            run(["gcore", "-o", core, str(pid)])
            core = f"{core}.{pid}"
            if os.path.exists(core):
                dumped = run([framewalk, "stack", "--core", core, "--perf-map", perf_map, "-v"])
                cframes, cstop = frames_of(dumped.stdout)
                check_chain("jit_chain core", cframes, cstop, failures)
                if [f[0] for f in cframes] != [f[0] for f in frames]:
                    failures.append("jit_chain: the core's PCs differ from the live process's")
                nameless = run([framewalk, "stack", "--core", core])
                if "jit_inner" in nameless.stdout or "[anon]" not in nameless.stdout:
                    failures.append("jit_chain core without --perf-map: want unnamed [anon] frames")
                os.unlink(core)
            else:
                failures.append("jit_chain: gcore wrote no core")
        else:
            print("jit_chain: no gcore, the core not checked")
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        if os.path.exists(perf_map):
            os.unlink(perf_map)

    # Samples: jit_inner calls c_more in a loop; every sample's stack has the chain.
    recording = os.path.join(work, "jit_chain.fwprof")
    rec = run([framewalk, "record", "-q", "-F", "2000", "-o", recording, "--", target, "spin", "0.8"])
    spun_pid = rec.stdout.split()[0] if rec.stdout.split() else ""
    if spun_pid and os.path.exists(f"/tmp/perf-{spun_pid}.map"):
        os.unlink(f"/tmp/perf-{spun_pid}.map")
    if rec.returncode != 0:
        return failures + [f"jit_chain record exited {rec.returncode}: {rec.stderr}"]
    share = rooted_share(framewalk, recording, ["main", "run_jit", "jit_outer", "jit_middle", "jit_inner"])
    print(f"jit_chain record: {share:.1f}% of the samples' stacks _start ... run_jit;jit_outer;jit_middle;jit_inner")
    if share < 90:
        failures.append(f"jit_chain record: only {share:.1f}% of the samples through the jit chain to _start")
    return failures


def rooted_share(framewalk, recording, chain):
    """The share (%) of a recording's weight whose stacks run from _start through `chain` (outermost first;
    an entry ending in "*" matches the names it begins)."""
    def same(name, want):
        return name.startswith(want[:-1]) if want.endswith("*") else name == want
    total = chained = 0
    for line in run([framewalk, "report", recording, "--format=folded"], check=True).stdout.splitlines():
        stack, _, weight = line.rpartition(" ")
        names = stack.split(";")
        total += int(weight)
        through = any(all(same(n, w) for n, w in zip(names[i:i + len(chain)], chain))
                      for i in range(len(names) - len(chain) + 1))
        if through and names[0] == "_start":
            chained += int(weight)
    return 100.0 * chained / max(total, 1)


def own_jit_in_process(program):
    """jit_chain's self mode: the C API walking the calling thread through its
    own jit code (fw_target_self), naming it from its perf map."""
    if not program:
        return []
    out = run([program, "self"])
    lines = out.stdout.splitlines()
    pid = lines[-1].split()[0] if lines and lines[-1].split() else ""
    if pid and os.path.exists(f"/tmp/perf-{pid}.map"):
        os.unlink(f"/tmp/perf-{pid}.map")
    names = [ln.split("+")[0] for ln in lines if not ln.startswith("stop:")][:-1]
    stop = next((ln for ln in lines if ln.startswith("stop:")), "stop: none")
    print(f"jit_chain in-process (C API): {' <- '.join(names)} ({stop})")
    want = ["c_block", "jit_inner", "jit_middle", "jit_outer", "run_jit", "main"]
    if out.returncode != 0 or not in_order(names, want) or "outermost" not in stop:
        return [f"jit_chain in-process: want {want} to the root: {names} ({stop}) {out.stderr}"]
    return []


def gdb_pcs(pid):
    """gdb's backtrace of the process's main thread: its PCs (gdb reads the GDB JIT list at attach)."""
    if not shutil.which("gdb"):
        return None
    out = run(["gdb", "-batch", "-nx", "-p", str(pid), "-ex", "bt"]).stdout
    pcs = []
    for line in out.splitlines():
        m = re.match(r"^#(\d+)\s+(?:0x([0-9a-f]+) in )?", line)
        if m and line.startswith("#"):
            if m.group(2):
                pcs.append(int(m.group(2), 16))
            elif m.group(1) == "0":
                pcs.append(None)  # frame 0 printed without its PC
    return pcs


def gdb_jit(framewalk, source, work):
    """Code published through the GDB JIT interface: an ELF object with CFI."""
    failures = []
    cc = shutil.which("cc") or shutil.which("gcc")
    obj = os.path.join(work, "gdb_jit_code.o")
    elf = os.path.join(work, "gdb_jit_code.elf")
    target = os.path.join(work, "gdb_jit")
    run([cc, "-c", os.path.join(source, "tests/jit/gdb_jit_code.S"), "-o", obj], check=True)
    run(["ld", "-o", elf, "-Ttext=0x50000000", "-e", "gdbjit_outer", "--eh-frame-hdr", "--build-id=none", obj],
        check=True)
    # For the jitdump: .eh_frame right after the code's page (no .eh_frame_hdr between).
    bare = os.path.join(work, "gdb_jit_code_bare.elf")
    run(["ld", "-o", bare, "-Ttext=0x50000000", "-e", "gdbjit_outer", "--build-id=none", obj], check=True)
    run([cc, "-O2", "-g", "-o", target, os.path.join(source, "tests/jit/gdb_jit.c")], check=True)
    for mode in ("", "loop", "wild", "jitdump"):
        label = f"gdb-jit {mode or 'list'}"
        proc = subprocess.Popen([target, bare if mode == "jitdump" else elf] + ([mode] if mode else []),
                                stdout=subprocess.PIPE, text=True, cwd=work)
        try:
            line = proc.stdout.readline()
            if not line.startswith("ready"):
                failures.append(f"{label}: did not start: {line!r} (exit {proc.poll()})")
                continue
            time.sleep(0.2)  # into pause()
            live = run([framewalk, "stack", "-p", str(proc.pid), "-v"])
            frames, stop = frames_of(live.stdout)
            names = [f[1] for f in frames]
            print(f"{label}: {' <- '.join(names)} ({stop}); {live.stderr.strip()}")
            want = ["c_block", "gdbjit_inner", "gdbjit_outer", "run_object", "main"]
            if mode == "jitdump":
                # Named and unwound from ./jit-PID.dump: its .eh_frame, since the code keeps no frame pointer.
                dumpfile = os.path.join(work, f"jit-{proc.pid}.dump")
                want = ["c_block", "gdbjit_code", "gdbjit_code", "run_object", "main"]
                if not in_order(names, want) or "outermost" not in stop:
                    failures.append(f"{label}: want {want} to the root in {names} ({stop})")
                if any(f[2] != dumpfile for f in frames if f[1] == "gdbjit_code"):
                    failures.append(f"{label}: frames not in the jitdump's module: {frames}")
                # The source lines of its DEBUG_INFO record: inner.js:22 then outer.js:11.
                lines = [ln.strip() for ln in run([framewalk, "stack", "-p", str(proc.pid), "-s"]).stdout.splitlines()]
                jit_lines = [ln for ln in lines if ln.endswith((".js:11", ".js:22"))]
                print(f"{label} source lines: {jit_lines}")
                if jit_lines != ["inner.js:22", "outer.js:11"]:
                    failures.append(f"{label}: want the jitdump's lines inner.js:22, outer.js:11: {lines}")
                # From a core: the jitdump found through the marker NT_FILE lists.
                if shutil.which("gcore"):
                    core = os.path.join(work, "jitdump.core")
                    run(["gcore", "-o", core, str(proc.pid)])
                    core = f"{core}.{proc.pid}"
                    dumped = run([framewalk, "stack", "--core", core, "-v"])
                    cframes, cstop = frames_of(dumped.stdout)
                    print(f"{label} core: {' <- '.join(f[1] for f in cframes)} ({cstop})")
                    if [f[:3] for f in cframes] != [f[:3] for f in frames]:
                        failures.append(f"{label}: the core's frames differ from the live process's: {cframes}")
                    check_api(f"{label} core", ["core", core], proc.pid, cframes, failures)
                    if os.path.exists(core):
                        os.unlink(core)
                continue
            if mode == "wild":
                # No object: the walk cannot go on through code without tables or a frame pointer.
                if "cannot be read (at 0x10)" not in live.stderr or "gdbjit_inner" in names:
                    failures.append(f"{label}: want the unreadable object named, no jit names: {live.stderr!r}")
                # Its frame-pointer register is 0: no end of a chain in jit code, the walk says it stopped.
                if "no-unwind-info" not in stop:
                    failures.append(f"{label}: want the walk to stop at the jit frame: {stop}")
                continue
            if not in_order(names, want) or "outermost" not in stop:
                failures.append(f"{label}: want {want} to the root in {names} ({stop})")
            if any(not f[2].startswith("[gdb-jit@0x") for f in frames if f[1].startswith("gdbjit_")):
                failures.append(f"{label}: frames not in a [gdb-jit@...] module: {frames}")
            if mode == "loop":
                if "loops (at 0x" not in live.stderr:
                    failures.append(f"{label}: the loop was not reported: {live.stderr!r}")
                continue
            pcs = gdb_pcs(proc.pid)
            if pcs is not None:
                # gdb stops at main (backtrace past-main is off by default).
                mine = [f[0] for f in frames][:len(pcs)]
                same = len(pcs) == len(mine) and all(p is None or p == q for p, q in zip(pcs, mine))
                print(f"{label}: gdb {len(pcs)} frames to main, framewalk's first {len(mine)}, same PCs: {same}")
                if not same:
                    failures.append(f"{label}: PCs differ from gdb's: {pcs} {mine}")
            if shutil.which("gcore"):
                core = os.path.join(work, "gdb_jit.core")
                run(["gcore", "-o", core, str(proc.pid)])
                core = f"{core}.{proc.pid}"
                dumped = run([framewalk, "stack", "--core", core, "-v"])
                cframes, cstop = frames_of(dumped.stdout)
                if [f[:2] for f in cframes] != [f[:2] for f in frames]:
                    failures.append(f"{label}: the core's frames differ from the live process's: {cframes}")
                if os.path.exists(core):
                    os.unlink(core)
        finally:
            proc.send_signal(signal.SIGKILL)
            proc.wait()
            dumpfile = os.path.join(work, f"jit-{proc.pid}.dump")
            if os.path.exists(dumpfile):
                os.unlink(dumpfile)
    # Registered with libgcc's __register_frame in a program that links
    # libgcc statically (its symbol table names libgcc's lists): the table
    # read from the process's memory, live and from a core, in the list of
    # objects not searched yet and, after _Unwind_Find_FDE, of those sorted.
    static = os.path.join(work, "gdb_jit_static")
    built = run([cc, "-O2", "-g", "-static", "-o", static, os.path.join(source, "tests/jit/gdb_jit.c")])
    if built.returncode != 0:
        print(f"register_frame: no static build ({built.stderr.strip()[-200:]}), not checked")
    for mode in ("register", "register-seen") if built.returncode == 0 else ():
        proc = subprocess.Popen([static, bare, mode], stdout=subprocess.PIPE, text=True, cwd=work)
        try:
            line = proc.stdout.readline()
            if not line.startswith("ready"):
                failures.append(f"{mode}: did not start: {line!r} (exit {proc.poll()})")
                continue
            time.sleep(0.2)
            runs = [("live", run([framewalk, "stack", "-p", str(proc.pid), "-v"]))]
            if shutil.which("gcore"):
                core = os.path.join(work, "registered.core")
                run(["gcore", "-o", core, str(proc.pid)])
                runs.append(("core", run([framewalk, "stack", "--core", f"{core}.{proc.pid}", "-v"])))
            for how, out in runs:
                frames, stop = frames_of(out.stdout)
                print(f"{mode} {how}: {' <- '.join(f[1] + '@' + f[2] for f in frames)} ({stop})")
                registered = [f for f in frames if f[2].startswith("[registered@0x")]
                names = [f[1] for f in frames if f not in registered]
                at = names.index("c_block") if "c_block" in names else -1
                if (len(registered) != 2 or at < 0 or names[at:at + 3] != ["c_block", "run_object", "main"] or
                        frames[at + 1:at + 3] != registered or "outermost" not in stop):
                    failures.append(f"{mode} {how}: want c_block <- 2 registered frames <- run_object <- main to "
                                    f"the root: {frames} ({stop}) {out.stderr}")
            if os.path.exists(f"{os.path.join(work, 'registered.core')}.{proc.pid}"):
                os.unlink(f"{os.path.join(work, 'registered.core')}.{proc.pid}")
        finally:
            proc.kill()
            proc.wait()

    # Samples under the jitdump's code: walked by its .eh_frame (no frame
    # pointer there), to _start.
    # The same through the GDB JIT list and through __register_frame (the
    # static build): read from the running process's memory by the recorder.
    recorded = [("jitdump", target, bare, ["gdbjit_code", "gdbjit_code"]),
                ("list", target, elf, ["gdbjit_outer", "gdbjit_inner"])]
    if built.returncode == 0:
        recorded.append(("register", static, bare, ["[registered@0x*", "[registered@0x*"]))
    for mode, program, obj, jit_names in recorded:
        recording = os.path.join(work, f"gdb_jit_{mode}.fwprof")
        rec = run([framewalk, "record", "-q", "-F", "2000", "-o", recording, "--", program, obj, mode, "spin", "0.8"],
                  cwd=work)
        for dumpfile in glob.glob(os.path.join(work, "jit-*.dump")):
            os.unlink(dumpfile)
        if rec.returncode != 0:
            failures.append(f"{mode} record exited {rec.returncode}: {rec.stderr}")
            continue
        chain = ["main", "run_object"] + jit_names + ["c_block"]
        share = rooted_share(framewalk, recording, chain)
        print(f"{mode} record: {share:.1f}% of the samples' stacks _start ... {';'.join(chain)}")
        if share < 90:
            failures.append(f"{mode} record: only {share:.1f}% of the samples through the jit code to _start")
    return failures


def node(framewalk, source, work, names_from):
    exe = shutil.which("node") or shutil.which("nodejs")
    if not exe:
        print("node: not installed, not checked")
        return []
    failures = []
    script = os.path.join(source, "tests/jit/node_chain.js")
    # Names from the perf map (--perf-basic-prof) or the jitdump (--perf-prof, in the working directory).
    flag = "--perf-basic-prof" if names_from == "perf map" else "--perf-prof"
    cwd = os.path.join(work, "node-" + flag.strip("-"))
    os.makedirs(cwd, exist_ok=True)
    proc = subprocess.Popen([exe, flag, "--interpreted-frames-native-stack", script],
                            stdout=subprocess.PIPE, text=True, cwd=cwd)
    perf_map = f"/tmp/perf-{proc.pid}.map"
    try:
        line = proc.stdout.readline()
        if not line.startswith("ready"):
            return [f"node: did not start: {line!r}"]
        time.sleep(0.2)  # into Atomics.wait
        live = run([framewalk, "stack", "-p", str(proc.pid), "-v"])
        frames, stop = frames_of(live.stdout, tid=proc.pid)
        names = [f[1] for f in frames]
        js = [n.split()[0] for n in names if n.startswith("JS:")]
        print(f"node ({names_from}): {len(frames)} frames, {stop}; JavaScript: {' <- '.join(js[:8])}")
        want = ["JS:~leaf_wait", "JS:~third", "JS:~third", "JS:~third", "JS:~third", "JS:~second", "JS:~first"]
        if not in_order(js, want):
            failures.append(f"node: want {want} in {js}")
        if "outermost" not in stop or not names or names[-1] != "_start":
            failures.append(f"node: the walk did not reach _start: {names[-3:]} {stop}")
        unnamed = [hex(f[0]) for f in frames if f[1] == "??"]
        if unnamed:
            failures.append(f"node: unnamed frames: {unnamed}")
        eu = eu_stack_pcs(proc.pid)
        if eu is not None:
            mine = [f[0] for f in frames]
            print(f"node: eu-stack {len(eu)} frames, framewalk {len(mine)}, same PCs: {eu == mine}")
            if eu != mine:
                failures.append("node: PCs differ from eu-stack's")
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        if os.path.exists(perf_map):
            os.unlink(perf_map)
        shutil.rmtree(cwd, ignore_errors=True)
    return failures


def eu_stack_thread_pcs(pid, tid):
    """eu-stack's PCs of one thread of the process."""
    if not shutil.which("eu-stack"):
        return None
    pcs, current = [], None
    for line in run(["eu-stack", "-p", str(pid)]).stdout.splitlines():
        if line.startswith("TID "):
            current = line.split()[1].rstrip(":")
            continue
        m = re.match(r"^#\d+\s+0x([0-9a-f]+)", line)
        if m and current == str(tid):
            pcs.append(int(m.group(1), 16))
    return pcs


def jvm(framewalk, source, work, compiled):
    """The JVM with -XX:+PreserveFramePointer, every method compiled (-Xcomp)
    or interpreted, its perf map written by jcmd Compiler.perfmap: the Java
    chain named (compiled; interpreted frames are all "Interpreter"), the
    walk to the thread's root through HotSpot's frames, the PCs eu-stack's."""
    java, javac, jcmd = shutil.which("java"), shutil.which("javac"), shutil.which("jcmd")
    if not (java and javac and jcmd):
        print("jvm: no JDK, not checked")
        return []
    failures = []
    classes = os.path.join(work, "java")
    os.makedirs(classes, exist_ok=True)
    run([javac, "-d", classes, os.path.join(source, "tests/jit/Chain.java")], check=True)
    flags = ["-Xcomp", "-XX:CompileCommand=quiet"] if compiled else []
    label = "jvm -Xcomp" if compiled else "jvm interpreted"
    proc = subprocess.Popen([java, "-XX:+PreserveFramePointer", *flags, "-cp", classes, "Chain"],
                            stdout=subprocess.PIPE, text=True)
    perf_map = f"/tmp/perf-{proc.pid}.map"
    try:
        line = proc.stdout.readline()
        if not line.startswith("ready"):
            return [f"{label}: did not start: {line!r}"]
        time.sleep(0.3)  # into Thread.sleep
        run([jcmd, str(proc.pid), "Compiler.perfmap"], check=True)
        dump = run([framewalk, "stack", "-p", str(proc.pid), "-v"])
        # The thread whose frames hold the chain.
        tid, frames, stop = None, [], ""
        for block in dump.stdout.split("\nTID ")[1:]:
            got, why = frames_of("TID " + block)
            if any("JVM_Sleep" in f[1] for f in got):
                tid, frames, stop = block.split()[0].rstrip(":"), got, why
        names = [f[1] for f in frames]
        java_frames = [n for n in names if "Chain." in n]
        interpreted = sum(1 for n in names if n.startswith("Interpreter"))
        print(f"{label}: thread {tid}: {len(frames)} frames, {stop}; Java: {' <- '.join(java_frames)}; "
              f"{interpreted} interpreted")
        # The JIT inlines first and second into main (-Xcomp's C2): leaf, third, ..., main remain.
        if compiled and (not java_frames or "Chain.leaf" not in java_frames[0] or
                         "Chain.main" not in java_frames[-1] or not any("Chain.third" in n for n in java_frames)):
            failures.append(f"{label}: want Chain.leaf <- Chain.third ... <- Chain.main in {names}")
        # Interpreted: main, first, second, third x4, leaf, Thread.sleep's frames.
        if not compiled and interpreted < 8:
            failures.append(f"{label}: want 8 interpreted frames or more in {names}")
        if "outermost" not in stop:
            failures.append(f"{label}: the walk did not reach the thread's root: {stop}")
        eu = eu_stack_thread_pcs(proc.pid, tid)
        if eu is not None:
            mine = [f[0] for f in frames]
            print(f"{label}: eu-stack {len(eu)} frames, framewalk {len(mine)}, same PCs: {eu == mine}")
            if eu != mine:
                failures.append(f"{label}: PCs differ from eu-stack's")
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        if os.path.exists(perf_map):
            os.unlink(perf_map)
    return failures


def node_record(framewalk, source, work):
    """framewalk record of Node.js writing a jitdump: its JavaScript named from it."""
    exe = shutil.which("node") or shutil.which("nodejs")
    if not exe:
        return []
    cwd = os.path.join(work, "node-record")
    os.makedirs(cwd, exist_ok=True)
    recording = os.path.join(cwd, "node.fwprof")
    try:
        rec = run([framewalk, "record", "-q", "-F", "1000", "-o", recording, "--", exe, "--perf-prof",
                   "--interpreted-frames-native-stack", os.path.join(source, "tests/jit/node_hot.js"), "1.5"], cwd=cwd)
        if rec.returncode != 0:
            return [f"node record: exited {rec.returncode}: {rec.stderr}"]
        # V8 inlines as it likes (inner into outer, all into the loop): what
        # is checked is that the leaves in JavaScript are named, that no jit
        # frame is left unnamed, and that the walks go through them.
        # The main thread's time (its stacks start at _start; V8 compiles on
        # threads of its own, whose share grows when the machine is busy).
        total = main = js_leaf = unnamed = rooted = 0
        for line in run([framewalk, "report", recording, "--format=folded"], check=True).stdout.splitlines():
            stack, _, weight = line.rpartition(" ")
            names = stack.split(";")
            w = int(weight)
            total += w
            main += w if names[0] == "_start" else 0
            js_leaf += w if names[0] == "_start" and names[-1].startswith("JS:") else 0
            unnamed += w if any(n.startswith("anon+0x") for n in names) else 0
            rooted += w if names[0] in ("_start", "clone3", "clone", "start_thread") else 0
        share = lambda n, of: 100.0 * n / max(of, 1)
        print(f"node record: {share(js_leaf, main):.1f}% of the main thread's time in JavaScript named from the "
              f"jitdump, {share(unnamed, total):.1f}% with an unnamed jit frame, {share(rooted, total):.1f}% "
              f"of the walks to a thread's root")
        if share(js_leaf, main) < 60 or share(unnamed, total) > 5 or share(rooted, total) < 90:
            return [f"node record: {share(js_leaf, main):.1f}% in named JavaScript, {share(unnamed, total):.1f}% "
                    f"unnamed, {share(rooted, total):.1f}% rooted"]
        return []
    finally:
        shutil.rmtree(cwd, ignore_errors=True)


def main():
    global API_STACK
    framewalk, source, work = (os.path.abspath(a) for a in sys.argv[1:4])
    API_STACK = os.path.abspath(sys.argv[4]) if len(sys.argv) > 4 else None
    self_walker = os.path.abspath(sys.argv[5]) if len(sys.argv) > 5 else None
    if platform.machine() not in ("x86_64", "aarch64"):
        print("jit: x86-64 and AArch64 only")
        return 77
    os.makedirs(work, exist_ok=True)
    failures = (own_jit(framewalk, source, work) + own_jit_in_process(self_walker) + gdb_jit(framewalk, source, work) +
                node(framewalk, source, work, "perf map") + node(framewalk, source, work, "jitdump") +
                node_record(framewalk, source, work) + jvm(framewalk, source, work, True) +
                jvm(framewalk, source, work, False))
    if failures:
        print("FAILED:", "\n  ".join(failures))
        return 1
    print("jit: all as expected")
    return 0


if __name__ == "__main__":
    sys.exit(main())

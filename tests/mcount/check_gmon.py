#!/usr/bin/env python3
"""Checks of the mcount runtime (src/mcount/) against programs that know their call graph.

  check_gmon.py exact --exe PROG [--preload LIB] [--threads N] --work DIR [--nm NM] [--gprof GPROF] [--qemu QEMU ...]
      Runs PROG (tests/mcount/exact_calls.c) in DIR, reads the gmon.out it
      leaves with a reader of its own and with gprof's call graph (`gprof -b
      -q`), and requires both to hold exactly the arcs the program says it
      made between functions of the executable, and nothing else between them;
      the arcs framewalk's runtime counted (`counted` lines, from
      framewalk_mcount_for_each_arc) must hold every arc the program made,
      also into its shared library.
  check_gmon.py glibc --exe PROG --preload LIB --work DIR
      Runs the single-threaded PROG once with glibc's runtime and once with
      LIB preloaded: gprof's call graphs of the two gmon.out files must give
      the same calls, and only the preloaded run may have framewalk's
      `counted` lines (the preload took over glibc's mcount).
  check_gmon.py fork --exe PROG --preload LIB --work DIR
      tests/mcount/fork_calls.c: each process writes its own file
      (GMON_OUT_PREFIX), the child inherits the counts made before the fork,
      and a dump on request holds the counts made so far.
  check_gmon.py profile --framewalk FW --exe PROG --preload LIB --signal-exe PROG2 --static-framewalk PROG3
                        --static-glibc PROG4 --work DIR
      `framewalk profile --mcount`: PROG (exact_calls.c) run through it writes
      DIR/out/gmon.out.<pid> with the exact arcs, named on stderr with the
      gprof and framewalk report lines; the program's exit status comes back;
      LD_PRELOAD keeps what it held, after the runtime; FRAMEWALK_MCOUNT_LIBRARY
      is obeyed; SIGTERM sent to framewalk reaches PROG2 (wait_signal.c),
      which then exits normally and writes its file; a static program with
      framewalk's runtime linked in (PROG3) is run, one with glibc's (PROG4)
      refused with the link line.
  check_gmon.py histogram --exe PROG --preload LIB --run busy|thread --hz N --work DIR
      tests/mcount/cpu_time.c spends 300 ms of CPU time in busy() or in a
      thread that calls no hook (spin()): the histogram's samples in that
      function must be more than half of 300 ms at N per second, and all
      samples at most 1.5 times the process's CPU time at N per second.
  check_gmon.py times --exe PROG --preload LIB --work DIR
      tests/mcount/timed_calls.c (-finstrument-functions): gmon.out.times
      holds each function's calls exactly and inclusive and self times no
      shorter than the sleeps the program made (and not absurdly longer);
      where the structure makes them equal, the times add up to the
      nanosecond (a caller's inclusive time is its self time plus its
      callees' inclusive times; a recursion's inclusive time is its self
      time); a frame left by longjmp does not disturb the rest.

Exit status 0 when all holds; the differences are printed otherwise.
"""
import argparse
import collections
import json
import os
import re
import shlex
import shutil
import struct
import subprocess
import sys


def elf_class_and_order(path):
    with open(path, "rb") as f:
        ident = f.read(16)
    if ident[:4] != b"\x7fELF":
        raise SystemExit(f"{path}: not an ELF file")
    return (8 if ident[4] == 2 else 4), ("<" if ident[5] == 1 else ">")


def read_gmon(path, word, order):
    """The arcs (from_pc, self_pc, count) and histogram records of a gmon.out."""
    data = open(path, "rb").read()
    if data[:4] != b"gmon" or struct.unpack(order + "I", data[4:8])[0] != 1:
        raise SystemExit(f"{path}: not a version-1 gmon.out")
    pos, arcs, hists = 20, [], []
    addr = order + ("Q" if word == 8 else "I")
    while pos < len(data):
        tag = data[pos]
        pos += 1
        if tag == 0:
            low, high = struct.unpack_from(order + ("QQ" if word == 8 else "II"), data, pos)
            pos += 2 * word
            size, rate = struct.unpack_from(order + "II", data, pos)
            pos += 8
            dimen = data[pos:pos + 15].rstrip(b"\0").decode()
            pos += 16
            bins = struct.unpack_from(order + f"{size}H", data, pos)
            pos += 2 * size
            hists.append((low, high, rate, dimen, bins))
        elif tag == 1:
            frm, = struct.unpack_from(addr, data, pos)
            slf, = struct.unpack_from(addr, data, pos + word)
            count, = struct.unpack_from(order + "I", data, pos + 2 * word)
            pos += 2 * word + 4
            arcs.append((frm, slf, count))
        else:
            raise SystemExit(f"{path}: bad tag {tag} at offset {pos - 1}")
    return arcs, hists


class Symbols:
    """Function symbols of an executable, from nm: the function holding an address."""

    def __init__(self, exe, nm):
        out = subprocess.run([nm, "--defined-only", exe], capture_output=True, text=True, check=True).stdout
        entries = []
        for line in out.splitlines():
            parts = line.split()
            if len(parts) == 3 and parts[1] in "tTwW":
                entries.append((int(parts[0], 16) & ~1, parts[2]))  # ~1: a Thumb function's symbol
        entries.sort()
        self.addresses = [a for a, _ in entries]
        self.names = [n for _, n in entries]
        self.known = set(self.names)

    def name(self, address):
        import bisect
        i = bisect.bisect_right(self.addresses, address) - 1
        return self.names[i] if i >= 0 else None


def gmon_arcs_by_name(gmon, exe, nm):
    word, order = elf_class_and_order(exe)
    arcs, hists = read_gmon(gmon, word, order)
    symbols = Symbols(exe, nm)
    named = collections.Counter()
    for frm, slf, count in arcs:
        named[(symbols.name(frm), symbols.name(slf))] += count
    return named, hists, symbols


def gprof_arcs(exe, gmon, gprof):
    """(caller, callee) -> calls from gprof's call graph: the parent lines of each
    primary entry (every arc is a parent line of its callee's entry; a caller
    like main that nobody calls has no entry of its own)."""
    out = subprocess.run([gprof, "-b", "-q", exe, gmon], capture_output=True, text=True)
    if out.returncode != 0:
        raise SystemExit(f"gprof failed: {out.stderr}")
    arcs = collections.Counter()
    parents = []
    for line in out.stdout.splitlines():
        if line.startswith("-----"):
            parents = []
            continue
        if "as a whole>" in line or "<spontaneous>" in line:
            continue
        m = re.match(r"^(\[\d+\])?\s+(.*?)\s*(\S+)( <cycle \d+>)? \[\d+\]$", line)
        if not m:
            continue
        fields, name = m.group(2).split(), m.group(3)
        if m.group(1):
            for parent, calls in parents:
                arcs[(parent, name)] += calls
            parents = None  # the children follow
            continue
        if parents is None or not fields:
            continue
        calls = fields[-1].split("/")[0]
        if calls.isdigit():
            parents.append((name, int(calls)))
    return arcs


def run(cmd, cwd, env_extra):
    env = dict(os.environ)
    env.update(env_extra)
    out = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True)
    if out.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)}: exit {out.returncode}\n{out.stdout}{out.stderr}")
    return out


def fresh(work):
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)


def program_command(args, exe, extra):
    return (args.qemu or []) + [exe] + extra


def preload_env(args, lib):
    if not lib:
        return {}
    if args.qemu:  # the guest's loader reads the guest's environment: qemu -E
        return {"QEMU_SET_ENV": f"LD_PRELOAD={lib}"}
    return {"LD_PRELOAD": lib}


def parse_lines(stdout, kind):
    found = collections.Counter()
    for line in stdout.splitlines():
        parts = line.split()
        if len(parts) == 4 and parts[0] == kind:
            found[(parts[1], parts[2])] += int(parts[3])
    return found


def compare(what, expected, got, problems):
    for key in sorted(set(expected) | set(got)):
        if expected.get(key, 0) != got.get(key, 0):
            problems.append(f"{what}: {key[0]} -> {key[1]}: expected {expected.get(key, 0)}, got {got.get(key, 0)}")


def from_program(arcs):
    """Without the arcs into main and thread_main: they come from the C library
    (in a static program, from its functions in the executable)."""
    return collections.Counter({k: v for k, v in arcs.items() if k[1] not in ("main", "thread_main")})


def check_exact(args):
    fresh(args.work)
    exe = os.path.abspath(args.exe)
    out = run(program_command(args, exe, [str(args.threads)]), args.work, preload_env(args, args.preload))
    expected = parse_lines(out.stdout, "expect")
    gmon = os.path.join(args.work, "gmon.out")
    named, hists, symbols = gmon_arcs_by_name(gmon, exe, args.nm)
    problems = []
    in_exe = {k: v for k, v in expected.items() if k[0] in symbols.known and k[1] in symbols.known}
    compare("gmon.out", in_exe, from_program(named), problems)
    compare("gprof", in_exe, from_program(gprof_arcs(exe, gmon, args.gprof)), problems)
    if not hists:
        problems.append("gmon.out: no histogram record")
    if args.preload or args.counted:
        counted = from_program(parse_lines(out.stdout, "counted"))
        compare("framewalk_mcount_for_each_arc", expected, counted, problems)
    if "calls lost" in out.stderr or "not counted" in out.stderr:
        problems.append(f"the runtime reports: {out.stderr.strip()}")
    report(problems, f"{len(in_exe)} arcs in gmon.out and gprof, {sum(in_exe.values())} calls")


def check_glibc(args):
    counts = {}
    for label, lib in (("glibc", None), ("framewalk", args.preload)):
        work = os.path.join(args.work, label)
        fresh(work)
        out = run(program_command(args, os.path.abspath(args.exe), ["0"]), work, preload_env(args, lib))
        has_counted = any(l.startswith("counted ") for l in out.stdout.splitlines())
        if has_counted != (lib is not None):
            raise SystemExit(f"{label} run: framewalk's runtime {'absent' if lib else 'present'}")
        counts[label] = gprof_arcs(os.path.abspath(args.exe), os.path.join(work, "gmon.out"), args.gprof)
    problems = []
    compare("glibc against framewalk", counts["glibc"], counts["framewalk"], problems)
    report(problems, f"{len(counts['glibc'])} arcs, {sum(counts['glibc'].values())} calls, the same from both")


def check_fork(args):
    fresh(args.work)
    exe = os.path.abspath(args.exe)
    env = preload_env(args, args.preload)
    env["GMON_OUT_PREFIX"] = "prof"
    out = run(program_command(args, exe, []), args.work, env)
    pids = dict(line.split()[1:3] for line in out.stdout.splitlines() if line.startswith("pid "))
    problems = []
    want = {
        "parent": {("main", "before_fork"): 10, ("main", "in_parent"): 7},
        "child": {("main", "before_fork"): 10, ("main", "in_child"): 5},
        "mid": {("main", "before_fork"): 10},
    }
    for who, arcs in want.items():
        path = os.path.join(args.work, "mid.out" if who == "mid" else f"prof.{pids.get(who)}")
        if not os.path.exists(path):
            problems.append(f"{who}: no {os.path.basename(path)}")
            continue
        named, _, _ = gmon_arcs_by_name(path, exe, args.nm)
        compare(f"{who} ({os.path.basename(path)})", arcs, named, problems)
    report(problems, "parent, child and the dump on request each hold their own counts")


def symbol_range(exe, name, nm):
    """[start, end) of a function symbol of `exe`, from nm -S."""
    out = subprocess.run([nm, "-S", "--defined-only", exe], capture_output=True, text=True, check=True).stdout
    for line in out.splitlines():
        parts = line.split()
        if len(parts) == 4 and parts[2] in "tTwW" and parts[3] == name:
            start = int(parts[0], 16) & ~1
            return start, start + int(parts[1], 16)
    raise SystemExit(f"{exe}: no function {name}")


def samples_in(hists, start, end):
    """The histogram samples whose bins lie in [start, end) (a bin on an end
    counts in proportion to its overlap, as gprof counts it)."""
    total = 0.0
    for low, high, _, _, bins in hists:
        if not bins:
            continue
        width = (high - low) / len(bins)
        for i, n in enumerate(bins):
            if n == 0:
                continue
            b0, b1 = low + i * width, low + (i + 1) * width
            overlap = min(b1, end) - max(b0, start)
            if overlap > 0:
                total += n * overlap / width
    return total


def check_histogram(args):
    fresh(args.work)
    exe = os.path.abspath(args.exe)
    # 8 threads share the time in `threads`: 100 ms each, since the kernel
    # checks a CPU-time timer at its ticks while the thread runs and a thread
    # that ends takes the sample it was working towards with it (on a loaded
    # machine, 37 ms each at 100 Hz gave 11 to 23 of 30 samples).
    ms = 800 if args.run == "threads" else 300
    env = preload_env(args, args.preload)
    env["FRAMEWALK_MCOUNT_HZ"] = str(args.hz)
    out = run(program_command(args, exe, [args.run, str(ms)]), args.work, env)
    cpu_ns = int(parse_key(out.stdout, "cpu_ns"))
    word, order = elf_class_and_order(exe)
    _, hists = read_gmon(os.path.join(args.work, "gmon.out"), word, order)
    problems = []
    if not hists or hists[0][2] != args.hz:
        problems.append(f"gmon.out: no histogram at {args.hz} Hz: {[(h[0], h[1], h[2]) for h in hists]}")
    function = "busy" if args.run == "busy" else "spin"
    start, end = symbol_range(exe, function, args.nm)
    inside = samples_in(hists, start, end)
    total = sum(sum(h[4]) for h in hists)
    expected = ms / 1000 * args.hz
    ceiling = 1.5 * cpu_ns / 1e9 * args.hz + 1
    if inside <= 0.5 * expected:
        problems.append(f"{function}: {inside:.1f} samples, expected about {expected:.0f} (more than half)")
    if total > ceiling:
        problems.append(f"{total} samples in all, more than 1.5 x the process's CPU time "
                        f"({cpu_ns / 1e6:.0f} ms) at {args.hz} Hz ({ceiling:.0f})")
    report(problems, f"{function}: {inside:.1f} samples of {total} for {ms} ms at {args.hz} Hz "
                     f"(expected {expected:.0f}; process CPU time {cpu_ns / 1e6:.0f} ms)")


def read_times(path):
    """gmon.out.times (src/mcount/function_times.hpp): the executable's
    functions, address -> (calls, inclusive_ns, self_ns), and the shared
    libraries', (path, address) -> the same."""
    lines = open(path).read().splitlines()
    if not lines or lines[0] != "# framewalk mcount function times 2":
        raise SystemExit(f"{path}: not a function times file: {lines[:1]}")
    times, modules = {}, {}
    for line in lines:
        if line.startswith("#"):
            continue
        fields = line.split(" ", 4)
        values = (int(fields[1]), int(fields[2]), int(fields[3]))
        if len(fields) == 5:
            modules[(fields[4], int(fields[0], 16))] = values
        else:
            times[int(fields[0], 16)] = values
    return times, modules


def check_times(args):
    fresh(args.work)
    exe = os.path.abspath(args.exe)
    env = preload_env(args, args.preload)
    if args.fentry_times:
        env["FRAMEWALK_MCOUNT_FENTRY_TIMES"] = "1"
    out = run(program_command(args, exe, []), args.work, env)
    symbols = Symbols(exe, args.nm)
    by_name = {}
    times, modules = read_times(os.path.join(args.work, "gmon.out.times"))
    for address, values in times.items():
        by_name[symbols.name(address)] = values
    library_symbols = {}
    for (path, address), values in modules.items():
        if path not in library_symbols:
            library_symbols[path] = Symbols(path, args.nm)
        by_name[library_symbols[path].name(address)] = values
    problems = []
    for line in out.stdout.splitlines():
        parts = line.split()
        if len(parts) != 5 or parts[0] != "expect":
            continue
        name, calls, inclusive_ms, self_ms = parts[1], int(parts[2]), int(parts[3]), int(parts[4])
        if name not in by_name:
            problems.append(f"{name}: not in gmon.out.times")
            continue
        got_calls, got_inclusive, got_self = by_name[name]
        if got_calls != calls:
            problems.append(f"{name}: {got_calls} calls, expected {calls}")
        for what, got, least in (("inclusive", got_inclusive, inclusive_ms), ("self", got_self, self_ms)):
            # At least the sleeps; at most ten times them and a second: a loaded machine oversleeps.
            if got < least * 1000000 or got > (10 * least + 1000) * 1000000:
                problems.append(f"{name}: {what} {got / 1e6:.3f} ms, expected at least {least} ms")
    def total(name, field):
        return by_name.get(name, (0, 0, 0))[field]
    sums = {
        "outer = self + inner_a + inner_b": (total("outer", 1), total("outer", 2) + total("inner_a", 1) +
                                             total("inner_b", 1)),
        "rec inclusive = rec self": (total("rec", 1), total("rec", 2)),
        "jumper = self + deep (the longjmp'd frame dropped)": (total("jumper", 1), total("jumper", 2) +
                                                                total("deep", 1)),
        "catcher = self + middle (the frames an exception unwinds end at the catch)": (
            total("catcher", 1), total("catcher", 2) + total("middle", 1)),
        "middle = self + thrower": (total("middle", 1), total("middle", 2) + total("thrower", 1)),
        "tail_from = self + tail_to (a tail call)": (total("tail_from", 1), total("tail_from", 2) +
                                                     total("tail_to", 1)),
    }
    for what, (left, right) in sums.items():
        if left != right:
            problems.append(f"{what}: {left} != {right}")
    if getattr(args, "framewalk", None):
        # framewalk report reads the .times file beside gmon.out: the same
        # figures, per function, in its JSON.
        got = subprocess.run([args.framewalk, "report", os.path.join(args.work, "gmon.out"), "--exe", exe,
                              "--format=json"], capture_output=True, text=True)
        if got.returncode != 0:
            problems.append(f"framewalk report: exit {got.returncode}: {got.stderr.strip()}")
        else:
            report_json = json.loads(got.stdout)
            reported = {f["name"]: f["exact"] for f in report_json["functions"] if f.get("exact")}
            reported.update({f["name"]: f["exact"] for f in report_json["module_functions"]})
            for name, (calls, inclusive, self_ns) in by_name.items():
                if name is None:
                    continue
                exact = reported.get(name)
                if exact is None:
                    problems.append(f"framewalk report: no exact times for {name}")
                elif (exact["calls"], exact["inclusive_ns"], exact["self_ns"]) != (calls, inclusive, self_ns):
                    problems.append(f"framewalk report: {name}: {exact}, the file has {(calls, inclusive, self_ns)}")
    summary = ", ".join(f"{n} {by_name[n][0]}x {by_name[n][1] / 1e6:.2f}/{by_name[n][2] / 1e6:.2f} ms"
                        for n in ("outer", "inner_a", "inner_b", "rec", "deep", "worker", "lib_timed", "lib_leaf",
                                  "catcher", "thrower", "tail_to")
                        if n in by_name)
    report(problems, f"inclusive/self: {summary}")


def parse_key(stdout, key):
    for line in stdout.splitlines():
        parts = line.split()
        if len(parts) == 2 and parts[0] == key:
            return parts[1]
    raise SystemExit(f"no `{key}` line in the program's output:\n{stdout}")


def check_profile(args):
    import signal
    import time
    fresh(args.work)
    fw = os.path.abspath(args.framewalk)
    exe = os.path.abspath(args.exe)
    problems = []

    def profile(cmd, env_extra=None, out_dir="out"):
        env = dict(os.environ)
        env.pop("LD_PRELOAD", None)
        env.pop("FRAMEWALK_MCOUNT_LIBRARY", None)
        env.update(env_extra or {})
        return subprocess.run([fw, "profile", "--mcount", "-o", out_dir, "--"] + cmd, cwd=args.work, env=env,
                              capture_output=True, text=True)

    def written(stderr, out_dir):
        """The files framewalk says it wrote, and the ones that are there."""
        named = re.findall(r"^  (\S+/gmon\.out\.\d+)", stderr, re.M)
        there = sorted(os.path.join(args.work, out_dir, f) for f in os.listdir(os.path.join(args.work, out_dir)))
        return named, there

    def check_arcs(label, gmon, program, expected):
        named, hists, symbols = gmon_arcs_by_name(gmon, program, args.nm)
        in_exe = {k: v for k, v in expected.items() if k[0] in symbols.known and k[1] in symbols.known}
        compare(f"{label}: gmon.out", in_exe, from_program(named), problems)
        compare(f"{label}: gprof", in_exe, from_program(gprof_arcs(program, gmon, args.gprof)), problems)
        if not hists:
            problems.append(f"{label}: no histogram record")
        return sum(in_exe.values())

    # The exact arcs, in the one file framewalk names, with how to read it.
    out = profile([exe, "2"])
    if out.returncode != 0:
        problems.append(f"exact: exit {out.returncode}: {out.stderr}")
    named, there = written(out.stderr, "out")
    calls = 0
    if len(named) != 1 or named != there:
        problems.append(f"exact: named {named}, written {there}")
    else:
        calls = check_arcs("exact", named[0], exe, parse_lines(out.stdout, "expect"))
        for line in (f"gprof {exe} {named[0]}", f"framewalk report {named[0]} --exe {exe}"):
            if line not in out.stderr:
                problems.append(f"exact: stderr does not say `{line}`:\n{out.stderr}")
    if not parse_lines(out.stdout, "counted"):
        problems.append("exact: framewalk's runtime was not in the process")

    # The program's exit status (exact_calls.c returns 2 for too many threads).
    out = profile([exe, "65"], out_dir="status")
    if out.returncode != 2:
        problems.append(f"status: exit {out.returncode}, expected the program's 2")

    # LD_PRELOAD: the runtime first, then what it held; the shell's exit status.
    other = os.path.join(os.path.dirname(exe), "libmcount_exact_lib.so")
    out = profile(["sh", "-c", 'echo "preload $LD_PRELOAD"; exit 3'], {"LD_PRELOAD": other}, out_dir="sh")
    want = f"preload {os.path.realpath(args.preload)}:{other}"
    if out.returncode != 3 or want not in out.stdout:
        problems.append(f"sh: exit {out.returncode} (expected 3), printed {out.stdout.strip()!r}, expected {want!r}")
    if "calls no profiling hook" not in out.stderr or "no profile was written" not in out.stderr:
        problems.append(f"sh: stderr: {out.stderr}")

    # FRAMEWALK_MCOUNT_LIBRARY: a missing one is an error, an existing one is used.
    out = profile([exe, "0"], {"FRAMEWALK_MCOUNT_LIBRARY": "/nonexistent/libframewalk_mcount.so"}, out_dir="lib")
    if out.returncode != 2 or "FRAMEWALK_MCOUNT_LIBRARY" not in out.stderr:
        problems.append(f"missing FRAMEWALK_MCOUNT_LIBRARY: exit {out.returncode}: {out.stderr}")
    out = profile(["sh", "-c", 'echo "preload $LD_PRELOAD"'], {"FRAMEWALK_MCOUNT_LIBRARY": other}, out_dir="lib")
    if f"preload {other}" not in out.stdout:
        problems.append(f"FRAMEWALK_MCOUNT_LIBRARY={other}: printed {out.stdout.strip()!r}")

    # A command that does not exist.
    out = profile(["/nonexistent/program"], out_dir="missing")
    if out.returncode != 127:
        problems.append(f"missing program: exit {out.returncode}, expected 127")

    # SIGTERM sent to framewalk reaches the program, which exits and writes its file.
    env = dict(os.environ)
    env.pop("LD_PRELOAD", None)
    proc = subprocess.Popen([fw, "profile", "--mcount", "-o", "signal", "--", os.path.abspath(args.signal_exe)],
                            cwd=args.work, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    first = proc.stdout.readline()
    if first.strip() != "ready":
        problems.append(f"signal: the program printed {first!r}")
    proc.send_signal(signal.SIGTERM)
    try:
        rest, err = proc.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        proc.kill()
        rest, err = proc.communicate()
        problems.append("signal: the program did not end after SIGTERM")
    if proc.returncode != 0:
        problems.append(f"signal: exit {proc.returncode}: {err}")
    named, there = written(err, "signal")
    if len(named) != 1 or named != there:
        problems.append(f"signal: named {named}, written {there}")
    else:
        check_arcs("signal", named[0], os.path.abspath(args.signal_exe), parse_lines(rest, "expect"))

    # Static: run with framewalk's runtime linked in, refused with glibc's.
    static = os.path.abspath(args.static_framewalk)
    out = profile([static, "2"], out_dir="static")
    named, there = written(out.stderr, "static")
    if out.returncode != 0 or len(named) != 1 or named != there:
        problems.append(f"static with framewalk's runtime: exit {out.returncode}, named {named}, written {there}")
    else:
        check_arcs("static", named[0], static, parse_lines(out.stdout, "expect"))
    out = profile([os.path.abspath(args.static_glibc)], out_dir="static_glibc")
    if (out.returncode != 2 or "statically linked" not in out.stderr or "libframewalk_mcount.a" not in out.stderr
            or "--wrap=pthread_create" not in out.stderr):
        problems.append(f"static with glibc's runtime: exit {out.returncode}: {out.stderr}")
    if os.path.exists(os.path.join(args.work, "static_glibc")):
        problems.append("static with glibc's runtime: it was run")
    report(problems, f"framewalk profile: {calls} calls in the file it named; status, LD_PRELOAD, "
                     "FRAMEWALK_MCOUNT_LIBRARY, SIGTERM, static programs")


def report(problems, summary):
    if problems:
        print("\n".join(problems))
        sys.exit(1)
    print(f"ok: {summary}")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("mode", choices=["exact", "glibc", "fork", "profile", "histogram", "times"])
    parser.add_argument("--exe", required=True)
    parser.add_argument("--preload")
    parser.add_argument("--counted", action="store_true", help="framewalk's runtime is linked in: check its arcs")
    parser.add_argument("--threads", type=int, default=8)
    parser.add_argument("--work", required=True)
    parser.add_argument("--nm", default="nm")
    parser.add_argument("--gprof", default="gprof")
    parser.add_argument("--framewalk")
    parser.add_argument("--signal-exe")
    parser.add_argument("--static-framewalk")
    parser.add_argument("--static-glibc")
    parser.add_argument("--run", choices=["busy", "thread", "threads"], help="histogram: what cpu_time.c does")
    parser.add_argument("--hz", type=int, default=100)
    parser.add_argument("--fentry-times", action="store_true",
                        help="times: FRAMEWALK_MCOUNT_FENTRY_TIMES=1 (a -pg -mfentry program)")
    parser.add_argument("--qemu", help="the emulator and its options, one string: 'qemu-arm -L /usr/arm-linux-gnueabihf'")
    args = parser.parse_args()
    if args.preload:
        args.preload = os.path.abspath(args.preload)
    args.qemu = shlex.split(args.qemu) if args.qemu else None
    {"exact": check_exact, "glibc": check_glibc, "fork": check_fork, "profile": check_profile,
     "histogram": check_histogram, "times": check_times}[args.mode](args)


if __name__ == "__main__":
    main()

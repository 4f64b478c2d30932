#!/usr/bin/env python3
"""framewalk record against a program whose time split is known by
construction (split_target.c: 40/30/20/10 units of the same leaf across
four call paths in two threads, one 300 frames deep, one through a shared
library, one in a signal handler), -O2 without frame pointers:

  - `-- COMMAND`: each path's share of the samples within 2 points of its
    share of the work, at 4 kHz; the signal handler's samples walked
    through the signal frame to the path that raised it; at least 99% of
    the walks reach the thread's root (the stop reasons the report lists);
    lost samples are counted in the summary; the command's output and exit
    status intact;
  - `--off-cpu` (off_cpu_target.c: a thread blocked 70% of its life in a
    known chain): that chain's off-CPU time is 70% +- 3 of the thread's
    life, and the main thread's wait in pthread_join is there too, apart
    from the on-CPU samples; a recorder killed with SIGKILL leaves a
    readable file with names;
  - code made at run time (jit_target.c, x86-64): the samples in it named
    from the process's perf map, whose malformed line is reported, and its
    frame in `framewalk stack -p`;
  - `-p PID,PID -e task-clock --duration`: two running processes recorded
    for half a second are left running, and the recording has samples of
    their four threads, 99% of them walked to the thread's root;
  - `-a`: the whole machine (where permitted) holds their samples;
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
    by_path = {"main_path": 0, "deep_path": 0, "lib_call": 0, "on_signal": 0}
    rooted = 0
    signal_crossed = 0
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
        if "on_signal" in frames and "signal_path" in frames[:frames.index("on_signal")]:
            signal_crossed += n
    return total, by_path, rooted, signal_crossed


def jit(framewalk, source, work, cc, flags):
    """Code made at run time, named only in its perf map (x86-64)."""
    import platform
    if platform.machine() != "x86_64":
        print("jit: x86-64 code, not checked on", platform.machine())
        return []
    target = os.path.join(work, "jit_target")
    run([cc, *flags, "-o", target, os.path.join(source, "tests/record/jit_target.c")], check=True)
    # framewalk stack of the running process: its frame in the code named too.
    failures = []
    proc = subprocess.Popen([target, "1.5"], stdout=subprocess.PIPE, text=True)
    time.sleep(0.3)
    dump = run([framewalk, "stack", "-p", str(proc.pid)])
    out, _ = proc.communicate()
    print("jit: stack:", dump.stdout.strip().splitlines()[:2], dump.stderr.strip())
    if "jit_spin" not in dump.stdout or "1 malformed lines" not in dump.stderr:
        failures.append(f"jit: framewalk stack did not name the code: {dump.stdout!r} {dump.stderr!r}")
    try:
        os.unlink(f"/tmp/perf-{out.split()[0]}.map")
    except (OSError, IndexError):
        pass
    recording = os.path.join(work, "jit.fwprof")
    rec = run([framewalk, "record", "-q", "-F", "2000", "-o", recording, "--", target, "0.7"])
    print(rec.stderr.strip())
    if rec.returncode != 0 or not rec.stdout.split():
        return failures + [f"jit: record exited {rec.returncode}"]
    total = named = 0
    for line in run([framewalk, "report", recording, "--format=folded"], check=True).stdout.splitlines():
        stack, _, weight = line.rpartition(" ")
        total += int(weight)
        if stack.split(";")[-1] == "jit_spin":
            named += int(weight)
    print(f"jit: {100.0 * named / max(total, 1):.1f}% of the samples' leaf named jit_spin from the perf map")
    if named < 0.8 * total:
        failures.append(f"jit: only {named} of {total} ns named jit_spin")
    if "1 malformed lines (the first is line 1)" not in rec.stderr:
        failures.append("jit: the perf map's malformed line was not reported")
    try:
        os.unlink(f"/tmp/perf-{rec.stdout.split()[0]}.map")
    except OSError:
        pass
    return failures


def off_cpu(framewalk, source, work, cc, flags):
    failures = []
    target = os.path.join(work, "off_cpu_target")
    run([cc, *flags, "-o", target, os.path.join(source, "tests/record/off_cpu_target.c"), "-pthread"], check=True)
    recording = os.path.join(work, "off.fwprof")
    rec = run([framewalk, "record", "-q", "--off-cpu", "-o", recording, "--", target, "15"])
    print(rec.stderr.strip())
    life = re.search(r"worker: ([\d.]+) ms", rec.stderr)
    if rec.returncode != 0 or not life:
        return [f"--off-cpu: record exited {rec.returncode}"]
    life_ns = float(life.group(1)) * 1e6
    folded = run([framewalk, "report", recording, "--format=folded", "--kind=off-cpu"], check=True).stdout
    chain = join = 0
    for line in folded.splitlines():
        stack, _, weight = line.rpartition(" ")
        frames = stack.split(";")
        if frames[:5] == ["clone3", "start_thread", "worker", "sleep_path", "wait_here"]:
            chain += int(weight)
        if "main" in frames and "__pthread_clockjoin_ex" in frames:
            join += int(weight)
    share = 100.0 * chain / life_ns
    print(f"off-CPU: worker in sleep_path {share:.2f}% of its life (want 70 +- 3); main in pthread_join "
          f"{join / 1e6:.1f} ms of the worker's {life_ns / 1e6:.1f}")
    if abs(share - 70) > 3:
        failures.append(f"off-CPU share {share:.2f}%")
    if join < 0.95 * life_ns:
        failures.append(f"main's pthread_join off-CPU {join} ns")
    # Kept apart: the on-CPU samples are busy_path's (but for the kernel's
    # own work as the thread wakes); a preemption in busy_path is not time
    # blocked.
    # A recorder killed with SIGKILL leaves the chunks it flushed, with the
    # names its background thread had made by then.
    proc = subprocess.Popen([target, "40"], stderr=subprocess.DEVNULL)
    killed = os.path.join(work, "killed.fwprof")
    rec = subprocess.Popen([framewalk, "record", "-q", "-p", str(proc.pid), "-o", killed],
                           stderr=subprocess.DEVNULL)
    time.sleep(2.5)
    rec.kill()
    rec.wait()
    still = proc.poll() is None
    proc.kill()
    proc.wait()
    left = run([framewalk, "report", killed, "--format=folded"])
    print(f"recorder killed: report exit {left.returncode}, {len(left.stdout.splitlines())} stacks, "
          f"{'named' if 'busy_path' in left.stdout else 'not named'}; {left.stderr.strip()}")
    if not still:
        failures.append("the process recorded did not outlive its killed recorder")
    if "busy_path" not in left.stdout:
        failures.append("a recorder killed with SIGKILL left no names")
    on_total = on_busy = 0
    for line in run([framewalk, "report", recording, "--format=folded"], check=True).stdout.splitlines():
        stack, _, weight = line.rpartition(" ")
        on_total += int(weight)
        on_busy += int(weight) if "busy_path" in stack.split(";") else 0
    if on_busy < 0.9 * on_total or "busy_path" in folded:
        failures.append(f"on- and off-CPU mixed: busy_path {on_busy} of {on_total} ns on-CPU, "
                        f"{'some' if 'busy_path' in folded else 'none'} off-CPU")
    return failures


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
    total, by_path, rooted, signal_crossed = shares(framewalk, recording)
    want = {"main_path": 40, "deep_path": 30, "lib_call": 20, "on_signal": 10}
    for path, share in want.items():
        got = 100.0 * by_path[path] / total if total else 0
        print(f"{path}: {got:.2f}% of {total} ns (want {share} +- 2)")
        if abs(got - share) > 2:
            failures.append(f"{path} {got:.2f}%")
    print(f"rooted: {100.0 * rooted / total:.2f}%; through the signal frame: {signal_crossed} of {by_path['on_signal']}")
    if signal_crossed < 0.99 * by_path["on_signal"]:
        failures.append(f"only {signal_crossed} of {by_path['on_signal']} ns in the handler reach signal_path")
    if summary:
        samples, lost, complete, stopped = (int(x) for x in summary.groups())
        if complete < 0.99 * samples:
            failures.append(f"only {complete} of {samples} walks complete")
        text = run([framewalk, "report", recording], check=True).stdout
        if f"lost samples: {lost};" not in text:
            failures.append("the report does not give the lost count the recorder gave")
    # -p: two running processes (and -e task-clock), left running.
    procs = [subprocess.Popen([target, str(unit * 20)], stdout=subprocess.DEVNULL) for _ in range(2)]
    time.sleep(0.2)
    attached = os.path.join(work, "attached.fwprof")
    rec = run([framewalk, "record", "-q", "-F", "1000", "-e", "task-clock", "--duration", "0.5",
               "-p", ",".join(str(p.pid) for p in procs), "-o", attached])
    print(rec.stderr.strip())
    for proc in procs:
        if proc.poll() is not None:
            failures.append("a process recorded with -p did not keep running")
            continue
        with open(f"/proc/{proc.pid}/status") as f:
            state = next(l for l in f if l.startswith("State:"))
        if "R" not in state and "S" not in state:
            failures.append(f"a process is left {state.strip()}")
    total, by_path, rooted, _ = shares(framewalk, attached)
    header = run([framewalk, "report", attached], check=True).stdout
    threads = re.search(r"samples, (\d+) threads", header)
    if total == 0 or not threads or int(threads.group(1)) < 4:
        failures.append(f"-p recording: {total} ns, threads: {threads.group(1) if threads else None} (want 4)")
    if rooted < 0.99 * total:
        failures.append(f"-p recording: {rooted} of {total} rooted")
    if "event: task-clock" not in header:
        failures.append("-e task-clock: the report does not name the event")

    # -a: the whole machine (where permitted), while they still run.
    everything = os.path.join(work, "all.fwprof")
    rec = run([framewalk, "record", "-q", "-a", "--duration", "0.5", "-o", everything])
    print(rec.stderr.strip())
    if "not permitted" in rec.stderr:
        print("-a: not permitted here, not checked")
    else:
        total, by_path, rooted, _ = shares(framewalk, everything)
        spun = sum(by_path.values())
        print(f"-a: {100.0 * spun / max(total, 1):.1f}% of the machine's samples in split_target's paths")
        if rec.returncode != 0 or spun == 0:
            failures.append(f"-a: record exited {rec.returncode}, {spun} ns in split_target")
    for proc in procs:
        proc.send_signal(signal.SIGKILL)
        proc.wait()

    failures += off_cpu(framewalk, source, work, cc, flags)
    failures += jit(framewalk, source, work, cc, flags)

    if failures:
        print("FAILED:", "; ".join(failures))
        return 1
    print("record: all as expected")
    return 0


if __name__ == "__main__":
    sys.exit(main())

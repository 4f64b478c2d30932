#!/usr/bin/env bash
# framewalk report against perf script on the same perf.data: the program of
# tests/perf/compare_with_perf_script.py (no frame pointers, its call chain
# partly in a shared library) run for SECONDS under perf record -e cpu-clock
# -F 2000 --call-graph dwarf; then, alternately RUNS times, framewalk report,
# perf script --no-inline and perf script; medians of wall and CPU
# (user+sys) seconds, samples a second, and the samples whose stack reaches
# main in each. framewalk report also runs with --kallsyms none: reading
# /proc/kallsyms (5 MB the kernel formats at each read) takes most of its
# time on a file of a few thousand samples.
#
#   bench/perf_report.sh build/framewalk [SECONDS] [RUNS] [WORK_DIR]
set -euo pipefail
fw=$(realpath "$1") seconds=${2:-3} runs=${3:-7} work=${4:-/tmp/framewalk-perf-bench}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
rm -rf "$work"
mkdir -p "$work"
cd "$work"
export HOME=$work  # perf's build-id cache and config stay here
python3 - "$here/../tests/perf" "$seconds" <<'PY'
import sys
sys.path.insert(0, sys.argv[1])
import compare_with_perf_script as c
open("lib.c", "w").write(c.LIB)
open("prog.c", "w").write(c.PROG.replace("500000000L", str(int(float(sys.argv[2]) * 1e9)) + "L"))
PY
flags="-O2 -g -fomit-frame-pointer -fno-optimize-sibling-calls"
cc $flags -fPIC -shared -o libfwperf.so lib.c
cc $flags -o prog prog.c -L. -lfwperf -Wl,-rpath,"$work"
perf record -q --no-buildid-cache -e cpu-clock -F 2000 --call-graph dwarf -o perf.data ./prog
samples=$("$fw" report perf.data --stats 2>&1 > /dev/null | sed -n 's/.* records, \([0-9]*\) samples.*/\1/p')
echo "perf.data: $samples samples, $(stat -c %s perf.data) bytes"
"$fw" report perf.data > fw.txt 2> /dev/null
perf script -i perf.data --no-inline > perf.txt 2> /dev/null
python3 - "$samples" "$runs" "$fw" <<'PY'
import os, resource, statistics, subprocess, sys, time
n, runs, fw = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
commands = [("framewalk report", [fw, "report", "perf.data"]),
            ("  --kallsyms none", [fw, "report", "perf.data", "--kallsyms", "none"]),
            ("perf script --no-inline", ["perf", "script", "-i", "perf.data", "--no-inline"]),
            ("perf script", ["perf", "script", "-i", "perf.data"])]
times = {label: [] for label, _ in commands}
for _ in range(runs):  # alternately, so that the machine's load falls on each alike
    for label, cmd in commands:
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.perf_counter()
        subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
        wall = time.perf_counter() - start
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
        times[label].append((wall, cpu))
base = None
for label, _ in commands:
    wall = statistics.median(t[0] for t in times[label])
    cpu = statistics.median(t[1] for t in times[label])
    base = base or (wall, cpu)
    print(f"{label:24s} wall {wall * 1000:7.1f} ms ({n / wall:9,.0f} samples/s, {wall / base[0]:4.1f}x)  "
          f"cpu {cpu * 1000:7.1f} ms ({n / cpu:9,.0f} samples/s, {cpu / base[1]:4.1f}x)")
PY
for f in fw.txt perf.txt; do
  python3 - "$here/../tests/perf" "$f" <<'PY'
import sys
sys.path.insert(0, sys.argv[1])
import compare_with_perf_script as c
samples, order = c.parse(open(sys.argv[2]).read())
main = sum(1 for k in order if "main" in [c.name(x[1]) for x in c.user(samples[k])])
print(f"{sys.argv[2]}: {main} of {len(order)} samples reach main")
PY
done

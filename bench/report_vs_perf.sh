#!/usr/bin/env bash
# framewalk report against perf report and perf script on a million samples,
# and the peak memory (max RSS) of each, in the same run:
#  - perf.data: tests/record/split_target.c built -O2 with frame pointers,
#    recorded by `perf record -e cpu-clock -c 20000 --call-graph fp` (a
#    sample every 20 us of each thread's CPU time; FP_UNIT, the program's
#    argument, makes it about 1,000,000 samples). Timed: perf report --stdio
#    (children, the default) and --no-children, perf script, and framewalk
#    report as text, folded, pprof and script (perf script's format).
#  - .fwprof: the same program recorded by `framewalk record -F 50000`
#    (FW_UNIT makes it about 1,000,000 samples; the recorder keeps up with
#    about 20,000 a second on 2 cores, the rest are lost); framewalk report
#    as text, folded and pprof.
#  - record: the peak memory of framewalk record against perf record
#    --call-graph dwarf, and with -B (no build-id pass over the file at the
#    end), at 1 and 10 kHz on the program of bench/record_overhead.sh (the
#    same source, no frame pointers).
# Every command runs RUNS times, alternately, output to /dev/null, under
# /usr/bin/time -f %M (max RSS of the command and its children: for a
# recorder, the recorder; the program's own is about 2 MB); medians of wall
# time and of max RSS, and each against the first row of its group. The whole
# takes about 3 minutes and 40 s a run. Not run by CTest or CI. KEEP=1 leaves
# the work directory (a new one below WORK_DIR, default $TMPDIR or /tmp).
#
#   [FP_UNIT=N] [FW_UNIT=N] [KEEP=1] bench/report_vs_perf.sh FRAMEWALK [RUNS] [WORK_DIR]
set -euo pipefail
fw=$(realpath "${1:?usage: report_vs_perf.sh FRAMEWALK [RUNS] [WORK_DIR]}")
runs=${2:-5}
base=${3:-${TMPDIR:-/tmp}}
src=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
[ -x /usr/bin/time ] || { echo "report_vs_perf.sh: needs /usr/bin/time (apt-get install time)" >&2; exit 2; }
mkdir -p "$base"
work=$(mktemp -d -p "$base" report_vs_perf.XXXXXX)
[ -n "${KEEP:-}" ] || trap 'rm -rf "$work"' EXIT
cd "$work"
export HOME=$work  # perf's build-id cache and config stay here

for kind in fp nofp; do
  if [ $kind = fp ]; then fp=-fno-omit-frame-pointer; else fp=-fomit-frame-pointer; fi
  flags="-O2 -g $fp -fno-optimize-sibling-calls"
  mkdir $kind
  cc $flags -fPIC -shared -o $kind/libfw_split.so "$src/tests/record/split_lib.c"
  cc $flags -o $kind/split_target "$src/tests/record/split_target.c" -L$kind -lfw_split \
    -Wl,-rpath,"$work/$kind" -pthread
done

perf record -q --no-buildid-cache -e cpu-clock -c 20000 --call-graph fp -o fp.data \
  fp/split_target "${FP_UNIT:-24400000}" > /dev/null
perf report -i fp.data --stats 2> /dev/null |
  awk -v size="$(stat -c %s fp.data)" '/SAMPLE events:/ && !s {s = $3} /LOST_SAMPLES events:/ && $3 > l {l = $3}
       /THROTTLE events:/ && !t {t = $3} END {printf "fp.data: %d samples, %d bytes (%.0f a sample), %d lost, %d throttled\n", s, size, size / s, l, t}'
"$fw" record -q -F 50000 --mmap-pages 4096 -o big.fwprof -- fp/split_target "${FW_UNIT:-60000000}" \
  > /dev/null 2> record.err || { cat record.err >&2; exit 1; }
"$fw" report big.fwprof --top 1 2> /dev/null |
  awk -v size="$(stat -c %s big.fwprof)" '/^event:/ {e = $0} /^lost samples:/ {l = $3 + 0}
       END {sub(/^event: /, "", e); printf "big.fwprof: %s; %d bytes; %d lost\n", e, size, l}'

python3 - "$fw" "$runs" <<'PY'
import statistics, subprocess, sys, time
fw, runs = sys.argv[1], int(sys.argv[2])

def measure(groups):
    """groups: [(title, [(label, cmd)])]; runs every command RUNS times, alternately."""
    cmds = [c for _, g in groups for c in g]
    got = {label: [] for label, _ in cmds}
    for _ in range(runs):
        for label, cmd in cmds:
            start = time.perf_counter()
            subprocess.run(["/usr/bin/time", "-f", "%M", "-o", "rss.txt", *cmd],
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
            wall = time.perf_counter() - start
            got[label].append((wall, int(open("rss.txt").read().split()[-1])))
    for title, g in groups:
        print(f"\n{title}\n  (medians of wall time and max RSS, each x the first row's; the range of wall times)")
        base = None
        for label, _ in g:
            wall = statistics.median(w for w, _ in got[label])
            rss = statistics.median(m for _, m in got[label])
            base = base or (wall, rss)
            print(f"  {label:44s} {wall:8.3f} s ({wall / base[0]:5.1f}x)   max RSS {rss / 1024:7.1f} MB ({rss / base[1]:5.1f}x)"
                  f"   [{min(w for w, _ in got[label]):.3f}-{max(w for w, _ in got[label]):.3f} s]")

null = ["-o", "/dev/null"]
measure([
    ("perf.data (1M frame-pointer samples): against perf report --stdio, the default (children)", [
        ("framewalk report --format=text", [fw, "report", "fp.data", "--format=text"]),
        ("perf report --stdio", ["perf", "report", "-i", "fp.data", "--stdio"]),
        ("perf report --stdio --no-children", ["perf", "report", "-i", "fp.data", "--stdio", "--no-children"]),
        ("framewalk report --format=folded", [fw, "report", "fp.data", "--format=folded"]),
        ("framewalk report --format=pprof", [fw, "report", "fp.data", "--format=pprof", *null])]),
    ("perf.data: as perf script prints it", [
        ("framewalk report (--format=script)", [fw, "report", "fp.data"]),
        ("perf script", ["perf", "script", "-i", "fp.data"])]),
    ("big.fwprof (framewalk record's file)", [
        ("framewalk report big.fwprof", [fw, "report", "big.fwprof"]),
        ("framewalk report big.fwprof --format=folded", [fw, "report", "big.fwprof", "--format=folded"]),
        ("framewalk report big.fwprof --format=pprof", [fw, "report", "big.fwprof", "--format=pprof", *null])]),
])
prog = ["nofp/split_target", "30000000"]
measure([(f"record at {rate} Hz: tests/record/split_target.c, no frame pointers", [
    (f"framewalk record -F {rate}", [fw, "record", "-q", "-F", str(rate), "-o", "rec.fwprof", "--", *prog]),
    (f"perf record -F {rate} --call-graph dwarf",
     ["perf", "record", "-q", "--no-buildid-cache", "-e", "cpu-clock", "-F", str(rate),
      "--call-graph", "dwarf", "-o", "rec.data", "--", *prog]),
    (f"perf record -F {rate} --call-graph dwarf -B",
     ["perf", "record", "-q", "-B", "--no-buildid-cache", "-e", "cpu-clock", "-F", str(rate),
      "--call-graph", "dwarf", "-o", "rec.data", "--", *prog])]) for rate in (1000, 10000)])
PY

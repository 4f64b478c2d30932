#!/usr/bin/env bash
# framewalk stack -p of a Node.js process whose perf map is large, against
# the same process dumped without the map (--perf-map /dev/null), in the
# same run: the cost of reading and indexing the map once per dump.
#
# The process (bench/jit_many.js) makes FUNCTIONS small JavaScript functions
# and calls each once under node --perf-basic-prof
# --interpreted-frames-native-stack (about 4 perf-map lines each), then
# blocks under a chain of JavaScript calls. Each dump runs RUNS times,
# alternately; medians of wall time. eu-stack of the same
# process for reference. Not run by CTest or CI.
#
#   bench/jit_perf_map.sh FRAMEWALK [FUNCTIONS] [RUNS]
set -euo pipefail
fw=$(realpath "${1:?usage: jit_perf_map.sh FRAMEWALK [FUNCTIONS] [RUNS]}")
functions=${2:-25000}
runs=${3:-15}
src=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
work=$(mktemp -d)
(cd "$work" && exec node --perf-basic-prof --interpreted-frames-native-stack "$src/bench/jit_many.js" "$functions" >"$work/out") &
node_pid=$!
trap 'kill -9 $node_pid 2>/dev/null; wait $node_pid 2>/dev/null; rm -f /tmp/perf-$node_pid.map; rm -rf "$work"' EXIT
until grep -q ready "$work/out" 2>/dev/null; do sleep 0.1; done
sleep 0.2
echo "node $node_pid: $(wc -l </tmp/perf-$node_pid.map) perf-map lines ($(du -k /tmp/perf-$node_pid.map | cut -f1) KiB)"
python3 - "$fw" "$node_pid" "$runs" <<'PY'
import statistics, subprocess, sys, time
fw, pid, runs = sys.argv[1], sys.argv[2], int(sys.argv[3])
cases = [("framewalk stack -p (perf map)", [fw, "stack", "-p", pid]),
         ("framewalk stack -p --perf-map /dev/null", [fw, "stack", "-p", pid, "--perf-map", "/dev/null"]),
         ("eu-stack -p", ["eu-stack", "-p", pid])]
times = {c[0]: [] for c in cases}
for _ in range(runs):
    for name, cmd in cases:
        t = time.perf_counter()
        out = subprocess.run(cmd, capture_output=True, text=True)
        times[name].append(time.perf_counter() - t)
        if name.startswith("framewalk stack -p (") and "JS:~third" not in out.stdout:
            sys.exit("the dump did not name the JavaScript frames")
first = statistics.median(times[cases[0][0]])
for name, _ in cases:
    m = statistics.median(times[name])
    print(f"{name:45s} {1000 * m:8.1f} ms  {m / first:5.2f}x")
PY

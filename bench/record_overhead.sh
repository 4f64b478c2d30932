#!/usr/bin/env bash
# framewalk record against perf record on a CPU-bound -O2 program without
# frame pointers (tests/record/split_target.c: two threads, a 300-deep
# recursion, a shared library), in the same run: wall time of the bare run,
# under `framewalk record`, `perf record --call-graph dwarf` and
# `--call-graph fp`, at each rate; bytes written per sample; samples lost;
# the program's own time (it measures itself: the profiler's start-up and
# its work after the program ends are not in it) and the whole command's.
# The floor: `perf record` without a call graph (the sampling interrupt and
# a record of a few words), what any profiler at that rate costs here. The
# program's CPU time too (user + system, from its own getrusage: the
# sampling interrupts' work is its system time), steadier than its wall
# time on a machine shared with other work.
# Medians over RUNS, alternating.
#   [RATES="1000 10000"] bench/record_overhead.sh build/framewalk [RUNS] [UNIT]
set -eu
fw=$(realpath "${1:?usage: record_overhead.sh FRAMEWALK [RUNS] [UNIT]}")
runs=${2:-5}
unit=${3:-30000000}
src=$(cd "$(dirname "$0")/.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
flags="-O2 -fomit-frame-pointer -fno-optimize-sibling-calls"
cc $flags -fPIC -shared -o "$tmp/libfw_split.so" "$src/tests/record/split_lib.c"
cc $flags -o "$tmp/split_target" "$src/tests/record/split_target.c" -L"$tmp" -lfw_split -Wl,-rpath,"$tmp" -pthread
prog=("$tmp/split_target" "$unit")

export FW_SPLIT_TIME=1
# Runs a command: "wall_ms own_ms" (own: the program's own time, from its stderr).
ms() {
  local t0 t1
  t0=$(date +%s%N); "$@" >/dev/null 2>"$tmp/err" || true; t1=$(date +%s%N)
  echo "$(( (t1 - t0) / 1000000 )) $(awk '/^split_target:/ {print int($2), int($5 + $8), int($8)}' "$tmp/err")"
}
median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
wall() { awk '{print $1}' "$1" | median; }
own() { awk '{print $2}' "$1" | median; }
cpu() { awk '{print $3}' "$1" | median; }
sys() { awk '{print $4}' "$1" | median; }

printf '%-6s %-22s %8s %8s %8s %8s %7s %9s %9s %12s %8s %6s\n' rate tool own_ms slowdown cpu_ms more_cpu sys_ms wall_ms overhead bytes/sample samples lost
for rate in ${RATES:-1000 10000}; do
  : >"$tmp/bare" ; : >"$tmp/fw" ; : >"$tmp/dwarf" ; : >"$tmp/fp" ; : >"$tmp/none"
  for _ in $(seq "$runs"); do
    ms "${prog[@]}" >>"$tmp/bare"
    ms "$fw" record -q -F "$rate" -o "$tmp/fw.fwprof" -- "${prog[@]}" >>"$tmp/fw"
    cp "$tmp/err" "$tmp/fw.err"
    ms perf record -q -F "$rate" -e cpu-clock --call-graph dwarf -o "$tmp/dwarf.data" -- "${prog[@]}" >>"$tmp/dwarf"
    ms perf record -q -F "$rate" -e cpu-clock --call-graph fp -o "$tmp/fp.data" -- "${prog[@]}" >>"$tmp/fp"
    ms perf record -q -F "$rate" -e cpu-clock -o "$tmp/none.data" -- "${prog[@]}" >>"$tmp/none"
  done
  bare=$(wall "$tmp/bare")
  bare_own=$(own "$tmp/bare")
  bare_cpu=$(cpu "$tmp/bare")
  fw_samples=$(grep -o '[0-9]* samples in' "$tmp/fw.err" | awk '{print $1}')
  fw_lost=$(grep -o '; [0-9]* lost' "$tmp/fw.err" | awk '{print $2}')
  fw_bytes=$(stat -c %s "$tmp/fw.fwprof")
  row() {  # name times-file bytes samples lost
    local w o c y; w=$(wall "$2"); o=$(own "$2"); c=$(cpu "$2"); y=$(sys "$2")
    awk -v r="$rate" -v n="$1" -v w="$w" -v o="$o" -v c="$c" -v y="$y" -v b="$bare" -v bo="$bare_own" -v bc="$bare_cpu" \
      -v by="$3" -v s="$4" -v l="$5" \
      'BEGIN {printf "%-6s %-22s %8d %7.1f%% %8d %7.1f%% %7d %9d %8.1f%% %12.1f %8d %6s\n", r, n, o, 100 * (o - bo) / bo, c, 100 * (c - bc) / bc, y, w, 100 * (w - b) / b, (s ? by / s : 0), s, l}'
  }
  printf '%-6s %-22s %8d %8s %8d %8s %7d %9d %9s %12s %8s %6s\n' "$rate" bare "$bare_own" - "$bare_cpu" - "$(sys "$tmp/bare")" "$bare" - - - -
  row "framewalk record" "$tmp/fw" "$fw_bytes" "${fw_samples:-0}" "${fw_lost:-?}"
  for kind in dwarf fp none; do
    samples=$(perf report -i "$tmp/$kind.data" --stats 2>/dev/null | awk '/SAMPLE events:/ {print $3; exit}')
    lost=$(perf report -i "$tmp/$kind.data" --stats 2>/dev/null | awk '/LOST_SAMPLES events:|LOST events:/ {s += $3} END {print s + 0}')
    name="perf --call-graph $kind"
    [ "$kind" = none ] && name="perf, no call graph"
    row "$name" "$tmp/$kind" "$(stat -c %s "$tmp/$kind.data")" "${samples:-0}" "$lost"
  done
done

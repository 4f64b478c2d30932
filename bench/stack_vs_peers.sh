#!/usr/bin/env bash
# framewalk stack against eu-stack and gdb, in the same run: a process with 1,
# 16 and 128 threads, each blocked about 33 frames deep, live and from a core.
# Reports medians over RUNS and ratios; checks that framewalk walked every
# thread to its natural end. With FRAMEWALK_BASELINE=/path/to/an/older/framewalk
# that build is timed in the same run too (a change's before and after).
set -eu
fw=${1:?usage: stack_vs_peers.sh FRAMEWALK DEEP_THREADS [RUNS]}
target=${2:?usage: stack_vs_peers.sh FRAMEWALK DEEP_THREADS [RUNS]}
runs=${3:-5}
tmp=$(mktemp -d)
pid=""
cleanup() { [ -n "$pid" ] && kill -9 "$pid" 2>/dev/null; rm -rf "$tmp"; }
trap cleanup EXIT

. "$(dirname "${BASH_SOURCE[0]}")/timing.sh"
ratio() { awk -v a="$1" -v b="$2" 'BEGIN {printf "%.1fx", a/b}'; }

base=${FRAMEWALK_BASELINE:-}
base_ms() { if [ -n "$base" ]; then median_ms "$base" "$@"; else echo -; fi; }
base_ratio() { if [ -n "$base" ]; then ratio "$1" "$2"; else echo -; fi; }
printf '%-8s %-5s %12s %12s %12s %12s %10s %10s %10s %s\n' threads where framewalk_ms baseline_ms eu-stack_ms gdb_ms \
  base/fw eu/fw gdb/fw "copy pause us"
for n in 1 16 128; do
  "$target" "$n" 33 >"$tmp/out" &
  pid=$!
  for _ in $(seq 100); do grep -q ready "$tmp/out" 2>/dev/null && break; sleep 0.05; done
  if ! "$fw" stack -p "$pid" >"$tmp/fw.txt" 2>&1; then
    echo "framewalk did not walk every thread to its end:" >&2
    grep -B3 stop: "$tmp/fw.txt" | head >&2
    exit 1
  fi
  # The --freeze=copy pause: median of RUNS dumps (and the largest).
  pauses=$(for _ in $(seq "$runs"); do
    "$fw" stack -p "$pid" --freeze=copy --format=json | grep -o '"pause_us":[0-9]*' | cut -d: -f2
  done | sort -n)
  pause="$(echo "$pauses" | awk '{a[NR]=$1} END {print a[int((NR+1)/2)] " (max " a[NR] ")"}')"
  t_fw=$(median_ms "$fw" stack -p "$pid")
  t_base=$(base_ms stack -p "$pid")
  t_eu=$(median_ms eu-stack -p "$pid")
  t_gdb=$(median_ms gdb -batch -p "$pid" -ex "thread apply all bt")
  printf '%-8s %-5s %12s %12s %12s %12s %10s %10s %10s %s\n' "$n" live "$t_fw" "$t_base" "$t_eu" "$t_gdb" \
    "$(base_ratio "$t_base" "$t_fw")" "$(ratio "$t_eu" "$t_fw")" "$(ratio "$t_gdb" "$t_fw")" "$pause"
  gcore -o "$tmp/core" "$pid" >/dev/null 2>&1
  core="$tmp/core.$pid"
  t_fw=$(median_ms "$fw" stack --core "$core")
  t_base=$(base_ms stack --core "$core")
  t_eu=$(median_ms eu-stack --core "$core" -e "$target")
  t_gdb=$(median_ms gdb -batch "$target" "$core" -ex "thread apply all bt")
  printf '%-8s %-5s %12s %12s %12s %12s %10s %10s %10s\n' "$n" core "$t_fw" "$t_base" "$t_eu" "$t_gdb" \
    "$(base_ratio "$t_base" "$t_fw")" "$(ratio "$t_eu" "$t_fw")" "$(ratio "$t_gdb" "$t_fw")"
  rm -f "$core"
  kill -9 "$pid"
  wait "$pid" 2>/dev/null || true
  pid=""
done

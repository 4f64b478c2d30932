#!/usr/bin/env bash
# What instrumented profiling costs a whole call-heavy program: recursive fib
# and a C++ container workload (bench/mcount_programs.cpp), built -O2 without
# and with -pg, run uninstrumented, with glibc's mcount, with framewalk's
# (LD_PRELOAD), and under uftrace record when it is installed. Median wall
# time of $runs runs (default 5) and the ratio to the uninstrumented build.
#
#   bench/mcount_overhead.sh [BUILD_DIR]   (needs libframewalk_mcount.so there)
set -euo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "${1:-$src/build}" && pwd)
runs=${runs:-5}
lib=$build/libframewalk_mcount.so
[ -f "$lib" ] || { echo "no $lib: ninja -C $build framewalk_mcount" >&2; exit 2; }
. "$src/bench/timing.sh"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
g++ -O2 -std=c++17 "$src/bench/mcount_programs.cpp" -o "$work/plain"
g++ -O2 -std=c++17 -pg "$src/bench/mcount_programs.cpp" -o "$work/pg"
cd "$work"
printf '%-12s %-22s %10s %8s\n' program runtime "ms" "x plain"
for case in "fib 36" "containers 600"; do
  set -- $case
  base=$(median_ms ./plain "$1" "$2")
  printf '%-12s %-22s %10s %8s\n' "$1" "uninstrumented" "$base" "1.00"
  row() {  # label command...
    local label=$1
    shift
    local ms
    ms=$(median_ms "$@")
    printf '%-12s %-22s %10s %8s\n' "$case_name" "$label" "$ms" "$(awk -v a="$ms" -v b="$base" 'BEGIN {printf "%.2f", a / b}')"
  }
  case_name=$1
  row "glibc 2.36 mcount" ./pg "$1" "$2"
  row "framewalk mcount" env LD_PRELOAD="$lib" ./pg "$1" "$2"
  if command -v uftrace > /dev/null; then
    row "uftrace 0.13 record" uftrace record -d "$work/uftrace.data" ./pg "$1" "$2"
  fi
done

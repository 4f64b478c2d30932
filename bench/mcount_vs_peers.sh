#!/usr/bin/env bash
# ns per instrumented call under framewalk's mcount runtime, glibc's and
# uftrace's (uftrace record, when installed), single-threaded and with 8
# threads calling the same function at once, and the calls each profiler
# counted against the calls made (glibc drops the calls that meet another
# thread's inside its one global busy flag).
#
#   bench/mcount_vs_peers.sh [BUILD_DIR]   (default build; needs libframewalk_mcount.so there)
#
# Per call: the mean over the threads of each thread's CPU time
# (CLOCK_THREAD_CPUTIME_ID) divided by its calls, minus nothing: the
# uninstrumented build's figure is printed as the loop's own cost. Median of
# $runs runs (default 3).
set -euo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "${1:-$src/build}" && pwd)
runs=${runs:-3}
lib=$build/libframewalk_mcount.so
[ -f "$lib" ] || { echo "no $lib: ninja -C $build framewalk_mcount" >&2; exit 2; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cflags="-O2 -fno-inline -fno-optimize-sibling-calls"
gcc $cflags "$src/bench/mcount_calls.c" -o "$work/plain" -lpthread
gcc $cflags -pg "$src/bench/mcount_calls.c" -o "$work/pg" -lpthread
calls=${calls:-5000000}

# counted GMON EXE: the calls gmon.out has for work -> tiny
counted() {
  python3 - "$1" "$2" "$src" <<'PY'
import sys
sys.path.insert(0, sys.argv[3] + "/tests/mcount")
import check_gmon
named, _, _ = check_gmon.gmon_arcs_by_name(sys.argv[1], sys.argv[2], "nm")
print(named.get(("work", "tiny"), 0))
PY
}

# median of `ns_per_call` over $runs runs of: command...
per_call() {
  local values=()
  for _ in $(seq "$runs"); do
    values+=("$("$@" | awk '$1 == "ns_per_call" {print $2}')")
  done
  printf '%s\n' "${values[@]}" | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'
}

printf '%-28s %8s %14s %14s\n' "runtime" "threads" "ns per call" "calls counted"
for threads in 1 8; do
  made=$((threads * calls))
  (cd "$work" && printf '%-28s %8s %14s %14s\n' "uninstrumented (-O2)" "$threads" "$(per_call ./plain "$threads" "$calls")" "-")
  ns=$(cd "$work" && per_call ./pg "$threads" "$calls")
  printf '%-28s %8s %14s %14s\n' "glibc 2.36 mcount" "$threads" "$ns" "$(counted "$work/gmon.out" "$work/pg")/$made"
  ns=$(cd "$work" && per_call env LD_PRELOAD="$lib" ./pg "$threads" "$calls")
  printf '%-28s %8s %14s %14s\n' "framewalk mcount" "$threads" "$ns" "$(counted "$work/gmon.out" "$work/pg")/$made"
  if command -v uftrace > /dev/null; then
    # uftrace records entry and exit of every call into per-thread buffers
    # and files (default options, in $work/uftrace.data): a tenth of the
    # calls, to keep the files small.
    few=$((calls / 10))
    ns=$(cd "$work" && per_call uftrace record -d "$work/uftrace.data" ./pg "$threads" "$few")
    n=$(cd "$work" && uftrace report -d "$work/uftrace.data" -f call 2>/dev/null | awk '$NF == "tiny" {print $1}')
    printf '%-28s %8s %14s %14s\n' "uftrace $(uftrace --version | awk '{print $2; exit}')" "$threads" "$ns" "${n:-?}/$((threads * few))"
  fi
done
